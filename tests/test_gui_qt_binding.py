"""The Qt binding itself: PySide6 6.12.0 on Python 3.11 drops a reference to None on every void call,
so any long session ends in ``Fatal Python error: none_dealloc``. Fail here, by name, rather than at random."""

from __future__ import annotations

import sys

import pytest
from PySide6 import __version__ as PYSIDE_VERSION
from PySide6.QtCore import QObject

pytestmark = pytest.mark.gui
_GIVEN_BACK: list[None] = []


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12 on")
def test_void_qt_calls_keep_none_alive(qapp):
    obj = QObject()
    before = sys.getrefcount(None)
    for _ in range(2000):
        obj.setObjectName("x")
    lost = before - sys.getrefcount(None)
    _GIVEN_BACK.extend([None] * max(0, lost))  # so that this test does not itself bring the crash closer
    assert lost < 200, (
        f"PySide6 {PYSIDE_VERSION} lost {lost} references to None in 2000 void calls: the workbench "
        "will crash with 'none_dealloc'. Install a PySide6-Essentials other than 6.12.0 "
        "(6.11.3 is known good on Python 3.11)."
    )

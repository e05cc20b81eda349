"""The window's warm-start server: started once the first preview is drawn when nothing has one already, named to
the window's workers through the environment, ended with the window."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from neffbench import procs
from neffbench.gui.shell import warm_server

pytestmark = [pytest.mark.gui, pytest.mark.slow]


def test_a_window_with_no_server_starts_one_its_workers_use_and_ends_it_when_closed(make_window, qtbot, monkeypatch):
    monkeypatch.delenv(procs.WARM_ENV, raising=False)
    window = make_window()
    warm_server.start(window)
    qtbot.waitUntil(lambda: getattr(window, "warm_server", None) is not None, timeout=120_000)
    server = window.warm_server
    assert os.environ[procs.WARM_ENV] == server.address and server.running
    child = procs.spawn([sys.executable, "-m", "json.tool"], stdin="pipe", warm=True)
    child.write(b"{}")
    child.close_stdin()
    lines: list[str] = []
    procs.pump(child, lines.append)
    assert child.reap(60) == 0 and lines == ["{}"]
    assert child.pid not in _children()  # forked by the server, not a child of the window's process
    window.close()
    assert not server.running and procs.WARM_ENV not in os.environ and window.warm_server is None


@pytest.mark.parametrize("given", ["another process's server", "off"])
def test_a_window_started_with_a_server_or_told_off_starts_none(window, monkeypatch, given):
    monkeypatch.setenv(procs.WARM_ENV, "/somewhere/socket" if given != "off" else "off")
    warm_server.start(window)
    assert getattr(window, "warm_server", None) is None
    window.close()
    assert os.environ[procs.WARM_ENV] == ("/somewhere/socket" if given != "off" else "off")


def _children() -> set[int]:
    pid = os.getpid()
    found = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            found |= {int(p) for p in Path(f"/proc/{pid}/task/{task}/children").read_text().split()}
        except OSError:
            continue
    return found

"""A widget a kernel contributes to the window (``Kernel.gui_preview``, ``Kernel.gui_form``), imported by its name
and checked against the Protocol that declares what the window asks of it.

The window imports a kernel's widget class on first use, checks that it is a QWidget with every member its
Protocol declares (``gui/preview/contribution.py``, ``gui/forms/contribution.py``) and refuses it with a sentence
naming what is missing, as the registry refuses a kernel whose hooks are wrong: the window never probes a widget
with ``hasattr``.
"""

from __future__ import annotations

import pkgutil
from typing import Any

from PySide6.QtWidgets import QWidget

from neffbench.kernels.api import Kernel


class KernelWidgetError(TypeError):
    """A kernel's widget that is not what the window asks of it: one sentence naming what is missing."""


def members(protocol: type) -> list[str]:
    """The names a Protocol declares: its annotated attributes and its methods."""
    declared = set(vars(protocol).get("__annotations__", {}))
    declared |= {name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")}
    return sorted(declared)


def checked(cls: Any, protocol: type, *, kernel: str, name: str) -> type[QWidget]:
    """``cls`` when it is a QWidget class with every member of ``protocol``; else KernelWidgetError saying why."""
    what = f"The {protocol.__name__} {name} of kernel '{kernel}'"
    if not (isinstance(cls, type) and issubclass(cls, QWidget)):
        raise KernelWidgetError(f"{what} is a {type(cls).__name__}, not a QWidget class.")
    missing = [member for member in members(protocol) if not hasattr(cls, member)]
    if missing:
        raise KernelWidgetError(
            f"{what} lacks {', '.join(missing)}: the window asks every {protocol.__name__} for them "
            f"({protocol.__module__}.{protocol.__name__})."
        )
    return cls


def resolved(kernel: Kernel, qualified: str, protocol: type) -> type[QWidget]:
    """The class ``qualified`` names (``"module:Class"``), checked against ``protocol``."""
    try:
        cls = pkgutil.resolve_name(qualified)
    except Exception as exc:  # noqa: BLE001 - a plugin's own error, reported with its name
        raise KernelWidgetError(
            f"The {protocol.__name__} {qualified} of kernel '{kernel.name}' could not be imported: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return checked(cls, protocol, kernel=kernel.name, name=qualified)

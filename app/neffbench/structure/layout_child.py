"""Drawings laid out in a child process of the window's: grandalf's work on a long chain (100 ms and more of Python,
tens of thousands of short-lived objects) then neither holds the window's interpreter lock nor feeds its garbage
collector. Laid out here instead when that child cannot answer."""

from __future__ import annotations

from neffbench.probe.client import ProbeError, shared
from neffbench.structure import layout
from neffbench.structure.flow import Flow

LAYOUT_MODULE = "neffbench.workers.layout"
TIMEOUT_S = 120.0  # far past any drawing's layout (flow.MAX_VERTICES); then the child is stopped and started again


def start() -> None:
    """Start the child now: its start-up (a Python and grandalf) then overlaps what the caller does next."""
    shared(LAYOUT_MODULE).start()


def lay_out(flow: Flow) -> layout.Laid:
    """``layout.layout(flow)``, done in the layout child; in this process when it could not start, died or failed
    (what failed there then fails here, with its traceback)."""
    sized = layout.sized(flow)
    try:
        report = shared(LAYOUT_MODULE).ask("layout", sized, timeout=TIMEOUT_S)
    except ProbeError:
        report = {}
    if not report.get("ok"):
        return layout.arrange(sized)
    return layout.from_json(report["laid"])

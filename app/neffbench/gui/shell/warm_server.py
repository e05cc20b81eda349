"""The window's warm-start server: the compiles, runs, checks and previews the window starts are forked from a
process that has imported torch once, instead of each importing it afresh (a second or two of CPU each).

Started after the first preview (it costs one torch import of its own), ended with the window. A window started
by something that has a server already (a test session, a script's ``warm_workers``) uses that one.
"""

from __future__ import annotations

import os

from neffbench import procs


def start(window) -> None:
    if os.environ.get(procs.WARM_ENV):
        return
    from neffbench.gui.widgets import background
    from neffbench.toolchain.flavour import warm_preload

    background.start(
        procs.start_warm_server,
        warm_preload(),
        returned=lambda server: _adopt(window, server),
        errored=lambda exc: None,  # workers start afresh, as without a server: nothing is lost
    )


def _adopt(window, server: procs.WarmServer | None) -> None:
    if server is None:
        return
    if not window.isVisible():  # closed while it started
        server.stop()
        return
    window.warm_server = server
    os.environ[procs.WARM_ENV] = server.address


def stop(window) -> None:
    server = getattr(window, "warm_server", None)
    if server is not None:
        if os.environ.get(procs.WARM_ENV) == server.address:
            del os.environ[procs.WARM_ENV]
        server.stop()
        window.warm_server = None

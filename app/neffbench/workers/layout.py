"""The layout child: ``python -m neffbench.workers.layout serve`` lays the window's drawings out, one JSON request
per stdin line (a flow's sized vertices and its edges, ``structure.layout.sized``), one JSON report per stdout line
(where each box and each edge goes)."""

from __future__ import annotations

import sys
from typing import Any

from neffbench.procs import exit_now, serve_lines


def answer(request: dict[str, Any]) -> dict[str, Any]:
    from neffbench.structure import layout

    try:
        return {"ok": True, "laid": layout.to_json(layout.arrange(request))}
    except Exception as exc:  # noqa: BLE001 - reported: the window lays it out itself and shows what fails
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def serve() -> int:
    import grandalf.layouts  # noqa: F401 - imported before the first request, not during it

    return serve_lines(lambda message: answer(message.get("request") or {}))


def main(argv: list[str]) -> int:
    from neffbench.procs import watch

    # Gone with the window, however it ends; no PDEATHSIG: a short-lived thread of the window starts it.
    watch(pdeathsig=False)
    if argv != ["serve"]:
        print("usage: python -m neffbench.workers.layout serve", file=sys.stderr)
        return 2
    return serve()


if __name__ == "__main__":
    exit_now(main(sys.argv[1:]), exit_functions=False)

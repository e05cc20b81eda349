"""``neffbench doctor``: what this host has and what the workbench will do about it."""

from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="report Python, torch, Qt, Neuron toolchain, devices and display",
        description="Report what this host has and which compile backend the workbench will use.",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _line(label: str, found: bool, version: str | None, detail: str) -> str:
    mark = "ok " if found else "-- "
    text = version or ""
    if detail:
        text = f"{text} ({detail})" if text else detail
    return f"  {mark}{label:<16} {text}"


_KINDS = {
    "local": "local",
    "forwarded": "forwarded X11 (ssh -X)",
    "network": "X11 over the network",
    "wayland": "Wayland",
    "offscreen": "offscreen (no window is shown)",
    "none": "none",
}


def _print_display(where: dict) -> None:
    kind = _KINDS.get(where["kind"], where["kind"])
    text = f"{kind}: {where['display']}" if where["display"] else kind
    if where["over_ssh"] and where["kind"] != "forwarded":
        text += ", over SSH"
    print(_line("display", where["kind"] not in ("none", "offscreen"), None, text))
    for tool, path in where["tools"].items():
        print(_line(tool, path is not None, None, path or "not installed"))


def run(args: argparse.Namespace) -> int:
    from neffbench.doctor import report
    from neffbench.toolchain.host import gather

    facts = gather()
    data = report(facts)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"neffbench doctor on {facts.host or 'this host'}")
    print(f"  stack: {data['stack']['summary']}")
    for comp in (facts.python, facts.torch, facts.pyside6, facts.pyqtgraph, facts.torch_neuronx, facts.neuronx_cc):
        print(_line(comp.name, comp.found, comp.version, comp.detail))
    print(_line("Neuron devices", bool(facts.devices), None, ", ".join(facts.devices) or "none under /dev/neuron*"))
    _print_display(data["display_situation"])
    for comp in facts.runtimes:
        print(_line(comp.name, comp.found, comp.version, comp.detail))
    print()
    for sentence in data["advice"]:
        print(f"- {sentence}")
    return 0

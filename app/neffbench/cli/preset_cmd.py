"""``neffbench preset list|show``: the bundled presets."""

from __future__ import annotations

import argparse
import sys

from neffbench.presets import load_preset, preset_kernels, preset_names, preset_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "preset",
        help="list bundled presets or print one as TOML",
        description="Bundled presets. `neffbench preset show llama3-8b > my.toml` starts a spec.",
    )
    psub = p.add_subparsers(dest="preset_command", metavar="ACTION", required=True)
    psub.add_parser("list", help="list presets with a one-line description").set_defaults(func=run_list)
    show = psub.add_parser("show", help="print a preset's TOML (its source is named in the comments)")
    show.add_argument("name", metavar="NAME")
    show.set_defaults(func=run_show)


def run_list(args: argparse.Namespace) -> int:
    names = preset_names()
    kernels = preset_kernels()
    width = max(len(n) for n in names)
    kwidth = max(len(k) for k in kernels.values())
    for name in names:
        print(f"{name:<{width}}  {kernels[name]:<{kwidth}}  {load_preset(name).description}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    try:
        sys.stdout.write(preset_text(args.name))
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    return 0

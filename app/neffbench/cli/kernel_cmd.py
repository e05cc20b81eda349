"""``neffbench kernel list|show``: what can be compiled (kernels bring commands of their own: ``CliContribution.commands``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "kernel",
        help="list the kernels (built-in and plugins) or show one's fields and presets",
        description="Kernels are what the workbench compiles: built-in ones, the generic module "
        "kernel, and those plugins register through the neffbench.kernels entry points.",
    )
    ksub = p.add_subparsers(dest="kernel_command", metavar="ACTION")
    lp = ksub.add_parser("list", help="every kernel, where it comes from and its presets")
    lp.add_argument("--json", action="store_true")
    lp.set_defaults(func=run_list)
    sp = ksub.add_parser("show", help="a kernel's spec fields (with ranges and help) and its presets")
    sp.add_argument("name")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=run_show)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _presets_by_kernel() -> dict[str, list[str]]:
    from neffbench.presets import preset_kernels

    out: dict[str, list[str]] = {}
    for preset, kernel in preset_kernels().items():
        out.setdefault(kernel, []).append(preset)
    return out


def run_list(args: argparse.Namespace) -> int:
    from neffbench.kernels import registry

    presets = _presets_by_kernel()
    rows: list[dict[str, typing.Any]] = []
    for name, entry in registry.entries().items():
        try:
            kernel = registry.get(name)
            rows.append(
                {
                    "name": name,
                    "origin": entry.origin,
                    "value": entry.value,
                    "title": kernel.title,
                    "summary": kernel.summary,
                    "presets": presets.get(name, []),
                    "error": None,
                }
            )
        except KeyError as exc:
            rows.append(
                {
                    "name": name,
                    "origin": entry.origin,
                    "value": entry.value,
                    "title": None,
                    "summary": None,
                    "presets": [],
                    "error": exc.args[0],
                }
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        if r["error"]:
            print(f"{r['name']:<{width}}  BROKEN ({r['origin']}): {r['error']}")
            continue
        origin = "" if r["origin"] == "built-in" else f"  [plugin: {r['origin']}]"
        print(f"{r['name']:<{width}}  {r['title']}{origin}")
        if r["presets"]:
            print(f"{'':<{width}}  presets: {', '.join(r['presets'])}")
    return 0


def _field_rows(cls: type) -> list[dict[str, typing.Any]]:
    from neffbench.spec import fields_of, sections_of, tables_of, top_fields_of

    rows = []
    for f in top_fields_of(cls):
        rows.append(("", f))
    for section in sections_of(cls):
        rows.extend((section, f) for f in fields_of(cls, section))
    out = []
    for section, f in rows:
        m = f.metadata
        default = None if f.default is dataclasses.MISSING else f.default
        if f.default_factory is not dataclasses.MISSING:
            try:
                default = f.default_factory()
            except TypeError:
                default = None
        out.append(
            {
                "key": f"{section}.{f.name}" if section else f.name,
                "label": m.get("label"),
                "help": m.get("help"),
                "default": default if not hasattr(default, "__dataclass_fields__") else None,
                "choices": list(m["choices"]) if m.get("choices") else None,
                "min": m.get("min"),
                "max": m.get("max"),
                "neff": m.get("neff", True),
            }
        )
    for table in tables_of(cls):
        meta = next(f.metadata for f in __import__("dataclasses").fields(cls) if f.name == table)
        out.append(
            {
                "key": f"[{table}]",
                "label": meta.get("label"),
                "help": meta.get("help"),
                "default": {},
                "choices": None,
                "min": None,
                "max": None,
                "neff": True,
            }
        )
    return out


def run_show(args: argparse.Namespace) -> int:
    from neffbench.kernels import registry

    try:
        kernel = registry.get(args.name)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    fields = _field_rows(kernel.spec_class)
    presets = _presets_by_kernel().get(kernel.name, [])
    if args.json:
        print(
            json.dumps(
                {
                    "name": kernel.name,
                    "title": kernel.title,
                    "summary": kernel.summary,
                    "fields": fields,
                    "presets": presets,
                },
                indent=2,
                default=str,
            )
        )
        return 0
    print(f"{kernel.name}: {kernel.title}\n  {kernel.summary}\n")
    for row in fields:
        rng = ""
        if row["choices"]:
            rng = f" one of {', '.join(map(str, row['choices']))}"
        elif row["min"] is not None or row["max"] is not None:
            rng = f" {row['min']:g}..{row['max']:g}" if row["min"] is not None and row["max"] is not None else ""
        default = "" if row["default"] in (None, "", (), {}) else f" (default {row['default']!r})"
        print(f"  {row['key']}{rng}{default}\n      {row['help']}")
    print(f"\npresets: {', '.join(presets) if presets else 'none'}")
    return 0

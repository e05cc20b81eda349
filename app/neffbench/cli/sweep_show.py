"""``neffbench sweep show``: the sweeps recorded in a workdir, or one sweep's table of its points."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

EXIT_OK, EXIT_INVALID = 0, 2


def _workdir_option(args: argparse.Namespace) -> str | None:
    return getattr(args, "spec:--workdir", None)


def show(args: argparse.Namespace) -> int:
    from neffbench.sweeps import SweepNotFound, list_sweeps, load, rows

    workdir = _workdir_option(args) or "neffbench-workdir"
    if args.sweep_id is None:
        sweeps = list_sweeps(workdir)
        if args.json:
            print(
                json.dumps(
                    [{k: s.get(k) for k in ("sweep_id", "path", "state", "created", "counts")} for s in sweeps],
                    indent=2,
                )
            )
        elif not sweeps:
            print(f"No sweep in {workdir} yet (neffbench sweep SPEC --over FIELD=V1,V2 starts one).")
        for s in [] if args.json else sweeps:
            counts = ", ".join(f"{n} {k}" for k, n in sorted((s.get("counts") or {}).items()))
            print(f"{s['sweep_id']}  {s.get('state')}  {s.get('created')}  {counts}")
        return EXIT_OK
    try:
        sweep = load(workdir, args.sweep_id)
    except (SweepNotFound, ValueError) as exc:
        print(f"neffbench: {exc}", file=sys.stderr)
        return EXIT_INVALID
    layer = getattr(args, "layer", None)
    document = None
    if args.json:
        from neffbench.api.sweeping import Sweep

        document = Sweep(sweep).to_json()
    table_rows = document["rows"] if document is not None else rows(sweep) if layer is not None else []
    if layer is not None:
        problem = _with_layer(table_rows, layer)
        if problem:
            print(f"neffbench: {problem}", file=sys.stderr)
            return EXIT_INVALID
    if document is not None:
        for row in table_rows if layer is not None else ():
            del row["layers"]  # the one module asked for is enough
        print(json.dumps(document, indent=2, default=str))
        return EXIT_OK
    print_sweep(sweep, sys.stdout)
    if layer is not None:
        from neffbench.sweeps import layers

        print("", *layers.table_lines(table_rows, layers.path_of(layer)), sep="\n")
    return EXIT_OK


def _with_layer(table_rows: list[dict[str, Any]], layer: str) -> str | None:
    """Give each row its figures at every module (``row["layers"]``) and at ``layer`` (``row["layer"]``); a sentence
    when no point's model has that module."""
    from neffbench.sweeps import layers

    path = layers.path_of(layer)
    layers.attach(table_rows)
    for row in table_rows:
        row["layer"] = {"path": path, **(row["layers"].get(path) or dict.fromkeys(layers.FIGURES))}
    known = layers.paths(table_rows)
    if path in known:
        return None
    if not known:
        return f"--layer {layer}: no point has a structure yet (neffbench structure JOB computes one for a job)"
    some = ", ".join(layers.shown(p) for p in known[:8]) + (", …" if len(known) > 8 else "")
    return f"--layer {layer}: no point's model has a module of that path (they have {some})"


def print_sweep(sweep: dict[str, Any], out: TextIO) -> None:
    from neffbench.sweeps import table_lines

    axes = " x ".join(f"{a['field']} ({len(a['values'])})" for a in sweep.get("axes") or [])
    counts = ", ".join(f"{n} {k}" for k, n in sorted((sweep.get("counts") or {}).items()))
    print(
        f"sweep {sweep['sweep_id']}: {sweep.get('state')}; {axes}{' zipped' if sweep.get('zip') else ''}; {counts}",
        file=out,
    )
    for host, node in (sweep.get("nodes") or {}).items():
        if node.get("differs"):
            from neffbench.sweeps.versions import describe

            print(f"warning: {describe(host, node['differs'])}", file=out)
    for line in table_lines(sweep):
        print(line, file=out)
    if sweep.get("path"):
        print(f"record: {sweep['path']}", file=out)

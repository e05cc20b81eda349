"""``neffbench inspect``, ``list`` and ``diff``: what a NEFF is, which NEFFs a workdir holds, and how two differ."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from neffbench.words import plural


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "inspect",
        help="show what a NEFF file says about itself (no Neuron tools needed)",
        description="Read a NEFF's header and payload: name, compiler version, target, LNC, inputs "
        "and outputs, size and sha256. Exit 0, or 1 with the reason when the file is not a good NEFF.",
    )
    p.add_argument("file", metavar="FILE.neff")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    p.add_argument("--members", action="store_true", help="also list the payload members and their sizes")
    p.set_defaults(func=run_inspect)

    p = sub.add_parser(
        "list",
        help="list every NEFF below a directory, newest first, with the job that built it",
        description="Find every *.neff below DIR and show one row each: path, size, modified time, "
        "name, inputs -> outputs, the job outcome when a job.json is above it, and why a file "
        "could not be read.",
    )
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--json", action="store_true", help="print a JSON array of records instead of the table")
    p.add_argument(
        "--header-only",
        action="store_true",
        help="read only each file's 1024-byte header (fast; no inputs/outputs or sha256)",
    )
    p.set_defaults(func=run_list)

    p = sub.add_parser(
        "diff",
        help="show what differs between two NEFFs (or jobs) and the jobs that built them",
        description="Compare two NEFFs: header fields, compiler version, input/output signatures, "
        "member sizes and, when both have a job.json above them, the specs, the source files and "
        "library versions the module was built from, its weights and the compiler commands. A job "
        "directory may stand for its NEFF (or, for a job without one, for itself: its record alone "
        "is compared). Exit 0 (whether or not they differ), or 1 when a file cannot be read.",
    )
    p.add_argument("a", metavar="A", help="a .neff file or a job directory")
    p.add_argument("b", metavar="B", help="a .neff file or a job directory")
    p.add_argument("--json", action="store_true", help="print a JSON object with a list of differences")
    p.add_argument(
        "--layers",
        action="store_true",
        help="two jobs layer by layer: per module, its structure, latest error and device time in A and in B, and "
        "the layers that differ (neffbench structure gives each job's)",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=None,
        metavar="N",
        help="with --layers: modules down to this depth (1: children), each saying what differs under it",
    )
    p.set_defaults(func=run_diff)


# --- formatting ---------------------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [headers, *rows]]


def _shape(shape: Any) -> str:
    return "?" if shape is None else "[" + ",".join(str(d) for d in shape) + "]"


def _num(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _value(v: Any) -> str:
    if v is None:
        return "(none)"
    if isinstance(v, (list, dict, tuple)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def _print_json(doc: Any) -> None:
    json.dump(doc, sys.stdout, indent=2)
    sys.stdout.write("\n")


# --- inspect ------------------------------------------------------------------------------------------------


def inspect_lines(info: Any, *, members: bool = False) -> list[str]:
    """The readable summary of a ``NeffInfo``, one line per item."""
    from neffbench.targets import codename_label

    h = info.header
    subgraphs = ", ".join(info.subgraphs) or "none listed"
    compiler = info.compiler_version or "unknown"
    if info.tool_version and info.tool_version != info.compiler_version:
        compiler += f" (tool_version {info.tool_version})"
    lines = [
        info.path,
        *_table(
            ["name", h.name or "(empty)"],
            [
                ["compiler", compiler],
                ["target", f"{codename_label(info.target)}, kelf {info.kelf_version or '?'}, subgraphs: {subgraphs}"],
                ["LNC", str(h.lnc_size)],
                [
                    "NEFF",
                    f"version {h.neff_version[0]}.{h.neff_version[1]}, pkg_version {h.pkg_version}, "
                    f"num_tpb {h.num_tpb}, build {h.build_version or '-'}",
                ],
                ["uuid", h.uuid],
                ["features", f"{h.feature_bits:#x} (bits {', '.join(map(str, h.feature_bits_set)) or 'none'})"],
                [
                    "size",
                    f"{info.size:,} bytes ({'gzip' if info.compressed else 'uncompressed'} payload, "
                    f"{info.payload_size:,} bytes of tar, {info.member_count} members)",
                ],
                ["constants", f"{info.constants_count} inlined, {info.constants_bytes:,} bytes"],
                ["sha256", info.sha256],
            ],
        ),
    ]
    for side, tensors in (("inputs", info.inputs), ("outputs", info.outputs)):
        source = info.io_source.get(side)
        lines.append(f"{side} (from {source})" if source else f"{side}: none found")
        if tensors:
            lines += _table(
                ["name", "dtype", "shape", "bytes"],
                [[t.name, t.dtype or "?", _shape(t.shape), _num(t.nbytes)] for t in tensors],
            )
    lines += [f"warning: {w}" for w in info.warnings]
    if members:
        lines.append(f"members ({info.member_count})")
        lines += _table(["name", "size", "type"], [[m.name, f"{m.size:,}", m.type] for m in info.members])
    return lines


def run_inspect(args: argparse.Namespace) -> int:
    from neffbench.neff import NeffError, read_neff

    try:
        info = read_neff(args.file)
    except NeffError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.json:
        _print_json(info.to_dict(members=args.members))
    else:
        print("\n".join(inspect_lines(info, members=args.members)))
    return 0


# --- list ---------------------------------------------------------------------------------------------------


def run_list(args: argparse.Namespace) -> int:
    from neffbench.jobs.records import mark_interrupted
    from neffbench.jobs.summary import outcome_label
    from neffbench.targets import codename_label
    from neffbench.views.workdir import scan_workdir

    try:
        for job_dir in mark_interrupted(args.dir):
            print(
                f"neffbench: {job_dir.name} was left running by a process that is gone: marked interrupted",
                file=sys.stderr,
            )
        records = scan_workdir(args.dir, header_only=args.header_only)
    except OSError as exc:
        print(f"neffbench list: {exc}", file=sys.stderr)
        return 1
    if args.json:
        from neffbench.api.compiling import Neff

        _print_json([Neff(r).to_json() for r in records])
        return 0
    if not records:
        print(f"no NEFF files below {args.dir}")
        return 0
    rows = []
    for r in records:
        job = outcome_label(r.job, r.job.outcome) if r.job else ("job.json unreadable" if r.job_error else "-")
        problem = r.error or r.job_error or "; ".join(r.warnings)
        info = r.info
        # The header alone does not name the target (kelf-0.json in the payload does): "-" then.
        target = codename_label(info.target) if info and info.target else "-"
        rows.append(
            [
                r.rel_path,
                f"{r.size:,}",
                r.modified,
                info.header.name if info else "?",
                target,
                (info.io_summary() or "-") if info else "-",
                job,
                problem,
            ]
        )
    print(
        "\n".join(
            _table(
                ["path", "size", "modified", "name", "target", "inputs -> outputs", "job", "problem"], rows, indent=""
            )
        )
    )
    unreadable = sum(1 for r in records if r.error)
    print(plural(len(records), "NEFF file") + (f", {unreadable} unreadable" if unreadable else ""))
    return 0


# --- diff ---------------------------------------------------------------------------------------------------


def _diff_side(path: str) -> tuple[str | None, Any]:
    """(NEFF path or None, job record or None) of a .neff file or a job directory (or its job.json)."""
    from pathlib import Path

    from neffbench.neff import find_job
    from neffbench.views.job_file import RecordError, read_job

    p = Path(path)
    if p.name == "job.json" or (p.is_dir() and (p / "job.json").is_file()):
        job_json = p if p.name == "job.json" else p / "job.json"
        job = read_job(job_json)
        neffs = [job_json.parent / n["path"] for n in job.neffs if isinstance(n.get("path"), str)]
        return (str(neffs[0]) if neffs and neffs[0].is_file() else None), job
    if p.is_dir():
        raise RecordError(f"{path} is a folder without a job.json: not a job directory")
    job_path = find_job(path)
    try:
        return path, read_job(job_path) if job_path else None
    except RecordError as exc:
        print(f"warning: {exc}", file=sys.stderr)
        return path, None


def run_layers_diff(args: argparse.Namespace) -> int:
    """``diff JOB_A JOB_B --layers``: the two jobs' structures side by side, layer by layer."""
    from pathlib import Path

    from neffbench.structure import diff
    from neffbench.structure.document import StructureError
    from neffbench.structure.rebuild import laid
    from neffbench.views.job_file import RecordError

    sides = []
    for given in (args.a, args.b):
        job_dir = Path(given).expanduser().resolve()
        if not (job_dir / "job.json").is_file():
            print(f"--layers compares two job directories; {given} is not one (it has no job.json).", file=sys.stderr)
            return 1
        try:
            sides.append(laid(job_dir, lambda line: print(line, file=sys.stderr, flush=True)))
        except (StructureError, RecordError) as exc:
            print(f"{given}: {exc}", file=sys.stderr)
            return 1
    rows = diff.folded(diff.diff(*sides), args.depth)
    name_a, name_b = Path(args.a).resolve().name, Path(args.b).resolve().name
    if args.json:
        _print_json(diff.document(rows, name_a, name_b))
    else:
        print("\n".join(diff.lines(rows, name_a, name_b)))
    return 0


def run_diff(args: argparse.Namespace) -> int:
    if args.layers:
        return run_layers_diff(args)
    from neffbench.neff import NeffError, read_neff
    from neffbench.views.job_diff import diff_built, diff_jobs
    from neffbench.views.job_file import RecordError

    sides = []
    for path in (args.a, args.b):
        try:
            sides.append(_diff_side(path))
        except (RecordError, OSError) as exc:
            print(exc, file=sys.stderr)
            return 1
    (neff_a, job_a), (neff_b, job_b) = sides
    jobs = [job_a, job_b]
    if neff_a is not None and neff_b is not None:
        try:
            info_a, info_b = read_neff(neff_a), read_neff(neff_b)
        except NeffError as exc:
            print(exc, file=sys.stderr)
            return 1
        diffs = diff_built(info_a, info_b, job_a=job_a, job_b=job_b)
    elif job_a is not None and job_b is not None:
        diffs = diff_jobs(job_a, job_b)  # a job without a NEFF (cpu-check): its record is what there is
    else:
        print(
            f"{args.a if neff_a is None else args.b} is neither a NEFF nor a job directory with one, and the other "
            "side has no job record to compare with.",
            file=sys.stderr,
        )
        return 1
    if args.json:
        _print_json(
            {
                "a": args.a,
                "b": args.b,
                "job_a": jobs[0].path if jobs[0] else None,
                "job_b": jobs[1].path if jobs[1] else None,
                "differences": [d.to_dict() for d in diffs],
            }
        )
        return 0
    print(f"A: {args.a}" + (f"  (job {jobs[0].path})" if jobs[0] else ""))
    print(f"B: {args.b}" + (f"  (job {jobs[1].path})" if jobs[1] else ""))
    if not diffs:
        print("no differences")
        return 0
    sections: dict[str, list[Any]] = {}
    for d in diffs:
        sections.setdefault(d.section, []).append(d)
    for section, items in sections.items():
        print(f"[{section}]")
        print("\n".join(_table(["field", "A", "B"], [[d.key, _value(d.a), _value(d.b)] for d in items])))
    print(plural(len(diffs), "difference"))
    return 0

"""``neffbench structure``'s words: the tree as an indented table, the sources of its figures, and its JSON."""

from __future__ import annotations

from typing import Any

from neffbench.structure import cells
from neffbench.structure.layers import REFERENCES, Laid
from neffbench.words import plural

_LABELS = {"vs_eager": "against eager", "vs_float64": "against float64"}


def aligned(headers: list[str], rows: list[list[str]], right: list[bool]) -> list[str]:
    """A table as text: each column as wide as its widest cell, numbers (``right``) to the right."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    return [
        "  ".join(c.rjust(w) if r_ else c.ljust(w) for c, w, r_ in zip(r, widths, right)).rstrip()
        for r in [headers, *rows]
    ]


def groups(laid: Laid) -> set[str]:
    """Which columns this job has figures for."""
    have = {"structure"}
    if laid.compare is not None:
        have.add("error")
    if laid.profile is not None and any(layer.time for layer in laid.layers.values()):
        have.add("time")
    return have


def headline(laid: Laid, job: str) -> str:
    s = laid.structure
    root = s.root
    return (
        f"{job}: {root.cls}, {plural(len(s.nodes) - 1, 'submodule', grouped=True)}, "
        f"{plural(root.params, 'parameter', grouped=True)}, {cells.count(root.flops) or 0} FLOPs, "
        f"{plural(len(s.ops), 'traced operation', grouped=True)}"
    )


def sources(laid: Laid, job_dir: str) -> list[str]:
    """Where the error and time columns come from, or how to get them."""
    out = []
    if laid.structure.trace_note:
        out.append(f"operations: {laid.structure.trace_note}")
    c = laid.compare
    if c is None:
        out.append(f"error: no compare yet (`neffbench compare {job_dir}` adds each layer's error)")
    else:
        out.append(
            f"error: the compare of {c.created or '?'} on the {c.runtime or '?'} runtime ({c.path.name}): {c.verdict}"
        )
        for reference in REFERENCES:
            first = c.first_divergent.get(reference)
            if first is not None:
                out.append(f"  first divergent {_LABELS[reference]}: {first or '(the root)'}")
    p = laid.profile
    if p is None:
        out.append(f"time: no profile yet (`neffbench run {job_dir} --profile` adds each layer's device time)")
    else:
        out.append(f"time: {p.words()}")
        whole = p.whole
        figures = [
            f"total {cells.duration(whole.get('total_time'))}"
            if isinstance(whole.get("total_time"), (int, float))
            else "",
            *(
                f"{key.split('_')[0]} {cells.percent(whole[key])}"
                for key in (
                    "tensor_engine_active_time_percent",
                    "vector_engine_active_time_percent",
                    "scalar_engine_active_time_percent",
                    "gpsimd_engine_active_time_percent",
                    "dma_active_time_percent",
                )
                if isinstance(whole.get(key), (int, float))
            ),
            *(
                f"{label} {cells.percent(whole[key])}"
                for key, label in (("mfu_estimated_percent", "MFU"), ("hfu_estimated_percent", "HFU"))
                if isinstance(whole.get(key), (int, float))
            ),
        ]
        out.append("  the NEFF: " + ", ".join(f for f in figures if f))
        if p.peak is not None:
            out.append(f"  peak: {p.peak.what}")
    out += [f"note: {n}" for n in laid.notes]
    return out


def rows(laid: Laid, depth: int | None = None, indent: str = "  ") -> tuple[list[cells.Column], list[list[str]]]:
    """The columns the figures at hand fill, and a row of cells per module shown, its name indented by its depth."""
    have = groups(laid)
    columns = [c for c in cells.COLUMNS if c.group in have]
    out = []
    for node in laid.structure.shown(depth):
        row = [c.cell(laid.layer(node.path)) for c in columns]
        row[0] = indent * (node.path.count(".") + (1 if node.path else 0))
        row[0] += node.path.rpartition(".")[2] if node.path else node.cls
        out.append(row)
    return columns, out


def lines(laid: Laid, job: str, job_dir: str, depth: int | None = None) -> list[str]:
    columns, shown = rows(laid, depth)
    table = aligned([c.heading for c in columns], shown, [c.numeric for c in columns])
    return [headline(laid, job), *sources(laid, job_dir), "", *table]


def document(laid: Laid, job: str, depth: int | None = None) -> dict[str, Any]:
    """``--json``: every shown module with its figures as numbers, and where the error and time come from."""
    nodes = []
    for node in laid.structure.shown(depth):
        layer = laid.layer(node.path)
        t = layer.time
        nodes.append(
            {
                "path": node.path,
                "class": node.cls,
                "calls": node.calls,
                "inputs": [
                    {"dtype": x.dtype, "shape": list(x.shape), **({"name": x.name} if x.name else {})}
                    for x in node.inputs
                ],
                "outputs": [{"dtype": x.dtype, "shape": list(x.shape)} for x in node.outputs],
                "params": node.params,
                "param_bytes": node.param_bytes,
                "buffer_bytes": node.buffer_bytes,
                "flops": node.flops,
                "bytes": node.bytes,
                "ops": dict(node.ops),
                "op_total": node.op_total,
                "defined_at": node.defined_at,
                "called_at": node.called_at,
                "called_in": node.called_in,
                "vs_eager": dict(layer.vs_eager) if layer.vs_eager else None,
                "vs_float64": dict(layer.vs_float64) if layer.vs_float64 else None,
                "first_divergent": list(layer.first_divergent),
                "time": None
                if t is None
                else {
                    "seconds": t.seconds,
                    "share": t.share,
                    "instructions": dict(t.instructions),
                    "hbm_bytes": t.hbm_bytes,
                    "sbuf_bytes": t.sbuf_bytes,
                    "operations": t.operations,
                    "flops_per_s": t.flops_per_s,
                    "peak_share": t.peak_share,
                },
            }
        )
    c, p = laid.compare, laid.profile
    return {
        "job": job,
        "computed": laid.structure.computed,
        "how": laid.structure.how,
        "nodes": nodes,
        "compare": None
        if c is None
        else {
            "path": str(c.path),
            "created": c.created,
            "runtime": c.runtime,
            "verdict": c.verdict,
            "first_divergent": dict(c.first_divergent),
        },  # fmt: skip
        "profile": None
        if p is None
        else {
            "path": str(p.path),
            "run": str(p.run) if p.run else None,
            "neff": p.neff,
            "tool": p.tool,
            "tool_version": p.tool_version,
            "source": p.source,
            "whole": dict(p.whole),
            "unmapped": list(p.unmapped),
            "peak": p.peak.what if p.peak else None,
        },  # fmt: skip
        "notes": list(laid.notes),
    }

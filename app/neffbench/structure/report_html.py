"""A job as one self-contained HTML file to attach to an issue: what was compiled and how, its structure with each
layer's error and device time, the data flow of its upper levels, its numerics, its profile and its compiler
passes. No script, no request to anywhere: styles inline, drawings as SVG, every figure as text.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

from neffbench.jobs.summary import human_bytes
from neffbench.structure import cells, flow, layout, table
from neffbench.structure.layers import Laid, Layer
from neffbench.views.job import JobView

MAX_DRAWINGS = 24  # data-flow drawings of the upper levels; deeper ones are in the window
STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1b1b}
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;white-space:nowrap}
th{background:#f2f2f2}tr:nth-child(even) td{background:#fafafa}td.n{text-align:right}
.bad{color:#b00020;font-weight:600}.first{background:#ffe0e0!important}.dim{color:#777}
details{margin-left:14px}summary{cursor:pointer}svg{border:1px solid #eee;margin:6px 0}
code{background:#f4f4f4;padding:0 3px}
"""
FILL = {"module": "#e8f0fe", "op": "#f1f3f4", "input": "#e6f4ea", "output": "#fce8e6"}


def _e(text: object) -> str:
    return html.escape(str(text))


def _svg(laid: Laid, path: str) -> str:
    f = flow.flow(laid.structure, path)
    if f.note and not f.vertices:
        return f"<p class=dim>{_e(f.note)}</p>"
    drawn = layout.layout(f)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{drawn.width + 20:.0f}" height="{drawn.height + 20:.0f}">',
        '<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0L10,5L0,10z" fill="#555"/></marker></defs><g transform="translate(10,10)">',
    ]
    for _, _, points in drawn.edges:
        if len(points) >= 2:
            d = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            out.append(f'<polyline points="{d}" fill="none" stroke="#555" marker-end="url(#a)"/>')
    for v in f.vertices:
        box = drawn.boxes.get(v.id)
        if box is None:
            continue
        paths = v.members or ((v.path,) if v.kind == "module" and v.path is not None else ())
        members = [laid.layers[m] for m in paths if m in laid.layers]
        fill = _colour(members) or FILL[v.kind]
        x, y = box.x - box.w / 2, box.y - box.h / 2
        out.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" rx="4" fill="{fill}" stroke="#888"/>'
        )
        lines = [v.label] + ([v.detail] if v.kind == "module" and v.detail else [])
        for i, line in enumerate(lines):
            ty = y + layout.PAD / 2 + layout.LINE_H * (i + 0.8)
            out.append(f'<text x="{box.x:.1f}" y="{ty:.1f}" text-anchor="middle" font-size="12">{_e(line)}</text>')
    out.append("</g></svg>")
    return "".join(out)


def _colour(layers: list[Layer]) -> str | None:
    """Red for a layer over tolerance (its worst element's error in multiples of it), by how far; a run of alike
    layers by its worst."""
    worst = cells.worst_error(layers) or 0.0
    if worst <= 1:
        return None
    strength = min(1.0, math.log10(worst) / 3) if not math.isinf(worst) else 1.0
    g = int(224 - 120 * strength)
    return f"rgb(255,{g},{g})"


def _tree(laid: Laid) -> str:
    have = table.groups(laid)
    columns = [c for c in cells.COLUMNS if c.group in have]
    head = "".join(f"<th>{_e(c.heading)}</th>" for c in columns)
    rows = []
    for node in laid.structure.nodes:
        layer = laid.layer(node.path)
        indent = 14 * (node.path.count(".") + (1 if node.path else 0))
        tds = []
        for i, c in enumerate(columns):
            text = c.cell(layer)
            klass = "n" if c.numeric else ""
            if c.group == "error" and text.startswith("FAIL"):
                klass += " bad"
            style = f' style="padding-left:{indent + 8}px"' if i == 0 else ""
            tds.append(f'<td class="{klass.strip()}"{style}>{_e(text)}</td>')
        first = ' class="first"' if layer.first_divergent else ""
        rows.append(f"<tr{first} title='{_e(node.path or node.cls)}'>{''.join(tds)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def render(laid: Laid, job: JobView, job_dir: Path) -> str:
    name = job.job_id or job_dir.name
    compiler = dict((job.spec or {}).get("compiler") or {})
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(name)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(name)}</h1>",
        f"<p>{_e(job.outcome or '?')}: kernel {_e(job.kernel or '?')}, backend {_e(job.backend or '?')}, "
        f"target {_e(compiler.get('target', '?'))}, created {_e(job.created or '?')}"
        + (f"; {_e(job.reason)}" if job.reason else "")
        + "</p>",
        "<h2>Structure</h2>",
        f"<p>{_e(table.headline(laid, name))}</p>",
        "<ul>" + "".join(f"<li>{_e(line)}</li>" for line in table.sources(laid, str(job_dir))) + "</ul>",
        _tree(laid),
        "<h2>Data flow</h2>",
    ]
    drawn = 0
    for node in laid.structure.nodes:
        if drawn >= MAX_DRAWINGS:
            parts.append("<p class=dim>Deeper levels are drawn in the window (neffbench, Structure tab).</p>")
            break
        if node.depth > 1 or node.container or not laid.structure.flow_children(node.path) and node.path:
            continue
        parts.append(f"<details{' open' if not node.path else ''}><summary>{_e(node.path or node.cls)} "
                     f"<span class=dim>({_e(node.cls)})</span></summary>{_svg(laid, node.path)}</details>")  # fmt: skip
        drawn += 1
    numerics = job.numerics or {}
    parts.append("<h2>Numerics</h2>")
    if numerics:
        parts.append(
            f"<p>Against the eager reference: {'match' if numerics.get('match') else 'MISMATCH' if numerics.get('checked') else 'not checked'}"
            f" (max abs error {_e(numerics.get('max_abs_error'))}, atol {_e(numerics.get('atol'))}, rtol {_e(numerics.get('rtol'))})</p>"
        )
    if laid.compare is not None:
        parts.append(f"<p>Latest compare ({_e(laid.compare.path.name)}): {_e(laid.compare.verdict)}</p>")
    parts.append("<h2>Profile</h2>")
    if laid.profile is None:
        parts.append(f"<p class=dim>No profile: <code>neffbench run {_e(job_dir)} --profile</code> makes one.</p>")
    else:
        p = laid.profile
        parts.append(f"<p>{_e(p.words())}</p><table>")
        for key, value in p.whole.items():
            shown = cells.percent(value) if key.endswith("_percent") and isinstance(value, (int, float)) else value
            shown = human_bytes(value) if key.endswith("_bytes") and isinstance(value, int) else shown
            shown = cells.duration(value) if key == "total_time" and isinstance(value, (int, float)) else shown
            parts.append(f"<tr><td>{_e(key)}</td><td class=n>{_e(shown)}</td></tr>")
        parts.append("</table>")
    passes = [p for p in (job.compiler.get("passes") or []) if isinstance(p, dict)]
    parts.append("<h2>Compile</h2>")
    stages = ", ".join(f"{k} {v.get('duration_s')} s" for k, v in job.stages.items() if isinstance(v, dict))
    parts.append(f"<p>Stages: {_e(stages or 'none recorded')}</p>")
    if passes:
        parts.append("<table><tr><th>compiler pass</th><th>seconds</th></tr>")
        parts += [f"<tr><td>{_e(p.get('name'))}</td><td class=n>{_e(p.get('duration_s'))}</td></tr>" for p in passes]
        parts.append("</table>")
    command = job.actual_command or job.requested_command
    if command:
        parts.append(f"<p>Compiler command: <code>{_e(' '.join(command))}</code></p>")
    parts.append("</body></html>")
    return "\n".join(parts)

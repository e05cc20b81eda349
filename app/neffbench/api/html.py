"""What a record shows of itself in Jupyter: small HTML tables and inline SVG charts, drawn here (no server, no
plotting library), so a notebook saved with its outputs shows them anywhere."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import Any

_OK, _BAD, _NEUTRAL = "#2e7d32", "#c62828", "#546e7a"
_STYLE = "border-collapse:collapse;font-family:monospace;font-size:12px"
_CELL = "border:1px solid #ccc;padding:2px 6px;text-align:left"


def escape(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def colour(ok: bool | None) -> str:
    return _NEUTRAL if ok is None else (_OK if ok else _BAD)


def heading(title: str, verdict: str, ok: bool | None) -> str:
    return f'<div><b>{escape(title)}</b> <span style="color:{colour(ok)}">{escape(verdict)}</span></div>'


def pairs(items: Iterable[tuple[str, Any]]) -> str:
    """A two-column table of labels and values."""
    rows = "".join(
        f'<tr><th style="{_CELL}">{escape(k)}</th><td style="{_CELL}">{escape(v)}</td></tr>' for k, v in items
    )
    return f'<table style="{_STYLE}">{rows}</table>'


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f'<th style="{_CELL}">{escape(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f'<td style="{_CELL}">{escape(c)}</td>' for c in row) + "</tr>" for row in rows)
    return f'<table style="{_STYLE}"><tr>{head}</tr>{body}</table>'


def histogram(values: Sequence[float], *, unit: str, bins: int = 24, width: int = 320, height: int = 90) -> str:
    """An SVG histogram of ``values`` with its range under it; empty for no values."""
    if not values:
        return ""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - low) / span * bins))] += 1
    top = max(counts)
    bar = width / bins
    rects = "".join(
        f'<rect x="{i * bar:.1f}" y="{height - 14 - c / top * (height - 18):.1f}" width="{bar - 1:.1f}" '
        f'height="{c / top * (height - 18):.1f}" fill="{_NEUTRAL}"><title>{c}</title></rect>'
        for i, c in enumerate(counts)
        if c
    )
    labels = (
        f'<text x="0" y="{height - 2}" font-size="10">{low:.4g} {escape(unit)}</text>'
        f'<text x="{width}" y="{height - 2}" font-size="10" text-anchor="end">{high:.4g} {escape(unit)}</text>'
    )
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">{rects}{labels}</svg>'


def bars(
    labels: Sequence[str],
    values: Sequence[float | None],
    oks: Sequence[bool | None],
    *,
    limit: float | None = None,
    width: int = 420,
    row: int = 16,
) -> str:
    """An SVG bar per label on a log scale (errors in multiples of tolerance), coloured by verdict; ``limit`` draws
    the line a bar must stay under. A label without a value gets no bar."""
    known = [v for v in values if v is not None and v > 0]
    if not labels:
        return ""
    lo = math.log10(min(known + ([limit] if limit else []))) - 0.5 if known else -1.0
    hi = math.log10(max(known + ([limit] if limit else []))) + 0.5 if known else 1.0
    text_w, plot_w = 150, width - 150

    def x(v: float) -> float:
        return text_w + (math.log10(v) - lo) / ((hi - lo) or 1.0) * plot_w

    parts = []
    for i, (label, value, ok) in enumerate(zip(labels, values, oks)):
        y = i * row
        parts.append(f'<text x="0" y="{y + row - 4}" font-size="11">{escape(label[:24])}</text>')
        if value is not None and value > 0:
            parts.append(
                f'<rect x="{text_w}" y="{y + 2}" width="{max(1.0, x(value) - text_w):.1f}" height="{row - 4}" '
                f'fill="{colour(ok)}"><title>{escape(label)}: {value:.3g}</title></rect>'
            )
    if limit:
        parts.append(
            f'<line x1="{x(limit):.1f}" x2="{x(limit):.1f}" y1="0" y2="{len(labels) * row}" stroke="#000" '
            'stroke-dasharray="3,2"><title>tolerance</title></line>'
        )
    height = len(labels) * row + 2
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">{"".join(parts)}</svg>'


def block(*parts: str) -> str:
    return "<div>" + "".join(p for p in parts if p) + "</div>"

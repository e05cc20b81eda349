"""The user's manual (the README) and its sections, for the window's Help menu: the README beside a source
checkout, else the copy installed with the package's metadata."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

_CHECKOUT_README = Path(__file__).resolve().parents[2] / "README.md"
_HEADING = re.compile(r"^## (.+)$", re.MULTILINE)


def text() -> str:
    """The README's Markdown, or "" when neither a checkout's nor the installed metadata's is there."""
    if _CHECKOUT_README.is_file():
        return _CHECKOUT_README.read_text(encoding="utf-8")
    try:
        meta = importlib.metadata.metadata("neffbench")
    except importlib.metadata.PackageNotFoundError:
        return ""
    return meta.get_payload() or meta.get("Description") or ""  # type: ignore[attr-defined]


def sections(markdown: str) -> dict[str, str]:
    """Each ``## `` section's title and its Markdown (its ``###`` subsections included), in order; what comes
    before the first is "Introduction"."""
    heads = list(_HEADING.finditer(markdown))
    out = {"Introduction": markdown[: heads[0].start()] if heads else markdown}
    for head, after in zip(heads, [*heads[1:], None], strict=True):
        out[head.group(1).strip()] = markdown[head.start() : after.start() if after else len(markdown)]
    return out

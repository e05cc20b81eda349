"""What differs between two NEFFs, and the comparisons of plain dicts (specs, source blocks) that the job records'
diff (views/job_diff.py) builds on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neffbench.neff.reader import NeffInfo, TensorInfo

SECTIONS = (
    "file",
    "header",
    "payload",
    "inputs",
    "outputs",
    "members",
    "job",
    "spec",
    "sources",
    "weights",
    "compiler_command",
)
_PAYLOAD_FIELDS = (
    "compressed",
    "payload_size",
    "compiler_version",
    "tool_version",
    "target",
    "kelf_version",
    "subgraphs",
    "member_count",
    "constants",
    "io_source",
)


@dataclass(frozen=True)
class Difference:
    section: str  # one of SECTIONS (the job's sections come from views/job_diff.py)
    key: str
    a: Any  # None when the thing is absent on that side
    b: Any

    def to_dict(self) -> dict[str, Any]:
        return {"section": self.section, "key": self.key, "a": self.a, "b": self.b}


def compare(section: str, a: dict[str, Any], b: dict[str, Any], keys: Any = None) -> list[Difference]:
    """The keys (in ``keys``' order, else as they come) whose values differ between ``a`` and ``b``."""
    order = list(keys) if keys is not None else list(dict.fromkeys([*a, *b]))
    return [Difference(section, k, a.get(k), b.get(k)) for k in order if a.get(k) != b.get(k)]


def _tensors(section: str, a: tuple[TensorInfo, ...], b: tuple[TensorInfo, ...]) -> list[Difference]:
    def sig(t: TensorInfo) -> str:
        return t.summary().split(" ", 1)[1]  # dtype[shape]

    return compare(section, {t.name: sig(t) for t in a}, {t.name: sig(t) for t in b})


def spec_differences(a: dict[str, Any], b: dict[str, Any]) -> list[Difference]:
    """The fields (by dotted name) whose values differ between two specs as dicts."""
    return compare("spec", _flatten(a), _flatten(b))


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and (value or not prefix):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def file_differences(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[tuple[str, str | None, str | None]]:
    """(name, what A has, what B has) for each source file, data file or distribution that differs."""

    def table(block: dict[str, Any] | None) -> dict[str, str]:
        block = block or {}
        out = {f"{f['kind']} {f['name']}": f"sha256 {f['sha256'][:12]}" for f in block.get("files") or []}
        out.update({f"distribution {d}": v for d, v in (block.get("distributions") or {}).items()})
        return out

    ta, tb = table(a), table(b)
    return [(k, ta.get(k), tb.get(k)) for k in dict.fromkeys([*ta, *tb]) if ta.get(k) != tb.get(k)]


def diff_neffs(a: NeffInfo, b: NeffInfo) -> list[Difference]:
    """Every difference between the two files, section by section (the NEFF sections of ``SECTIONS``); an empty
    list means nothing differs. What differs between the jobs that built them is views/job_diff.py's."""
    diffs = compare("file", {"size": a.size, "sha256": a.sha256}, {"size": b.size, "sha256": b.sha256})
    head_a, head_b = a.header.to_dict(), b.header.to_dict()
    head_a.pop("feature_bits_set")
    head_b.pop("feature_bits_set")
    diffs += compare("header", head_a, head_b)
    if not (a.header_only or b.header_only):
        pa, pb = a.to_dict(members=False), b.to_dict(members=False)
        diffs += compare("payload", pa, pb, _PAYLOAD_FIELDS)
        diffs += _tensors("inputs", a.inputs, b.inputs)
        diffs += _tensors("outputs", a.outputs, b.outputs)
        diffs += compare(
            "members",
            {m.name: m.size for m in a.members if m.type == "file"},
            {m.name: m.size for m in b.members if m.type == "file"},
        )
    return diffs

"""What differs between two NEFFs, and between the job records (spec, compiler command) that built them."""

from __future__ import annotations

import shlex
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.neff.index import JobRecord
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
    section: str  # one of SECTIONS
    key: str
    a: Any  # None when the thing is absent on that side
    b: Any

    def to_dict(self) -> dict[str, Any]:
        return {"section": self.section, "key": self.key, "a": self.a, "b": self.b}


def _compare(section: str, a: dict[str, Any], b: dict[str, Any], keys: Any = None) -> list[Difference]:
    order = list(keys) if keys is not None else list(dict.fromkeys([*a, *b]))
    return [Difference(section, k, a.get(k), b.get(k)) for k in order if a.get(k) != b.get(k)]


def _tensors(section: str, a: tuple[TensorInfo, ...], b: tuple[TensorInfo, ...]) -> list[Difference]:
    def sig(t: TensorInfo) -> str:
        return t.summary().split(" ", 1)[1]  # dtype[shape]

    return _compare(section, {t.name: sig(t) for t in a}, {t.name: sig(t) for t in b})


def spec_differences(a: dict[str, Any], b: dict[str, Any]) -> list[Difference]:
    """The fields (by dotted name) whose values differ between two specs as dicts."""
    return _compare("spec", _flatten(a), _flatten(b))


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and (value or not prefix):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _in_job_terms(argv: list[str] | None, job: JobRecord) -> list[str] | None:
    """The command with the job's own directory written as ``<job>``: every job has its own, so
    comparing raw paths would flag every argument that names a file."""
    if argv is None:
        return None
    job_dir = str(Path(job.path).parent)
    return [arg.replace(job_dir, "<job>") for arg in argv]


def _commands(a: JobRecord, b: JobRecord) -> list[Difference]:
    out = []
    for which in ("requested", "actual"):
        argv_a = _in_job_terms(getattr(a, f"{which}_command"), a)
        argv_b = _in_job_terms(getattr(b, f"{which}_command"), b)
        if argv_a == argv_b:
            continue
        out.append(
            Difference(
                "compiler_command",
                which,
                shlex.join(argv_a) if argv_a is not None else None,
                shlex.join(argv_b) if argv_b is not None else None,
            )
        )
        if argv_a is not None and argv_b is not None:
            # The flags that changed, without the paths and flags both runs share.
            only_a = Counter(argv_a) - Counter(argv_b)
            only_b = Counter(argv_b) - Counter(argv_a)
            out.append(
                Difference(
                    "compiler_command",
                    f"{which} (arguments only in one)",
                    " ".join(x for x in argv_a if only_a[x]),
                    " ".join(x for x in argv_b if only_b[x]),
                )
            )
    return out


def file_differences(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[tuple[str, str | None, str | None]]:
    """(name, what A has, what B has) for each source file, data file or distribution that differs."""

    def table(block: dict[str, Any] | None) -> dict[str, str]:
        block = block or {}
        out = {f"{f['kind']} {f['name']}": f"sha256 {f['sha256'][:12]}" for f in block.get("files") or []}
        out.update({f"distribution {d}": v for d, v in (block.get("distributions") or {}).items()})
        return out

    ta, tb = table(a), table(b)
    return [(k, ta.get(k), tb.get(k)) for k in dict.fromkeys([*ta, *tb]) if ta.get(k) != tb.get(k)]


def diff_neffs(
    a: NeffInfo, b: NeffInfo, *, job_a: JobRecord | None = None, job_b: JobRecord | None = None
) -> list[Difference]:
    """Every difference, section by section (see ``SECTIONS``); an empty list means nothing differs."""
    diffs = _compare("file", {"size": a.size, "sha256": a.sha256}, {"size": b.size, "sha256": b.sha256})
    head_a, head_b = a.header.to_dict(), b.header.to_dict()
    head_a.pop("feature_bits_set")
    head_b.pop("feature_bits_set")
    diffs += _compare("header", head_a, head_b)
    if not (a.header_only or b.header_only):
        pa, pb = a.to_dict(members=False), b.to_dict(members=False)
        diffs += _compare("payload", pa, pb, _PAYLOAD_FIELDS)
        diffs += _tensors("inputs", a.inputs, b.inputs)
        diffs += _tensors("outputs", a.outputs, b.outputs)
        diffs += _compare(
            "members",
            {m.name: m.size for m in a.members if m.type == "file"},
            {m.name: m.size for m in b.members if m.type == "file"},
        )
    if job_a is None and job_b is None:
        return diffs
    if job_a is None or job_b is None:
        diffs.append(Difference("job", "job.json", job_a.path if job_a else None, job_b.path if job_b else None))
        return diffs
    return diffs + diff_jobs(job_a, job_b)


def diff_jobs(job_a: JobRecord, job_b: JobRecord) -> list[Difference]:
    """What differs between two job records: outcome and hash, spec fields, the files and library versions the
    module was built from (a changed source file is why two specs alike compile differently), its weights, and
    the compiler commands."""
    diffs = _compare(
        "job",
        {"job_id": job_a.job_id, "outcome": job_a.outcome, "backend": job_a.backend, "spec_hash": job_a.spec_hash},
        {"job_id": job_b.job_id, "outcome": job_b.outcome, "backend": job_b.backend, "spec_hash": job_b.spec_hash},
    )
    diffs += spec_differences(job_a.spec, job_b.spec)
    sources_a, sources_b = job_a.record.get("sources"), job_b.record.get("sources")
    if sources_a or sources_b:
        diffs += [Difference("sources", name, a, b) for name, a, b in file_differences(sources_a, sources_b)]
    weights_a = (job_a.record.get("weights") or {}).get("sha256")
    weights_b = (job_b.record.get("weights") or {}).get("sha256")
    if weights_a != weights_b:
        diffs.append(Difference("weights", "sha256", weights_a and weights_a[:12], weights_b and weights_b[:12]))
    diffs += _commands(job_a, job_b)
    return diffs

"""Before a compile of the user's code starts any job: the source closure its build reads, and the problems only
running that code can find (an entry that does not resolve, an input that names no parameter).

The closure comes from the newest job in the workdir whose build read it, when every file it lists is still what
that job read (checked file by file, so no probe is needed); otherwise a probe child resolves the entry and makes
the module while watching what it imports and opens. Knowing the closure before the job starts is what lets the
spec hash, the job's name and the cache key cover it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.jobs.records import records_mentioning
from neffbench.kernels import registry
from neffbench.usercode import closure as sources
from neffbench.views.fields import RecordError
from neffbench.views.job import JobView

Ask = Callable[[str, dict], dict]


@dataclass
class Prepared:
    """What a compile knows before its jobs start. ``sources`` None: not known (jobs record their own, and the
    cache neither serves them nor is served by them until they have)."""

    sources: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    note: str = ""
    traceback: str = ""

    @property
    def digest(self) -> str | None:
        return (self.sources or {}).get("digest")


def sources_key(spec: Any) -> str:
    key = registry.for_spec(spec).sources_key(spec)
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()


def needed(spec: Any) -> bool:
    return bool(registry.for_spec(spec).runs_user_code)


def recorded(workdir: str | Path, spec: Any, *, tries: int = 5) -> Prepared | None:
    """The closure the newest job of the same build read whose files and versions are all unchanged (the newest
    few are checked, so that an edit undone finds the closure of before it again)."""
    wanted = sources_key(spec)
    found: list[tuple[str, dict[str, Any], str]] = []
    for job_dir, record in records_mentioning(workdir, wanted):
        try:
            job = JobView.of(record, str(job_dir / "job.json"))
        except RecordError:  # a newer neffbench's closure may not mean what this one's does
            continue
        block = job.sources or {}
        if block.get("key") == wanted and block.get("files") is not None:
            found.append((job.created or "", block, job_dir.name))
    for _, block, job_id in sorted(found, key=lambda item: item[0], reverse=True)[:tries]:
        if not sources.changes(block):
            return Prepared(sources=_keyed(block, wanted, f"as the build of {job_id} read them, unchanged since"))
    return None


def _keyed(block: dict[str, Any], key: str, how: str) -> dict[str, Any]:
    out = {k: v for k, v in block.items() if k not in ("key", "how")}
    return {**out, "key": key, "how": how}


def probe(spec: Any, ask: Ask, *, timeout: float | None = None) -> Prepared:
    """Resolve and make the module in a probe child, watching what it reads."""
    from neffbench.probe.client import ProbeError
    from neffbench.spec import to_dict

    t0 = time.monotonic()
    try:
        kwargs = {} if timeout is None else {"timeout": timeout}
        report = ask("prepare", {"spec": to_dict(spec)}, **kwargs)
    except ProbeError as exc:
        return Prepared(
            note=f"the probe that finds the files the build reads did not report ({exc}); each job "
            "records its own, and this compile does not use the cache"
        )
    if not report.get("ok"):
        return Prepared(
            problems=[report.get("error") or "the probe reported a problem without a sentence"],
            traceback=report.get("traceback") or "",
        )
    block = report.get("sources")
    if not isinstance(block, dict):
        return Prepared(note="the probe reported no source closure; each job records its own")
    return Prepared(sources=_keyed(block, sources_key(spec), f"found by a probe in {time.monotonic() - t0:.1f} s"))


def prepare(spec: Any, workdir: str | Path, ask: Ask | None = None) -> Prepared:
    """The closure and problems of ``spec``'s build: from the workdir's records when still current, else from a
    probe (``ask``: a probe's ask function; None: the records only). Kernels that run no user code: nothing."""
    if not needed(spec):
        return Prepared()
    found = recorded(workdir, spec)
    if found is not None or ask is None:
        return found or Prepared(note="no job in the workdir has recorded what this build reads yet")
    return probe(spec, ask)

"""What a sweep's Ray task does on its node: run the point's job with the same worker, stream it back, return the job directory.

Imported by Ray on the node (the task refers to :func:`run_point` by name, so every node needs this
neffbench installed, in the same venv as its torch and Neuron toolchain).
"""

from __future__ import annotations

import io
import os
import platform
import shutil
import tarfile
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

FLUSH_S = 0.2
# A channel that does not answer for this long is treated as gone (the client died): the job is stopped.
CHANNEL_TIMEOUT_S = 60.0


class Channel:
    """The client's end, a Ray actor: lines and events from every task, attempts counted, and the cancel flag."""

    def __init__(self) -> None:
        self._items: list[tuple] = []
        self._attempts: dict[int, int] = {}
        self._cancelled = False

    def begin(self, index: int, node: dict[str, Any]) -> tuple[int, bool]:
        """A task attempt starts; its number (2 after a lost first attempt) and whether the sweep is cancelled."""
        attempt = self._attempts.get(index, 0) + 1
        self._attempts[index] = attempt
        self._items.append(("begin", index, attempt, node))
        return attempt, self._cancelled

    def push(self, index: int, attempt: int, items: list[tuple[str, Any]]) -> bool:
        self._items.extend((kind, index, attempt, payload) for kind, payload in items)
        return self._cancelled

    def drain(self) -> list[tuple]:
        items, self._items = self._items, []
        return items

    def cancel(self) -> None:
        self._cancelled = True


class Outbox:
    """A running job's lines and events, sent to the channel in batches; the channel's answer says whether to cancel."""

    def __init__(self, channel: Any, index: int, attempt: int, on_cancel: Callable[[], None]):
        self._channel, self._index, self._attempt, self._on_cancel = channel, index, attempt, on_cancel
        self._items: list[tuple[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="neffbench-ray-outbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def line(self, text: str) -> None:
        with self._lock:
            self._items.append(("line", text))

    def event(self, ev: dict[str, Any]) -> None:
        with self._lock:
            self._items.append(("event", ev))

    def _run(self) -> None:
        while not self._stop.wait(FLUSH_S):
            self.flush()

    def flush(self) -> None:
        import ray

        with self._lock:
            items, self._items = self._items, []
        try:
            cancelled = ray.get(self._channel.push.remote(self._index, self._attempt, items), timeout=CHANNEL_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - the client (and with it the channel) is gone: nobody wants this job
            cancelled = True
        if cancelled:
            self._on_cancel()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.flush()  # blocking, so the client has every line before it sees the task's result


def scratch_dir(sweep_id: str, index: int) -> Path:
    """Where a point's job runs on a node without a shared workdir (the same for each attempt, so a retry clears it)."""
    return Path(tempfile.gettempdir()) / "neffbench-ray" / sweep_id / str(index)


def pack(job_dir: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(job_dir), arcname=job_dir.name)
    return buf.getvalue()


def run_point(payload: dict[str, Any], channel: Any) -> dict[str, Any]:
    """Run one point's job here; returns its outcome and the job directory (tar bytes, or its path when shared)."""
    import ray

    from neffbench.jobs.compile_job import CompileJob
    from neffbench.spec import from_dict
    from neffbench.sweeps.procmem import GroupSampler
    from neffbench.sweeps.versions import tool_versions
    from neffbench.views.job import JobView

    index, host = payload["index"], platform.node()
    node = {"host": host, "pid": os.getpid(), "versions": tool_versions()}
    attempt, cancelled = ray.get(channel.begin.remote(index, node))
    if cancelled:
        return {"outcome": "cancelled", "reason": "cancelled before it started", "host": host}
    if payload["shared"]:
        workdir = Path(payload["workdir"])
    else:
        workdir = scratch_dir(payload["sweep_id"], index)
        shutil.rmtree(workdir, ignore_errors=True)  # what a lost attempt left
    sampler = GroupSampler()
    pgid: list[int] = []
    runner: list[Any] = []
    outbox = Outbox(channel, index, attempt, on_cancel=lambda: runner[0].cancel() if runner else None)

    def on_event(ev: dict[str, Any]) -> None:
        if ev.get("type") == "started" and ev.get("pid"):
            pgid.append(ev["pid"])
            sampler.watch(ev["pid"])
        outbox.event({**ev, "node": host})

    runner.append(
        CompileJob(
            from_dict(payload["spec"]),
            workdir=workdir,
            backend=payload["backend"],
            timeout=payload["timeout"],
            on_line=outbox.line,
            on_event=on_event,
            use_cache=payload["use_cache"],
        )
    )
    outbox.start()
    peak = None
    job = runner[0]
    try:
        try:
            # On this thread, the task's own: the worker's parent-death signal follows the thread that forked it.
            job.start()
            job.wait()
        except KeyboardInterrupt:
            # ray.cancel: the runner has already killed the job's process group and recorded how it ended.
            if job.job_dir is None or JobView.of(job.record).outcome in (None, "running"):
                raise
    finally:
        if pgid:
            peak = sampler.forget(pgid[0])
        sampler.close()
        outbox.close()
    record, job_dir = JobView.of(job.record), Path(job.job_dir)
    out = {
        "outcome": record.outcome,
        "reason": record.reason,
        "host": host,
        "peak_rss": peak,
        "attempt": attempt,
        "duration_s": record.duration_s,
        "job_name": job_dir.name,
        "cached": record.cache_hit,
    }
    if payload["shared"]:
        out["job_dir"] = str(job_dir)
    else:
        out["tar"] = pack(job_dir)
        shutil.rmtree(workdir, ignore_errors=True)
    return out

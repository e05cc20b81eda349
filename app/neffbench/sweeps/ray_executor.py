"""The Ray executor: each point a Ray task with its CPUs and memory declared, the same worker run on the node it lands on.

The client keeps one channel actor per sweep: tasks push their lines and events to it and learn from
its answers whether the sweep was cancelled; the client drains it while it waits for results. A task
returns its job directory as tar bytes, unpacked into the client's workdir, or writes it in place with
``shared_workdir``. A task whose worker process or node dies is retried once by Ray (``max_retries=1``);
the channel counts attempts, so the record says which were lost, and a second loss fails the point
with the reason.
"""

from __future__ import annotations

import io
import logging
import os
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

from neffbench.jobs.compile_job import GRACE_S
from neffbench.jobs.memory_estimate import GiB
from neffbench.spec import to_dict
from neffbench.sweeps.errors import SweepError

log = logging.getLogger(__name__)

POLL_S = 0.2
# After a cancel, how long tasks get to stop their jobs themselves before Ray kills their workers.
CANCEL_GRACE_S = GRACE_S + 10.0
# After that, how long force-cancelled tasks get to report before they are recorded as cancelled anyway.
FORCE_WAIT_S = 15.0
INSTALL_HINT = (
    "the ray executor needs Ray: install neffbench[ray] (pip install 'neffbench[ray]'), in the same venv on every node"
)


class RayMissing(ImportError):
    """Ray is not installed here."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayMissing(INSTALL_HINT) from None
    return ray


def unpack(data: bytes, workdir: Path) -> Path:
    """A task's job directory into the workdir, under its own name (or the next free ``-N`` after it)."""
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
        tops = {m.name.split("/", 1)[0] for m in members}
        if len(tops) != 1:
            raise ValueError(f"a job's archive must hold one folder; it holds {sorted(tops)}")
        name = tops.pop()
        for m in members:
            if m.name.startswith("/") or ".." in Path(m.name).parts or m.issym() or m.isdev():
                raise ValueError(f"a job's archive holds {m.name!r}, which it never should")
        staging = workdir / f".incoming-{name}-{os.getpid()}-{threading.get_ident()}"
        if hasattr(tarfile, "data_filter"):
            tar.extractall(staging, filter="data")
        else:
            tar.extractall(staging)
    target = workdir / name
    for n in range(1, 1000):
        try:
            os.rename(staging / name, target)  # fails on an existing non-empty folder: take the next name
            break
        except OSError:
            target = workdir / f"{name}-{n}"
    staging.rmdir()
    return target


class _QuietInit(logging.Filter):
    """Ray's start-up notes that say nothing to a sweep's user (the sweep runs on a thread of its own, on purpose)."""

    NOISE = ("SIGTERM handler is not set", "Token authentication is enabled")

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(n in record.getMessage() for n in self.NOISE)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def unreachable(address: str | None, timeout_s: float = 5.0) -> str | None:
    """Why nothing answers at ``host:port`` (or ``ray://host:port``), or None; Ray itself retries for minutes."""
    if not address or address == "auto" or address.startswith("local"):
        return None
    target = address.split("://", 1)[-1]
    host, found, port = target.rpartition(":")
    if not found or not port.isdigit():
        return None  # a form Ray knows and this check does not: let Ray say what it makes of it
    import socket

    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout_s).close()
    except OSError as exc:
        return f"nothing answers there ({exc.strerror or exc}; is `ray start --head` running on that machine?)"
    return None


class RayExecutor:
    """Points as Ray tasks on the cluster ``address`` names (what ``ray.init`` takes: ``auto``, ``ray://head:10001``;
    None: a cluster started on this machine with ``ray start``, else a new local one for this sweep)."""

    def __init__(
        self,
        *,
        address: str | None = None,
        jobs: int | None = None,
        shared_workdir: bool = False,
        cpus_per_job: float = 1,
        runtime_env: dict | None = None,
    ):
        self.ray = import_ray()
        self.address, self.jobs, self.shared_workdir = address, jobs, shared_workdir
        self.cpus_per_job, self.runtime_env = cpus_per_job, runtime_env
        self._owned = False

    def prepare(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return  # the caller's session (a test, a notebook): used as it is and left running
        problem = unreachable(self.address)
        if problem:
            raise SweepError(f"cannot reach the Ray cluster at {self.address}: {problem}")
        quiet = _QuietInit()
        for handler in logging.getLogger("ray").handlers:
            handler.addFilter(quiet)
        try:
            ray.init(address=self.address, log_to_driver=False, logging_level=logging.WARNING)
            for handler in logging.getLogger("ray").handlers:
                handler.addFilter(quiet)
        except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; each is one sentence for the user
            where = f" at {self.address}" if self.address else ""
            raise SweepError(f"cannot start or reach a Ray cluster{where}: {_first_line(exc)}") from None
        self._owned = True

    def close(self) -> None:
        if self._owned and self.ray.is_initialized():
            self.ray.shutdown()
        self._owned = False

    def _largest_node(self) -> tuple[float, float]:
        """The most memory (bytes) and CPUs any alive node offers."""
        nodes = [n for n in self.ray.nodes() if n.get("Alive")]
        return (
            max((n.get("Resources", {}).get("memory", 0) for n in nodes), default=0),
            max((n.get("Resources", {}).get("CPU", 0) for n in nodes), default=0),
        )

    def run(self, tasks: list[Any], tracker: Any, options: Any, cancel_event: threading.Event) -> None:
        ray = self.ray
        from neffbench.sweeps.ray_task import Channel, run_point

        # On the head node, whose loss ends the cluster anyway: a channel lost with another node would stop
        # every task's job (a task that cannot reach the channel takes the client for gone).
        head = {"node:__internal_head__": 0.001} if ray.cluster_resources().get("node:__internal_head__") else {}
        channel = ray.remote(num_cpus=0, resources=head)(Channel).remote()
        remote = ray.remote(run_point)
        memory, cpus = self._largest_node()
        queue: list[Any] = []
        for task in tasks:
            if task.memory_bytes > memory or self.cpus_per_job > cpus:
                tracker.finished(
                    task.index,
                    "failed",
                    f"it needs {task.memory_bytes / GiB:.1f} GiB and {self.cpus_per_job:g} CPU(s), and the "
                    f"largest Ray node offers {memory / GiB:.1f} GiB and {cpus:g} (set --memory-per-job, "
                    "or give the nodes more: ray start --memory/--num-cpus)",
                )
            else:
                queue.append(task)
        inflight: dict[Any, Any] = {}
        begun: set[int] = set()
        cancel_at: float | None = None
        forced_at: float | None = None
        try:
            while queue or inflight:
                while queue and cancel_at is None and (self.jobs is None or len(inflight) < self.jobs):
                    task = queue.pop(0)
                    inflight[self._submit(remote, task, options, channel)] = task
                ready: list[Any] = []
                if inflight:
                    refs = list(inflight)
                    ready, _ = ray.wait(refs, num_returns=1, timeout=POLL_S)
                    if ready:  # and whatever else is done by now
                        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
                self._drain(channel, tracker, begun)
                for ref in ready:
                    self._finish(ref, inflight.pop(ref), tracker, options, cancel_at is not None)
                if cancel_event.is_set() and cancel_at is None:
                    cancel_at = time.monotonic()
                    channel.cancel.remote()
                    for task in queue:
                        tracker.finished(task.index, "cancelled", "cancelled before it started")
                    queue.clear()
                    for ref, task in inflight.items():
                        if task.index not in begun:
                            ray.cancel(ref)  # still waiting for a node: it never starts
                now = time.monotonic()
                if cancel_at is not None and forced_at is None and now - cancel_at > CANCEL_GRACE_S:
                    forced_at = now
                    for ref in inflight:
                        ray.cancel(ref, force=True)  # its worker dies; the job's group dies with its parent
                if forced_at is not None and now - forced_at > FORCE_WAIT_S:
                    for task in inflight.values():
                        tracker.finished(
                            task.index, "cancelled", "cancelled; its task did not answer after it was killed"
                        )
                    inflight.clear()
        finally:
            if inflight:  # the client itself is stopping: take the cluster's tasks with it
                channel.cancel.remote()
                for ref in inflight:
                    ray.cancel(ref, force=True)
            ray.kill(channel)

    def _submit(self, remote: Any, task: Any, options: Any, channel: Any) -> Any:
        payload = {
            "index": task.index,
            "sweep_id": options.sweep_id,
            "spec": to_dict(task.spec),
            "backend": options.backend,
            "timeout": options.timeout,
            "use_cache": options.use_cache,
            "workdir": str(options.workdir),
            "shared": self.shared_workdir,
        }
        opts: dict[str, Any] = {"num_cpus": self.cpus_per_job, "max_retries": 1, "retry_exceptions": False}
        if task.memory_bytes:
            opts["memory"] = int(task.memory_bytes)
        if self.runtime_env:
            opts["runtime_env"] = self.runtime_env
        return remote.options(**opts).remote(payload, channel)

    def _drain(self, channel: Any, tracker: Any, begun: set[int]) -> None:
        for kind, index, attempt, payload in self.ray.get(channel.drain.remote()):
            if kind == "begin":
                begun.add(index)
                tracker.node(payload["host"], payload["versions"])
                if attempt > 1:
                    tracker.lost(index, attempt - 1, "its worker or node died")
                tracker.started(index, node=payload["host"], attempt=attempt)
            elif kind == "line":
                tracker.line(index, payload)
            elif kind == "event":
                if payload.get("type") == "started" and payload.get("job_dir"):
                    tracker.started(index, job_dir=payload["job_dir"], node=payload.get("node"), attempt=attempt)
                tracker.job_event(index, payload)

    def _finish(self, ref: Any, task: Any, tracker: Any, options: Any, cancelling: bool) -> None:
        ray = self.ray
        exceptions = ray.exceptions
        try:
            out = ray.get(ref)
        except exceptions.TaskCancelledError:
            tracker.finished(task.index, "cancelled", "cancelled")
            return
        except exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None) or exc
            tracker.finished(task.index, "failed", f"the task failed on its node: {_first_line(cause)}")
            return
        except exceptions.RayError as exc:
            if cancelling:
                tracker.finished(task.index, "cancelled", f"cancelled; its worker was stopped ({_first_line(exc)})")
                return
            point = tracker.record.point(task.index)
            attempts = max(point.get("attempts") or 1, 1)
            reason = (
                "its worker or node died, and again in the retry (attempt 2 of 2)"
                if attempts > 1
                else "its worker or node died"
            ) + f": {_first_line(exc)}"
            lost = [
                *point.get("lost_attempts", []),
                {
                    "attempt": attempts,
                    "node": point.get("node"),
                    "job_id": point.get("job_id"),
                    "reason": _first_line(exc),
                },
            ]
            tracker.record.update_point(task.index, lost_attempts=lost, job_id=None)
            tracker.finished(task.index, "failed", reason)
            return
        job_dir = None
        if out.get("tar") is not None:
            try:
                job_dir = unpack(out["tar"], Path(options.workdir))
            except (OSError, ValueError, tarfile.TarError) as exc:
                tracker.finished(
                    task.index, "failed", f"its job directory could not be brought back: {exc}", node=out.get("host")
                )
                return
        elif out.get("job_dir"):
            job_dir = Path(out["job_dir"])
        tracker.finished(
            task.index,
            out["outcome"],
            out.get("reason"),
            job_dir=job_dir,
            peak_rss=out.get("peak_rss"),
            node=out.get("host"),
            cached=bool(out.get("cached")),
            duration_s=out.get("duration_s"),
        )

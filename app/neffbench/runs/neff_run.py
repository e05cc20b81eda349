"""Running a NEFF from the parent: the run child in its own process group, its events into one run record, Cancel.

The record is ``<job>/runs/<UTC time>-<runtime>.json`` (``<file>.runs/`` beside a NEFF without a
job); records never overwrite one another, and the parent is their only writer.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from neffbench import procs
from neffbench.procs import Child, parse_event
from neffbench.runs.stats import summarize
from neffbench.runs.subject import RunSubject
from neffbench.views.clock import iso, utc_now
from neffbench.views.job import JobView, bucket_of
from neffbench.views.run import SCHEMA_VERSION

GRACE_S = 3.0
CHILD_MODULE = "neffbench.workers.run"


@dataclass
class RunResult:
    path: Path
    outcome: str
    reason: str | None
    record: dict[str, Any]


def _items_per_call(record: dict[str, Any]) -> int:
    if not record:
        return 1
    from neffbench.kernels import registry

    job = JobView.of(record)
    try:
        kernel = registry.get(job.kernel or (job.spec or {}).get("kernel") or registry.DEFAULT)
    except KeyError:
        return 1
    return kernel.items_per_call(job.bucket)


def _job_request(subject: RunSubject) -> dict[str, Any]:
    """What the run child needs of another job (a prefill): its module, inputs and artifact."""
    return {
        "job_dir": str(subject.job_dir),
        "inputs": str(subject.inputs) if subject.inputs else None,
        "model_pt": str(subject.model_pt) if subject.model_pt else None,
        "spec": subject.spec,
        "backend": subject.backend,
    }


class NeffRun:
    """One run of one subject (a job or a NEFF). ``start``/``wait`` on one thread; ``cancel`` from any thread."""

    def __init__(
        self,
        subject: RunSubject,
        *,
        runtime: str = "auto",
        iterations: int = 50,
        warmup: int = 5,
        mode: str | None = None,
        core: int = 0,
        inputs_npz: str | None = None,
        inputs_npy: dict[str, str] | None = None,
        random: bool = False,
        seed: int = 0,
        profile: bool = False,
        profile_neff: Path | None = None,
        save_outputs: bool = False,
        steps: int = 1,
        prefill: RunSubject | None = None,
        purpose: str | None = None,
        timeout: float | None = None,
        argv: list[str] | None = None,
        on_line: Callable[[str], None] | None = None,
        on_event: Callable[[dict], None] | None = None,
    ):
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1; got {iterations}")
        if warmup < 0:
            raise ValueError(f"warm-up must be 0 or more; got {warmup}")
        if steps < 1:
            raise ValueError(f"steps must be at least 1; got {steps}")
        if prefill is not None and (prefill.job_dir is None or prefill.inputs is None):
            raise ValueError("--prefill takes a job directory with its inputs.npz: its module and inputs run first")
        self.subject = subject
        self.opts: dict[str, Any] = {
            "runtime": runtime,
            "iterations": iterations,
            "warmup": warmup,
            "mode": mode,
            "core": core,
            "inputs_npz": inputs_npz,
            "inputs_npy": inputs_npy,
            "random": random,
            "seed": seed,
            "profile": profile,
            # The NEFF to profile when it is not the one run: a profiled variant's, compiled with the framework's
            # debug names so that the profile maps time to layers (neffbench.structure.profiled).
            "profile_neff": str(profile_neff) if profile_neff else None,
            "save_outputs": save_outputs,  # RUN_DIR/outputs.npz, for a compare
            "steps": steps,  # calls in a row, a module's state carried from each to the next
        }
        self.prefill = prefill  # a job whose call comes first, its state carried into this one's (a prefill)
        self.purpose = purpose  # "compare": one call for its outputs, not a latency measurement
        self.timeout = timeout
        self.argv = list(sys.argv if argv is None else argv)
        self.on_line, self.on_event = on_line, on_event
        self.path: Path | None = None
        self.record: dict[str, Any] = {}
        self._proc: Child | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._outcome: dict[str, Any] | None = None
        self._log: list[str] = []

    # ---- start ----

    def _request(self, run_dir: Path) -> dict[str, Any]:
        t = self.subject
        return {
            **self.opts,
            "neff": str(t.neff) if t.neff else None,
            "job_dir": str(t.job_dir) if t.job_dir else None,
            "job_inputs": str(t.inputs) if t.inputs else None,
            "reference": str(t.reference) if t.reference else None,
            "model_pt": str(t.model_pt) if t.model_pt else None,
            "spec": t.spec,
            "backend": t.backend,
            "tolerance": list(t.tolerance) if t.tolerance else None,
            "run_dir": str(run_dir),
            "weights": t.job.weights or None,
            "sources": t.job.sources,
            "job_warning": t.job_warning,
            "no_neff_reason": t.no_neff_reason,
            "prefill": None if self.prefill is None else _job_request(self.prefill),
        }

    def start(self) -> Path:
        """Create the run record and start the run child; returns the record's path."""
        runs = self.subject.runs_dir
        runs.mkdir(parents=True, exist_ok=True)
        from neffbench.runs.history import mark_interrupted

        mark_interrupted(runs)
        self._stamp = utc_now().strftime("%Y%m%dT%H%M%S.%fZ")
        requested = self.opts["runtime"]
        name = self._claim(requested)
        path = self.path = runs / f"{name}.json"
        self.record = {
            "schema_version": SCHEMA_VERSION,
            "run_id": name,
            "job_id": self.subject.job.job_id,
            "neff": str(self.subject.neff) if self.subject.neff else None,
            "runtime_requested": requested,
            "runtime": None,
            "label": None,
            "on_device": None,
            "runtime_reason": None,
            "mode": self.opts["mode"],
            "core": self.opts["core"],
            "warmup": self.opts["warmup"],
            "iterations_requested": self.opts["iterations"],
            "outcome": "running",
            "reason": None,
            "started": iso(),
            "finished": None,
            "host": os.uname().nodename,
            "pid": os.getpid(),
            "pid_start": procs.process_start_time(os.getpid()),
            "command": self.argv,
            "versions": {},
            "inputs": None,
            "checks": [],
            "numerics": None,
            "cold_ms": None,
            "durations_ms": [],
            "stats": None,
            "reported": None,
            "secondary": None,
            "profile": None,
            "bucket": bucket_of(self.subject.record) if self.subject.record else None,
            "items_per_call": _items_per_call(self.subject.record),
            "run_dir": name,
            "purpose": self.purpose,
            "steps_requested": self.opts["steps"],
            "steps": None,
        }
        procs.write_json(path, self.record)
        with self._lock:
            if self._cancelled:
                self._finish(None, "cancelled before it started")
                return path
            proc = self._proc = procs.spawn([sys.executable, "-m", CHILD_MODULE], stdin="pipe", warm=True)
        try:
            proc.write((json.dumps(self._request(runs / name), default=str) + "\n").encode())
            proc.close_stdin()
        except OSError:  # it died before reading its request: wait() tells how
            pass
        self._t0 = time.monotonic()
        self._emit({"type": "started", "run": str(path), "pid": proc.pid})
        return path

    def _claim(self, runtime: str) -> str:
        """A record name of our own (exclusive creation: two runs never share one)."""
        for n in range(1000):
            name = f"{self._stamp}-{runtime}" + (f"-{n}" if n else "")
            try:
                fd = os.open(self.subject.runs_dir / f"{name}.json", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                continue
            os.close(fd)
            return name
        raise FileExistsError(f"no free run record name for {self._stamp}-{runtime} in {self.subject.runs_dir}")

    def _rename_for(self, runtime: str) -> None:
        """Once the child has chosen (``auto``), the record is named for the runtime that runs."""
        if self.path is None or self.path.stem.endswith(f"-{runtime}"):
            return
        name = self._claim(runtime)
        old, self.path = self.path, self.subject.runs_dir / f"{name}.json"
        os.replace(old, self.path)
        self.record["run_id"] = self.record["run_dir"] = name

    # ---- cancel ----

    def cancel(self) -> None:
        """SIGTERM to the run child's group now, SIGKILL after GRACE_S; never blocks."""
        with self._lock:
            self._cancelled = True
            if self._proc is not None:
                self._proc.terminate(GRACE_S)

    # ---- wait ----

    def wait(self) -> RunResult:
        """Read the child's events until it ends; returns once nothing of the run (its process group) is left."""
        proc = self._proc
        if proc is None:
            return RunResult(self._record_path, self.record["outcome"], self.record["reason"], self.record)
        timed_out: list[bool] = []

        def on_deadline() -> None:
            timed_out.append(True)
            proc.kill()

        try:
            procs.pump(
                proc,
                self._handle,
                on_deadline=on_deadline,
                deadline=self._t0 + self.timeout if self.timeout else None,
            )
        except BaseException:
            proc.kill_and_reap()  # a record that cannot be written: nothing of the run outlives it
            raise
        code = proc.reap()
        reason = None
        if self._cancelled:
            timed = len(self.record.get("durations_ms") or [])
            reason = (
                f"cancelled after {timed} of {self.opts['iterations']} timed iterations"
                if timed
                else f"cancelled during {self.record.get('stage') or 'start'}"
            )
        elif timed_out:
            reason = f"timed out after {self.timeout:g} s during {self.record.get('stage')}"
        elif self._outcome is None:
            from neffbench.compilerlog.exits import meaning as explain_exit_code

            reason = (
                f"the run child died with {code} ({explain_exit_code(code)}) during {self.record.get('stage')}"
                if code and code < 0
                else f"the run child exited with {code} without reporting an outcome"
            )
        return self._finish(code, reason)

    def _finish(self, code: int | None, reason: str | None) -> RunResult:
        rec = self.record
        if reason is not None:
            rec["outcome"] = "cancelled" if self._cancelled else "failed"
            rec["reason"] = reason
        elif self._outcome is not None:
            rec["outcome"], rec["reason"] = self._outcome.get("outcome"), self._outcome.get("reason")
        numerics = rec.get("numerics") or {}
        if rec["outcome"] == "succeeded" and numerics.get("checked") and not numerics.get("match"):
            rec["outcome"] = "failed"
            rec["reason"] = (
                f"outputs differ from {numerics.get('against') or 'reference.npz'} beyond tolerance (max abs error "
                f"{numerics.get('max_abs_error', float('nan')):.3g})"
            )
        stepped = rec.get("steps") or {}
        if rec["outcome"] == "succeeded" and stepped and not stepped.get("match"):
            bad = next(c for c in stepped.get("calls") or [] if not c.get("match"))
            which = "call 1 (the prefill job)" if bad["step"] == "prefill" else f"call {bad['step'] + 1}"
            rec["outcome"] = "failed"
            rec["reason"] = (
                f"{which}, with the state carried from the call before, differs from the eager module beyond "
                f"tolerance (max abs error {bad.get('max_abs_error', float('nan')):.3g})"
            )
        rec["exit_code"] = code
        rec["finished"] = iso()
        rec["log_tail"] = self._log[-200:]
        path = self._record_path
        procs.write_json(path, rec)
        self._emit({"type": "finished", "outcome": rec["outcome"], "reason": rec["reason"], "run": str(path)})
        return RunResult(path, rec["outcome"], rec["reason"], rec)

    def _handle(self, line: str) -> None:
        event = parse_event(line)
        if event is None:
            self._log.append(line)
            if self.on_line:
                self.on_line(line)
            return
        rec, kind = self.record, event["type"]
        if kind == "progress":  # passed on only: the record keeps what was timed, not how far it got
            self._emit(event)
            return
        if kind == "stage":
            rec["stage"] = event.get("stage")
        elif kind == "runtime":
            self._rename_for(cast(str, event.get("runtime")))  # the run child names it always
            for key in ("runtime", "label", "on_device", "mode", "versions", "available"):
                rec[key] = event.get(key)
            rec["runtime_reason"] = event.get("reason")
        elif kind in ("inputs", "host", "profile", "numerics", "outputs", "steps"):
            rec[kind] = {k: v for k, v in event.items() if k != "type"}
        elif kind == "checks":
            rec["checks"] = event.get("problems") or []
        elif kind == "warning":
            rec.setdefault("warnings", []).append(event.get("message"))
        elif kind == "timing":
            rec["cold_ms"], rec["durations_ms"] = event.get("cold_ms"), event.get("durations_ms") or []
            rec["reported"], rec["mode"], rec["variant"] = (
                event.get("reported"),
                event.get("mode"),
                event.get("variant"),
            )
            rec["stats"] = summarize(rec["durations_ms"], rec["items_per_call"])
        elif kind == "timing_secondary":
            rec["secondary"] = {
                "variant": event.get("variant"),
                "cold_ms": event.get("cold_ms"),
                "durations_ms": event.get("durations_ms"),
                "stats": summarize(event.get("durations_ms") or [], rec["items_per_call"]),
            }
        elif kind == "outcome":
            self._outcome = event
        procs.write_json(self._record_path, rec)
        self._emit(event)

    @property
    def _record_path(self) -> Path:
        if self.path is None:
            raise RuntimeError("start() the run before waiting for it")
        return self.path

    def _emit(self, event: dict[str, Any]) -> None:
        if self.on_event:
            self.on_event({**event, "run_id": self.record.get("run_id")})

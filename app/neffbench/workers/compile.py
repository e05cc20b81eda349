"""The compile worker: ``python -m neffbench.workers.compile JOB_DIR [--backend B]`` runs one job, reported as protocol lines.

Started by :class:`neffbench.jobs.CompileJob` (through :mod:`neffbench.procs`) as the leader of its own
process group, with stdout and stderr merged into one pipe. The job itself is
:class:`~neffbench.workers.stages.Job` (with the torchneuron backend, TorchNeuron writes
``neff_cache/``, ``debug/`` and ``torchneuron.log`` in the job directory too: backends/torchneuron_compile.py).

With ``--standby`` instead of JOB_DIR (:class:`neffbench.jobs.standby.StandbyWorker`) it imports
torch first, then reads the job directory as one line from stdin and runs that job; at EOF
without a line it exits 0 and says nothing.
"""

from __future__ import annotations

import argparse
import faulthandler
import io
import json
import os
import sys
import traceback
from pathlib import Path
from typing import TextIO

from neffbench.backends.base import JobFailure
from neffbench.backends.registry import CHOICES as BACKENDS
from neffbench.jobs.protocol import stage_words
from neffbench.jobs.standby import ANSWER_EVENT
from neffbench.procs import Emitter, exit_now, forked_note, watch
from neffbench.usercode import errors as user_errors
from neffbench.workers.stages import Job


def failure_reason(exc: BaseException, stage: str, *, users_code: bool = True) -> str:
    """The job's reason for failing in ``stage``: a JobFailure's sentence with the stage in words after it, or
    ``TypeError at model.py:12 during tracing: ...``: what was raised, where in the user's own code (a CPU trace
    through their forward, as a forward error says it; ``users_code``: the job's kernel runs any), in which stage."""
    during = stage_words(stage)
    if isinstance(exc, JobFailure):
        return f"{exc} (during {during})"
    if isinstance(exc, OSError) and exc.errno is not None and exc.filename:
        # A full disk, a file-size limit, a read-only folder: the path and the cause, not a traceback's words.
        return f"cannot write {exc.filename}: {exc.strerror or os.strerror(exc.errno)} (during {during})"
    where = user_errors.where(exc) if users_code else ""
    return f"{type(exc).__name__}{where} during {during}: {user_errors.message(exc)}"


def _preload() -> None:
    """What every job imports, before there is a job: torch is most of a worker's start."""
    try:
        import torch  # noqa: F401

        from neffbench.backends import verify  # noqa: F401
        from neffbench.jobs import preflight, reproduce  # noqa: F401
        from neffbench.kernels import registry

        # The job's kernel is not known yet; the default one is the likeliest. (Preloading every kernel
        # would put the others' imports on the path of each job: torch's import already outlasts the parent.)
        registry.get(registry.DEFAULT).preload()
    except Exception:  # noqa: BLE001 - the job imports them again, fails the same way and reports it
        traceback.print_exc(file=sys.stderr)
    # Not torch_neuronx: whether to set the platform override before importing it depends on the spec.


def _wait_for_job() -> Path | None:
    """The job directory the parent sends on stdin, or None when it closed stdin without one. Before it, the parent
    may ask what a probe child would answer (a line of JSON: ``prepare``, what the build reads), which this process,
    torch already imported, answers as one ``answer`` event: the probe child that would import torch again is
    never started."""
    _preload()
    while True:
        line = sys.stdin.buffer.readline()
        if not line.endswith(b"\n"):
            return None
        if not line.startswith(b"{"):
            break
        _answer(json.loads(line))
    # From here on as a spawned worker: nothing to read on stdin (the compiler inherits it).
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return Path(os.fsdecode(line[:-1]))


def _answer(message: dict) -> None:
    """One probe request, answered in the folder the build runs in; the user's modules it imported are forgotten and
    the import path put back, so that the job's own build imports (and records) them afresh."""
    from neffbench.usercode.recorder import forget_user_modules
    from neffbench.workers import probe
    from neffbench.workers.stages import build_folder

    path = list(sys.path)
    try:
        with build_folder():
            report = probe.answer(message["command"], message.get("request") or {})
    finally:
        forget_user_modules(probe.last_user_modules())
        sys.path[:] = path
    Emitter().event({"type": ANSWER_EVENT, "report": report})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m neffbench.workers.compile", description=__doc__.splitlines()[0])
    parser.add_argument("job_dir", type=Path, nargs="?")
    parser.add_argument("--backend", choices=BACKENDS, default="auto")
    parser.add_argument(
        "--standby",
        action="store_true",
        help="import torch first, then read JOB_DIR as one line from stdin (exit 0 at EOF)",
    )
    args = parser.parse_args(argv)
    if (args.job_dir is None) != args.standby:
        parser.error("give either JOB_DIR or --standby")
    # If the parent dies, however it dies, this worker's group (the compiler and its helpers) goes too.
    watch()
    # A crash in torch or the compiler bindings still leaves a Python traceback in job.log.
    faulthandler.enable()
    if args.standby:
        args.job_dir = _wait_for_job()
        if args.job_dir is None:
            return 0  # the parent went away, or ran the job some other way
    if args.standby:
        os.chdir(args.job_dir)  # where a spawned worker starts
    started = (" (a standby, started before the job)" if args.standby else "") + forked_note()
    return run_job(args.job_dir, args.backend, Emitter(), f"worker pid {os.getpid()}", started)


def run_job(
    job_dir: Path, backend: str, out: Emitter, who: str, note: str = "", errors: TextIO | io.TextIOBase | None = None
) -> int:
    """The job's stages, reported on ``out``; 0 when it succeeded, 1 when it failed. ``who`` runs it (the worker and
    its pid) and ``note`` says more, in the log's first line; ``errors``: where the traceback of a failure goes
    (stderr, which is job.log for a worker)."""
    job = Job(job_dir, backend, out)
    out.line(f"neffbench: {who} for job {job_dir.name}{note}")
    try:
        job.run()
    except Exception as exc:  # noqa: BLE001 - any error in the user's module or the toolchain ends the job
        # The whole story stays in job.log; the terminal gets the sentence.
        cause = exc.__cause__ if isinstance(exc, JobFailure) else exc
        if cause is not None:
            traceback.print_exception(type(cause), cause, cause.__traceback__, file=errors or sys.stderr)
        reason = failure_reason(exc, job.stage, users_code=job.runs_user_code)
        out.line(f"neffbench: failed: {reason}")
        out.event({"type": "outcome", "outcome": "failed", "reason": reason})
        return 1
    out.event({"type": "outcome", "outcome": "succeeded", "reason": None})
    return 0


if __name__ == "__main__":
    exit_now(main(), exit_functions=False)

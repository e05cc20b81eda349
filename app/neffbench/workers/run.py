"""The run child: ``python -m neffbench.workers.run`` reads a run request (JSON on stdin) and reports protocol events.

Stages: ``loading`` (the target, its inputs, the runtime), ``checking`` (IO against the NEFF, the
host against its target and LNC), ``running`` (one call, compared with reference.npz),
``benchmarking`` (warm-up and timed iterations), ``profiling`` (only with ``profile``). It writes no
record (the parent does); a profile goes into the run's own directory.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from typing import Any

from neffbench.procs import Emitter, exit_now, forked_note, watch
from neffbench.runs import arrays, nrt_errors, preload_checks, runtimes
from neffbench.words import message_text
from neffbench.workers.run_io import RunFailure, RunIO

PROGRESS_S = 0.25
OUTPUTS_NAME = "outputs.npz"  # RUN_DIR/outputs.npz: what a run returned, when asked (save_outputs)


class Run(RunIO):
    """The run's stages, from loading the target to timing it, each announced as it starts."""

    def __init__(self, request: dict[str, Any], out: Emitter):
        super().__init__(request, out)
        self.stage = "start"
        self._stop = False
        self._last_progress = 0.0
        signal.signal(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        # A cancel between timed iterations ends the loop cleanly; SIGKILL follows if it does not.
        self._stop = True

    def enter(self, stage: str) -> None:
        self.stage = stage
        self.out.stage(stage)

    # ---- the run -----------------------------------------------------------------------------

    def run(self) -> None:
        self.enter("loading")
        neff_info = self._neff_info()
        runtime, mode = self._runtime()
        feeds = self._feeds(neff_info)

        self.enter("checking")
        self._check(runtime, neff_info, feeds)

        session = self._session(runtime, neff_info, feeds)
        self.enter("running")
        try:
            outputs = session.call()
        except Exception as exc:  # noqa: BLE001 - a runtime error is the run's failure, explained
            raise RunFailure(_explained(exc, "running the NEFF")) from exc
        if self.req.get("save_outputs"):  # a compare reads every output, taps included
            self._save_outputs(outputs)
        self._numerics(outputs)
        if int(self.req.get("steps") or 1) > 1 or self.req.get("prefill"):
            self._steps(session, runtime, feeds, outputs)
        self.enter("benchmarking")
        self._bench(session, mode)
        if self.req.get("profile"):
            self.enter("profiling")
            from neffbench.runs.profile import capture

            self.event("profile", **capture(self.req, feeds, self.out))
        self.enter("done")

    def _steps(
        self, session: runtimes.Session, runtime: type[runtimes.Runtime], feeds: arrays.Arrays, outputs: dict[str, Any]
    ) -> None:
        """The calls after the first, state carried, each against the eager module (workers/run_steps.py)."""
        from neffbench.workers import run_steps

        self.enter("stepping")
        results = run_steps.carried(self, session, runtime, feeds, outputs, self.req.get("prefill"))
        for r in results:
            verdict = "match" if r["match"] else "MISMATCH"
            which = "call 1 (the prefill job)" if r["step"] == "prefill" else f"call {r['step'] + 1}"
            self.out.line(
                f"neffbench: {which}: {verdict} against the eager module (max abs error {r['max_abs_error']:.3g})"
            )
        self.event(
            "steps",
            calls=[
                {k: r.get(k) for k in ("step", "match", "max_abs_error", "max_rel_error", "problem")} for r in results
            ],
            match=all(r["match"] for r in results),
            prefill=(self.req.get("prefill") or {}).get("job_dir"),
        )

    def _save_outputs(self, outputs: dict[str, Any]) -> None:
        """The first call's outputs as ``RUN_DIR/outputs.npz``, under their dtypes as reference.npz has them."""
        from pathlib import Path

        dtypes = arrays.load(self.req["reference"]).dtypes if self.req.get("reference") else {}
        saved = arrays.Arrays()
        for name, array in outputs.items():
            saved.add(name, array, dtypes.get(name))
        run_dir = Path(self.req["run_dir"])
        run_dir.mkdir(parents=True, exist_ok=True)
        arrays.save(run_dir / OUTPUTS_NAME, saved)
        self.event("outputs", path=str(run_dir / OUTPUTS_NAME))

    def _neff_info(self) -> Any:
        """The NEFF's own description (None when there is no NEFF to read); the job's warning, when it has one."""
        req = self.req
        neff_info = None
        if req.get("neff"):
            from neffbench.neff import NeffError, read_neff

            try:
                neff_info = read_neff(req["neff"])
            except NeffError as exc:
                raise RunFailure(f"the NEFF cannot be read: {exc}") from None
        if req.get("job_warning"):
            self.out.line(
                f"neffbench: warning: {req['job_warning']}; it is run anyway, but its results say nothing "
                "of a good compile"
            )
            self.event("warning", message=req["job_warning"])
        return neff_info

    def _runtime(self) -> tuple[type[runtimes.Runtime], str]:
        """The runtime and the timing mode, announced with the reason for the runtime."""
        req = self.req
        try:
            choice = runtimes.choose(
                req.get("runtime", "auto"), runtimes.ImportingHost(), runtimes.Target.of_request(req)
            )
        except runtimes.RuntimeUnavailable as exc:
            raise RunFailure(str(exc)) from None
        runtime = choice.runtime
        mode = req.get("mode") or runtime.modes[0]
        if mode not in runtime.modes:
            raise RunFailure(
                f"the {runtime.name} runtime times in {' or '.join(runtime.modes)} mode only; got --mode {mode}."
            )
        self.event(
            "runtime",
            runtime=runtime.name,
            label=runtime.label,
            reason=choice.reason,
            mode=mode,
            on_device=runtime.on_device,
            available={k: list(v) for k, v in choice.verdicts.items()},
            versions=runtimes.versions(),
        )
        self.out.line(f"neffbench: runtime {runtime.name} ({runtime.label}): {choice.reason}")
        return runtime, mode

    def _check(self, runtime: type[runtimes.Runtime], neff_info: Any, feeds: arrays.Arrays) -> None:
        """Before loading: for a runtime that feeds the NEFF by name, the feeds against the NEFF's IO and the host
        against its target."""
        problems: list[str] = []
        if runtime.feeds_neff_by_name and neff_info is not None:
            notes, problems = preload_checks.downcast_int64(neff_info, feeds)
            for note in notes:
                self.out.line(f"neffbench: {note}")
            self.event("conversions", notes=notes)
            problems += preload_checks.check_io(neff_info, feeds)
            host = preload_checks.host_facts()
            self.event(
                "host",
                family=host.family,
                lnc=host.lnc,
                devices=len(host.devices),
                note=host.neuron_ls,
                holders=host.holders(),
            )
            problems += preload_checks.check_host(neff_info, host)
        self.event("checks", problems=problems)
        if problems:
            for p in problems:
                self.out.line(f"neffbench: {p}")
            raise RunFailure(f"{len(problems)} problem(s) before loading, so nothing was run: {problems[0]}")

    def _bench(self, session: runtimes.Session, mode: str) -> None:
        """Warm-up and timed iterations, and those of the session timed beside it (the eager module)."""
        req = self.req
        try:
            timing = session.bench(
                int(req.get("warmup", 5)), int(req.get("iterations", 50)), mode, lambda: self._stop, self._progress
            )
        except Exception as exc:  # noqa: BLE001
            raise RunFailure(_explained(exc, "benchmarking")) from exc
        self.event(
            "timing",
            cold_ms=timing.cold_ms,
            durations_ms=timing.durations_ms,
            mode=timing.mode,
            reported=timing.reported,
            variant=getattr(session, "variant", None),
        )
        extra = getattr(session, "secondary", None)
        if extra is not None:
            t2 = extra.bench(
                int(req.get("warmup", 5)), int(req.get("iterations", 50)), "host", lambda: self._stop, self._progress
            )
            self.event("timing_secondary", variant=extra.variant, cold_ms=t2.cold_ms, durations_ms=t2.durations_ms)

    def _progress(self, phase: str, done: int, total: int, counted: bool) -> None:
        """A ``progress`` event at most every PROGRESS_S (and at each phase's first and last call): a long run
        shows its count, and a fast loop is not slowed by a line per call."""
        now = time.monotonic()
        if done in (0, 1, total) or now - self._last_progress >= PROGRESS_S:
            self._last_progress = now
            self.event("progress", phase=phase, done=done, total=total, counted=counted)

    def _session(self, runtime: type[runtimes.Runtime], neff_info: Any, feeds: arrays.Arrays) -> runtimes.Session:
        try:
            return runtime.load(self, neff_info, feeds)
        except RunFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - loading fails in many documented ways
            raise RunFailure(_explained(exc, "loading")) from exc


def _explained(exc: BaseException, what: str) -> str:
    text = str(exc).strip()
    nrt = nrt_errors.explain(text)
    if nrt is not None:
        return f"{what}: {nrt.sentence()}"
    return f"{what}: {type(exc).__name__}: {message_text(text) or 'no message'}"


def main() -> int:
    watch()  # the runtime goes with us if the parent dies
    out = Emitter()
    request = json.loads(sys.stdin.readline() or "{}")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the runtime must not wait on our stdin
    run = Run(request, out)
    target = request.get("neff") or request.get("job_dir")
    out.line(f"neffbench: run child pid {os.getpid()} for {target}{forked_note()}")
    t0 = time.perf_counter()
    try:
        run.run()
    except RunFailure as exc:
        out.line(f"neffbench: run failed: {exc} (during {run.stage})")
        out.event({"type": "outcome", "outcome": "failed", "reason": f"{exc} (during {run.stage})"})
        return 1
    except Exception as exc:  # noqa: BLE001 - the runtime may raise anything
        traceback.print_exc(file=sys.stderr)
        reason = f"{type(exc).__name__} during {run.stage}: {message_text(str(exc))}"
        out.event({"type": "outcome", "outcome": "failed", "reason": reason})
        return 1
    out.event({"type": "outcome", "outcome": "succeeded", "reason": None, "seconds": time.perf_counter() - t0})
    return 0


if __name__ == "__main__":
    exit_now(main(), exit_functions=False)

"""The run child: ``python -m neffbench.workers.run`` reads a run request (JSON on stdin) and reports protocol events.

Stages: ``loading`` (the target, its inputs, the runtime), ``checking`` (IO against the NEFF, the
host against its target and LNC), ``running`` (one call, compared with reference.npz),
``benchmarking`` (warm-up and timed iterations), ``profiling`` (only with ``profile``). It writes no
record (the parent does); a profile goes into the run's own directory.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import sys
import time
import traceback
from typing import Any

import numpy as np

from neffbench.backends import registry as backends
from neffbench.procs import Emitter, watch
from neffbench.runs import arrays, checks, nrt_errors, runtimes


class RunFailure(Exception):
    """A failed run with its one-sentence reason."""


class Run:
    def __init__(self, request: dict[str, Any], out: Emitter):
        self.req = request
        self.out = out
        self.stage = "start"
        self._stop = False
        self._module: Any = None
        # Inputs other than the job's own (random, or given with other values): reference.npz is for other
        # inputs, so their reference is computed here, with the job's own module.
        self._other_feeds: arrays.Arrays | None = None
        signal.signal(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        # A cancel between timed iterations ends the loop cleanly; SIGKILL follows if it does not.
        self._stop = True

    def enter(self, stage: str) -> None:
        self.stage = stage
        self.out.stage(stage)

    def event(self, kind: str, **fields: Any) -> None:
        self.out.event({"type": kind, **fields})

    # ---- inputs ----------------------------------------------------------------------------

    def _feeds(self, neff_info: Any) -> arrays.Arrays:
        req = self.req
        if req.get("inputs_npz"):
            feeds = arrays.load(req["inputs_npz"])
            source = req["inputs_npz"]
        elif req.get("inputs_npy"):
            feeds = arrays.Arrays()
            for name, path in req["inputs_npy"].items():
                feeds.add(name, *arrays.load_npy(name, path))
            source = "the .npy files given"
        elif req.get("random"):
            feeds, source = self._random(neff_info), "random values"
        elif req.get("job_inputs"):
            feeds, source = arrays.load(req["job_inputs"]), "the job's inputs.npz"
        else:
            missing = (
                "the job did not get as far as saving its inputs.npz"
                if req.get("job_dir")
                else "the NEFF has no job with an inputs.npz"
            )
            raise RunFailure(
                f"there are no inputs to feed: {missing}; give --inputs FILE.npz, --inputs name=file.npy, or --random."
            )
        self.event(
            "inputs",
            source=source,
            arrays={n: {"dtype": feeds.dtypes[n], "shape": list(feeds.shape(n))} for n in feeds.arrays},
        )
        if source != "the job's inputs.npz" and not self._same_as_job_inputs(feeds):
            self._other_feeds = feeds
        return feeds

    def _same_as_job_inputs(self, feeds: arrays.Arrays) -> bool:
        if not self.req.get("job_inputs"):
            return False
        own = arrays.load(self.req["job_inputs"])
        return list(own.arrays) == list(feeds.arrays) and all(
            own.dtypes[n] == feeds.dtypes[n] and np.array_equal(own.arrays[n], feeds.arrays[n]) for n in own.arrays
        )

    def _random(self, neff_info: Any) -> arrays.Arrays:
        """Values of the recorded shapes and dtypes: the job's inputs.npz, else the NEFF's own signature."""
        rng = np.random.default_rng(int(self.req.get("seed") or 0))
        like = arrays.load(self.req["job_inputs"]) if self.req.get("job_inputs") else None
        shapes = (
            {n: (like.dtypes[n], like.shape(n)) for n in like.arrays}
            if like is not None
            else {t.name: (t.dtype, tuple(t.shape or ())) for t in neff_info.inputs}
        )
        out = arrays.Arrays()
        for name, (dtype, shape) in shapes.items():
            if dtype in ("float32", "float16", "float64", "bfloat16"):
                import torch

                t = torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).to(getattr(torch, dtype))
                out.add(name, *arrays.from_tensor(t))
            elif dtype == "bool":
                out.add(name, np.ones(shape, dtype=bool))
            else:  # integers: zeros, as the tensor specs default them (ids beyond a table would fault)
                out.add(name, np.zeros(shape, dtype=np.dtype(dtype or "int32")))
        return out

    # ---- the run -----------------------------------------------------------------------------

    def run(self) -> None:
        req = self.req
        self.enter("loading")
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
        table = runtimes.availability(
            bool(req.get("neff")),
            bool(req.get("job_dir")),
            backends.neff_in_model_pt(req.get("backend")) and bool(req.get("model_pt")),
            req.get("no_neff_reason") or "a cpu-check job makes no NEFF",
        )
        try:
            name, reason = runtimes.choose(req.get("runtime", "auto"), table)
        except runtimes.RuntimeUnavailable as exc:
            raise RunFailure(str(exc)) from None
        modes = ("device", "host") if name in ("nrtpy", "spike") else ("host",)
        mode = req.get("mode") or modes[0]
        if mode not in modes:
            raise RunFailure(f"the {name} runtime times in {' or '.join(modes)} mode only; got --mode {mode}.")
        self.event(
            "runtime",
            runtime=name,
            label=runtimes.LABELS[name],
            reason=reason,
            mode=mode,
            on_device=name in runtimes.DEVICE_RUNTIMES,
            available={k: list(v) for k, v in table.items()},
            versions=_versions(name),
        )
        self.out.line(f"neffbench: runtime {name} ({runtimes.LABELS[name]}): {reason}")
        feeds = self._feeds(neff_info)

        self.enter("checking")
        problems: list[str] = []
        if name in ("nrtpy", "spike") and neff_info is not None:
            notes, problems = checks.downcast_int64(neff_info, feeds)
            for note in notes:
                self.out.line(f"neffbench: {note}")
            self.event("conversions", notes=notes)
            problems += checks.check_io(neff_info, feeds)
            host = checks.host_facts()
            self.event(
                "host",
                family=host.family,
                lnc=host.lnc,
                devices=len(host.devices),
                note=host.neuron_ls,
                holders=host.holders(),
            )
            problems += checks.check_host(neff_info, host)
        self.event("checks", problems=problems)
        if problems:
            for p in problems:
                self.out.line(f"neffbench: {p}")
            raise RunFailure(f"{len(problems)} problem(s) before loading, so nothing was run: {problems[0]}")

        session = self._session(name, neff_info, feeds)
        self.enter("running")
        try:
            outputs = session.call()
        except Exception as exc:  # noqa: BLE001 - a runtime error is the run's failure, explained
            raise RunFailure(_explained(exc, "running the NEFF")) from exc
        self._numerics(outputs)
        self.enter("benchmarking")
        try:
            timing = session.bench(int(req.get("warmup", 5)), int(req.get("iterations", 50)), mode, lambda: self._stop)
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
            t2 = extra.bench(int(req.get("warmup", 5)), int(req.get("iterations", 50)), "host", lambda: self._stop)
            self.event("timing_secondary", variant=extra.variant, cold_ms=t2.cold_ms, durations_ms=t2.durations_ms)
        if req.get("profile"):
            self.enter("profiling")
            from neffbench.runs.profile import capture

            self.event("profile", **capture(req, feeds, self.out))
        self.enter("done")

    def _session(self, name: str, neff_info: Any, feeds: arrays.Arrays) -> runtimes.Session:
        req = self.req
        try:
            if name in ("nrtpy", "spike"):
                out_dtypes = {t.name: t.dtype for t in neff_info.outputs}
                return runtimes.nrt_session(
                    name,
                    req["neff"],
                    {n: feeds.arrays[n] for n in feeds.neff_names},
                    int(req.get("core", 0)),
                    out_dtypes,
                    feeds.dtypes,
                )
            args = tuple(arrays.to_tensor(feeds.arrays[n], feeds.dtypes[n]) for n in feeds.arrays)
            out_names = self._output_names()
            if name == "torchscript":
                import torch
                import torch_neuronx  # noqa: F401 - registers the Neuron ops model.pt calls

                return runtimes.torch_session(name, torch.jit.load(req["model_pt"]), args, out_names)
            return self._cpu_session(args, out_names)
        except RunFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - loading fails in many documented ways
            raise RunFailure(_explained(exc, "loading")) from exc

    def _rebuilt(self) -> Any:
        """The job's module built again from its spec, refused when it is not the module the job compiled (other
        weights would make every comparison a false mismatch)."""
        if self._module is not None:
            return self._module
        from neffbench.backends.weights import weights_difference, weights_digest
        from neffbench.kernels import registry
        from neffbench.kernels.api import KernelError
        from neffbench.spec import from_dict
        from neffbench.usercode import closure

        spec = from_dict(self.req["spec"])
        changed = closure.changes(self.req["sources"]) if self.req.get("sources") else []
        if changed:
            raise RunFailure(
                f"the files the job's module was built from have changed since ({', '.join(changed)}), "
                "so a module built now is not the one compiled; compile again to run the new code"
            )
        try:
            module = registry.for_spec(spec).build(spec).module
        except KernelError as exc:
            raise RunFailure(f"the job's module cannot be built again: {exc}") from exc
        difference = weights_difference(weights_digest(module), self.req.get("weights") or {})
        if difference:
            raise RunFailure(
                f"{difference}; a run of it would be compared with outputs of another module, so "
                "nothing was run (the job's files or library versions may have changed since: "
                "see job.json's sources)"
            )
        self._module = module
        return module

    def _cpu_session(self, args: tuple[Any, ...], out_names: list[str]) -> runtimes.Session:
        """The cpu-check job's TorchScript when there is one (and the eager module beside it), else eager."""
        import torch

        if backends.makes_no_neff(self.req.get("backend")) and self.req.get("model_pt"):
            scripted = runtimes.torch_session(
                "cpu", torch.jit.load(self.req["model_pt"], map_location="cpu"), args, out_names
            )
            scripted.variant = "TorchScript (model.pt)"
            try:
                scripted.secondary = runtimes.torch_session("cpu", self._rebuilt(), args, out_names)
                scripted.secondary.variant = "eager module"
            except RunFailure as exc:  # model.pt is the job's own graph: it still runs
                self.out.line(f"neffbench: the eager module is not timed beside model.pt: {exc}")
            return scripted
        eager = runtimes.torch_session("cpu", self._rebuilt(), args, out_names)
        eager.variant = "eager module"
        return eager

    def _output_names(self) -> list[str]:
        if self.req.get("reference"):
            return list(arrays.load(self.req["reference"]).arrays)
        return []

    def _numerics(self, outputs: dict[str, np.ndarray]) -> None:
        from neffbench.backends.verify import compare

        if self._other_feeds is not None:
            ref = self._other_reference(self._other_feeds)
            if ref is None:
                return
        elif not self.req.get("reference"):
            self.event("numerics", checked=False, reason="no reference.npz to compare with (a NEFF without its job)")
            return
        else:
            ref = arrays.load(self.req["reference"])
        atol, rtol, basis = self.req.get("tolerance") or _default_tolerance(ref)
        names = list(ref.arrays)
        missing = [n for n in names if n not in outputs]
        if missing:
            self.event("numerics", checked=True, match=False, problem=f"the run returned no {', '.join(missing)}")
            return
        got = tuple(arrays.to_tensor(outputs[n], ref.dtypes[n]) for n in names)
        want = tuple(arrays.to_tensor(ref.arrays[n], ref.dtypes[n]) for n in names)
        result = compare(got, want, atol, rtol, tuple(ref.roles.get(n, n) for n in names))
        against = (
            "the CPU reference for these inputs (the job's module, run here)"
            if self._other_feeds is not None
            else "reference.npz"
        )
        self.event("numerics", checked=True, atol=atol, rtol=rtol, tolerance_basis=basis, against=against, **result)
        verdict = "match" if result["match"] else "MISMATCH"
        self.out.line(
            f"neffbench: outputs against {against}: {verdict} (max abs error "
            f"{result['max_abs_error']:.3g}, atol {atol:g}, rtol {rtol:g})"
        )

    def _other_reference(self, feeds: arrays.Arrays) -> arrays.Arrays | None:
        """The eager CPU outputs of the job's own module (checked to be the compiled one) for inputs other than the
        job's;
        None, with the reason recorded, when there is no job to build it from. The saved reference.npz belongs
        to other inputs and is never compared with them."""
        import torch

        from neffbench.backends.verify import as_tuple

        if not self.req.get("spec") or not self.req.get("reference"):
            self.event(
                "numerics",
                checked=False,
                reason="the inputs are not the job's, and there is no job whose module could give their reference",
            )
            self.out.line(
                "neffbench: outputs not compared: other inputs than the job's, and no job to compute their reference"
            )
            return None
        try:
            module = self._rebuilt()
        except RunFailure as exc:
            self.event("numerics", checked=False, reason=str(exc))
            self.out.line(f"neffbench: outputs not compared: {exc}")
            return None
        args = tuple(arrays.to_tensor(feeds.arrays[n], feeds.dtypes[n]) for n in feeds.arrays)
        with torch.no_grad():
            outputs = as_tuple(module(*args))
        saved = arrays.load(self.req["reference"])
        ref = arrays.Arrays()
        for name, tensor in zip(saved.arrays, outputs):
            ref.add(name, *arrays.from_tensor(tensor), role=saved.roles.get(name))
        return ref


def _default_tolerance(ref: arrays.Arrays) -> tuple[float, float, str]:
    from neffbench.kernels.api import TOLERANCES

    floats = [d for d in ref.dtypes.values() if d in TOLERANCES]
    dtype = floats[0] if floats else "float32"
    return (*TOLERANCES[dtype], dtype)


def _explained(exc: BaseException, what: str) -> str:
    text = str(exc).strip()
    nrt = nrt_errors.explain(text)
    if nrt is not None:
        return f"{what}: {nrt.sentence()}"
    first = text.splitlines()[0] if text else "no message"
    return f"{what}: {type(exc).__name__}: {first}"


def _versions(runtime: str) -> dict[str, Any]:
    from neffbench.versions import package_version

    out: dict[str, Any] = {"python": platform.python_version()}
    for name, dist in (
        ("torch", "torch"),
        ("torch_neuronx", "torch-neuronx"),
        ("nrtpy", "nrtpy"),
        ("spike", "spike"),
        ("neffbench", "neffbench"),
    ):
        out[name] = package_version(name, dist)
    return out


def main() -> int:
    watch()  # the runtime goes with us if the parent dies
    out = Emitter()
    request = json.loads(sys.stdin.readline() or "{}")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the runtime must not wait on our stdin
    run = Run(request, out)
    out.line(f"neffbench: run child pid {os.getpid()} for {request.get('neff') or request.get('job_dir')}")
    t0 = time.perf_counter()
    try:
        run.run()
    except RunFailure as exc:
        out.line(f"neffbench: run failed: {exc} (during {run.stage})")
        out.event({"type": "outcome", "outcome": "failed", "reason": f"{exc} (during {run.stage})"})
        return 1
    except Exception as exc:  # noqa: BLE001 - the runtime may raise anything
        traceback.print_exc(file=sys.stderr)
        reason = (
            f"{type(exc).__name__} during {run.stage}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        )
        out.event({"type": "outcome", "outcome": "failed", "reason": reason})
        return 1
    out.event({"type": "outcome", "outcome": "succeeded", "reason": None, "seconds": time.perf_counter() - t0})
    return 0


if __name__ == "__main__":
    code = main()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)

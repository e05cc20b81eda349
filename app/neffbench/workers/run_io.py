"""The run child's data: the inputs it feeds, the job's module built again, and the reference its outputs are
compared with (reference.npz, or the module's own outputs for inputs other than the job's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from neffbench.procs import Emitter
from neffbench.runs import arrays
from neffbench.runs.runtimes import RunFailure

__all__ = ["RunFailure", "RunIO", "default_tolerance"]


class RunIO:
    """A run request's inputs and reference; :class:`neffbench.workers.run.Run` adds the stages and runtimes."""

    def __init__(self, request: dict[str, Any], out: Emitter):
        self.req = request
        self.out = out
        self._module: Any = None
        # Inputs other than the job's own (random, or given with other values): reference.npz is for other
        # inputs, so their reference is computed here, with the job's own module.
        self._other_feeds: arrays.Arrays | None = None

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

    # ---- the job's module and the reference -------------------------------------------------

    def rebuilt(self) -> Any:
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

    def artifact_of(self, job: dict[str, Any]) -> Any:
        """Another job's artifact on the CPU (a prefill's): its cpu-check TorchScript, else its module built again."""
        import torch

        from neffbench.backends import registry as backends
        from neffbench.kernels import registry
        from neffbench.kernels.api import KernelError
        from neffbench.spec import from_dict

        if backends.makes_no_neff(job.get("backend")) and job.get("model_pt"):
            return torch.jit.load(job["model_pt"], map_location="cpu")
        spec = from_dict(job["spec"])
        try:
            return registry.for_spec(spec).build(spec).module
        except KernelError as exc:
            raise RunFailure(f"the prefill job's module cannot be built again: {exc}") from exc

    def output_names(self) -> list[str]:
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
        atol, rtol, basis = self.req.get("tolerance") or default_tolerance(ref)
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
            module = self.rebuilt()
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


def default_tolerance(ref: arrays.Arrays) -> tuple[float, float, str]:
    from neffbench.kernels.tolerances import TOLERANCES

    floats = [d for d in ref.dtypes.values() if d in TOLERANCES]
    dtype = floats[0] if floats else "float32"
    return (*TOLERANCES[dtype], dtype)

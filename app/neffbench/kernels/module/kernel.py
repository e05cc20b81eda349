"""The module kernel as the registry sees it: any nn.Module or function, from a file or a package."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from neffbench.kernels.api import STATE_PREFIX, Built, Kernel
from neffbench.kernels.module import entry as entries
from neffbench.kernels.module import rules, tensors
from neffbench.kernels.module.cli import ModuleCli
from neffbench.kernels.module.params import ModuleCompileSpec
from neffbench.schema.problems import Problem


class ModuleKernel(Kernel):
    name = "module"
    probe_requests = {"resolve": "neffbench.kernels.module.resolve:report"}
    title = "Any PyTorch module or function"
    summary = (
        "An nn.Module, a factory that builds one (a Hugging Face model from its config), or a plain "
        "function, from a package or your own .py file; inputs bound by forward-parameter name."
    )
    spec_class = ModuleCompileSpec
    # As its form titles them: what the window's messages call these parts of the spec.
    section_titles = {
        "module": "Module",
        "module.kwargs": "Constructor arguments",
        "inputs": "Inputs",
        "buckets": "Buckets",
    }
    gui_form = "neffbench.kernels.module.gui.form:ModuleForm"
    runs_user_code = True
    cli = ModuleCli()
    # The bound built last in this process: verification asks for fresh inputs of the same module.
    # With the state's values before any call, which every call's inputs end with.
    _bound: tuple[str, tuple[str, ...], tuple[Any, ...]] | None = None

    # ---- spec ----------------------------------------------------------------------------------

    def validate(self, spec: ModuleCompileSpec) -> list[Problem]:
        return rules.validate(spec)

    def buckets(self, spec: ModuleCompileSpec) -> list[dict[str, int]]:
        from neffbench.kernels.module.build import all_buckets

        return all_buckets(spec)

    def for_bucket(self, spec: ModuleCompileSpec, bucket: Any) -> ModuleCompileSpec:
        return dataclasses.replace(spec, buckets={axis: (bucket[axis],) for axis in spec.buckets})

    def seed(self, spec: ModuleCompileSpec) -> int:
        return spec.seed

    def with_seed(self, spec: ModuleCompileSpec, seed: int) -> ModuleCompileSpec:
        return dataclasses.replace(spec, seed=seed)

    def dtype(self, spec: ModuleCompileSpec) -> str:
        """The module's dtype when it is cast, else the first floating input's (float32 when all inputs are
        integers) sets the tolerance."""
        if spec.module.dtype != "keep":
            return spec.module.dtype
        for text in spec.inputs.values():
            try:
                dtype = tensors.parse(text).dtype
            except tensors.TensorSpecError:
                continue
            if dtype in tensors.FLOAT_DTYPES:
                return dtype
        return "float32"

    def items_per_call(self, bucket: Any) -> int:
        for axis in ("batch", "batch_size", "tokens", "num_tokens"):
            if axis in bucket:
                return int(bucket[axis])
        return 1

    def neff_relevant(self, spec: ModuleCompileSpec) -> dict[str, Any]:
        m = spec.module
        out = super().neff_relevant(spec)  # kernel name and [compiler]; [module] is replaced below
        entry_key, sha = m.entry, None
        try:
            parsed = entries.parse(m.entry)
            if parsed.is_file:
                # The file's content, not where it lies: a moved file compiles the same NEFF.
                entry_key, sha = f"{Path(parsed.target).name}:{parsed.attr}", entries.file_sha256(parsed)
        except entries.EntryError:
            pass
        canonical_inputs = {}
        for name, text in spec.inputs.items():
            try:
                # "f32[4]" and "float32[4] randn" are one spec: the default init spelled out.
                canonical_inputs[name] = dataclasses.replace(tensors.parse(text), explicit_init=True).format()
            except tensors.TensorSpecError:
                canonical_inputs[name] = text
        examples_sha = None
        if m.examples:
            try:
                examples_sha = entries.file_sha256(entries.parse(m.examples))
            except entries.EntryError:
                pass
        out["module"] = {
            "entry": entry_key,
            "file_sha256": sha,
            "call": m.call,
            "dtype": m.dtype,
            "weights_seed": m.weights_seed,
            "outputs": list(m.outputs),
            "kwargs": entries.placeless(m.kwargs),
            "constants": m.constants,
            "examples": m.examples and Path(m.examples.rpartition(":")[0]).name + ":" + m.examples.rpartition(":")[2],
            "examples_sha256": examples_sha,
        }
        if m.state:  # only when set: every module spec written before state existed keeps its hash
            out["module"]["state"] = list(m.state)
        out["inputs"] = canonical_inputs
        out["buckets"] = {k: list(v) for k, v in spec.buckets.items()}
        return json.loads(json.dumps(out, default=str))

    def sources_key(self, spec: ModuleCompileSpec) -> dict[str, Any]:
        import os

        # Where imports look decides which file a name finds, and the folder the build runs in which file a
        # relative open() reads: both are part of what decides the closure.
        return {
            "kernel": self.name,
            "module": self.neff_relevant(spec)["module"],
            "path": list(spec.module.path),
            "pythonpath": os.environ.get("PYTHONPATH", ""),
            "cwd": os.getcwd(),
        }

    def explain_trace_failure(self, text: str) -> str | None:
        from neffbench.kernels.module.hf_compat import explain_trace_failure

        return explain_trace_failure(text)

    def prepare_key(self, spec: ModuleCompileSpec) -> dict[str, Any]:
        # The files read, and what the probe binds: the inputs and the constants (the buckets only resize).
        return {"sources": self.sources_key(spec), "inputs": spec.inputs, "constants": spec.module.constants}

    def anchor(self, spec: ModuleCompileSpec, base_dir: Path) -> ModuleCompileSpec:
        """The entry, the examples, nested entries, the import path and input files made absolute against
        ``base_dir``."""
        m = spec.module
        inputs = {}
        for name, text in spec.inputs.items():
            try:
                parsed = tensors.parse(text)
            except tensors.TensorSpecError:
                inputs[name] = text
                continue
            if parsed.init.kind == "file" and not Path(parsed.init.args[0]).is_absolute():
                init = tensors.Init("file", (str((base_dir / parsed.init.args[0]).resolve()),))
                parsed = dataclasses.replace(parsed, init=init)
                inputs[name] = parsed.format()
            else:
                inputs[name] = text
        module = dataclasses.replace(
            m,
            entry=entries.anchored(m.entry, base_dir),
            kwargs=entries.anchored_values(m.kwargs, base_dir),
            examples=entries.anchored(m.examples, base_dir) if m.examples else "",
            path=tuple(str((base_dir / p).resolve()) if not Path(p).is_absolute() else p for p in m.path),
        )
        return dataclasses.replace(spec, module=module, inputs=inputs)

    # ---- the Python API ------------------------------------------------------------------------

    def spec_from_object(self, obj: Any, saved: Any) -> ModuleCompileSpec | None:
        """Any object a module entry could name: saved with the call, its entry file written beside it."""
        from neffbench.kernels.module.from_object import spec

        return spec(obj, saved)

    # ---- torch ---------------------------------------------------------------------------------

    def _key(self, spec: ModuleCompileSpec) -> str:
        text = json.dumps(self.neff_relevant(spec), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def preload(self) -> None:
        from neffbench.kernels.module import build, reproduce  # noqa: F401

    def build(self, spec: ModuleCompileSpec) -> Built:
        from neffbench.kernels.module.build import build

        built = build(spec)
        state = built.inputs[len(built.inputs) - len(built.state) :]
        ModuleKernel._bound = (self._key(spec), built.input_names, tuple(t.clone() for t in state))
        return built

    def prepare(self, spec: ModuleCompileSpec) -> Any:
        from neffbench.kernels.module.build import prepare

        return prepare(spec)

    def _user_inputs(self, spec: ModuleCompileSpec) -> tuple[list[str], tuple[Any, ...]]:
        """The names of the inputs that are not state, and the state's values before any call."""
        bound = ModuleKernel._bound
        if bound is None or bound[0] != self._key(spec):
            self.build(spec)
            bound = ModuleKernel._bound
        assert bound is not None  # set by build
        return [n for n in bound[1] if not n.startswith(STATE_PREFIX)], bound[2]

    def example_inputs(self, spec: ModuleCompileSpec) -> tuple[Any, ...]:
        from neffbench.kernels.module.build import make_inputs

        names, state = self._user_inputs(spec)
        return make_inputs(spec, names) + tuple(t.clone() for t in state)

    def step_inputs(self, spec: ModuleCompileSpec, step: int, consumed: Mapping[str, int]) -> tuple[Any, ...]:
        from neffbench.kernels.module.build import make_inputs

        return make_inputs(spec, self._user_inputs(spec)[0], step, consumed)

    def with_state(self, spec: ModuleCompileSpec, names: list[str]) -> ModuleCompileSpec:
        kept = tuple(dict.fromkeys((*spec.module.state, *names)))
        return dataclasses.replace(spec, module=dataclasses.replace(spec.module, state=kept))

    def state_remedy(self, names: list[str]) -> str:
        listed = ", ".join(f'"{n}"' for n in names)
        return (
            f"keep them as the module's state: state = [{listed}] under [module] (--state '{' '.join(names)}' on "
            "the command line, Keep as state in the window); the compiled graph then takes them and returns their "
            "new values, and the device keeps them from call to call"
        )

    def reproduce_needs(self, spec: ModuleCompileSpec) -> str:
        parsed = entries.parse(spec.module.entry)
        where = parsed.target if parsed.is_file else f"the package {parsed.target.split('.')[0]}"
        return f"\nIt also needs the code it compiles: {where} (entry {spec.module.entry})."

    def reproduce_source(self, spec: ModuleCompileSpec, built: Built) -> str:
        from neffbench.kernels.module.reproduce import source

        return source(spec, built)


KERNEL = ModuleKernel()

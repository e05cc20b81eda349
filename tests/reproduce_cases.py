"""The reproduce.py of every kernel under every backend, from fixed specs and recorded values (no build, no torch).

``tests/data/reproduce_scripts/<case>.txt`` holds each as the code before the templates wrote it:
``python -m tests.reproduce_cases DIR`` writes them again (with that code checked out).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neffbench.jobs import reproduce
from neffbench.kernels.api import Built
from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.presets import load_preset

FIXTURES = Path(__file__).resolve().parent / "data" / "reproduce_scripts"
BACKENDS = ("neuron", "cpu-check", "torchneuron")
WEIGHTS = {"count": 2, "digest": "0f1e2d3c", "names": ["inner.up.weight", "inner.up.bias"]}


def _rope_fancy() -> Any:
    spec = load_preset("llama3.1-8b")
    return dataclasses.replace(
        spec,
        model=dataclasses.replace(spec.model, num_heads_q=4, num_heads_k=2, with_key=False, is_neox_style=False),
        rope=dataclasses.replace(spec.rope, max_pos=64, cache_mode="buffer"),
        inputs=dataclasses.replace(
            spec.inputs, num_tokens=(3,), positions="offset", position_offset=5, dtype="bfloat16", seed=7
        ),
    )


def _module_spec() -> ModuleCompileSpec:
    return ModuleCompileSpec(
        name="mlp",
        seed=3,
        module=ModuleSection(
            entry="mypkg.models:make_mlp",
            call="factory",
            dtype="bfloat16",
            path=("src",),
            kwargs={"hidden_size": 8, "config": {"entry": "mypkg.config:Config", "kwargs": {"depth": 2}}},
            weights_seed=11,
        ),
        inputs={"x": "f32[{tokens},8] randn", "mask": "bool[{tokens}] ones"},
        buckets={"tokens": (4, 8)},
    )


_WRAPPER = '''class NeffbenchWrapper(torch.nn.Module):
    """Tensors in by name, a flat tuple out."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, mask):
        return (self.inner(x, mask=mask),)
'''


def _module_built(hf_compat: bool) -> Built:
    info: dict[str, Any] = {
        "resolved": "mypkg.models.make_mlp",
        "file_sha256": None,
        "call": "factory",
        "wrapper": _WRAPPER,
    }
    if hf_compat:
        info["hf_compat"] = {"why": "transformers 4.55.0 builds attention masks with torch.vmap"}
    return Built(module=None, inputs=(), input_names=("x", "mask", "__state__cache"), info=info)


def _plain() -> Built:
    return Built(module=None, inputs=(), input_names=())


# name -> (spec, built, weights), each rendered under every backend
_SPECS: dict[str, Callable[[], tuple[Any, Built, dict[str, Any] | None]]] = {
    "rope-seed": lambda: (load_preset("seed"), _plain(), None),
    "rope-fancy": lambda: (_rope_fancy(), _plain(), WEIGHTS),
    "rms-norm": lambda: (load_preset("llama3-8b-rms-norm"), _plain(), None),
    "rms-norm-residual": lambda: (load_preset("llama3-8b-rms-norm-residual"), _plain(), WEIGHTS),
    "silu-and-mul": lambda: (load_preset("qwen2-7b-silu-and-mul"), _plain(), None),
    "module": lambda: (_module_spec(), _module_built(hf_compat=False), WEIGHTS),
    "module-hf-compat": lambda: (_module_spec(), _module_built(hf_compat=True), None),
}

CASES = [f"{name}.{backend}" for name in _SPECS for backend in BACKENDS]


def script(case: str) -> str:
    """The reproduce.py of ``case`` ("<spec>.<backend>"), as the job ``job-1`` would write it."""
    name, backend = case.split(".")
    spec, built, weights = _SPECS[name]()
    return reproduce.render(spec, job_id="job-1", backend=backend, built=built, weights=weights)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURES
    out.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        (out / f"{case}.txt").write_text(script(case), encoding="utf-8")

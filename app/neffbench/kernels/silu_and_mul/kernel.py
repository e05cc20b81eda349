"""The SiluAndMul kernel as the registry sees it: its spec, rules, build, reproduction part and preview."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neffbench.kernels.api import Built, TensorSig
from neffbench.kernels.silu_and_mul import validate as rules
from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec
from neffbench.kernels.token import TokenKernel


class SiluAndMulKernel(TokenKernel):
    name = "silu_and_mul"
    title = "SiluAndMul (vLLM SwiGLU activation)"
    summary = (
        "vLLM's SiluAndMul.forward_native: silu(x[..., :d]) * x[..., d:], the activation between a "
        "gated MLP's gate/up and down projections."
    )
    preset_dir = Path(__file__).resolve().parent / "presets"
    spec_class = SiluAndMulCompileSpec
    section_titles = {"act": "SiluAndMul"}
    own_range_checks = rules.OWN_RANGE_CHECKS

    def validate(self, spec: SiluAndMulCompileSpec) -> list:
        return rules.validate(spec)

    def io_signature(self, spec: SiluAndMulCompileSpec) -> tuple[list[TensorSig], list[TensorSig]]:
        from neffbench.kernels.silu_and_mul.build import io_signature

        return io_signature(spec)

    def preload(self) -> None:
        from neffbench.kernels.silu_and_mul import build  # noqa: F401

    def build(self, spec: SiluAndMulCompileSpec) -> Built:
        from neffbench.kernels.silu_and_mul.build import build_module, example_inputs

        ins, outs = self.io_signature(spec)
        return Built(
            build_module(spec).eval(),
            example_inputs(spec),
            tuple(t.role for t in ins),
            tuple(t.role for t in outs),
            info={"op": "vllm SiluAndMul.forward_native", "intermediate_size": spec.act.intermediate_size},
        )

    def example_inputs(self, spec: SiluAndMulCompileSpec) -> tuple[Any, ...]:
        from neffbench.kernels.silu_and_mul.build import example_inputs

        return example_inputs(spec)

    def reproduce_source(self, spec: SiluAndMulCompileSpec, built: Built) -> str:
        from neffbench.kernels.silu_and_mul.reproduce import source

        return source(spec)

    def preview(self, spec: SiluAndMulCompileSpec, bucket: Any = None) -> Any:
        from neffbench.kernels.silu_and_mul.preview import compute

        return compute(spec, None if bucket is None else bucket.get("num_tokens"))


KERNEL = SiluAndMulKernel()

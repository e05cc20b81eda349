"""The RMSNorm kernel as the registry sees it: its spec, rules, hash, build, reproduction part and preview."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neffbench.kernels.api import Built, TensorSig
from neffbench.kernels.rms_norm import validate as rules
from neffbench.kernels.rms_norm.params import RmsNormCompileSpec
from neffbench.kernels.token import TokenKernel


class RmsNormKernel(TokenKernel):
    name = "rms_norm"
    title = "RMSNorm (vLLM)"
    summary = (
        "vLLM's RMSNorm.forward_static: x * rsqrt(mean(x^2) + eps) * weight in float32, optionally with "
        "the fused residual add; the weight inlined or as an input."
    )
    preset_dir = Path(__file__).resolve().parent / "presets"
    spec_class = RmsNormCompileSpec
    section_titles = {"norm": "RMSNorm"}
    own_range_checks = rules.OWN_RANGE_CHECKS

    def validate(self, spec: RmsNormCompileSpec) -> list:
        return rules.validate(spec)

    def neff_relevant(self, spec: RmsNormCompileSpec) -> dict[str, Any]:
        out = super().neff_relevant(spec)
        # As an input the weight's values are data, not code: only its shape and dtype reach the NEFF.
        if spec.norm.weight_mode == "input":
            out["norm"].pop("weight_init", None)
        return out

    def io_signature(self, spec: RmsNormCompileSpec) -> tuple[list[TensorSig], list[TensorSig]]:
        from neffbench.kernels.rms_norm.build import io_signature

        return io_signature(spec)

    def preload(self) -> None:
        from neffbench.kernels.rms_norm import build  # noqa: F401

    def build(self, spec: RmsNormCompileSpec) -> Built:
        from neffbench.kernels.rms_norm.build import build_module, example_inputs

        ins, outs = self.io_signature(spec)
        n = spec.norm
        return Built(
            build_module(spec).eval(),
            example_inputs(spec),
            tuple(t.role for t in ins),
            tuple(t.role for t in outs),
            info={
                "op": "vllm RMSNorm.forward_static",
                "hidden_size": n.hidden_size,
                "eps": n.eps,
                "with_residual": n.with_residual,
                "weight_mode": n.weight_mode,
                "weight_init": n.weight_init,
            },
        )

    def example_inputs(self, spec: RmsNormCompileSpec) -> tuple[Any, ...]:
        from neffbench.kernels.rms_norm.build import example_inputs

        return example_inputs(spec)

    def reproduce_source(self, spec: RmsNormCompileSpec, built: Built) -> str:
        from neffbench.kernels.rms_norm.reproduce import source

        return source(spec)

    def preview(self, spec: RmsNormCompileSpec, bucket: Any = None) -> Any:
        from neffbench.kernels.rms_norm.preview import compute

        return compute(spec, None if bucket is None else bucket.get("num_tokens"))


KERNEL = RmsNormKernel()

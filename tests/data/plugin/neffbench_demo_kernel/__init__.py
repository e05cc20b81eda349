"""A tiny third-party kernel for the plugin tests: ``y = x * scale``, registered through the neffbench.kernels entry point."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.kernels.api import Built, TensorSig
from neffbench.kernels.token import TokenKernel
from neffbench.schema import kernel_spec, ui


@dataclass(frozen=True)
class ScaleSection:
    width: int = field(default=16, metadata=ui("Width", "Elements per row.", min=1, max=4096))
    scale: float = field(default=2.0, metadata=ui("Scale", "What every element is multiplied by.", decimals=3))


@dataclass(frozen=True)
class ScaleInputs:
    num_tokens: tuple[int, ...] = field(default=(4,), metadata=ui("Tokens (buckets)", "Rows per call.", min=1))
    dtype: str = field(default="float32", metadata=ui("Dtype", "Dtype of x.", choices=("float32", "bfloat16")))
    seed: int = field(default=0, metadata=ui("Seed", "Example values only.", neff=False))


@kernel_spec("demo_scale", name="demo-scale")
class ScaleSpec:
    scale: ScaleSection = field(default_factory=ScaleSection)
    inputs: ScaleInputs = field(default_factory=ScaleInputs)


class ScaleKernel(TokenKernel):
    name = "demo_scale"
    title = "Demo scale (plugin)"
    summary = "y = x * scale, from the neffbench-demo-kernel plugin."
    spec_class = ScaleSpec
    preset_dir = Path(__file__).resolve().parent / "presets"

    def io_signature(self, spec: Any) -> Any:
        shape = (spec.inputs.num_tokens[0], spec.scale.width)
        return (
            [TensorSig("input0", "x", spec.inputs.dtype, shape)],
            [TensorSig("output0", "y", spec.inputs.dtype, shape)],
        )

    def build(self, spec: Any) -> Built:
        import torch

        class Scale(torch.nn.Module):
            def __init__(self, scale: float):
                super().__init__()
                self.scale = scale

            def forward(self, x):
                return x * self.scale

        return Built(Scale(spec.scale.scale).eval(), self.example_inputs(spec), ("x",), ("y",))

    def example_inputs(self, spec: Any) -> tuple[Any, ...]:
        import torch

        g = torch.Generator().manual_seed(spec.inputs.seed)
        dtype = getattr(torch, spec.inputs.dtype)
        return (torch.randn(spec.inputs.num_tokens[0], spec.scale.width, generator=g).to(dtype),)

    def reproduce_source(self, spec: Any, built: Built) -> str:
        return (
            f"def build_module():\n    class Scale(torch.nn.Module):\n        def forward(self, x):\n"
            f"            return x * {spec.scale.scale!r}\n    return Scale()\n\n\n"
            f"def example_inputs():\n    g = torch.Generator().manual_seed({spec.inputs.seed})\n"
            f"    return (torch.randn({spec.inputs.num_tokens[0]}, {spec.scale.width}, generator=g)"
            f".to(torch.{spec.inputs.dtype}),)\n"
        )


KERNEL = ScaleKernel()

"""From a spec to what gets traced: vLLM's SiluAndMul as a module, seeded example inputs and their signature."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from neffbench.kernels.api import TensorSig
from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec as CompileSpec

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

# ---- pasted into reproduce.py as they are: torch only, plain arguments -------------------------


class SiluAndMulModule(nn.Module):
    """vLLM ``SiluAndMul.forward_native`` (vllm/model_executor/layers/activation.py): SwiGLU's
    ``silu(gate) * up`` with the gate in the first half of the last dimension and up in the second."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]


def make_inputs(num_tokens: int, intermediate_size: int, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor]:
    """The seeded input ``x`` of ``[num_tokens, 2 * intermediate_size]`` (drawn in float32, then cast)."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(num_tokens, 2 * intermediate_size, generator=generator, dtype=torch.float32)
    return (x.to(dtype),)


# ---- spec-level helpers ---------------------------------------------------------------------------


def build_module(spec: CompileSpec) -> SiluAndMulModule:
    return SiluAndMulModule()


def example_inputs(spec: CompileSpec, num_tokens: int | None = None) -> tuple[torch.Tensor]:
    """Seeded inputs for a bucket (default: the spec's first)."""
    tokens = spec.inputs.num_tokens[0] if num_tokens is None else num_tokens
    return make_inputs(tokens, spec.act.intermediate_size, TORCH_DTYPES[spec.inputs.dtype], spec.inputs.seed)


def io_signature(spec: CompileSpec, num_tokens: int | None = None) -> tuple[list[TensorSig], list[TensorSig]]:
    """What the traced module takes and returns, without building any tensor."""
    tokens = spec.inputs.num_tokens[0] if num_tokens is None else num_tokens
    d, dt = spec.act.intermediate_size, spec.inputs.dtype
    return [TensorSig("input0", "x", dt, (tokens, 2 * d))], [TensorSig("output0", "out", dt, (tokens, d))]

"""From a spec to what gets traced: vLLM's RMSNorm as a module, seeded example inputs and their signature."""

from __future__ import annotations

from typing import overload

import torch
from torch import nn

from neffbench.kernels.api import TensorSig
from neffbench.kernels.rms_norm.params import RmsNormCompileSpec as CompileSpec

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# The inlined weight is part of the NEFF, so its values must follow only what the spec hash covers
# (hidden size, dtype, weight values) and never the inputs' seed: verification re-seeds the inputs
# and runs them through the same NEFF.
WEIGHT_SEED = 0

# ---- pasted into reproduce.py as they are: torch only, plain arguments -------------------------


@overload
def rms_norm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float, residual: None = None) -> torch.Tensor: ...


@overload
def rms_norm_forward(
    x: torch.Tensor, weight: torch.Tensor, eps: float, residual: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]: ...


def rms_norm_forward(
    x: torch.Tensor, weight: torch.Tensor, eps: float, residual: torch.Tensor | None = None
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """vLLM ``RMSNorm.forward_static`` (vllm/model_executor/layers/layernorm.py; ``forward_native`` in
    older releases, same casts) without the variance_size_override branch: x (+ residual) in float32,
    normalised, cast back, times weight.
    Returns ``x`` or ``(x, residual)`` with the sum, cast back, as the new residual."""
    orig_dtype = x.dtype
    # vLLM computes in float32 for every dtype it serves; a float64 run (the workbench's dtype-cost
    # check) keeps float64 so that it measures the dtype rather than this cast.
    compute = torch.float64 if orig_dtype == torch.float64 else torch.float32
    x = x.to(compute)
    if residual is not None:
        x = x + residual.to(compute)
        residual = x.to(orig_dtype)
    variance = x.pow(2).mean(dim=-1, keepdim=True)
    x = x * torch.rsqrt(variance + eps)
    # Llama-style: cast back first, then multiply by the weight in the input dtype (Gemma differs).
    x = x.to(orig_dtype)
    x = x * weight
    if residual is None:
        return x
    return x, residual


class BoundRmsNorm(nn.Module):
    """eps (and, as a buffer, the weight) bound so that only tensors cross the trace boundary; the two
    modules below differ in the arguments their forward takes."""

    weight: torch.Tensor | None

    def __init__(self, eps: float, weight: torch.Tensor | None = None):
        super().__init__()
        self.eps = float(eps)
        self.register_buffer("weight", weight)  # None: the weight comes as an argument


class RmsNormModule(BoundRmsNorm):
    """``forward(x, [residual], [weight])``: the weight is an argument only when none is bound."""

    def forward(
        self, x: torch.Tensor, residual: torch.Tensor | None = None, weight: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        bound = self.weight if weight is None else weight
        if bound is None:
            raise TypeError("forward() needs the weight: the module holds none")
        return rms_norm_forward(x, bound, self.eps, residual)


class RmsNormWeightInputModule(BoundRmsNorm):
    """``forward(x, weight)``: the weight as an input without a residual (positional arguments would
    otherwise bind it to ``residual``)."""

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return rms_norm_forward(x, weight, self.eps, None)


def make_weight(hidden_size: int, dtype: torch.dtype, init: str, generator: torch.Generator) -> torch.Tensor:
    """ones, or values around 1 with spread 0.2 (drawn in float32 so every dtype sees the same numbers)."""
    if init == "ones":
        return torch.ones(hidden_size, dtype=dtype)
    return (1.0 + 0.2 * torch.randn(hidden_size, generator=generator, dtype=torch.float32)).to(dtype)


def make_inputs(
    num_tokens: int,
    hidden_size: int,
    dtype: torch.dtype,
    with_residual: bool,
    weight_input: bool,
    weight_init: str,
    seed: int,
) -> tuple[torch.Tensor, ...]:
    """Seeded inputs in the module's argument order: x, [residual], [weight]."""
    generator = torch.Generator().manual_seed(seed)
    out = [torch.randn(num_tokens, hidden_size, generator=generator, dtype=torch.float32).to(dtype)]
    if with_residual:
        out.append(torch.randn(num_tokens, hidden_size, generator=generator, dtype=torch.float32).to(dtype))
    if weight_input:
        out.append(make_weight(hidden_size, dtype, weight_init, generator))
    return tuple(out)


def make_module(
    eps: float, hidden_size: int, dtype: torch.dtype, with_residual: bool, weight_input: bool, weight_init: str
) -> BoundRmsNorm:
    """The module variant whose positional arguments match ``make_inputs``."""
    if weight_input:
        return RmsNormModule(eps) if with_residual else RmsNormWeightInputModule(eps)
    weight = make_weight(hidden_size, dtype, weight_init, torch.Generator().manual_seed(WEIGHT_SEED))
    return RmsNormModule(eps, weight)


# ---- spec-level helpers ---------------------------------------------------------------------------


def build_module(spec: CompileSpec) -> BoundRmsNorm:
    """The traceable module for a spec; with ``weight_mode = "buffer"`` it holds the weight."""
    n = spec.norm
    return make_module(
        n.eps, n.hidden_size, TORCH_DTYPES[spec.inputs.dtype], n.with_residual, n.weight_mode == "input", n.weight_init
    )


def example_inputs(spec: CompileSpec, num_tokens: int | None = None) -> tuple[torch.Tensor, ...]:
    """Seeded inputs for a bucket (default: the spec's first) in the module's argument order."""
    n = spec.norm
    tokens = spec.inputs.num_tokens[0] if num_tokens is None else num_tokens
    return make_inputs(
        tokens,
        n.hidden_size,
        TORCH_DTYPES[spec.inputs.dtype],
        n.with_residual,
        n.weight_mode == "input",
        n.weight_init,
        spec.inputs.seed,
    )


def io_signature(spec: CompileSpec, num_tokens: int | None = None) -> tuple[list[TensorSig], list[TensorSig]]:
    """What the traced module takes and returns, without building any tensor."""
    tokens = spec.inputs.num_tokens[0] if num_tokens is None else num_tokens
    h, dt = spec.norm.hidden_size, spec.inputs.dtype
    ins: list[tuple[str, str, tuple[int, ...]]] = [("x", dt, (tokens, h))]
    outs = [("out", dt, (tokens, h))]
    if spec.norm.with_residual:
        ins.append(("residual", dt, (tokens, h)))
        outs.append(("residual", dt, (tokens, h)))
    if spec.norm.weight_mode == "input":
        ins.append(("weight", dt, (h,)))
    return (
        [TensorSig(f"input{i}", *t) for i, t in enumerate(ins)],
        [TensorSig(f"output{i}", *t) for i, t in enumerate(outs)],
    )

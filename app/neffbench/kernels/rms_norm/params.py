"""RMSNorm's parameters: the norm's geometry and weight, and the example inputs, as spec sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from neffbench.spec.schema import (
    DTYPES, CompilerSpec, compiler_field, description_field, name_field, sections_of, ui, workdir_field,
)

WEIGHT_MODES = ("buffer", "input")
WEIGHT_INITS = ("ones", "random")


@dataclass(frozen=True)
class NormSpec:
    """What vLLM's RMSNorm layer is built with: its width, epsilon, weight and whether it adds a residual."""

    hidden_size: int = field(default=4096, metadata=ui(
        "Hidden size", "Elements per token that are normalised together (the model's hidden_size).",
        min=1, max=65536))
    eps: float = field(default=1e-6, metadata=ui(
        "Epsilon", "Added to the mean square before the inverse square root (the model's rms_norm_eps, "
        "usually 1e-5 or 1e-6); type it in, the arrows step by 1e-6.",
        min=0.0, max=1.0, step=1e-6, decimals=10))
    with_residual: bool = field(default=False, metadata=ui(
        "Fused residual add", "On: the module takes a residual, normalises x + residual and returns "
        "(out, residual) with the sum as the new residual, as vLLM's decoder layers call it. "
        "Off: it takes x alone and returns out."))
    weight_mode: str = field(default="buffer", metadata=ui(
        "Weight", "buffer: the weight is inlined into the NEFF as a constant, as a loaded model has it. "
        "input: the weight is a NEFF input, so one NEFF serves any weight values.",
        choices=WEIGHT_MODES))
    weight_init: str = field(default="random", metadata=ui(
        "Weight values", "ones: a freshly initialised RMSNorm (the multiply by the weight does nothing). "
        "random: fixed values around 1 with spread 0.2, like a trained layer's. As an input, the values "
        "are example data and do not change the NEFF.",
        choices=WEIGHT_INITS))


@dataclass(frozen=True)
class InputsSpec:
    """The concrete example inputs the trace is made with: shapes and dtypes are fixed by them."""

    num_tokens: tuple[int, ...] = field(default=(128,), metadata=ui(
        "Tokens (buckets)", "Rows of x per call. Shapes are fixed at trace time, so each value is its own "
        "NEFF; list several to compile one bucket each.", min=1, max=1_048_576))
    dtype: str = field(default="float32", metadata=ui(
        "Dtype", "Dtype of x, the residual and the weight. The sum and the normalisation run in float32 "
        "whatever this is, as in vLLM; the result is cast back before the weight multiplies it.",
        choices=DTYPES))
    seed: int = field(default=0, metadata=ui(
        "Seed", "Seed for the example values of x and the residual (and the weight when it is an input); "
        "values do not change the NEFF.", min=0, max=2**31 - 1, neff=False))


@dataclass(frozen=True)
class RmsNormCompileSpec:
    """An RMSNorm compile: what a spec file with ``kernel = "rms_norm"`` describes."""

    kernel: ClassVar[str] = "rms_norm"

    name: str = name_field("rms_norm")
    description: str = description_field()
    workdir: str = workdir_field()
    norm: NormSpec = field(default_factory=NormSpec)
    inputs: InputsSpec = field(default_factory=InputsSpec)
    compiler: CompilerSpec = compiler_field()


SECTIONS = sections_of(RmsNormCompileSpec)

"""RMSNorm's parameters: the norm's geometry and weight, and the example inputs, as spec sections."""

from __future__ import annotations

from dataclasses import dataclass, field

from neffbench.kernels.token import TokenInputs, token_inputs
from neffbench.schema import SpecHeader, kernel_spec, sections_of, ui

WEIGHT_MODES = ("buffer", "input")
WEIGHT_INITS = ("ones", "random")


@dataclass(frozen=True)
class NormSpec:
    """What vLLM's RMSNorm layer is built with: its width, epsilon, weight and whether it adds a residual."""

    hidden_size: int = field(
        default=4096,
        metadata=ui(
            "Hidden size",
            "Elements per token that are normalised together (the model's hidden_size).",
            min=1,
            max=65536,
        ),
    )
    eps: float = field(
        default=1e-6,
        metadata=ui(
            "Epsilon",
            "Added to the mean square before the inverse square root (the model's rms_norm_eps, "
            "usually 1e-5 or 1e-6); type it in, the arrows step by 1e-6.",
            min=0.0,
            max=1.0,
            step=1e-6,
            decimals=10,
        ),
    )
    with_residual: bool = field(
        default=False,
        metadata=ui(
            "Fused residual add",
            "On: the module takes a residual, normalises x + residual and returns "
            "(out, residual) with the sum as the new residual, as vLLM's decoder layers call it. "
            "Off: it takes x alone and returns out.",
        ),
    )
    weight_mode: str = field(
        default="buffer",
        metadata=ui(
            "Weight",
            "buffer: the weight is inlined into the NEFF as a constant, as a loaded model has it. "
            "input: the weight is a NEFF input, so one NEFF serves any weight values.",
            choices=WEIGHT_MODES,
        ),
    )
    weight_init: str = field(
        default="random",
        metadata=ui(
            "Weight values",
            "ones: a freshly initialised RMSNorm (the multiply by the weight does nothing). "
            "random: fixed values around 1 with spread 0.2, like a trained layer's. As an input, the values "
            "are example data and do not change the NEFF.",
            choices=WEIGHT_INITS,
        ),
    )


@token_inputs(
    tokens=(128,),
    per_call="Rows of x per call.",
    dtype_help="Dtype of x, the residual and the weight. The sum and the normalisation run in float32 whatever this "
    "is, as in vLLM; the result is cast back before the weight multiplies it.",
    seed_help="Seed for the example values of x and the residual (and the weight when it is an input); values do "
    "not change the NEFF.",
)
class InputsSpec(TokenInputs):
    """The concrete example inputs the trace is made with: shapes and dtypes are fixed by them."""


@kernel_spec("rms_norm")
class RmsNormCompileSpec(SpecHeader):
    """An RMSNorm compile: what a spec file with ``kernel = "rms_norm"`` describes."""

    norm: NormSpec = field(default_factory=NormSpec)
    inputs: InputsSpec = field(default_factory=InputsSpec)


SECTIONS = sections_of(RmsNormCompileSpec)

"""SiluAndMul's parameters: the activation's width and the example inputs, as spec sections."""

from __future__ import annotations

from dataclasses import dataclass, field

from neffbench.kernels.token import TokenInputs, token_inputs
from neffbench.schema import SpecHeader, kernel_spec, sections_of, ui


@dataclass(frozen=True)
class ActSpec:
    """What vLLM's SiluAndMul sees of the model: the MLP's intermediate width."""

    intermediate_size: int = field(
        default=14336,
        metadata=ui(
            "Intermediate size",
            "Output width d (the model's intermediate_size; per tensor-parallel rank, divide "
            "it by the TP degree). The input is 2*d wide: the gate half, then the up half.",
            min=1,
            max=131072,
        ),
    )


@token_inputs(
    tokens=(128,),
    per_call="Rows of x per call.",
    dtype_help="Dtype of the input and the output; vLLM computes SiLU and the product in this dtype too.",
)
class InputsSpec(TokenInputs):
    """The concrete example inputs the trace is made with: shapes and dtypes are fixed by them."""


@kernel_spec("silu_and_mul")
class SiluAndMulCompileSpec(SpecHeader):
    """A SiluAndMul compile: what a spec file with ``kernel = "silu_and_mul"`` describes."""

    act: ActSpec = field(default_factory=ActSpec)
    inputs: InputsSpec = field(default_factory=InputsSpec)


SECTIONS = sections_of(SiluAndMulCompileSpec)

"""SiluAndMul's parameters: the activation's width and the example inputs, as spec sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from neffbench.spec.schema import (
    DTYPES, CompilerSpec, compiler_field, description_field, name_field, sections_of, ui, workdir_field,
)


@dataclass(frozen=True)
class ActSpec:
    """What vLLM's SiluAndMul sees of the model: the MLP's intermediate width."""

    intermediate_size: int = field(default=14336, metadata=ui(
        "Intermediate size", "Output width d (the model's intermediate_size; per tensor-parallel rank, divide "
        "it by the TP degree). The input is 2*d wide: the gate half, then the up half.",
        min=1, max=131072))


@dataclass(frozen=True)
class InputsSpec:
    """The concrete example inputs the trace is made with: shapes and dtypes are fixed by them."""

    num_tokens: tuple[int, ...] = field(default=(128,), metadata=ui(
        "Tokens (buckets)", "Rows of x per call. Shapes are fixed at trace time, so each value is its own "
        "NEFF; list several to compile one bucket each.", min=1, max=1_048_576))
    dtype: str = field(default="float32", metadata=ui(
        "Dtype", "Dtype of the input and the output; vLLM computes SiLU and the product in this dtype too.",
        choices=DTYPES))
    seed: int = field(default=0, metadata=ui(
        "Seed", "Seed for the example input values (values do not change the NEFF).", min=0, max=2**31 - 1,
        neff=False))


@dataclass(frozen=True)
class SiluAndMulCompileSpec:
    """A SiluAndMul compile: what a spec file with ``kernel = "silu_and_mul"`` describes."""

    kernel: ClassVar[str] = "silu_and_mul"

    name: str = name_field("silu_and_mul")
    description: str = description_field()
    workdir: str = workdir_field()
    act: ActSpec = field(default_factory=ActSpec)
    inputs: InputsSpec = field(default_factory=InputsSpec)
    compiler: CompilerSpec = compiler_field()


SECTIONS = sections_of(SiluAndMulCompileSpec)

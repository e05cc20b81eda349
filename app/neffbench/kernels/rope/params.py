"""RoPE's parameters: the attention geometry, the cos/sin table and the example inputs, as spec sections."""

from __future__ import annotations

from dataclasses import dataclass, field

from neffbench.kernels.token import TokenInputs, token_inputs
from neffbench.schema import DTYPES, SpecHeader, kernel_spec, sections_of, ui

ROPE_TYPES = ("default", "linear", "dynamic", "llama3", "yarn")

# Which extra fields each choice makes meaningful. Fields listed here are hidden in the form,
# left out of the spec hash and not validated unless their controlling choice reveals them.
ROPE_TYPE_REVEALS: dict[str, tuple[str, ...]] = {
    "default": (),
    "linear": ("factor",),
    "dynamic": ("factor", "original_max_position_embeddings"),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim"),
}


@dataclass(frozen=True)
class ModelSpec:
    """Attention geometry: what the RoPE forward pass sees of the model."""

    head_size: int = field(
        default=64, metadata=ui("Head size", "Elements per attention head (query and key).", min=1, max=1024)
    )
    rotary_dim: int | None = field(
        default=None,
        metadata=ui(
            "Rotary dim",
            "Leading elements of each head that are rotated; the rest pass through. "
            "Leave unset to derive it from the partial rotary factor.",
            min=2,
            max=1024,
            step=2,
            optional=True,
        ),
    )
    partial_rotary_factor: float = field(
        default=1.0,
        metadata=ui(
            "Partial rotary factor",
            "Fraction of each head that is rotated (GPT-NeoX 0.25, Phi-2 0.4); used when rotary dim is unset.",
            min=0.0,
            max=1.0,
            step=0.05,
            decimals=4,
        ),
    )
    num_heads_q: int = field(default=32, metadata=ui("Query heads", "Number of query heads.", min=1, max=1024))
    num_heads_k: int = field(
        default=8,
        metadata=ui("Key heads", "Number of key/value heads (fewer than query heads with GQA).", min=1, max=1024),
    )
    is_neox_style: bool = field(
        default=True,
        metadata=ui("NeoX pairing", "On: rotate split halves (NeoX, Llama). Off: rotate interleaved pairs (GPT-J)."),
    )
    with_key: bool = field(
        default=True,
        metadata=ui(
            "Rotate key", "Off for KV sharing: the module then takes no key and returns the rotated query alone."
        ),
    )

    @property
    def effective_rotary_dim(self) -> int:
        if self.rotary_dim is not None:
            return self.rotary_dim
        return int(self.head_size * self.partial_rotary_factor)


@dataclass(frozen=True)
class RopeSpec:
    """The cos/sin table: its length, base frequency, scaling and where it lives."""

    max_pos: int = field(
        default=128,
        metadata=ui(
            "Max positions", "Rows of the cos/sin table; every position must be below this.", min=1, max=4_194_304
        ),
    )
    base: float = field(
        default=10000.0, metadata=ui("Base (theta)", "RoPE base frequency (rope_theta).", min=0.0, max=1e12, decimals=1)
    )
    rope_type: str = field(
        default="default",
        metadata=ui(
            "Scaling type",
            "How frequencies are scaled for long context (Hugging Face rope_type).",
            choices=ROPE_TYPES,
            reveals=ROPE_TYPE_REVEALS,
        ),
    )
    factor: float = field(
        default=1.0, metadata=ui("Factor", "Context extension factor.", min=0.0, max=1024.0, decimals=4)
    )
    low_freq_factor: float = field(
        default=1.0,
        metadata=ui(
            "Low-freq factor",
            "llama3: wavelengths above original/low_freq_factor are fully interpolated.",
            min=0.0,
            max=1024.0,
            decimals=4,
        ),
    )
    high_freq_factor: float = field(
        default=4.0,
        metadata=ui(
            "High-freq factor",
            "llama3: wavelengths below original/high_freq_factor are left as they are.",
            min=0.0,
            max=1024.0,
            decimals=4,
        ),
    )
    original_max_position_embeddings: int = field(
        default=8192,
        metadata=ui(
            "Original max positions", "Context length the model was trained with, before scaling.", min=1, max=4_194_304
        ),
    )
    beta_fast: float = field(
        default=32.0,
        metadata=ui(
            "Beta fast", "yarn: rotations at which extrapolation starts to blend in.", min=0.0, max=1e6, decimals=3
        ),
    )
    beta_slow: float = field(
        default=1.0,
        metadata=ui(
            "Beta slow", "yarn: rotations below which frequencies are fully interpolated.", min=0.0, max=1e6, decimals=3
        ),
    )
    mscale: float = field(
        default=0.0,
        metadata=ui(
            "mscale",
            "yarn: attention scale coefficient (0 = unset: the standard 0.1*ln(factor)+1).",
            min=0.0,
            max=1e3,
            decimals=4,
        ),
    )
    mscale_all_dim: float = field(
        default=0.0,
        metadata=ui(
            "mscale all dim",
            "yarn (DeepSeek): divides the scale when set together with mscale (0 = unset).",
            min=0.0,
            max=1e3,
            decimals=4,
        ),
    )
    cache_mode: str = field(
        default="input",
        metadata=ui(
            "Cos/sin cache",
            "input: the table is a NEFF input, as in vLLM. buffer: the table is inlined into the NEFF as a constant.",
            choices=("input", "buffer"),
        ),
    )
    cache_dtype: str = field(
        default="float32",
        metadata=ui(
            "Cache dtype",
            "Dtype of the cos/sin table. float32 keeps full precision; bfloat16/float16 lose some.",
            choices=DTYPES,
        ),
    )


@token_inputs(tokens=(1,), per_call="Tokens per call.", dtype_help="Dtype of query and key.")
class InputsSpec(TokenInputs):
    """The concrete example inputs the trace is made with: shapes and dtypes are fixed by them."""

    positions: str = field(
        default="random",
        metadata=ui(
            "Positions",
            "random: uniform in [0, max_pos). range: 0..num_tokens-1. offset: offset..offset+num_tokens-1.",
            choices=("random", "range", "offset"),
            reveals={"random": (), "range": (), "offset": ("position_offset",)},
            neff=False,
        ),
    )
    position_offset: int = field(
        default=0,
        metadata=ui("Position offset", "First position when positions is offset.", min=0, max=4_194_304, neff=False),
    )


@kernel_spec("rope")
class RopeCompileSpec(SpecHeader):
    """A RoPE compile: what a spec file without ``kernel`` (or with ``kernel = "rope"``) describes."""

    model: ModelSpec = field(default_factory=ModelSpec)
    rope: RopeSpec = field(default_factory=RopeSpec)
    inputs: InputsSpec = field(default_factory=InputsSpec)


SECTIONS = sections_of(RopeCompileSpec)

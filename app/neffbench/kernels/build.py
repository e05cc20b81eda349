"""The RoPE kernel's build under its original name (``neffbench.kernels.build``), kept for code written against it."""

from neffbench.kernels.rope.build import (  # noqa: F401 - re-exported
    TOLERANCES,
    build_cache,
    build_module,
    example_inputs,
    io_signature,
    make_positions,
    rope_scaling,
)
from neffbench.kernels.api import TensorSig  # noqa: F401 - re-exported

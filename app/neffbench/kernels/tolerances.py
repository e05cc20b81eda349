"""How close two results of one kernel must be, by dtype: traced against eager, and device against reference."""

from __future__ import annotations

# float32 allows a few ulps of reassociation; bfloat16 keeps 8 mantissa bits (eps 2**-7) and float16 11
# (eps 2**-10), and one rotation does two products and a sum, so a couple of eps of |x| plus rounding of the result.
TOLERANCES: dict[str, tuple[float, float]] = {  # dtype: (atol, rtol)
    "float32": (1e-5, 1e-5),
    "bfloat16": (3e-2, 1.6e-2),
    "float16": (4e-3, 2e-3),
    # Only the module kernel has these: float64 inputs, and integer-only outputs (which must be equal).
    "float64": (1e-9, 1e-9),
    "int": (0.0, 0.0),
}

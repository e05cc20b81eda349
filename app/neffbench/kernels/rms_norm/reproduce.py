"""RMSNorm's part of ``reproduce.py``: the kernel's torch code as it ran, and this job's values as constants."""

from __future__ import annotations

import inspect
from pathlib import Path

from neffbench.kernels.rms_norm import build
from neffbench.kernels.rms_norm.params import RmsNormCompileSpec
from neffbench.kernels.script_template import fill

# What the script needs of build.py, in definition order; each is torch-only with plain arguments.
_PASTED = (
    build.rms_norm_forward,
    build.BoundRmsNorm,
    build.RmsNormModule,
    build.RmsNormWeightInputModule,
    build.make_weight,
    build.make_inputs,
    build.make_module,
)


def kernel_code() -> str:
    """The pasted definitions, exactly as the job ran them."""
    return "\n\n\n".join(inspect.getsource(obj).rstrip() for obj in _PASTED) + "\n"


def source(spec: RmsNormCompileSpec) -> str:
    """A fragment for after ``import torch``: defines ``build_module()`` and ``example_inputs()``
    (``templates/reproduce.py``)."""
    n, i = spec.norm, spec.inputs
    return fill(
        Path(__file__).with_name("templates") / "reproduce.py",
        weight_seed=build.WEIGHT_SEED,
        kernel_code=kernel_code(),
        hidden_size=n.hidden_size,
        eps=n.eps,
        with_residual=n.with_residual,
        weight_mode=n.weight_mode,
        weight_init=n.weight_init,
        num_tokens=i.num_tokens[0],
        dtype=i.dtype,
        seed=i.seed,
    )

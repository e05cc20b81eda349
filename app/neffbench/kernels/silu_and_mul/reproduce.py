"""SiluAndMul's part of ``reproduce.py``: the kernel's torch code as it ran, and this job's values as constants."""

from __future__ import annotations

import inspect
from pathlib import Path

from neffbench.kernels.script_template import fill
from neffbench.kernels.silu_and_mul import build
from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec

# What the script needs of build.py, in definition order; each is torch-only with plain arguments.
_PASTED = (build.SiluAndMulModule, build.make_inputs)


def kernel_code() -> str:
    """The pasted definitions, exactly as the job ran them."""
    return "\n\n\n".join(inspect.getsource(obj).rstrip() for obj in _PASTED) + "\n"


def source(spec: SiluAndMulCompileSpec) -> str:
    """A fragment for after ``import torch``: defines ``build_module()`` and ``example_inputs()``
    (``templates/reproduce.py``)."""
    i = spec.inputs
    return fill(
        Path(__file__).with_name("templates") / "reproduce.py",
        kernel_code=kernel_code(),
        intermediate_size=spec.act.intermediate_size,
        num_tokens=i.num_tokens[0],
        dtype=i.dtype,
        seed=i.seed,
    )

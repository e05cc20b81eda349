"""SiluAndMul's part of ``reproduce.py``: the kernel's torch code as it ran, and this job's values as constants."""

from __future__ import annotations

import inspect

from neffbench.kernels.silu_and_mul import build
from neffbench.kernels.silu_and_mul.params import SiluAndMulCompileSpec

# What the script needs of build.py, in definition order; each is torch-only with plain arguments.
_PASTED = (build.SiluAndMulModule, build.make_inputs)


def kernel_code() -> str:
    """The pasted definitions, exactly as the job ran them."""
    return "\n\n\n".join(inspect.getsource(obj).rstrip() for obj in _PASTED) + "\n"


def source(spec: SiluAndMulCompileSpec) -> str:
    """A fragment for after ``import torch``: defines ``build_module()`` and ``example_inputs()``."""
    i = spec.inputs
    return f'''import torch.nn.functional as F
from torch import nn

# ---- the kernel: vLLM SiluAndMul.forward_native (vllm/model_executor/layers/activation.py) ----

TORCH_DTYPES = {{"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}}


{kernel_code()}

# ---- this job's values ----

INTERMEDIATE_SIZE = {spec.act.intermediate_size!r}  # output width d; the input is 2*d (gate, then up)
NUM_TOKENS = {i.num_tokens[0]!r}
DTYPE = {i.dtype!r}
SEED = {i.seed!r}


def build_module() -> nn.Module:
    return SiluAndMulModule().eval()


def example_inputs() -> tuple[torch.Tensor, ...]:
    """The seeded input x of [NUM_TOKENS, 2 * INTERMEDIATE_SIZE]."""
    return make_inputs(NUM_TOKENS, INTERMEDIATE_SIZE, TORCH_DTYPES[DTYPE], SEED)
'''

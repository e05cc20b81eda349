"""RMSNorm's part of ``reproduce.py``: the kernel's torch code as it ran, and this job's values as constants."""

from __future__ import annotations

import inspect

from neffbench.kernels.rms_norm import build
from neffbench.kernels.rms_norm.params import RmsNormCompileSpec

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
    """A fragment for after ``import torch``: defines ``build_module()`` and ``example_inputs()``."""
    n, i = spec.norm, spec.inputs
    return f'''from torch import nn

# ---- the kernel: vLLM RMSNorm.forward_static (vllm/model_executor/layers/layernorm.py) ----

TORCH_DTYPES = {{"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}}
WEIGHT_SEED = {build.WEIGHT_SEED!r}  # the inlined weight has its own seed: it is part of the NEFF


{kernel_code()}

# ---- this job's values ----

HIDDEN_SIZE = {n.hidden_size!r}
EPS = {n.eps!r}
WITH_RESIDUAL = {n.with_residual!r}  # True: forward(x, residual, ...) returns (out, residual)
WEIGHT_MODE = {n.weight_mode!r}  # "buffer": inlined into the NEFF; "input": the last input
WEIGHT_INIT = {n.weight_init!r}
NUM_TOKENS = {i.num_tokens[0]!r}
DTYPE = {i.dtype!r}
SEED = {i.seed!r}


def build_module() -> nn.Module:
    return make_module(EPS, HIDDEN_SIZE, TORCH_DTYPES[DTYPE], WITH_RESIDUAL, WEIGHT_MODE == "input",
                       WEIGHT_INIT).eval()


def example_inputs() -> tuple[torch.Tensor, ...]:
    """Seeded inputs in the module's order: x, [residual], [weight]."""
    return make_inputs(NUM_TOKENS, HIDDEN_SIZE, TORCH_DTYPES[DTYPE], WITH_RESIDUAL, WEIGHT_MODE == "input",
                       WEIGHT_INIT, SEED)
'''

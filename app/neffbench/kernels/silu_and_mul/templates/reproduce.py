import torch.nn.functional as F
from torch import nn

# ---- the kernel: vLLM SiluAndMul.forward_native (vllm/model_executor/layers/activation.py) ----

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


#: ${kernel_code}

# ---- this job's values ----

INTERMEDIATE_SIZE = "${intermediate_size}"  # output width d; the input is 2*d (gate, then up)
NUM_TOKENS = "${num_tokens}"
DTYPE = "${dtype}"
SEED = "${seed}"


def build_module() -> nn.Module:
    return SiluAndMulModule().eval()


def example_inputs() -> tuple[torch.Tensor, ...]:
    """The seeded input x of [NUM_TOKENS, 2 * INTERMEDIATE_SIZE]."""
    return make_inputs(NUM_TOKENS, INTERMEDIATE_SIZE, TORCH_DTYPES[DTYPE], SEED)

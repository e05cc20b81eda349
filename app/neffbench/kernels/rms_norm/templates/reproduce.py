from torch import nn

# ---- the kernel: vLLM RMSNorm.forward_static (vllm/model_executor/layers/layernorm.py) ----

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
WEIGHT_SEED = "${weight_seed}"  # the inlined weight has its own seed: it is part of the NEFF


#: ${kernel_code}

# ---- this job's values ----

HIDDEN_SIZE = "${hidden_size}"
EPS = "${eps}"
WITH_RESIDUAL = "${with_residual}"  # True: forward(x, residual, ...) returns (out, residual)
WEIGHT_MODE = "${weight_mode}"  # "buffer": inlined into the NEFF; "input": the last input
WEIGHT_INIT = "${weight_init}"
NUM_TOKENS = "${num_tokens}"
DTYPE = "${dtype}"
SEED = "${seed}"


def build_module() -> nn.Module:
    return make_module(EPS, HIDDEN_SIZE, TORCH_DTYPES[DTYPE], WITH_RESIDUAL, WEIGHT_MODE == "input",
                       WEIGHT_INIT).eval()


def example_inputs() -> tuple[torch.Tensor, ...]:
    """Seeded inputs in the module's order: x, [residual], [weight]."""
    return make_inputs(NUM_TOKENS, HIDDEN_SIZE, TORCH_DTYPES[DTYPE], WITH_RESIDUAL, WEIGHT_MODE == "input",
                       WEIGHT_INIT, SEED)

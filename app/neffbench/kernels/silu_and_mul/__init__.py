"""The SiluAndMul kernel: vLLM's SwiGLU activation ``silu(x[..., :d]) * x[..., d:]``."""

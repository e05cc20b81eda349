"""The RMSNorm kernel: vLLM's ``RMSNorm.forward_static``, optionally with the fused residual add."""

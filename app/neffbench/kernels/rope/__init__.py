"""The RoPE kernel: vLLM's rotary position embedding forward pass (``ops``), its cos/sin table and its parameters.

The registry imports this package to list the kernel, so it imports nothing itself (torch least of all).
"""

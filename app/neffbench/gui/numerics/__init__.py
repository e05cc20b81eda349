"""The Numerics tab: a job compared layer by layer (``neffbench.numerics.compare``), drawn and tabulated."""

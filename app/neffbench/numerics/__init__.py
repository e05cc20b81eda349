"""Layer-by-layer numerics: a job compared with its references tap by tap (``neffbench compare``)."""

"""Running compiled NEFFs: the inputs that travel with them, the runtimes, IO checks, benchmarks and run records.

Like compiles, runs happen in a child process (``python -m neffbench.workers.run``) that leads its own
process group, so a runtime that hangs or crashes is a failed run, never a dead window.
"""

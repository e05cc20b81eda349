"""Probes: the user's code resolved, built and traced on the CPU in a child process, reported as JSON.

``neffbench resolve``, ``neffbench check`` for kernels that run user code, and the window's Resolve
and generic previews ask a probe child (``python -m neffbench.workers.probe``), so nothing the user wrote
ever runs in the window's process, and a crash of their code is a report, not a dead window.
"""

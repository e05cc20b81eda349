"""The exception a failed compile raises from the Python API: its message is the job's explanation."""

from __future__ import annotations

from typing import Any


class CompileFailed(RuntimeError):
    """A compile that did not succeed. The message is its explanation (the cause, its first error and code with what
    to do); ``job`` is the :class:`neffbench.api.job.Job` (``job.directory``, ``job.explain()``). A RuntimeError, as
    ``torch_neuronx.trace``'s own failures are."""

    def __init__(self, message: str, job: Any):
        super().__init__(message)
        self.job = job
        self.job_dir = job.directory

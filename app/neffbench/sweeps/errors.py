"""The one error a sweep that cannot start raises, below both the sweep loop and its executors."""

from __future__ import annotations


class SweepError(ValueError):
    """A sweep that cannot start (a wrong grid, every point invalid, an executor that is not there): one sentence."""

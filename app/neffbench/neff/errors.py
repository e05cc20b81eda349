"""NeffError, the one exception the NEFF reader raises."""

from __future__ import annotations


class NeffError(Exception):
    """A file that is not a readable NEFF; the message is one sentence saying what and where."""

    def __init__(self, reason: str, path: str | None = None, internal: bool = False):
        self.reason = reason
        self.path = path
        # True only when the reader itself failed (a bug); the fuzz tests check it never happens.
        self.internal = internal
        super().__init__(reason, path, internal)  # all three in args, so the error pickles (worker processes)

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason

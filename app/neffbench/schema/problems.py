"""Problems found in a spec: each names its field and says, in a sentence, what is wrong."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    field: str
    message: str
    severity: str = "error"  # "error" blocks a compile; "warning" is shown but does not

    def __str__(self) -> str:
        where = f"{self.field}: " if self.field else ""
        return f"{self.severity}: {where}{self.message}"


class SpecError(ValueError):
    """A spec that cannot be used; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def problem_lines(problems) -> str:
    """One ``field: message`` line per problem: what a preview shows instead of plots (never one run-on line)."""
    return "\n".join(f"{p.field}: {p.message}" for p in problems)

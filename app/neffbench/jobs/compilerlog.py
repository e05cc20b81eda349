"""Where the compiler-output reader used to live; it is now the ``neffbench.compilerlog`` package."""

from __future__ import annotations

from neffbench.compilerlog.commands import command_from_text, dropped_options
from neffbench.compilerlog.errors import CONTEXT_LINES, LogError
from neffbench.compilerlog.exits import meaning as explain_exit_code
from neffbench.compilerlog.lines import LEVELS, LogRecord, parse_line
from neffbench.compilerlog.passes import PassRun, pass_path
from neffbench.compilerlog.reader import CompilerLog


def error_code_help(code: str) -> str | None:
    """One line about a code: its title and documentation page (or that it is unknown)."""
    from neffbench.compilerlog.codes import lookup

    found = lookup(code)
    return f"{found.title} ({found.url})"


__all__ = ["CONTEXT_LINES", "LEVELS", "CompilerLog", "LogError", "LogRecord", "PassRun", "command_from_text",
           "dropped_options", "error_code_help", "explain_exit_code", "parse_line", "pass_path"]

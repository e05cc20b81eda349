"""Sentences about an exception the user's code raised: where in the user's own files, and what it says.

The frame named is the innermost one in the user's own code (the entry file or any file of its source closure,
wherever the factory lives), not in a library it called; an assertion without a message is described by its
own source line, which says more than "no message".
"""

from __future__ import annotations

import linecache
import traceback
from pathlib import Path

from neffbench.usercode.origin import is_user_file
from neffbench.words import message_text


def user_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of the exception's traceback that lies in the user's own files."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if f.filename and not f.filename.startswith("<") and is_user_file(f.filename)
    ]
    return frames[-1] if frames else None


def where(exc: BaseException) -> str:
    """`` at model.py:41`` (empty when no frame is the user's)."""
    frame = user_frame(exc)
    return f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""


# Libraries that optional features use, and the extra that installs each (``make run`` installs none of them).
EXTRAS = {"transformers": "hf", "ray": "ray", "pandas": "profile", "pyarrow": "profile", "model_explorer": "explorer"}


def install_hint(missing: str | None) -> str:
    """`` (install it with pip install 'neffbench[hf]')`` for a library an extra brings; empty otherwise."""
    extra = EXTRAS.get((missing or "").split(".")[0])
    return f" (install it with pip install 'neffbench[{extra}]')" if extra else ""


def message(exc: BaseException) -> str:
    """The exception's first line, or all of it when the first line only introduces the rest (``words.message_text``),
    with the extra to install for a missing optional library; for a bare ``assert``, the assertion's source line."""
    text = str(exc).strip()
    if text:
        hint = install_hint(exc.name) if isinstance(exc, ModuleNotFoundError) else ""
        return message_text(text) + hint
    if isinstance(exc, AssertionError):
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            last = frames[-1]
            line = (last.line or linecache.getline(last.filename, last.lineno or 0)).strip()
            if line:
                return f"the assertion failed: {line}"
    return "no message"


def describe(exc: BaseException) -> str:
    """``ValueError at layers.py:12: expected 4 dims``."""
    return f"{type(exc).__name__}{where(exc)}: {message(exc)}"


def format_traceback(exc: BaseException) -> str:
    """The whole traceback, causes included, as Python prints it: kept in job.log and the probe's report."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

"""Where a Python file comes from: the user's own code, an installed distribution, the standard library or the
workbench itself, judged by where it lies (no import, no parsing)."""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig
from pathlib import Path
from types import FrameType
from typing import Any


@functools.lru_cache(maxsize=1)
def _roots() -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """(distribution folders, standard-library folders, the workbench's folder), as resolved paths."""
    paths = sysconfig.get_paths()
    dists = {paths.get("purelib"), paths.get("platlib")}
    try:
        dists.update(site.getsitepackages())
    except AttributeError:  # some virtualenvs' site module lacks it
        pass
    dists.add(site.getusersitepackages())
    dists.update(p for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages")))
    stdlib = {paths.get("stdlib"), paths.get("platstdlib")}
    import neffbench

    own = str(Path(neffbench.__file__).resolve().parent)
    return (
        tuple(sorted({real_path(p) for p in dists if p}, key=len, reverse=True)),
        tuple(sorted({real_path(p) for p in stdlib if p})),
        own,
    )


def real_path(path: str) -> str:
    return os.path.realpath(path)


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def classify(path: str) -> str:
    """``user``, ``distribution``, ``stdlib`` or ``workbench`` for a resolved file path."""
    dists, stdlib, own = _roots()
    if _under(path, (own,)):
        return "workbench"
    if _under(path, dists):  # before stdlib: a venv's site-packages may lie inside the stdlib folder
        return "distribution"
    if _under(path, stdlib):
        return "stdlib"
    return "user"


@functools.lru_cache(maxsize=1)
def _environment() -> tuple[str, ...]:
    """This interpreter's own site-packages and standard library, as resolved paths (not what a build added to
    sys.path, such as a project's own virtualenv named in ``[module] path``)."""
    paths = sysconfig.get_paths()
    found = {paths.get(k) for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    try:
        found.update(site.getsitepackages())
    except AttributeError:  # some virtualenvs' site module lacks it
        pass
    found.add(site.getusersitepackages())
    return tuple(sorted({real_path(p) for p in found if p}))


def is_environment_folder(path: str) -> bool:
    """Whether a resolved folder is (or lies in) this interpreter's own site-packages or standard library."""
    return _under(path, _environment())


def is_user_file(path: str) -> bool:
    return classify(real_path(path)) == "user"


def module_file(module: Any) -> str | None:
    """The file a module was loaded from, or None (built-in, namespace, or a made-up ``__file__`` such as
    ``torch.classes``'s relative "_classes.py")."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not os.path.isabs(path) or not os.path.isfile(path):
        return None
    return real_path(path)


def call_stack() -> tuple[tuple[str, int], ...]:
    """(file, line) of each frame of the caller's call stack, innermost last: cheap to take (no source is read,
    no path resolved), for :func:`user_line` to judge later, only if it is ever needed."""
    frames = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return tuple(reversed(frames))


def user_line(stack: tuple[tuple[str, int], ...] | None = None) -> str:
    """``model.py:41``: the innermost frame in the user's own files of ``stack`` (default: the current call stack),
    "" when none is."""
    frames = call_stack()[:-1] if stack is None else stack
    for filename, lineno in reversed(frames):
        if filename and is_user_file(filename):
            return f"{Path(filename).name}:{lineno}"
    return ""

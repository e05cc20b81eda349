"""What a build read, found by watching it (child side): the user's own source files, the data files it opened
(checkpoints, configs) and the distributions its code came from.

Nothing here parses imports: a file is in the closure because the build imported or opened it. A file is the
user's own when it is not in the standard library, not in an installed distribution's folder (site-packages,
dist-packages) and not the workbench's own code; an editable install of the user's project is therefore the
user's own, which is what they edit. Data files are seen through the interpreter's ``open`` audit event and
through safetensors' ``safe_open`` (which opens files from Rust, where no audit event fires).
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from neffbench.usercode import closure as sources
from neffbench.usercode import fresh
from neffbench.usercode.origin import classify, module_file
from neffbench.usercode.origin import real_path as _real

_active: list[Recorder] = []
_lock = threading.Lock()
_hook_installed = False
# Files that are never data of a model, whoever opens them.
_SKIP_PREFIXES = ("/proc/", "/sys/", "/dev/")
_CODE_SUFFIXES = (".py", ".pyc", ".pyi", ".so", ".pth")


@dataclass
class Recorder:
    """Use as ``with Recorder() as rec: build()``; then ``rec.result(built_object)`` is the closure's record."""

    _before: set[str] = field(default_factory=set)
    # Threads that were running before the build began, other than its own: what they open is not the build's
    # (a job runner writing the record beside a build that runs in its process, a notebook's own threads).
    _elsewhere: frozenset[int] = frozenset()
    opened: dict[str, None] = field(default_factory=dict)  # insertion-ordered set of data files read
    modules: list[str] = field(default_factory=list)  # user modules imported while recording, by name

    def __enter__(self) -> Recorder:
        _install()
        self._before = set(sys.modules)
        here = threading.get_ident()
        self._elsewhere = frozenset(t.ident for t in threading.enumerate() if t.ident is not None and t.ident != here)
        with _lock:
            _active.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        with _lock:
            if self in _active:
                _active.remove(self)
        self.modules = [
            name
            for name in list(sys.modules)
            if name not in self._before
            and (path := module_file(sys.modules.get(name))) is not None
            and classify(path) == "user"
        ]

    def note_open(self, path: str) -> None:
        if threading.get_ident() in self._elsewhere:
            return
        if path not in self.opened:
            self.opened[path] = None

    def user_modules(self) -> list[ModuleType]:
        return [m for n in self.modules if isinstance(m := sys.modules.get(n), ModuleType)]

    def result(self, built: Any = None, extra_modules: tuple[str, ...] = ()) -> dict[str, Any]:
        """The sources record (see :mod:`neffbench.usercode.closure`) of what was read while recording.

        ``built``: the module or function the build made, whose classes name distributions too.
        """
        code = {f for f in map(module_file, self.user_modules()) if f is not None}
        data = [p for p in self.opened if p not in code and Path(p).is_file()]
        top_levels = _referenced_packages(self.user_modules(), built) | set(extra_modules)
        return sources.record(sorted(code), data, sources.distributions_of(top_levels))


def _referenced_packages(modules: list[ModuleType], built: Any) -> set[str]:
    """Top-level package names the user's modules refer to and the built object's classes come from: the same
    answer whether those packages were imported now or earlier in this process."""
    names: set[str] = set()
    for module in modules:
        for value in list(vars(module).values()):
            if isinstance(value, ModuleType):
                names.add(value.__name__.partition(".")[0])
            else:
                owner = getattr(value, "__module__", None)
                if isinstance(owner, str):
                    names.add(owner.partition(".")[0])
    for obj in _parts(built):
        owner = getattr(type(obj) if not isinstance(obj, type) else obj, "__module__", None)
        if isinstance(owner, str):
            names.add(owner.partition(".")[0])
    return names


def _parts(built: Any) -> list[Any]:
    if built is None:
        return []
    modules = getattr(built, "modules", None)
    try:
        found = list(modules()) if callable(modules) else []
    except Exception:  # noqa: BLE001 - an object with a modules attribute of its own
        found = []
    return found or [built]


def forget_user_modules(names: list[str]) -> None:
    """Drop modules an earlier build imported from the user's files, so that a warm process imports them afresh
    (and sees an edit) instead of answering from the copy it has."""
    for name in names:
        sys.modules.pop(name, None)


# ---- seeing files opened --------------------------------------------------------------------


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not _active:
        return
    try:
        _audit_open(args)
    except Exception:  # noqa: BLE001 - an audit hook that raises would fail the user's open() itself
        pass


def _audit_open(args: tuple[Any, ...]) -> None:
    path, mode = args[0], args[1] if len(args) > 1 else "r"
    flags = args[2] if len(args) > 2 else 0
    if not isinstance(path, (str, bytes, os.PathLike)):
        return  # a file descriptor
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return
    if mode is None and isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR):
        return
    _note(os.fsdecode(path))


def _note(raw: str) -> None:
    path = _real(os.path.abspath(raw))
    if path.startswith(_SKIP_PREFIXES) or path.endswith(_CODE_SUFFIXES) or classify(path) != "user":
        return
    with _lock:
        for recorder in _active:
            recorder.note_open(path)


def _install() -> None:
    global _hook_installed
    with _lock:
        if _hook_installed:
            return
        _hook_installed = True
    fresh.install()  # a warm process imports the user's modules afresh: from their source as it is now
    sys.addaudithook(_audit)  # audit hooks cannot be removed: it does nothing while no recorder is active
    _wrap_safetensors()


def _wrap_safetensors() -> None:
    """safetensors opens its files from Rust: wrap ``safe_open`` wherever it is bound, before the user's code
    imports it (transformers binds it at import time)."""
    import importlib.util

    if "safetensors" not in sys.modules and importlib.util.find_spec("safetensors") is None:
        return
    import safetensors

    original = safetensors.safe_open
    if getattr(original, "_neffbench_wrapped", False):
        return

    def safe_open(filename: Any, *args: Any, **kwargs: Any) -> Any:
        if _active and isinstance(filename, (str, os.PathLike)):
            _note(os.fspath(filename))
        return original(filename, *args, **kwargs)

    safe_open._neffbench_wrapped = True  # type: ignore[attr-defined]
    for module in list(sys.modules.values()):
        if isinstance(module, ModuleType) and module.__dict__.get("safe_open") is original:
            module.safe_open = safe_open  # type: ignore[attr-defined]

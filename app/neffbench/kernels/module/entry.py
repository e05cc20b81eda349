"""Entry strings (``package.module:attr`` or ``path/to/file.py:attr``): parsed anywhere, resolved only in a child process.

Resolving runs the user's code (a file entry is executed, a package is imported), so the window
never does it itself: the worker and ``neffbench resolve`` do. Every failure is one sentence that
says which part failed: the file, the module or the attribute.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.words import message_text

_MODULE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_ATTR_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


# Module names of executed files (never a real package's name).
USER_PREFIX = "neffbench_user_"


class EntryError(ValueError):
    """An entry that cannot be parsed or resolved; the message is one sentence naming the part."""


@dataclass(frozen=True)
class Entry:
    target: str  # a dotted module name, or a file path ending in .py
    attr: str  # dotted attribute path inside it

    @property
    def is_file(self) -> bool:
        return self.target.endswith(".py")

    def __str__(self) -> str:
        return f"{self.target}:{self.attr}"


def parse(text: str) -> Entry:
    """Split and check an entry's syntax (nothing is imported or read)."""
    text = text.strip()
    if not text:
        raise EntryError("the entry is empty; give 'package.module:attr' or 'path/to/file.py:attr'.")
    target, sep, attr = text.rpartition(":")
    if not sep or not target:
        raise EntryError(f"entry '{text}' has no ':attr'; give 'package.module:attr' or 'path/to/file.py:attr'.")
    if not _ATTR_RE.match(attr):
        raise EntryError(f"entry '{text}': '{attr}' is not an attribute name (letters, digits, '_' and dots).")
    if not target.endswith(".py") and not _MODULE_RE.match(target):
        raise EntryError(f"entry '{text}': '{target}' is neither a module name (package.module) nor a .py file.")
    return Entry(target, attr)


def looks_like_entry(text: str) -> bool:
    try:
        parse(text)
    except EntryError:
        return False
    return True


def anchored(text: str, base_dir: Path) -> str:
    """The entry with a relative file made absolute against ``base_dir`` (the spec file's folder)."""
    try:
        entry = parse(text)
    except EntryError:
        return text
    if entry.is_file and not Path(entry.target).is_absolute():
        return f"{(base_dir / entry.target).resolve()}:{entry.attr}"
    return text


def anchored_values(value: Any, base_dir: Path) -> Any:
    """Keyword values with every nested ``entry`` (a config's class, ``file.py:Config``) anchored as the entry
    itself is: a relative file is relative to the spec file (or, typed on the command line, to where it was)."""
    if isinstance(value, dict):
        out = {k: anchored_values(v, base_dir) for k, v in value.items()}
        if isinstance(value.get("entry"), str):
            out["entry"] = anchored(value["entry"], base_dir)
        return out
    if isinstance(value, list):
        return [anchored_values(v, base_dir) for v in value]
    return value


def placeless(value: Any) -> Any:
    """The same values with nested entry files named by their file name alone: what the spec hash takes (their
    content is in the hash through the build's source closure, not their place)."""
    if isinstance(value, dict):
        out = {k: placeless(v) for k, v in value.items()}
        if isinstance(value.get("entry"), str) and looks_like_entry(value["entry"]):
            entry = parse(value["entry"])
            if entry.is_file:
                out["entry"] = f"{Path(entry.target).name}:{entry.attr}"
        return out
    if isinstance(value, list):
        return [placeless(v) for v in value]
    return value


def file_sha256(entry: Entry) -> str | None:
    if not entry.is_file:
        return None
    try:
        return hashlib.sha256(Path(entry.target).read_bytes()).hexdigest()
    except OSError:
        return None


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise EntryError(f"entry file {path} does not exist.")
    # Keyed by place and content: a warm probe executes an edited file afresh.
    digest = hashlib.sha256(str(path).encode() + path.read_bytes()).hexdigest()[:12]
    name = f"{USER_PREFIX}{re.sub(r'[^A-Za-z0-9_]', '_', path.stem)}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    from neffbench.usercode import fresh

    fresh.install()  # the files it imports from its folder, too, are read as they are now
    spec = importlib.util.spec_from_file_location(name, path, loader=fresh.SourceOnlyLoader(name, str(path)))
    if spec is None or spec.loader is None:
        raise EntryError(f"entry file {path} cannot be loaded as Python.")
    module = importlib.util.module_from_spec(spec)
    # Registered first, as an import would: dataclasses and pickling look the module up by name.
    sys.modules[name] = module
    # The file's own folder is importable, as it is when the user runs the file themselves.
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise EntryError(f"entry file {path} has a syntax error at line {exc.lineno}: {exc.msg}.") from exc
    except Exception as exc:  # noqa: BLE001 - the user's file may raise anything while loading
        del sys.modules[name]
        from neffbench.usercode import errors as user_errors

        where = user_errors.where(exc)
        raise EntryError(
            f"entry file {path} raised {type(exc).__name__} while loading"
            f"{f' ({where.strip()})' if where else ''}: {user_errors.message(exc)}".rstrip(".")
            + "."
        ) from exc
    return module


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        from neffbench.usercode.errors import install_hint

        missing = exc.name or name
        detail = f"module '{name}' cannot be imported" + (f": no module named '{missing}'" if missing else "")
        raise EntryError(detail + install_hint(missing) + ".") from exc
    except Exception as exc:  # noqa: BLE001 - a package may fail to import any way it likes
        first = message_text(str(exc))
        raise EntryError(
            f"module '{name}' raised {type(exc).__name__} while importing: {first}".rstrip(": ") + "."
        ) from exc


def resolve(text: str, paths: tuple[str, ...] = ()) -> Any:
    """The object an entry names. Runs the user's code: call it in a child process only."""
    entry = parse(text)
    for folder in reversed(paths):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    holder = _load_file(Path(entry.target)) if entry.is_file else _import(entry.target)
    obj = holder
    where = entry.target if not entry.is_file else Path(entry.target).name
    for part in entry.attr.split("."):
        if not hasattr(obj, part):
            public = sorted(n for n in dir(obj) if not n.startswith("_"))
            import difflib

            close = difflib.get_close_matches(part, public, n=1, cutoff=0.6)
            hint = (
                f" Did you mean '{close[0]}'?"
                if close
                else (f" It has: {', '.join(public[:12])}{', ...' if len(public) > 12 else ''}." if public else "")
            )
            raise EntryError(f"'{where}' has no attribute '{part}'.{hint}")
        obj = getattr(obj, part)
        where = f"{where}:{part}" if ":" not in where else f"{where}.{part}"
    return obj

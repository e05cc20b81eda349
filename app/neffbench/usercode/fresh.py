"""The user's own files are imported from their source, never from a cached ``.pyc``.

Python trusts a ``__pycache__`` entry while the source's modification time, in whole seconds, and its size are
those the entry recorded. An edit that keeps the size within that second (``WIDTH = 4`` made ``WIDTH = 6``) is then
not seen, and a warm process (the probe, which imports the user's modules afresh for each request) would build the
old program while the closure's digest, read from the file, says the new one. Compiled from source, the code is
always the file's; the user's files are small, and nothing is written beside them.
"""

from __future__ import annotations

import importlib.machinery as machinery
import os
import sys
import threading
from pathlib import Path
from typing import Any

from neffbench.usercode.origin import is_user_file

_lock = threading.Lock()
_installed = False


class SourceOnlyLoader(machinery.SourceFileLoader):
    """A ``.py`` file's loader that compiles the source at each import and neither reads nor writes bytecode."""

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


def _users_folder(path: str) -> bool:
    folder = path or "."  # "" in sys.path is the working folder
    # Installed packages are never the user's to edit, in this interpreter's site-packages or in another
    # environment's that a spec put on sys.path (``[module] path``): their bytecode is kept.
    installed = {"site-packages", "dist-packages"} & set(Path(os.path.abspath(folder)).parts)
    return not installed and os.path.isdir(folder) and is_user_file(folder)


def _finder_for(path: str) -> machinery.FileFinder:
    """A path hook: folders of the user's own load their ``.py`` files with :class:`SourceOnlyLoader`; other folders
    are left to the hooks after this one (the standard ones)."""
    if not _users_folder(path):
        raise ImportError("not a folder of the user's own")
    return machinery.FileFinder(
        path,
        (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        (SourceOnlyLoader, machinery.SOURCE_SUFFIXES),
        (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES),
    )


def install() -> None:
    """From now on, in this process, imports from the user's folders compile their source (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        sys.path_hooks.insert(0, _finder_for)
        # Folders already visited keep the finder they were given: drop the user's, so ours serves them next.
        # (A copy of its keys: judging a folder may import, which adds to the cache.)
        for path in [p for p in list(sys.path_importer_cache) if isinstance(p, str) and _users_folder(p)]:
            sys.path_importer_cache.pop(path, None)

"""The version of an installed package, read one way everywhere: as the package itself states it.

``torch.__version__`` keeps the local build tag (``2.9.1+cu128`` from PyPI, ``2.9.1+cpu`` from PyTorch's CPU
index) that tells a CUDA build from a CPU one, while PyPI's wheel metadata says only ``2.9.1``. Job records,
sweep records, run records and the cache key all take the version from here, so they agree with one
another, and a sweep compares a node's versions with the client's like with like. The package is never
imported (a sweep client or the window must not pay for ``import torch`` to learn a version): its
``version.py`` or ``__init__.py`` is read for a literal ``__version__``, and only a package that states
none (neuronx-cc) is taken from its distribution's metadata.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

_LITERAL = re.compile(r"""^__version__\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""", re.MULTILINE)


def _stated(package: str) -> str | None:
    """The literal ``__version__`` in the package's ``version.py`` or ``__init__.py``, without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        for name in ("version.py", "__init__.py"):
            try:
                text = (Path(folder) / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            match = _LITERAL.search(text)
            if match:
                return match[1]
    return None


def package_version(package: str, dist: str | None = None) -> str | None:
    """``package_version("torch")`` is ``torch.__version__`` (``2.9.1+cu128``); ``dist`` names the
    distribution when it differs from the package (``neuronx-cc`` for ``neuronxcc``); None when not installed."""
    stated = _stated(package)
    if stated is not None:
        return stated
    try:
        return importlib.metadata.version(dist or package)
    except importlib.metadata.PackageNotFoundError:
        return None


def torch_version() -> str | None:
    return package_version("torch")


def torch_neuronx_version() -> str | None:
    return package_version("torch_neuronx", "torch-neuronx")


def neuronx_cc_version() -> str | None:
    return package_version("neuronxcc", "neuronx-cc")

"""Bundled files (the icon): inside the wheel as ``neffbench/resources/``, in a checkout at the top-level ``resources/``."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def resource_root() -> Path:
    """The folder holding ``icons/`` (presets live in their kernels' folders).

    A wheel carries them inside the package; an editable install of a checkout does not copy
    them, so fall back to the checkout's top-level ``resources/``.
    """
    packaged = Path(str(resources.files("neffbench"))) / "resources"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "resources"


def resource_path(*parts: str) -> Path:
    return resource_root().joinpath(*parts)

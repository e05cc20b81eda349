"""Bundled presets: real model geometries (sources named in each file) and the seed example."""

from __future__ import annotations

import difflib
from pathlib import Path

from neffbench.bundled import resource_path
from typing import Any

from neffbench.spec import load

# The seed example first, then the models in the order a user would look for them.
_ORDER = ("seed",)


def preset_dir() -> Path:
    return resource_path("presets")


def preset_files() -> dict[str, Path]:
    """Every kernel's presets by name, in registry order (a later kernel cannot shadow an earlier name)."""
    from neffbench.kernels import registry

    out: dict[str, Path] = {}
    for kernel in registry.available():
        folder = kernel.preset_dir
        if folder is None or not Path(folder).is_dir():
            continue
        for path in sorted(Path(folder).glob("*.toml")):
            out.setdefault(path.stem, path)
    return out


def preset_kernels() -> dict[str, str]:
    """Preset name -> the kernel it is for (read from the file's ``kernel`` key; absent means rope)."""
    from neffbench.spec.files import tomllib

    out = {}
    for name, path in preset_files().items():
        try:
            out[name] = tomllib.loads(path.read_text(encoding="utf-8")).get("kernel", "rope")
        except (OSError, ValueError):
            out[name] = "?"
    return out


def preset_names() -> list[str]:
    names = list(preset_files())
    return [n for n in _ORDER if n in names] + [n for n in names if n not in _ORDER]


def preset_file(name: str) -> Path:
    path = preset_files().get(name)
    if path is None:
        close = difflib.get_close_matches(name, preset_names(), n=1, cutoff=0.5)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise KeyError(f"No preset named '{name}'.{hint} Presets: {', '.join(preset_names())}.")
    return path


def preset_text(name: str) -> str:
    """The preset file as written, comments (and so its sources) included."""
    return preset_file(name).read_text(encoding="utf-8")


def load_preset(name: str) -> Any:
    return load(preset_file(name))

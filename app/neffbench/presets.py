"""Bundled presets: real model geometries (sources named in each file) and the seed example."""

from __future__ import annotations

import difflib
from pathlib import Path

from neffbench.bundled import resource_path
from neffbench.spec import CompileSpec, load

# The seed example first, then the models in the order a user would look for them.
_ORDER = ("seed",)


def preset_dir() -> Path:
    return resource_path("presets")


def preset_names() -> list[str]:
    names = sorted(p.stem for p in preset_dir().glob("*.toml"))
    return [n for n in _ORDER if n in names] + [n for n in names if n not in _ORDER]


def preset_file(name: str) -> Path:
    path = preset_dir() / f"{name}.toml"
    if not path.is_file():
        close = difflib.get_close_matches(name, preset_names(), n=1, cutoff=0.5)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise KeyError(f"No preset named '{name}'.{hint} Presets: {', '.join(preset_names())}.")
    return path


def preset_text(name: str) -> str:
    """The preset file as written, comments (and so its sources) included."""
    return preset_file(name).read_text(encoding="utf-8")


def load_preset(name: str) -> CompileSpec:
    return load(preset_file(name))

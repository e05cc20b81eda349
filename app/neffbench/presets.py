"""Bundled presets: real model geometries (sources named in each file) and the seed example."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.kernels import registry
from neffbench.spec import Problem, SpecError, load

# The seed example first, then the models in the order a user would look for them.
_ORDER = ("seed",)


def preset_files() -> dict[str, Path]:
    """Every kernel's presets by name, in registry order (a later kernel cannot shadow an earlier name): the folders
    the kernels contribute (``Kernel.preset_dir``), built-in ones and plugins alike."""
    out: dict[str, Path] = {}
    for kernel in registry.available():
        folder = kernel.preset_dir
        if folder is None or not Path(folder).is_dir():
            continue
        for path in sorted(Path(folder).glob("*.toml")):
            out.setdefault(path.stem, path)
    return out


def preset_kernels() -> dict[str, str]:
    """Preset name -> the kernel it is for (read from the file's ``kernel`` key; absent means the default kernel)."""
    from neffbench.spec.files import tomllib

    out = {}
    for name, path in preset_files().items():
        try:
            out[name] = tomllib.loads(path.read_text(encoding="utf-8")).get("kernel", registry.DEFAULT)
        except (OSError, ValueError):
            out[name] = "?"
    return out


@dataclass(frozen=True)
class PresetInfo:
    """What a menu shows of a preset without loading it: the model, its key figures and where they come from."""

    name: str
    kernel: str
    model: str  # "Meta Llama 3.1 8B": the description up to its first colon
    figures: str  # "131072 positions, 32/8 heads, llama3 scaling (factor 8)"
    source: str  # the ``# Source:`` URL, else the description's "(config.json of ...)", else the first comment
    notes: str  # the file's leading comment block, where the figures are quoted from the model's config


def _info(name: str, path: Path) -> PresetInfo:
    from neffbench.spec.files import tomllib

    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except (OSError, ValueError):
        return PresetInfo(name, "?", name, "unreadable preset file", str(path), "")
    comments = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        comments.append(line.lstrip("#").strip())
    description = str(data.get("description", ""))
    model, _, rest = description.partition(": ")
    cited = re.search(r"\(([^()]*)\)\.?$", rest)
    figures = rest[: cited.start()].strip() if cited else rest.rstrip(".")
    kernel = data.get("kernel", registry.DEFAULT)
    try:
        figures = registry.get(kernel).preset_figures(data) or figures
    except KeyError:  # a preset of a kernel that did not load: its description's figures
        pass
    url = next((c.split(":", 1)[1].strip() for c in comments if c.lower().startswith("source:")), "")
    source = url or (cited.group(1) if cited else "") or " ".join(comments)
    return PresetInfo(name, kernel, model.strip() or name, figures, source, "\n".join(comments))


def preset_infos() -> dict[str, PresetInfo]:
    """Every preset's :class:`PresetInfo`, in :func:`preset_names` order (each file is read, none loaded)."""
    files = preset_files()
    return {name: _info(name, files[name]) for name in preset_names()}


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


def resolve_spec_source(source: str) -> Any:
    """Load SPEC: an existing file wins; then a preset of that name; then what a kernel makes of it."""
    path = Path(source)
    if path.suffix.lower() == ".py":
        raise SpecError([Problem("", _python_without_name(path))])
    if path.is_file() or (path.suffix.lower() in (".toml", ".json") and ":" not in source):
        return load(path)
    for kernel in registry.available():
        spec = kernel.cli.spec_from_source(source)
        if spec is not None:
            return spec
    if path.suffix.lower() in (".toml", ".json") or "/" in source:
        return load(path)
    try:
        return load_preset(source)
    except KeyError as exc:
        raise SpecError([Problem("", f"'{source}' is neither a spec file nor a preset. {exc.args[0]}")]) from None


def _python_without_name(path: Path) -> str:
    """The sentence for ``FILE.py`` given as SPEC: name what in it to compile, with its names listed (read, not run)."""
    from neffbench.usercode.defines import SourceUnreadable, top_level_names

    if not path.is_file():
        return f"{path} does not exist; a module entry is FILE.py:NAME, naming a class, function or object in it."
    try:
        names = [n["name"] for n in top_level_names(path)]
    except SourceUnreadable as exc:
        if exc.line is None:
            return f"{path} is Python, not a spec. {exc}"
        return f"{path} is Python, not a spec, and has a syntax error at line {exc.line}."
    example = f"{path}:{names[0]}" if names else f"{path}:NAME"
    listed = f" It defines: {', '.join(names[:12])}{', ...' if len(names) > 12 else ''}." if names else ""
    return f"{path} is Python, not a spec: add :NAME to say what in it to compile, as in {example}.{listed}"

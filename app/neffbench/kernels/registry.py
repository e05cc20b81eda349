"""The kernel registry: the built-in kernels are the folders under ``kernels/``, plugins the entry points of the
``neffbench.kernels`` group.

Each is found one way: a built-in kernel by its folder (``kernels/<name>/kernel.py`` defining ``KERNEL``), so a new
one is a folder and nothing else; a plugin by the entry point its package declares, since an installed package has
no folder here. Listing costs nothing: folders are listed and entry points read from package metadata without
importing anything, and a kernel's object is imported on first use and checked against the declared hooks
(``neffbench.kernels.hook_checks``). A kernel that fails to load is reported by name and the others still load.
"""

from __future__ import annotations

import difflib
import logging
import os
import pkgutil
import typing
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from neffbench import installed
from neffbench.kernels import hook_checks
from neffbench.kernels.api import Kernel

log = logging.getLogger(__name__)

GROUP = "neffbench.kernels"
# The kernel of a spec file without ``kernel`` (every spec written before there were others).
DEFAULT = "rope"
DISTRIBUTION = "neffbench"
BUILT_IN = "built-in"
# Where menus and listings put the built-in kernels (folders carry no order). Presentation only: a built-in
# kernel not named here is found all the same, and listed after these, by name.
LISTED_FIRST = ("rope", "rms_norm", "silu_and_mul", "module")


@dataclass(frozen=True)
class KernelEntry:
    name: str
    value: str  # "package.module:attr"
    origin: str  # "built-in" or the distribution that offers it


_loaded: dict[str, Kernel] = {}
_broken: dict[str, str] = {}


def _dist_name(ep: metadata.EntryPoint) -> str | None:
    dist = getattr(ep, "dist", None)  # EntryPoint.dist is missing on entry points not read from a distribution
    return dist.name if dist is not None else None


def entries() -> dict[str, KernelEntry]:
    """Every kernel by name: the built-ins first, in LISTED_FIRST's order, then plugins (which cannot replace one).
    The metadata is read again only when what is installed may have changed (:mod:`neffbench.installed`), so a
    plugin installed while the window is open is listed at the next listing."""
    out = _folders()
    for ep, dist in _plugins():
        if ep.name in out:
            log.warning("kernel plugin %s (%s) ignored: a kernel of that name exists", ep.name, ep.value)
            continue
        out[ep.name] = KernelEntry(ep.name, ep.value, dist or "a plugin")
    return out


def _plugins() -> list[tuple[metadata.EntryPoint, str | None]]:
    """The entry points of other distributions (ours, from metadata an older install wrote, are its folders), each
    with the name of the distribution that offers it, in the order the metadata lists them."""
    try:
        found = installed.entry_points(GROUP)
    except Exception:  # noqa: BLE001 - broken metadata must not break the workbench
        log.warning("could not read the %s entry points", GROUP, exc_info=True)
        return []
    # Each distribution's name once: it is parsed from its METADATA file every time it is asked for.
    return [(ep, dist) for ep, dist in zip(found, map(_dist_name, found)) if dist != DISTRIBUTION]


def _folders() -> dict[str, KernelEntry]:
    """The built-in kernels: the folders under ``kernels/`` with a ``kernel.py``, in LISTED_FIRST's order, found
    without importing them."""
    here = Path(__file__).parent
    folders = [
        name
        for name in os.listdir(here)
        if name.isidentifier() and (here / name / "__init__.py").is_file() and (here / name / "kernel.py").is_file()
    ]
    first = {name: i for i, name in enumerate(LISTED_FIRST)}
    folders.sort(key=lambda name: (first.get(name, len(first)), name))
    return {name: KernelEntry(name, f"neffbench.kernels.{name}.kernel:KERNEL", BUILT_IN) for name in folders}


def names() -> list[str]:
    return list(entries())


def _load(entry: KernelEntry) -> Kernel:
    where = f"Kernel '{entry.name}' from {entry.origin} ({entry.value})"
    try:
        kernel = pkgutil.resolve_name(entry.value)
    except Exception as exc:  # noqa: BLE001 - a plugin's own error, reported with its name
        _broken[entry.name] = f"{type(exc).__name__}: {exc}"
        raise KeyError(f"{where} could not be loaded: {type(exc).__name__}: {exc}") from exc
    found = hook_checks.problems(kernel, entry.name)
    if found:
        _broken[entry.name] = "; ".join(found)
        raise KeyError(f"{where} {'; '.join(found)}.")
    return typing.cast(Kernel, kernel)  # hook_checks.problems refuses any other


def get(name: str) -> Kernel:
    """The kernel object, imported on first use. Raises KeyError with a sentence for unknown or broken ones."""
    return _get(name, None)


def _get(name: str, known: dict[str, KernelEntry] | None) -> Kernel:
    """``get``, with the entries already listed when the caller has them (reading them is most of a listing)."""
    if name in _loaded:
        return _loaded[name]
    known = entries() if known is None else known
    if name not in known:
        close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise KeyError(f"No kernel named '{name}'.{hint} Kernels: {', '.join(known)}.")
    kernel = _load(known[name])
    _loaded[name] = kernel
    return kernel


def available() -> list[Kernel]:
    """Every kernel that loads, in registry order; broken plugins are logged and left out."""
    out = []
    known = entries()
    for name in known:
        try:
            out.append(_get(name, known))
        except KeyError as exc:
            log.warning("%s", exc.args[0])
    return out


def broken() -> dict[str, str]:
    """Kernels that failed to load this session, with the reason."""
    return dict(_broken)


def for_spec(spec: Any) -> Kernel:
    """The kernel of a spec (its class names it)."""
    return get(spec.kernel)

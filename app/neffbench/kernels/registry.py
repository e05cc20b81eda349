"""The kernel registry: the built-in kernels and those plugins offer through the ``neffbench.kernels`` entry points.

Listing costs nothing: entry points are read from package metadata without importing anything, and
a kernel's object is imported on first use. A plugin that fails to load is reported by name and
the others still load.
"""

from __future__ import annotations

import logging
import pkgutil
from dataclasses import dataclass
from importlib import metadata
from typing import Any

log = logging.getLogger(__name__)

GROUP = "neffbench.kernels"
DEFAULT = "rope"
BUILTIN = {
    "rope": "neffbench.kernels.rope.kernel:KERNEL",
    "rms_norm": "neffbench.kernels.rms_norm.kernel:KERNEL",
    "silu_and_mul": "neffbench.kernels.silu_and_mul.kernel:KERNEL",
    "module": "neffbench.kernels.module.kernel:KERNEL",
}


@dataclass(frozen=True)
class KernelEntry:
    name: str
    value: str  # "package.module:attr"
    origin: str  # "built-in" or the distribution that offers it


_loaded: dict[str, Any] = {}
_broken: dict[str, str] = {}


def entries() -> dict[str, KernelEntry]:
    """Every kernel by name: built-ins first, then plugins (a plugin cannot replace a built-in)."""
    out = {name: KernelEntry(name, value, "built-in") for name, value in BUILTIN.items()}
    try:
        found = metadata.entry_points(group=GROUP)
    except Exception:  # noqa: BLE001 - broken metadata must not break the workbench
        log.warning("could not read the %s entry points", GROUP, exc_info=True)
        found = ()
    for ep in found:
        if ep.name in out:
            if out[ep.name].value != ep.value:
                log.warning("kernel plugin %s (%s) ignored: a kernel of that name exists", ep.name, ep.value)
            continue
        dist = getattr(getattr(ep, "dist", None), "name", None) or "a plugin"
        out[ep.name] = KernelEntry(ep.name, ep.value, dist)
    return out


def names() -> list[str]:
    return list(entries())


def get(name: str) -> Any:
    """The kernel object, imported on first use. Raises KeyError with a sentence for unknown or broken ones."""
    if name in _loaded:
        return _loaded[name]
    known = entries()
    if name not in known:
        import difflib

        close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise KeyError(f"No kernel named '{name}'.{hint} Kernels: {', '.join(known)}.")
    entry = known[name]
    try:
        kernel = pkgutil.resolve_name(entry.value)
    except Exception as exc:  # noqa: BLE001 - a plugin's own error, reported with its name
        _broken[name] = f"{type(exc).__name__}: {exc}"
        raise KeyError(f"Kernel '{name}' from {entry.origin} ({entry.value}) could not be loaded: "
                       f"{type(exc).__name__}: {exc}") from exc
    if getattr(kernel, "name", None) != name:
        raise KeyError(f"Kernel '{name}' from {entry.origin} ({entry.value}) names itself "
                       f"{getattr(kernel, 'name', None)!r}.")
    _loaded[name] = kernel
    return kernel


def available() -> list[Any]:
    """Every kernel that loads, in registry order; broken plugins are logged and left out."""
    out = []
    for name in entries():
        try:
            out.append(get(name))
        except KeyError as exc:
            log.warning("%s", exc.args[0])
    return out


def broken() -> dict[str, str]:
    """Kernels that failed to load this session, with the reason."""
    return dict(_broken)


def for_spec(spec: Any) -> Any:
    return get(getattr(spec, "kernel", DEFAULT))

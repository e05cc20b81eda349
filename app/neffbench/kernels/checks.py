"""A kernel checked as it loads: every public name it defines is a hook ``Kernel`` declares, with its parameters.

As pluggy's ``_verify_hook`` and ``check_pending`` do for plugins: a typo'd hook (``def bucket(...)``) or
one with other parameters would otherwise be ignored, or fail far from its cause. A built-in kernel and a
plugin get the same sentences.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from neffbench.kernels.api import Kernel

# What the base declares: hooks (methods) and contributions (attributes), each with its default.
DECLARED = {name: value for name, value in vars(Kernel).items() if not name.startswith("_")}


def _own_names(kernel: Any) -> dict[str, Any]:
    """The public names the kernel's classes (below Kernel) and the object itself define, nearest first."""
    out: dict[str, Any] = {}
    for cls in type(kernel).__mro__:
        if cls is Kernel or cls is object:
            break
        for name, value in vars(cls).items():
            if not name.startswith("_"):
                out.setdefault(name, value)
    for name, value in vars(kernel).items():
        if not name.startswith("_"):
            out[name] = value
    return out


def _parameters(func: Any) -> list[inspect.Parameter]:
    return list(inspect.signature(func).parameters.values())[1:]  # without self


def _signature_problem(name: str, spec: Any, impl: Any) -> str | None:
    """Why ``impl`` cannot stand for the declared hook ``spec``: other parameter names, or more required ones."""
    want = _parameters(spec)
    got = _parameters(impl)
    named = [p.name for p in got[: len(want)]]
    if named != [p.name for p in want]:
        declared = ", ".join(p.name for p in want)
        return f"hook {name}({', '.join(p.name for p in got)}) must take ({declared}) as declared in kernels/api.py"
    extra = [
        p.name
        for p in got[len(want) :]
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if extra:
        return f"hook {name} requires {', '.join(extra)}, which the workbench never passes"
    return None


def problems(kernel: Any, name: str) -> list[str]:
    """Every way ``kernel`` (registered as ``name``) breaks the declared hooks; empty when it is sound."""
    if not isinstance(kernel, Kernel):
        return [f"is of type {type(kernel).__name__}, not a neffbench.kernels.api.Kernel"]
    out = []
    if kernel.name != name:
        out.append(f"names itself {kernel.name!r}")
    for attr, value in _own_names(kernel).items():
        if attr not in DECLARED:
            out.append(
                f"defines {attr}, which is no hook (kernels/api.py declares: "
                f"{', '.join(sorted(n for n in DECLARED if callable(DECLARED[n])))}); name a helper _{attr}"
            )
            continue
        declared = DECLARED[attr]
        if inspect.isfunction(declared):
            if not callable(value) or isinstance(value, property):
                out.append(f"sets {attr} to {type(value).__name__}, but {attr} is a hook (a method)")
            elif inspect.isfunction(value):
                problem = _signature_problem(attr, declared, value)
                if problem:
                    out.append(problem)
        elif inspect.isfunction(value):
            out.append(f"defines {attr} as a method, but {attr} is a value (a property may compute it)")
        elif isinstance(declared, (str, bool, dict)) and not isinstance(value, (type(declared), property)):
            out.append(
                f"sets {attr} to a {type(value).__name__}, but kernels/api.py declares a {type(declared).__name__}"
            )
        elif attr in ("commands", "probe_requests") and not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            out.append(f"{attr} must map names to qualified names (strings), as kernels/api.py says")
    if type(kernel).build is Kernel.build:
        out.append("does not implement build")
    cls = kernel.spec_class
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        out.append(f"has spec_class {cls!r}, which is not a dataclass")
    elif getattr(cls, "kernel", None) != kernel.name:
        out.append(f"has a spec class whose kernel is {getattr(cls, 'kernel', None)!r}")
    return out

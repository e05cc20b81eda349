"""A kernel checked as it loads: its required hooks are there, and every public name it defines is a declared hook.

As pluggy's ``_verify_hook`` and ``check_pending`` do for plugins: a typo'd hook (``def bucket(...)``), one with
other parameters or a required one left out would otherwise be ignored, or fail far from its cause (every job). The
kernel's command-line contribution (``Kernel.cli``) is checked the same way against ``CliContribution``. A built-in
kernel and a plugin get the same sentences.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from neffbench.kernels.api import Kernel
from neffbench.kernels.cli_contribution import CliContribution

# Hooks that left ``Kernel`` for its command-line contribution: a kernel written before says where they went.
MOVED_TO_CLI = {
    "source_help": "source_help",
    "commands": "commands",
    "spec_from_source": "spec_from_source",
    "add_cli_options": "add_options",
    "apply_cli_options": "apply_options",
    "add_preview_options": "add_preview_options",
    "preview_options": "preview_options",
    "preview_numbers": "preview_numbers",
    "preview_summary": "preview_summary",
}
# Contributions that map names to "module:attr" strings, imported when used.
QUALIFIED_NAMES = ("commands", "probe_requests")


def _declared(base: type) -> dict[str, Any]:
    """What ``base`` declares: hooks (methods) and contributions (attributes), each with its default."""
    return {name: value for name, value in vars(base).items() if not name.startswith("_")}


def _own_names(obj: Any, base: type) -> dict[str, Any]:
    """The public names the object's classes (below ``base``) and the object itself define, nearest first."""
    out: dict[str, Any] = {}
    for cls in type(obj).__mro__:
        if cls is base or cls is object:
            break
        for name, value in vars(cls).items():
            if not name.startswith("_"):
                out.setdefault(name, value)
    for name, value in vars(obj).items():
        if not name.startswith("_"):
            out[name] = value
    return out


def _parameters(func: Any) -> list[inspect.Parameter]:
    return list(inspect.signature(func).parameters.values())[1:]  # without self


def _signature_problem(name: str, spec: Any, impl: Any, where: str) -> str | None:
    """Why ``impl`` cannot stand for the declared hook ``spec``: other parameter names, or more required ones."""
    want = _parameters(spec)
    got = _parameters(impl)
    named = [p.name for p in got[: len(want)]]
    if named != [p.name for p in want]:
        declared = ", ".join(p.name for p in want)
        return f"hook {name}({', '.join(p.name for p in got)}) must take ({declared}) as declared in {where}"
    extra = [
        p.name
        for p in got[len(want) :]
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if extra:
        return f"hook {name} requires {', '.join(extra)}, which the workbench never passes"
    return None


def _undeclared(attr: str, base: type, declared: dict[str, Any], where: str) -> str:
    if base is Kernel and attr in MOVED_TO_CLI:
        return (
            f"defines {attr}, which is a hook of its command-line contribution now: "
            f"cli = a CliContribution whose {MOVED_TO_CLI[attr]} it is (kernels/cli_contribution.py)"
        )
    hooks = ", ".join(sorted(n for n in declared if callable(declared[n])))
    return f"defines {attr}, which is no hook ({where} declares: {hooks}); name a helper _{attr}"


def hook_problems(obj: Any, base: type, where: str, prefix: str = "") -> list[str]:
    """Every way ``obj`` breaks the hooks ``base`` declares in ``where``: names it does not declare, hooks with
    other parameters, contributions of another type, and required hooks left out. ``prefix`` names the part
    (``cli.``)."""
    declared = _declared(base)
    out = []
    for attr, value in _own_names(obj, base).items():
        if attr not in declared:
            out.append(_undeclared(prefix + attr, base, declared, where))
            continue
        default = declared[attr]
        if inspect.isfunction(default):
            if not callable(value) or isinstance(value, property):
                out.append(f"sets {prefix}{attr} to {type(value).__name__}, but {attr} is a hook (a method)")
            elif inspect.isfunction(value):
                problem = _signature_problem(prefix + attr, default, value, where)
                if problem:
                    out.append(problem)
        elif inspect.isfunction(value):
            out.append(f"defines {prefix}{attr} as a method, but {attr} is a value (a property may compute it)")
        elif isinstance(default, (str, bool, dict)) and not isinstance(value, (type(default), property)):
            out.append(
                f"sets {prefix}{attr} to a {type(value).__name__}, but {where} declares a {type(default).__name__}"
            )
        elif attr in QUALIFIED_NAMES and not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            out.append(f"{prefix}{attr} must map names to qualified names (strings), as {where} says")
    missing = [
        name
        for name, default in declared.items()
        if getattr(default, "required", False) and getattr(type(obj), name, None) is default
    ]
    if missing:
        out.append(f"does not implement {', '.join(prefix + m for m in missing)} (required: {where} has no default)")
    return out


def problems(kernel: Any, name: str) -> list[str]:
    """Every way ``kernel`` (registered as ``name``) breaks the declared hooks; empty when it is sound."""
    if not isinstance(kernel, Kernel):
        return [f"is of type {type(kernel).__name__}, not a neffbench.kernels.api.Kernel"]
    out = []
    if kernel.name != name:
        out.append(f"names itself {kernel.name!r}")
    out += hook_problems(kernel, Kernel, "kernels/api.py")
    if not isinstance(kernel.cli, CliContribution):
        out.append(f"sets cli to a {type(kernel.cli).__name__}, but it must be a CliContribution")
    else:
        out += hook_problems(kernel.cli, CliContribution, "kernels/cli_contribution.py", prefix="cli.")
    cls = kernel.spec_class
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        out.append(f"has spec_class {cls!r}, which is not a dataclass")
    elif getattr(cls, "kernel", None) != kernel.name:
        out.append(f"has a spec class whose kernel is {getattr(cls, 'kernel', None)!r}")
    return out

"""A module spec for an object in memory (what ``neffbench.trace`` is given): a small entry file beside the saved
object, and the example inputs as ``file("...npy")`` tensor specs.

The inputs are bound by the forward's own parameter names when the call passed one tensor per parameter (the
common case: the spec then reads ``positions``, ``q``, ...); otherwise the entry file wraps the object in a module
that takes the tensors in order, ``input0`` on, and puts them back into the structure the call gave them.
"""

from __future__ import annotations

import inspect
from typing import Any

from neffbench.kernels.module.binding import bind
from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.kernels.module.signature import forward_of
from neffbench.kernels.saved import MODULE_FILE, TORCHSCRIPT, SavedCall
from neffbench.procs import write_text

ENTRY_FILE = "traced.py"
ADAPTER = "Called"
# Pasted into the entry file. Functions of a script or a notebook come back from the pickle with globals named
# __main__, which here is another module (the worker's): torch.compile guards a global of an inlined function by
# looking it up in the module of that name. So their globals get a module of their own.
_REHOMED = '''

def rehomed(obj):
    """``obj`` with the globals of its script's or notebook's functions named for a module of their own."""
    import sys
    import types

    functions = [obj] if isinstance(obj, types.FunctionType) else []
    for module in obj.modules() if isinstance(obj, torch.nn.Module) else [obj]:
        for value in vars(type(module)).values():
            functions.append(getattr(value, "__func__", getattr(value, "fget", value)))
    for function in functions:
        found = getattr(function, "__globals__", None)
        if found is None or found.get("__name__") != "__main__" or found is vars(sys.modules["__main__"]):
            continue
        name = f"neffbench_traced_main_{id(found)}"
        found["__name__"] = name
        home = types.ModuleType(name)
        home.__dict__.update(found)
        sys.modules[name] = home
    return obj
'''


def spec(obj: Any, saved: SavedCall) -> ModuleCompileSpec:
    """The spec of ``saved``; writes the entry file into its folder the first time."""
    names = _parameter_names(obj, saved)
    entry = saved.folder / ENTRY_FILE
    if not entry.is_file():
        write_text(entry, _entry_source(saved, adapted=names is None), fsync=False)
    names = names or [f"input{i}" for i in range(len(saved.inputs))]
    inputs = {
        name: f'{i.dtype}[{",".join(str(d) for d in i.shape)}] file("{(saved.folder / i.file).resolve()}")'
        for name, i in zip(names, saved.inputs)
    }
    return ModuleCompileSpec(
        name=saved.name,
        module=ModuleSection(entry=f"{entry.resolve()}:build", call="factory"),
        inputs=inputs,
    )


def _parameter_names(obj: Any, saved: SavedCall) -> list[str] | None:
    """The forward's parameter names for the call's tensors, when each positional argument was one tensor and they
    bind by name as they were passed by position; None: the entry file's adapter takes them in order."""
    if not saved.flat or not saved.inputs or saved.how == TORCHSCRIPT:  # a TorchScript's signature is not Python's
        return None
    forward = forward_of(obj)
    try:
        params = [p for p in inspect.signature(forward).parameters.values() if p.name != "self"]
    except (TypeError, ValueError):
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    taken = params[: len(saved.inputs)]
    if len(taken) < len(saved.inputs) or any(p.kind not in positional for p in taken):
        return None
    names = [p.name for p in taken]
    found = bind(forward, saved.label, names, {})
    return None if found.errors or found.inputs != names else names


def _expression(structure: Any, counter: list[int]) -> str:
    if structure == "tensor":
        counter[0] += 1
        return f"input{counter[0] - 1}"
    kind, items = structure
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {_expression(v, counter)}" for k, v in items.items()) + "}"
    parts = [_expression(item, counter) for item in items]
    if kind == "list":
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _entry_source(saved: SavedCall, *, adapted: bool) -> str:
    load = "torch.jit.load" if saved.how == TORCHSCRIPT else "torch.load"
    kwargs = "" if saved.how == TORCHSCRIPT else ", weights_only=False"
    how = (
        "its CPU trace (TorchScript: it could not be pickled)"
        if saved.how == TORCHSCRIPT
        else "pickled (your own code by value, installed libraries' classes by name, the weights with it)"
    )
    doc = f'''"""What neffbench.trace compiled: {saved.label}, saved {how} in {MODULE_FILE}.

Made by neffbench beside the object and its example inputs (input*.npy); the job's spec names build() here.
"""

from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
''' + (_REHOMED if saved.how != TORCHSCRIPT else "")
    loaded = f'{load}(HERE / "{MODULE_FILE}"{kwargs})'
    loaded = loaded if saved.how == TORCHSCRIPT else f"rehomed({loaded})"
    if not adapted:
        return (
            doc
            + f'''

def build():
    """The object as neffbench.trace was given it."""
    return {loaded}
'''
        )
    counter = [0]
    top = [_expression(item, counter) for item in saved.structure[1]]
    params = ", ".join(f"input{i}" for i in range(counter[0]))
    return (
        doc
        + f'''

class {ADAPTER}(torch.nn.Module):
    """{saved.label} called as neffbench.trace called it: its tensors in order, put back where the call had them."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, {params}):
        return self.inner({", ".join(top)})


def build():
    """The object as neffbench.trace was given it, taking the call's tensors in order."""
    return {ADAPTER}({loaded})
'''
    )

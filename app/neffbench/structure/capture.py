"""(torch) A job's structure from its build: one eager call under forward hooks and a FLOP counter (flops.py), and the
traced graph's operations by module (the job's own CPU trace when it made one, else a trace of its own).

The hooks see every module the forward calls, in the order the calls start: the tree is ``named_modules()``'s,
its children ordered by first call (never-called ones after, as they are declared). Of each module: its first
call's inputs and outputs, how often it was called, the FLOPs of all its calls (the counter's total before and after
each), the line that called it and where its class's ``forward`` is; its parameters as ``parameters()`` counts them.

The line that called it is the user's own code's when there is one on the stack inside the root module's call (the
lines outside it, the workbench's or a script's calling the whole model, call no layer). A module the user's code never
calls itself (a Hugging Face model's layers, called by the library's own forwards) gets the line of its parent's
``forward`` that called it, with the parent's class in ``called_in``: the library's real call site.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path
from types import FrameType
from typing import Any

from neffbench.procs import write_text
from neffbench.structure.document import FILE_NAME, SCHEMA_VERSION
from neffbench.structure.graph import graph_ops
from neffbench.taps.select import root_of, source_of, users_call
from neffbench.views.clock import iso

MAX_TENSORS = 8  # of a call's inputs or outputs, listed; the rest are counted


def _tensors(value: Any, named: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Each tensor in ``value`` (and in the keyword arguments ``named``) as ``{"dtype", "shape"[, "name"]}``."""
    import torch
    from torch.utils._pytree import tree_flatten

    from neffbench.usercode.tensors import describe

    found: list[dict[str, Any]] = []

    def add(leaf: Any, name: str | None) -> None:
        if isinstance(leaf, torch.Tensor):
            unusual = describe(leaf)
            entry: dict[str, Any] = {
                "dtype": str(leaf.dtype).replace("torch.", ""),
                "shape": [] if unusual is not None else list(leaf.shape),
            }
            if name:
                entry["name"] = name
            found.append(entry)

    for leaf in tree_flatten(value)[0]:
        add(leaf, None)
    for key, item in (named or {}).items():
        for leaf in tree_flatten(item)[0]:
            add(leaf, key)
    return found[:MAX_TENSORS]


def _nbytes(entries: list[dict[str, Any]]) -> int:
    sizes = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "float16": 2, "bfloat16": 2, "int32": 4, "float32": 4}
    total = 0
    for e in entries:
        count = 1
        for d in e["shape"]:
            count *= d
        total += count * sizes.get(e["dtype"], 8)
    return total


class _Calls:
    """What the hooks saw, by module path."""

    def __init__(self, counter: Any, modules: dict[str, Any]) -> None:
        self.counter = counter
        self.modules = modules
        self.forwards: dict[type, Any] = {}  # each class's forward's code, unwrapped
        self.outside: Any = None  # the frame that called the root module: the stack beyond it calls no layer
        self.seen: dict[str, bool] = {}  # whether a file is the user's (taps.select.users_call's cache)
        self.first: dict[str, dict[str, Any]] = {}
        self.stack: list[tuple[str, int]] = []  # (path, the counter's total when its call started)

    def before(self, path: str, args: Any, kwargs: Any) -> None:
        if not self.stack:
            self.outside = sys._getframe(2)  # this hook's caller: torch's call of the root module
        entry = self.first.get(path)
        if entry is None:
            entry = self.first[path] = {
                "order": len(self.first),
                "calls": 0,
                "flops": 0,
                "inputs": _tensors(args, kwargs),
                "called_at": users_call(self.seen, self.outside) if self.stack else None,
            }
            if entry["called_at"] is None and self.stack:
                entry["called_at"], entry["called_in"] = self._parents_line(self.stack[-1][0])
        entry["calls"] += 1
        self.stack.append((path, self.counter.get_total_flops()))

    def _parents_line(self, parent: str) -> tuple[str | None, str | None]:
        """``FILE:LINE`` of the running ``parent``'s forward where it calls the module starting now, and the parent's
        class; (None, None) when its forward is not on the stack (a hook or a wrapper called the module)."""
        cls = type(self.modules[parent])
        if cls not in self.forwards:
            try:
                self.forwards[cls] = inspect.unwrap(cls.forward).__code__
            except AttributeError:
                self.forwards[cls] = None
        code = self.forwards[cls]
        frame: FrameType | None = sys._getframe(2)
        while frame is not None and code is not None:
            if frame.f_code is code:
                return f"{code.co_filename}:{frame.f_lineno}", cls.__name__
            frame = frame.f_back
        return None, None

    def after(self, path: str, output: Any) -> None:
        while self.stack and self.stack[-1][0] != path:  # a call that raised inside a child: its entry is gone
            self.stack.pop()
        if not self.stack:
            return
        _, started = self.stack.pop()
        entry = self.first[path]
        entry["flops"] += self.counter.get_total_flops() - started
        entry.setdefault("outputs", _tensors(output))


def _watch(root: Any, calls: _Calls) -> list[Any]:
    handles = []
    for path, module in root.named_modules():

        def before(mod: Any, args: Any, kwargs: Any, path: str = path) -> None:
            calls.before(path, args, kwargs)

        def after(mod: Any, args: Any, output: Any, path: str = path) -> None:
            calls.after(path, output)

        handles.append(module.register_forward_pre_hook(before, with_kwargs=True))
        handles.append(module.register_forward_hook(after))
    return handles


def _call(built: Any) -> tuple[dict[str, dict[str, Any]], Any]:
    """One eager call of the built module, watched: what each module's calls were, and what it returned."""
    import torch

    from neffbench.backends.eager import copies
    from neffbench.structure.flops import FlopCounter

    root = root_of(built.module)
    counter = FlopCounter()
    calls = _Calls(counter, dict(root.named_modules()))
    handles = _watch(root, calls)
    try:
        with torch.no_grad(), counter:
            returned = built.module(*copies(built.inputs))
    finally:
        for handle in handles:
            handle.remove()
    return calls.first, returned


def _trace(built: Any, traced: Any) -> tuple[list[dict[str, Any]], list[list[int]], str | None]:
    """The traced graph's operations: of ``traced`` (the job's CPU trace) when given, else of a trace made here."""
    from neffbench.backends.eager import copies
    from neffbench.backends.tracing import cpu_check_trace

    if traced is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                traced, _ = cpu_check_trace(built.module, copies(built.inputs))
        except Exception as exc:  # noqa: BLE001 - a module that does not trace still has a tree
            from neffbench.usercode.errors import describe

            return [], [], f"the module does not trace on the CPU, so no operations are listed: {describe(exc)}"
    try:
        ops, outputs = graph_ops(traced, built.path_prefix)
    except (AttributeError, RuntimeError) as exc:  # a traced object without a graph (TorchNeuron's own)
        return [], [], f"the traced graph could not be read: {exc}"
    return ops, outputs, None


def _ordered(paths: list[str], first: dict[str, dict[str, Any]]) -> list[str]:
    """Pre-order, each node's children by their first call (never-called ones last, in declared order)."""
    kids: dict[str, list[str]] = {}
    for p in paths[1:]:
        kids.setdefault(p.rpartition(".")[0], []).append(p)

    def start(p: str) -> float:
        if p in first:
            return first[p]["order"]
        below = [first[q]["order"] for q in kids.get(p, ()) if q in first]  # a container starts with its first child
        return min(below) if below else float("inf")

    declared = {p: i for i, p in enumerate(paths)}
    out: list[str] = []

    def walk(p: str) -> None:
        out.append(p)
        for child in sorted(kids.get(p, ()), key=lambda c: (start(c), declared[c])):
            walk(child)

    walk("")
    return out


def capture(built: Any, traced: Any = None, *, how: str, weights: str | None = None) -> dict[str, Any]:
    """The structure document of ``built`` (a kernel's Built): see :mod:`neffbench.structure.document`."""
    import torch

    root = root_of(built.module)
    modules = dict(root.named_modules())
    first, returned = _call(built)
    ops, graph_outputs, note = _trace(built, traced)
    own: dict[str, dict[str, int]] = {}
    total: dict[str, int] = {}
    for op in ops:
        counts = own.setdefault(op["path"], {})
        counts[op["op"]] = counts.get(op["op"], 0) + 1
        path = op["path"]
        while True:  # an operation counts for its module and every module above it
            total[path] = total.get(path, 0) + 1
            if not path:
                break
            path = path.rpartition(".")[0]
    nodes = []
    sources: dict[type, str | None] = {}
    for path in _ordered(list(modules), first):
        module = modules[path]
        cls = type(module)
        if cls not in sources:  # a class without a forward of its own (a ModuleList) has no line to show
            sources[cls] = source_of(cls) if cls.forward is not torch.nn.Module.forward else None
        seen = first.get(path, {})
        params = list(module.parameters())
        inputs, outputs = seen.get("inputs", []), seen.get("outputs", [])
        param_bytes = sum(p.numel() * p.element_size() for p in params)
        buffer_bytes = sum(b.numel() * b.element_size() for b in module.buffers())
        nodes.append(
            {
                "path": path,
                "class": cls.__name__,
                "calls": seen.get("calls", 0),
                "order": seen.get("order"),
                "inputs": inputs,
                "outputs": outputs,
                "params": sum(p.numel() for p in params),
                "param_bytes": param_bytes,
                "buffer_bytes": buffer_bytes,
                "flops": seen.get("flops", 0),
                "bytes": (param_bytes + buffer_bytes + _nbytes(inputs) + _nbytes(outputs)) if seen else 0,
                "defined_at": sources[cls],
                "called_at": seen.get("called_at"),
                "called_in": seen.get("called_in"),
                "ops": own.get(path, {}),
                "op_total": total.get(path, 0),
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "computed": iso(),
        "how": how,
        "torch": torch.__version__,
        "weights_sha256": weights,
        "inputs": [{**t, "name": n} for n, t in zip(built.input_names, _tensors(list(built.inputs)))],
        "outputs": [
            {**t, "name": built.output_names[i] if i < len(built.output_names) else f"output{i}"}
            for i, t in enumerate(_tensors(returned))
        ],
        "graph": {"traced": bool(ops), "note": note},
        "nodes": nodes,
        "ops": ops,
        "graph_outputs": graph_outputs,
    }


def write(job_dir: str | Path, document: dict[str, Any]) -> Path:
    """``JOB/structure.json``, written whole or not at all."""
    import json

    return write_text(Path(job_dir) / FILE_NAME, json.dumps(document, separators=(",", ":")) + "\n")

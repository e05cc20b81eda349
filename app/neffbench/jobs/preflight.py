"""Pre-flight checks before any compiler runs: what the inputs, outputs and traced graph tell about the NEFF to come.

Generic over kernels: it looks at what a job traces (a :class:`~neffbench.kernels.api.Built`) and
at the TorchScript graph the CPU trace made, never at a kernel's own code. Every problem is one
sentence naming the input, output or operator. Runs in the worker child (it needs torch).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Ops whose output shape depends on the values of their input: a NEFF has static shapes.
DATA_DEPENDENT_OPS = frozenset(
    {
        "aten::nonzero",
        "aten::nonzero_numpy",
        "aten::nonzero_static",
        "aten::argwhere",
        "aten::masked_select",
        "aten::unique",
        "aten::_unique",
        "aten::_unique2",
        "aten::unique_dim",
        "aten::unique_consecutive",
    }
)
_COMPLEX = ("complex32", "complex64", "complex128")


@dataclass
class Report:
    """What pre-flight found; ``problems`` are (severity, sentence) pairs in the order found (severity: error,
    warning or note)."""

    problems: list[tuple[str, str]] = field(default_factory=list)
    op_counts: dict[str, int] = field(default_factory=dict)
    data_dependent: list[str] = field(default_factory=list)
    unused_inputs: list[str] = field(default_factory=list)
    constant_outputs: list[str] = field(default_factory=list)
    interface: dict[str, list[str]] = field(default_factory=dict)

    def error(self, sentence: str) -> None:
        self.problems.append(("error", sentence))

    def warning(self, sentence: str) -> None:
        self.problems.append(("warning", sentence))

    def note(self, sentence: str) -> None:
        """Worth a line, not a warning: nothing the user must act on."""
        self.problems.append(("note", sentence))

    @property
    def errors(self) -> list[str]:
        return [s for sev, s in self.problems if sev == "error"]

    def to_json(self) -> dict[str, Any]:
        return {
            "problems": [{"severity": sev, "message": s} for sev, s in self.problems],
            "op_counts": self.op_counts,
            "data_dependent": self.data_dependent,
            "unused_inputs": self.unused_inputs,
            "constant_outputs": self.constant_outputs,
            "interface": self.interface,
        }


def _dtype(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


def native_int64(extra_args: tuple[str, ...] | list[str]) -> bool:
    """Whether the compiler is told to keep int64 (neuronx-cc 2.27+, Trn2 and later)."""
    joined = " ".join(extra_args).replace("=", " ").split()
    return any(
        tok == "--native-int64" and i + 1 < len(joined) and joined[i + 1] == "enabled" for i, tok in enumerate(joined)
    )


def check_inputs(report: Report, names: tuple[str, ...], inputs: tuple[Any, ...], *, keeps_int64: bool = False) -> None:
    for name, tensor in zip(names, inputs):
        dtype = _dtype(tensor)
        if dtype in _COMPLEX:
            report.error(
                f"input '{name}' is {dtype}: Neuron has no complex dtypes; pass the real and imaginary "
                "parts as two float tensors."
            )
        elif dtype == "int64" and not keeps_int64:
            report.warning(
                f"input '{name}' is int64: neuronx-cc downcasts int64 to int32 unless told "
                "--native-int64=enabled (neuronx-cc 2.27+, Trn2 and later), so values beyond 2**31 "
                "are lost."
            )


def check_outputs(report: Report, names: tuple[str, ...], outputs: tuple[Any, ...]) -> None:
    import torch

    if not outputs:
        report.error("the module returns no tensor at all: a NEFF needs at least one tensor output.")
    for i, tensor in enumerate(outputs):
        name = names[i] if i < len(names) else f"output{i}"
        if isinstance(tensor, torch.Tensor) and _dtype(tensor) in _COMPLEX:
            report.error(
                f"output '{name}' is {_dtype(tensor)}: Neuron has no complex dtypes; return "
                "torch.view_as_real(...) instead."
            )


def _graph_inputs(graph: Any) -> list[Any]:
    """The tensor inputs of a traced module's graph (its first input is the module itself)."""
    values = list(graph.inputs())
    if values and values[0].type().kind() == "ClassType":
        values = values[1:]
    return values


def _outputs(graph: Any) -> list[Any]:
    ret = list(graph.outputs())[0]
    node = ret.node()
    if node.kind() == "prim::TupleConstruct":
        return list(node.inputs())
    return [ret]


def _element(value: Any) -> Any | None:
    """What an unpacked tuple element really is: ``TupleUnpack(TupleConstruct(a, b))[1]`` is ``b``.

    Without this every element of a tuple would seem to depend on what any other element does.
    """
    node = value.node()
    if node.kind() not in ("prim::TupleUnpack", "prim::ListUnpack"):
        return None
    source = list(node.inputs())[0].node()
    if source.kind() not in ("prim::TupleConstruct", "prim::ListConstruct"):
        return None
    index = list(node.outputs()).index(value)
    items = list(source.inputs())
    return items[index] if index < len(items) else None


def _reaches(value: Any, targets: set[Any], seen: set[Any]) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if v in targets:
            return True
        if v in seen:
            continue
        seen.add(v)
        element = _element(v)
        stack.extend([element] if element is not None else v.node().inputs())
    return False


def _bool_index(node: Any) -> bool:
    """``aten::index`` with a boolean mask among its indices: ``x[x > 0]``."""
    if node.kind() != "aten::index":
        return False
    indices = list(node.inputs())[1:]
    for idx in indices:
        producer = idx.node()
        items = list(producer.inputs()) if producer.kind() == "prim::ListConstruct" else [idx]
        for item in items:
            typ = item.type()
            if typ.kind() == "TensorType" and typ.scalarType() == "Bool":
                return True
    return False


def _python_op_site(node: Any) -> str:
    """``modeling_bloom.py:164``: the first frame of a traced node's stack outside torch itself."""
    import re
    from pathlib import Path

    from neffbench.backends.tracing import source_location
    from neffbench.usercode.origin import is_user_file

    for line in str(node.sourceRange()).splitlines():
        match = re.match(r"\s*(.+?)\((\d+)\): ", line)
        if match and "/torch/" not in match[1].replace("\\", "/"):
            if is_user_file(match[1]):
                return f"{Path(match[1]).name}:{match[2]}"
            return source_location(match[1], int(match[2]))
    return "an unknown place"


def analyze_graph(report: Report, traced: Any, input_names: tuple[str, ...], output_names: tuple[str, ...]) -> None:
    """Operator counts, data-dependent ops, unused inputs and outputs that depend on no input."""
    graph = traced.inlined_graph
    counts: Counter[str] = Counter()
    for node in graph.nodes():
        kind = node.kind()
        if (
            kind.startswith(("prim::", "aten::size", "aten::Int", "aten::ScalarImplicit"))
            and kind not in DATA_DEPENDENT_OPS
        ):
            continue
        counts[kind] += 1
        if kind in DATA_DEPENDENT_OPS or _bool_index(node):
            label = f"{kind} (boolean mask)" if _bool_index(node) else kind
            if label not in report.data_dependent:
                report.data_dependent.append(label)
    report.op_counts = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    for node in graph.findAllNodes("prim::PythonOp"):
        report.error(
            f"the traced graph calls the Python function {node.pyname()} (a torch.autograd.Function, "
            f"called at {_python_op_site(node)}): TorchScript cannot save it and neuronx-cc cannot compile "
            "it; write it with torch operations (a model library may have an option that picks another "
            "implementation)."
        )
    for label in report.data_dependent:
        report.error(
            f"the traced graph uses {label}, whose output shape depends on the input values: a NEFF "
            "has fixed shapes, so this cannot be compiled (use a fixed-size mask and torch.where)."
        )
    inputs = _graph_inputs(graph)
    used = []
    for name, value in zip(input_names, inputs):
        if not value.uses():
            report.unused_inputs.append(name)
        else:
            used.append(value)
    for name in report.unused_inputs:
        report.warning(
            f"input '{name}' is never used by the traced graph: torch_neuronx drops it from the NEFF "
            "interface, so the NEFF takes one input fewer than the module."
        )
    targets = set(inputs)
    for i, value in enumerate(_outputs(graph)):
        if not _reaches(value, targets, set()):
            name = output_names[i] if i < len(output_names) else f"output{i}"
            report.constant_outputs.append(name)
            report.warning(f"output '{name}' depends on no input: it is a constant baked into the NEFF.")
    kept = [n for n in input_names if n not in report.unused_inputs]
    report.interface = {
        "inputs": [f"input{i} <- {n}" for i, n in enumerate(kept)],
        "outputs": [f"output{i} <- {n}" for i, n in enumerate(output_names)],
    }


def _listed(items: list[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _at(where: str) -> str:
    return f" at {where}" if where else ""


def check_effects(report: Report, built: Any, effects: Any, remedy: Any) -> None:
    """What the eager call did besides returning (``effects``: usercode.effects.Effects), as pre-flight problems;
    ``remedy(names)``: the kernel's way of keeping written tensors as state (Kernel.state_remedy)."""
    lifted = set(built.input_names[len(built.input_names) - len(built.state) :]) if built.state else set()
    written = effects.state_writes()
    if len(written) == 1:
        (w,) = written
        report.error(
            f"the forward writes into the {w.kind} '{w.name}'{_at(w.where)} ({w.op}): a traced NEFF keeps no state "
            f"between calls, so on Neuron this {w.kind} is a constant holding its value when traced, which every "
            f"call starts from again whatever the calls before wrote; {remedy([w.name])}."
        )
    elif written:
        kinds = " and ".join(f"{k}s" for k in sorted({w.kind for w in written}))
        by_place: dict[str, list[str]] = {}
        for w in written:
            by_place.setdefault(f"{_at(w.where)} ({w.op})", []).append(w.name)
        places = "; ".join(f"{_listed(names, 4)}{place}" for place, names in by_place.items())
        report.error(
            f"the forward writes into {len(written)} {kinds} of the module ({places}): a traced NEFF keeps no "
            "state between calls, so on Neuron each is a constant holding its value when traced, which every call "
            f"starts from again whatever the calls before wrote; {remedy([w.name for w in written])}."
        )
    for write in effects.input_writes():
        if write.name in lifted:
            continue
        report.warning(
            f"the forward writes into its input '{write.name}'{_at(write.where)} ({write.op}): a NEFF does not write "
            "its inputs back, so on Neuron the caller never sees this write (neffbench keeps and saves the inputs "
            "as they were before any call)."
        )
    for name in effects.replaced:
        report.warning(
            f"the forward replaces the buffer '{name}' with another tensor: a traced NEFF keeps the value it had "
            "when traced, so one that depends on the inputs is fixed at trace time."
        )


def check_repeatable(report: Report, built: Any, outputs: tuple[Any, ...], effects: Any) -> None:
    """Two eager calls with the same inputs (the kernel's own while building, and the reference) must agree: a
    module whose answer is not a function of its inputs cannot be checked against anything."""
    import torch

    first = built.eager_outputs
    if first is None:
        return
    differing = []
    for i, (a, b) in enumerate(zip(first, outputs)):
        if a.shape != b.shape or not torch.equal(a, b):
            name = built.output_names[i] if i < len(built.output_names) else f"output{i}"
            same_shape = a.shape == b.shape and a.dtype == b.dtype and a.numel()
            gap = f" by up to {float((a.double() - b.double()).abs().max()):.3g}" if same_shape else ""
            differing.append(f"'{name}'{gap}")
    if not differing:
        return
    draws = [f"{op}{_at(where)}" for op, where in effects.random]
    why = (
        f"it draws random numbers: {_listed(draws)}"
        if draws
        else "no random call was seen, so something else it reads changes between calls"
    )
    report.error(
        f"the module gives a different answer on every call: two eager calls with the same inputs differ in "
        f"{_listed(differing)}; {why}. Nothing can be checked against such a module: draw the randomness outside "
        "and pass it in as an input, or turn it off (dropout: training=False)."
    )

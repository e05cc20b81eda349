"""Pre-flight checks before any compiler runs: what the inputs, outputs and traced graph tell about the NEFF to come.

Generic over kernels: it looks at what a job traces (a :class:`~neffbench.kernels.api.Built`) and
at the TorchScript graph the CPU trace made, never at a kernel's own code. Every problem is one
sentence naming the input, output or operator. Runs in the worker child (it needs torch).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from neffbench.kernels.api import ValueRange
from neffbench.schema.compiler import native_int64
from neffbench.taps.select import root_of, unusual_tensors
from neffbench.targets import supports_native_int64
from neffbench.usercode.tensors import dense, describe

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


_INT32 = (-(2**31), 2**31 - 1)
_MAKE_DENSE = "to_dense(), dequantize()"


def _number(n: int) -> str:
    """``2**40 - 1`` for a number next to a large power of two, else the number itself."""
    if n < 0:
        magnitude = _number(-n)
        return f"-({magnitude})" if " " in magnitude else f"-{magnitude}"
    for k in range(16, 64):
        if n in (2**k, 2**k - 1):
            return f"2**{k}" if n == 2**k else f"2**{k} - 1"
    return str(n)


def _int64_fate(spec: Any, makes_neff: bool) -> tuple[str, str]:
    """(severity, what happens and what to do) for int64 values beyond int32 in a compile of ``spec``: an error
    where the NEFF gets them downcast to int32, else a warning."""
    target = spec.compiler.target
    if makes_neff and native_int64(spec.compiler.extra_args) and supports_native_int64(target):
        return "warning", (
            f"--native-int64=enabled keeps them int64 on {target}, except in operations without an int64 datapath "
            "(matrix multiplication, scatter-with-compute, all-reduce and reduce-scatter compute in floating point, "
            "integer power in int32) as --implicit-integer-downcast permits"
        )
    within = f"keep them within int32 ({_number(_INT32[0])} to {_number(_INT32[1])})"
    if supports_native_int64(target):
        downcast = "neuronx-cc downcasts int64 to int32 unless told --native-int64=enabled"
        todo = f"add --native-int64=enabled to the extra args (neuronx-cc 2.27+), or {within}"
    else:
        downcast = f"neuronx-cc downcasts int64 to int32 for --target {target}"
        todo = f"{within}, or compile for trn2 or later with --native-int64=enabled (neuronx-cc 2.27+)"
    if not makes_neff:
        return "warning", f"no NEFF is made here, but {downcast}, so on Neuron they would wrap: {todo}"
    return "error", f"{downcast}, so they would wrap: {todo}"


def _int64_range(
    report: Report, name: str, tensor: Any, declared: ValueRange | None, spec: Any, makes_neff: bool
) -> None:
    """An int64 input whose values (as declared, else as drawn) do not fit int32; nothing when they fit."""
    if declared is None:
        values = dense(tensor)
        if not values.numel():
            return
        declared = ValueRange(int(values.min()), int(values.max()), "the example's values")
    low, high = declared.low, declared.high
    if _INT32[0] <= low and high <= _INT32[1]:
        return
    severity, fate = _int64_fate(spec, makes_neff)
    held = f"the value {_number(low)}" if low == high else f"values from {_number(low)} to {_number(high)}"
    sentence = f"input '{name}' holds {held} ({declared.declared}), beyond int32: {fate}."
    (report.error if severity == "error" else report.warning)(sentence)


def check_inputs(report: Report, built: Any, spec: Any, *, makes_neff: bool) -> None:
    """Each input: a plain dense tensor of a dtype Neuron has, whose int64 values survive what the compile does to
    them (``makes_neff``: whether this job's backend makes a NEFF at all)."""
    for name, tensor in zip(built.input_names, built.inputs):
        what = describe(tensor)
        dtype = _dtype(tensor)
        if what is not None:
            report.error(
                f"input '{name}' is {what}: a NEFF takes plain dense tensors only; pass it as one ({_MAKE_DENSE})."
            )
        elif dtype in _COMPLEX:
            report.error(
                f"input '{name}' is {dtype}: Neuron has no complex dtypes; pass the real and imaginary "
                "parts as two float tensors."
            )
        elif dtype == "int64":
            _int64_range(report, name, tensor, built.value_ranges.get(name), spec, makes_neff)


def check_outputs(report: Report, names: tuple[str, ...], outputs: tuple[Any, ...]) -> None:
    import torch

    if not outputs:
        report.error("the module returns no tensor at all: a NEFF needs at least one tensor output.")
    for i, tensor in enumerate(outputs):
        name = names[i] if i < len(names) else f"output{i}"
        if not isinstance(tensor, torch.Tensor):
            continue
        what = describe(tensor)
        if what is not None:
            report.error(
                f"output '{name}' is {what}: a NEFF returns plain dense tensors only; return it as one ({_MAKE_DENSE})."
            )
        elif _dtype(tensor) in _COMPLEX:
            report.error(
                f"output '{name}' is {_dtype(tensor)}: Neuron has no complex dtypes; return "
                "torch.view_as_real(...) instead."
            )


def _read_attributes(graph: Any) -> set[str]:
    """Dotted paths (``inner.decoder.alignment_heads``) of the module attributes the traced graph uses."""
    paths: dict[Any, str] = {}
    read: set[str] = set()
    for node in graph.findAllNodes("prim::GetAttr"):
        owner = paths.get(list(node.inputs())[0], "")
        path = f"{owner}.{node.s('name')}" if owner else node.s("name")
        paths[node.output()] = path
        if node.output().uses():
            read.add(path)
    return read


def check_module_tensors(report: Report, module: Any, traced: Any) -> None:
    """Parameters and buffers of ``module`` that are not plain dense tensors (whisper's sparse ``alignment_heads``),
    by the user's names, and whether the graph ``traced`` from it reads them. The eager module is walked, not the
    traced one, whose attributes are slow to list."""
    unusual = unusual_tensors(module)
    if not unusual:
        return
    root = root_of(module)
    prefix = next((f"{n}." for n, m in module.named_children() if m is root), "")
    read = _read_attributes(traced.inlined_graph)
    for role, name, what in unusual:
        if prefix + name in read:
            report.warning(
                f"the traced graph reads the {role} '{name}', {what}: a NEFF holds plain dense tensors only, so "
                f"make it one when the module is built ({_MAKE_DENSE})."
            )
        else:
            report.warning(
                f"the {role} '{name}' is {what}, which the traced graph never reads: it is left out of the NEFF."
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

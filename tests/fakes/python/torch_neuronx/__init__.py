"""Fake torch_neuronx for tests: ``trace`` does what neuron-facts.md says the real one does, minus XLA.

It writes ``<workdir>/model/graph.hlo``, ``metadata.json`` and ``<workdir>/command.txt``, runs
``neuronx-cc`` from PATH as a subprocess inheriting stdout/stderr, raises
``RuntimeError("neuronx-cc failed with N")`` on a non-zero exit, and ends with
``torch.jit.trace(..., strict=False)``.

With ``XLA_IR_DEBUG=1`` and ``XLA_HLO_DEBUG=1`` set (aws-neuron-sdk ``tools/neuron-explorer/how-to-profile-workload.rst``:
"set these before compiling to get descriptive layer names") the lowered graph carries each operation's framework
name, ``Class[attribute]/.../aten.op`` from the module calls it ran in (``Block[2]/MLP[mlp]/Linear[up]/aten.linear``),
and the elements it produces: ``metadata.json``'s ``framework_ops``, which the fake compiler keeps in the NEFF's
``debug_info/``. Without them there are none, as a cached NEFF compiled without them has none.

The module it returns behaves as the NEFF does: the module's weights and buffers are constants (a forward's
write into one is lost with the call, so it keeps no state between calls), except the state tensors named by
``input_output_aliases`` ({parameter of func: output index}), which are kept and updated from their outputs.
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import torch

__version__ = "2.9.0.2.15.32035+fake"

# The real package detects the platform when it is imported; on hosts where that fails only this
# override, set before the import, makes cpu_backend tracing work.
_PLATFORM_TARGET = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE")
_NONE_OUTPUT = "Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced functions"


def _check_tensors(value: object, where: str) -> None:
    if isinstance(value, torch.Tensor):
        return
    if isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            _check_tensors(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_tensors(item, f"{where}[{key!r}]")
        return
    raise ValueError(
        f"example_inputs{where} is a {type(value).__name__}; only tensors can be traced "
        "(bind other arguments in an nn.Module or closure)"
    )


def _tensors(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    if value is None:
        raise RuntimeError(_NONE_OUTPUT)
    return []


def _sig(name: str, t: torch.Tensor) -> dict:
    dtype = str(t.dtype).replace("torch.", "")
    return {"name": name, "dtype": dtype, "shape": list(t.shape)}


def _has_option(args: list[str], option: str) -> bool:
    return any(a == option or a.startswith(option + "=") for a in args)


def _aliased(func, aliases) -> dict[str, int]:
    """input_output_aliases as the documented signature takes it: {state tensor: output index}, the state tensors
    being parameters of ``func`` (an nn.Module); by parameter name."""
    if not aliases:
        return {}
    if not isinstance(func, torch.nn.Module):
        raise ValueError("input_output_aliases needs func to be an nn.Module whose parameters are the state tensors")
    names = {id(p): n for n, p in func.named_parameters()}
    out = {}
    for tensor, index in aliases.items():
        if id(tensor) not in names:
            raise ValueError("input_output_aliases: a key is not a parameter of func (state tensors are parameters)")
        if not isinstance(index, int) or index < 0:
            raise ValueError(f"input_output_aliases: output index {index!r} is not a whole number of at least 0")
        out[names[id(tensor)]] = index
    return out


def _held(func) -> dict[str, torch.Tensor]:
    """Every parameter and buffer of a module that a NEFF holds as a plain array, by name (none for a function)."""
    if not isinstance(func, torch.nn.Module):
        return {}
    found = {**dict(func.named_buffers()), **dict(func.named_parameters())}
    return {name: t for name, t in found.items() if _plain(t)}


def _plain(tensor) -> bool:
    """A plain dense array: sparse, quantized, meta tensors and subclasses of their own are not constants of a NEFF."""
    return (
        type(tensor).__torch_dispatch__ is torch.Tensor.__torch_dispatch__
        and tensor.layout == torch.strided
        and not tensor.is_quantized
        and tensor.device.type != "meta"
    )


class _OnDevice(torch.nn.Module):
    """What the NEFF does when it is called: the module's tensors are constants in it (a write into one is gone
    with the call), except the state tensors of input_output_aliases, kept on the device and updated from the
    outputs that alias them."""

    def __init__(self, func, aliased: dict[str, int]):
        super().__init__()
        self.func = func
        self.aliased = aliased

    def forward(self, *inputs):
        swapped = []
        for prefix, module in self.func.named_modules():
            for table in (module._parameters, module._buffers):
                for key, value in table.items():
                    name = f"{prefix}.{key}" if prefix else key
                    if value is not None and name not in self.aliased and _plain(value):
                        swapped.append((table, key, value))
                        table[key] = value.clone()
        try:
            out = self.func(*inputs)
        finally:
            for table, key, value in swapped:
                table[key] = value
        flat = _tensors(out)
        for name, index in self.aliased.items():
            state = self.func.get_parameter(name)
            if flat[index] is not state:
                state.copy_(flat[index])
        return out


_MATMULS = {
    "linear",
    "matmul",
    "mm",
    "bmm",
    "addmm",
    "baddbmm",
    "conv1d",
    "conv2d",
    "einsum",
    "scaled_dot_product_attention",
}


def _framework_ops(func, inputs) -> list[dict]:
    """Each aten operation of the traced graph with its framework name and the elements it makes (a matmul's
    multiply-adds too), as the debug names would carry them into the compiler."""
    if not isinstance(func, torch.nn.Module):
        return []
    modules = dict(func.named_modules())
    traced = torch.jit.trace(func, inputs, strict=False, check_trace=False)
    ops = []
    for node in traced.inlined_graph.nodes():
        kind = node.kind()
        if not kind.startswith("aten::") or kind in ("aten::size", "aten::Int", "aten::detach"):
            continue
        segments = []
        for scope in node.scopeName().split("/"):
            path = scope[len("__module") :].lstrip(".") if scope.startswith("__module") else ""
            if path and path in modules:
                segments.append(f"{type(modules[path]).__name__}[{path.rpartition('.')[2]}]")
        op = kind.split("::", 1)[1]
        elements = 1
        out = node.outputsAt(0).type() if node.outputsSize() else None
        sizes = out.sizes() if out is not None and hasattr(out, "sizes") else None
        for d in sizes or ():
            elements *= d or 1
        macs = 0
        if op in _MATMULS:
            first = node.inputsAt(0).type()
            inner = first.sizes()[-1] if hasattr(first, "sizes") and first.sizes() else 1
            macs = elements * (inner or 1)
        ops.append({"name": "/".join([*segments, f"aten.{op}"]), "op": op, "elements": elements, "macs": macs})
    return ops


def trace(
    func,
    example_inputs,
    *_,
    input_output_aliases={},  # noqa: B006 - the documented signature, which the fake mirrors
    compiler_workdir=None,
    compiler_args=None,
    partitioner_config=None,
    inline_weights_to_neff=True,
    cpu_backend=False,
):
    scenario = os.environ.get("FAKE_NEURONX_CC_SCENARIO", "success")
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    _check_tensors(inputs, "")
    args = shlex.split(compiler_args) if isinstance(compiler_args, str) else list(compiler_args or [])
    if cpu_backend:
        if not _has_option(args, "--target"):
            raise RuntimeError("cpu_backend=True needs an explicit --target in compiler_args")
        if _PLATFORM_TARGET is None and not glob.glob("/dev/neuron*"):
            raise RuntimeError(
                "Neuron platform detection failed: set NEURON_PLATFORM_TARGET_OVERRIDE before importing torch_neuronx"
            )
    if scenario == "worker-segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    if scenario == "python-error":
        raise RuntimeError(_NONE_OUTPUT)

    aliased = _aliased(func, input_output_aliases)
    temporary = compiler_workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="fake-neuronx-") if temporary else compiler_workdir)
    try:
        state = {n: func.get_parameter(n) for n in aliased}
        held = _held(func)
        before = {n: t.detach().clone() for n, t in held.items()}
        with torch.no_grad():
            outputs = _tensors(func(*inputs))
            for name, tensor in held.items():  # the NEFF holds the values the module had when it was traced
                tensor.copy_(before[name])
        for name, index in aliased.items():
            if index >= len(outputs) or outputs[index].shape != state[name].shape:
                raise ValueError(
                    f"input_output_aliases: state tensor {name} {list(state[name].shape)} has no output {index} "
                    f"of its shape (the module returns {len(outputs)} outputs)"
                )
        model = workdir / "model"
        model.mkdir(parents=True, exist_ok=True)
        # The state tensors are inputs and outputs of the NEFF too, which the runtime keeps on the device.
        given = _tensors(inputs) + list(state.values())
        signature = {
            "inputs": [_sig(f"input{i}", t) for i, t in enumerate(given)],
            "outputs": [_sig(f"output{i}", t) for i, t in enumerate(outputs)],
        }
        (model / "graph.hlo").write_text("HloModule fake_traced_module\n" + json.dumps(signature) + "\n")
        debug = os.environ.get("XLA_IR_DEBUG") == "1" and os.environ.get("XLA_HLO_DEBUG") == "1"
        meta = {**signature, **({"framework_ops": _framework_ops(func, inputs)} if debug else {})}
        (model / "metadata.json").write_text(json.dumps(meta, indent=2))
        if scenario == "dropped-flag" and "--lnc" in args:
            i = args.index("--lnc")
            del args[i : i + 2]
        cmd = [
            "neuronx-cc",
            "compile",
            str(model),
            "--framework",
            "XLA",
            "--target",
            "trn1",
            "--output",
            str(workdir / "graph.neff"),
            *args,
        ]
        (workdir / "command.txt").write_text(shlex.join(cmd) + "\n")
        returncode = subprocess.run(cmd, check=False).returncode
        if returncode != 0:
            raise RuntimeError(f"neuronx-cc failed with {returncode}")
        # The real trace embeds the NEFF here; the fake keeps the CPU trace of what the NEFF does.
        if not isinstance(func, torch.nn.Module):
            return torch.jit.trace(func, example_inputs, strict=False)
        traced = torch.jit.trace(_OnDevice(func, aliased), example_inputs, strict=False)
        kept = dict(traced.named_parameters())
        with torch.no_grad():  # tracing ran it once: the state starts again from the values traced with
            for name in aliased:
                kept[f"func.{name}"].copy_(before[name])
        return traced
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)


def analyze(
    func,
    example_inputs,
    compiler_workdir=None,
    additional_ignored_ops=frozenset(),
    max_workers=4,
    is_hf_transformers=False,
    cleanup=False,
):
    """The documented result shape: versions, support percentage, supported operators with counts, and
    unsupported ones with ``kind``, ``failureAt`` and ``call``. ``FAKE_ANALYZE_UNSUPPORTED`` (comma-separated
    aten ops) names the operators this fake reports as unsupported; ``FAKE_ANALYZE_RAISE`` makes it fail."""
    if os.environ.get("FAKE_ANALYZE_RAISE"):
        raise RuntimeError(os.environ["FAKE_ANALYZE_RAISE"])
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    traced = torch.jit.trace(func, inputs, strict=False, check_trace=False)
    counts: dict[str, int] = {}
    for node in traced.inlined_graph.nodes():
        if node.kind().startswith("aten::") and node.kind() not in additional_ignored_ops:
            counts[node.kind()] = counts.get(node.kind(), 0) + 1
    wanted = {op for op in os.environ.get("FAKE_ANALYZE_UNSUPPORTED", "").split(",") if op}
    unsupported = [
        {"kind": op, "failureAt": "neuronx-cc", "call": "model.py(12): forward\n", "opGraph": ""}
        for op in sorted(wanted & set(counts))
    ]
    supported = {op: n for op, n in counts.items() if op not in wanted}
    total = sum(counts.values()) or 1
    return {
        "torch_neuronx_version": __version__,
        "neuronx_cc_version": "2.23.6484.0+fake",
        "support_percentage": f"{100 * sum(supported.values()) / total:.2f}%",
        "supported_operators": supported,
        "unsupported_operators": unsupported,
    }

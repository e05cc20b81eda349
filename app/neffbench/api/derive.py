"""From a call of ``neffbench.trace`` to files a job can build from: the object saved, its inputs as ``.npy`` files,
and a fingerprint that names the folder, so that an identical call finds the same folder (and so the same spec, and
the cache).

The object is pickled with ``torch.save`` through cloudpickle: classes and functions of your own code (a script, a
notebook cell, a file of your project) go by value, so the job compiles the object as it is in memory, whatever the
files say by then; installed libraries' classes go by name; the weights go with it. An object that cannot be
pickled (it holds a lock, a file, a C++ handle) is saved as its CPU trace (TorchScript) instead. Python keeps no
record of the arguments an object was constructed with, so neffbench never rebuilds one from its constructor.

The fingerprint is what decides the NEFF: the CPU trace's graph (without its source locations), its constants, the
object's weights, the inputs' dtypes, shapes and values and how they nest. It needs that trace, which
``torch_neuronx.trace`` makes too (its last step); when it fails, the folder is named by the pickled bytes and the
call is never served from the cache.
"""

from __future__ import annotations

import hashlib
import io
import json
import linecache
import os
import re
import shutil
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.kernels.saved import MODULE_FILE, PICKLED, TORCHSCRIPT, SavedCall, SavedInput

STAGE_DIR = "traced"
DERIVED_FILE = "derived.json"
# What the inputs' files can hold: the tensor specs' dtypes (bfloat16 is kept as float32, as numpy has none).
_SAVABLE = ("float32", "bfloat16", "float16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")
_SOURCE_NOTE = re.compile(r"(, scope: [^\n#]*)?( # [^\n]*)?$", re.MULTILINE)
_MANGLED = re.compile(r"___torch_mangle_\d+\.")
_user_files: dict[str, bool] = {}  # a module's __file__ as loaded: whether it is your own code


class CallError(ValueError):
    """A call whose arguments cannot be traced (a non-tensor input, say); one sentence, as torch_neuronx says it."""


@dataclass
class Derived:
    """The saved call, and what was learnt making it: the caller's CPU trace (or why it failed) and the source files
    of the object's own code."""

    saved: SavedCall
    fingerprint: str
    traced: Any = None
    trace_error: BaseException | None = None
    code: list[dict[str, Any]] = field(default_factory=list)
    servable: bool = True

    def record(self) -> dict[str, Any]:
        """What job.json says of the derivation (``origin.derived``)."""
        return {
            "how": self.saved.how,
            "folder": str(self.saved.folder),
            "fingerprint": self.fingerprint,
            "object": self.saved.label,
            "code": self.code,
            "inputs": [{"file": i.file, "dtype": i.dtype, "shape": list(i.shape)} for i in self.saved.inputs],
            "structure": self.saved.structure,
            "servable": self.servable,
        }


def arguments(example_inputs: Any) -> tuple[Any, ...]:
    """The positional arguments of the call: a tuple as it is, anything else as the one argument."""
    return example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)


def flatten(example_inputs: Any) -> tuple[list[Any], Any]:
    """The tensors in order and how they nest; CallError for anything that is not a tensor (as torch_neuronx)."""
    import torch

    leaves: list[Any] = []

    def walk(value: Any, where: str) -> Any:
        if isinstance(value, torch.Tensor):
            leaves.append(value)
            return "tensor"
        if isinstance(value, (tuple, list)):
            return [type(value).__name__, [walk(v, f"{where}[{i}]") for i, v in enumerate(value)]]
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return ["dict", {k: walk(v, f"{where}[{k!r}]") for k, v in value.items()}]
        raise CallError(
            f"example_inputs{where} is {type(value).__name__}; only tensors (in tuples, lists and dicts) can be "
            "traced: bind other arguments in an nn.Module or a closure"
        )

    structure = ["tuple", [walk(v, f"[{i}]") for i, v in enumerate(arguments(example_inputs))]]
    return leaves, structure


def label_of(func: Any) -> str:
    target = func if isinstance(func, (types.FunctionType, type)) else type(func)
    return getattr(target, "__qualname__", type(func).__name__)


def job_name(func: Any) -> str:
    """A job name from the object's class or function name (``RopeWrapper`` -> ``rope-wrapper``)."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", label_of(func).split(".")[-1]).replace("_", "-").lower()
    return re.sub(r"[^a-z0-9.-]+", "-", text).strip("-.") or "traced"


def _dtype_name(tensor: Any) -> str:
    return str(tensor.dtype).replace("torch.", "")


def _tensor_bytes(tensor: Any) -> bytes:
    import torch

    flat = tensor.detach().cpu().contiguous().reshape(-1)
    return bytes(flat.view(torch.uint8).numpy()) if flat.numel() else b""


def _array(tensor: Any) -> Any:
    import torch

    t = tensor.detach().cpu()
    return (t.float() if t.dtype == torch.bfloat16 else t).contiguous().numpy()


def _is_user_module(module: types.ModuleType) -> bool:
    from neffbench.usercode.origin import classify, module_file

    # By the file's name as loaded: resolving thousands of paths on every call is most of a warm trace's cost.
    key = getattr(module, "__file__", None)
    if not isinstance(key, str):
        return False
    if key not in _user_files:
        path = module_file(module)
        _user_files[key] = path is not None and classify(path) == "user"
    return _user_files[key]


def _user_modules() -> list[types.ModuleType]:
    out: dict[str, types.ModuleType] = {}
    for module in list(sys.modules.values()):
        # __main__ (a script, a notebook) goes by value whatever is registered.
        if isinstance(module, types.ModuleType) and module.__name__ != "__main__" and _is_user_module(module):
            out.setdefault(module.__name__, module)
    return list(out.values())


def pickled(func: Any) -> bytes | None:
    """``func`` as ``torch.save`` writes it through cloudpickle, your own modules by value; None when it cannot be."""
    import cloudpickle
    import torch

    registered = []
    for module in _user_modules():
        try:
            cloudpickle.register_pickle_by_value(module)
        except ValueError:  # a module cloudpickle cannot find by name: it goes by value anyway, or fails below
            continue
        registered.append(module)
    buffer = io.BytesIO()
    try:
        torch.save(func, buffer, pickle_module=cloudpickle)
    except Exception:  # noqa: BLE001 - any object may refuse pickling in its own way; TorchScript is the way out
        return None
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)
    return buffer.getvalue()


def graph_fingerprint(traced: Any) -> dict[str, Any]:
    """The traced graph as text without where its lines came from, and the digest of its tensor constants."""
    graph = getattr(traced, "inlined_graph", None) or traced.graph
    text = _MANGLED.sub("", _SOURCE_NOTE.sub("", str(graph)))
    constants = hashlib.sha256()
    for node in graph.nodes():
        if node.kind() == "prim::Constant" and node.hasAttribute("value") and node.kindOf("value") == "t":
            value = node.t("value")
            constants.update(f"{_dtype_name(value)} {list(value.shape)}\n".encode())
            constants.update(_tensor_bytes(value))
    return {"graph": hashlib.sha256(text.encode()).hexdigest(), "constants": constants.hexdigest()}


def _defined_in(obj: Any) -> str | None:
    """The file that defines ``obj``: its module's file where the module has one (a script, a package), else the
    file its functions' code names (a notebook cell). The module first: once a class has been saved by value and
    loaded back in this process (a second trace of it), cloudpickle has given its functions code named
    ``<dynamic-code>``."""
    module_file = getattr(sys.modules.get(getattr(obj, "__module__", "") or ""), "__file__", None)
    if isinstance(module_file, str) and os.path.isfile(module_file):
        return module_file
    functions = [obj] if isinstance(obj, types.FunctionType) else list(vars(obj).values())
    for candidate in functions:
        code = getattr(candidate, "__code__", None)
        if code is not None:
            return code.co_filename
    return None


def _code(func: Any) -> list[dict[str, Any]]:
    """The files (or notebook cells) your own code of the object comes from, with their digest and what each
    defines: its classes, and the function itself when it is one."""
    import torch

    from neffbench.usercode.origin import classify

    objects: list[Any] = [func] if not isinstance(func, torch.nn.Module) else [type(m) for m in func.modules()]
    where: dict[str, list[str]] = {}
    for obj in objects:
        filename = _defined_in(obj)
        if filename is None:
            continue
        if os.path.isfile(filename) and classify(os.path.realpath(filename)) != "user":
            continue
        names = where.setdefault(filename, [])
        if obj.__qualname__ not in names:
            names.append(obj.__qualname__)
    out = []
    for filename, names in where.items():
        if os.path.isfile(filename):
            with open(filename, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
            name = os.path.basename(filename)
        else:
            digest = hashlib.sha256("".join(linecache.getlines(filename)).encode()).hexdigest()
            name = "a notebook cell" if "ipykernel" in filename or filename.startswith("<ipython") else filename
        out.append({"path": filename, "name": name, "sha256": digest, "defines": names})
    return out


def derive(func: Any, example_inputs: Any, workdir: Path, *, trace: bool = True) -> Derived:
    """Save the call under ``workdir/traced/<fingerprint>/`` (once: an identical call finds it there) and trace it on
    the CPU (``trace=False``: leave that to the job). Raises CallError for arguments that cannot be traced."""
    import torch

    from neffbench.backends.weights import weights_digest

    leaves, structure = flatten(example_inputs)
    for i, tensor in enumerate(leaves):
        if _dtype_name(tensor) not in _SAVABLE:
            raise CallError(
                f"input {i} of example_inputs is {_dtype_name(tensor)}; neffbench saves inputs of "
                f"{', '.join(_SAVABLE)} only"
            )
    blob = pickled(func)
    traced, error = None, None
    if trace or blob is None:
        try:
            traced = torch.jit.trace(func, example_inputs, strict=False)
        except Exception as exc:  # noqa: BLE001 - the job fails the same way and explains it
            error = exc
    how = PICKLED
    if blob is None:
        if traced is None:
            raise CallError(
                f"{label_of(func)} can be neither pickled nor traced on the CPU ({type(error).__name__}: {error}), "
                "so no job can be made of it"
            ) from error
        buffer = io.BytesIO()
        torch.jit.save(traced, buffer)
        blob, how = buffer.getvalue(), TORCHSCRIPT
    inputs: list[dict[str, Any]] = [
        {"dtype": _dtype_name(t), "shape": list(t.shape), "sha256": hashlib.sha256(_tensor_bytes(t)).hexdigest()}
        for t in leaves
    ]
    servable = traced is not None
    key = {
        "how": how,
        "structure": structure,
        "inputs": inputs,
        "graph": graph_fingerprint(traced) if servable else {"pickled": hashlib.sha256(blob).hexdigest()},
        "weights": weights_digest(func)["sha256"] if isinstance(func, torch.nn.Module) else None,
    }
    fingerprint = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    folder = Path(workdir).resolve() / STAGE_DIR / fingerprint[:16]
    saved = SavedCall(
        folder=folder,
        how=how,
        inputs=tuple(SavedInput(f"input{i}.npy", t["dtype"], tuple(t["shape"])) for i, t in enumerate(inputs)),
        structure=structure,
        label=label_of(func),
        name=job_name(func),
    )
    derived = Derived(saved, fingerprint, traced, error, _code(func), servable)
    if not folder.is_dir():
        _write(folder, blob, leaves, derived)
    return derived


def _write(folder: Path, blob: bytes, leaves: list[Any], derived: Derived) -> None:
    """The folder whole or not at all: written beside, then renamed (an identical call made at once keeps one)."""
    import numpy as np

    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = folder.with_name(f".{folder.name}.{os.getpid()}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        (partial / MODULE_FILE).write_bytes(blob)
        for saved, tensor in zip(derived.saved.inputs, leaves):
            np.save(partial / saved.file, _array(tensor), allow_pickle=False)
        (partial / DERIVED_FILE).write_text(json.dumps(derived.record(), indent=2) + "\n", encoding="utf-8")
        os.rename(partial, folder)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        if not folder.is_dir():
            raise

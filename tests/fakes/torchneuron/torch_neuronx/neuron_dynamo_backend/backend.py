"""The fake dynamo backend "neuron": TorchNeuron's compile path with the device and the lowering left out.

Shaped on TorchNeuron's own ``neuron_dynamo_backend/backend.py``, ``config.py`` and ``csrc`` (the cache key,
``PersistentCacheBackend``, ``NeuronCompiler::CompileHloToNeff``): the neuronx-cc command line, its temporary
directory, the error wrapping, the debug layout ``{fx_graphs,stablehlo,neff}/proc_0/<model>_<timestamp>.*``.
The "StableHLO" is a stub naming the signature, beside a ``metadata.json`` the fake neuronx-cc reads.
The graph's inputs are the tensors the caller passed, in the order dynamo lifted them (first use); module
attributes (weights, buffers) are taken as constants in the NEFF, as torch_neuronx.trace inlines them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import torch

import torch_neuronx
from torch_neuronx import log

_CACHE_WHERE = "torch_neuronx/csrc/core/compilation/PersistentCacheBackend.cpp:142"
# Read once, as the real persistent cache reads it when it is constructed.
_CACHE_DIR = Path(os.environ.get("TORCH_NEURONX_NEFF_CACHE_DIR") or "/tmp/neff_cache")


def _flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes")


def _sig(i: int, t: torch.Tensor) -> dict:
    return {"name": f"input{i}" if i >= 0 else "", "dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape)}


def _source_name(arg: object) -> str:
    """A placeholder's dynamo source as text: ``Source.name`` is a property in torch 2.13, a method in 2.8 and 2.9."""
    source = getattr(arg, "source", None) if arg is not None else None
    if source is None:
        return ""
    name = source.name
    return name() if callable(name) else name


def _user_inputs(gm: torch.fx.GraphModule, example_inputs: list) -> list[torch.Tensor]:
    """The placeholders that are the caller's tensors (``L['x']``), not the module's (``L['self']...``)."""
    out = []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, value in zip(placeholders, example_inputs):
        source = _source_name(node.meta.get("grapharg"))
        if isinstance(value, torch.Tensor) and not source.startswith("L['self']"):
            out.append(value)
    return out


def _flat(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat(v)]
    return []


def _compile_to_neff(stablehlo: str, meta: dict, opt: str, args: str) -> bytes:
    """NeuronCompiler::CompileHloToNeff: neuronx-cc in a temporary directory, output captured."""
    target = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE") or "trn2"
    lnc = os.environ.get("NEURON_LOGICAL_NC_CONFIG") or "2"
    with tempfile.TemporaryDirectory(prefix="neuron_compile_") as tmp:
        mlir, neff = Path(tmp) / "module.mlir", Path(tmp) / "module.neff"
        mlir.write_text(stablehlo, encoding="utf-8")
        (Path(tmp) / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
        cmd = [
            "neuronx-cc",
            "compile",
            str(mlir),
            "--framework",
            "XLA",
            "--target",
            target,
            "--lnc",
            lnc,
            opt,
            *args.split(),
            "--output",
            str(neff),
        ]
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False)
        # WEXITSTATUS: a compiler killed by a signal "exits" 0, and only the missing NEFF tells.
        code = proc.returncode if proc.returncode > 0 else 0
        if code:
            raise RuntimeError(
                f"Command failed (neuronx-cc compilation) with exit code {code}"
                + (f": {proc.stderr}" if proc.stderr else "")
            )
        try:
            return neff.read_bytes()
        except OSError:
            raise RuntimeError(f"Failed to read compiled NEFF file: {neff}") from None


def _compile(gm: torch.fx.GraphModule, example_inputs: list, options: dict | None) -> object:
    if torch_neuronx.device_count() == 0:
        raise RuntimeError("No Neuron devices available")
    model = (options or {}).get("model_name", "model_default").lower()
    stamp = dt.datetime.now().strftime("%Y%m%d_%H%M%S_%f")
    debug = Path(os.environ.get("TORCH_NEURONX_DEBUG_DIR") or tempfile.mkdtemp(prefix="neuron_backend_"))
    preserve = _flag("TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS")
    fx = debug / "fx_graphs" / "proc_0" / f"{model}_{stamp}.fx.txt"
    fx.parent.mkdir(parents=True, exist_ok=True)
    fx.write_text(gm.code, encoding="utf-8")
    with torch.no_grad():
        outputs = _flat(gm(*example_inputs))
    inputs = _user_inputs(gm, example_inputs)
    meta = {
        "inputs": [_sig(i, t) for i, t in enumerate(inputs)],
        "outputs": [{**_sig(i, t), "name": f"output{i}"} for i, t in enumerate(outputs)],
    }
    args = "--model-type transformer --auto-cast=none " + os.environ.get("NEURON_CC_FLAGS", "")
    opt = os.environ.get("NEURON_COMPILER_OPT_LEVEL") or "-O2"
    stablehlo = f"module @{model} {{\n  // fake StableHLO\n  // {json.dumps(meta)}\n}}\n"
    shlo = debug / "stablehlo" / "proc_0" / f"{model}_{stamp}.stablehlo.mlir"
    shlo.parent.mkdir(parents=True, exist_ok=True)
    shlo.write_text(stablehlo, encoding="utf-8")
    extension = "_".join(
        part
        for part in (
            os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE") or "trn2",
            os.environ.get("NEURON_LOGICAL_NC_CONFIG") or "2",
            opt.lstrip("-"),
            args.strip().replace(" ", "_").replace("=", "-"),
        )
        if part
    )
    key = hashlib.sha256(f"{stablehlo}_{extension}".encode()).hexdigest()
    path = _CACHE_DIR / key[:2] / key[2:4] / f"{key}.neff"
    fallback = not _flag("TORCH_NEURONX_DISABLE_FALLBACK_EXECUTION")
    try:
        if path.is_file():
            log("INFO", f"[NEFF_CACHE] Cache HIT for key: {key} ", _CACHE_WHERE)
        else:
            log("INFO", f"[NEFF_CACHE] Cache MISS for key: {key} ", _CACHE_WHERE)
            try:
                data = _compile_to_neff(stablehlo, meta, opt, args)
            except Exception as exc:
                raise RuntimeError(f"StableHLO to NEFF compilation failed for torch.compile: {exc}") from exc
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.rename(path)
            log("INFO", f"[NEFF_CACHE] Storing NEFF for key: {key} ", _CACHE_WHERE)
    except Exception as exc:
        if fallback:  # what TORCH_NEURONX_DISABLE_FALLBACK_EXECUTION=1 prevents: eager, silently, no NEFF
            log("ERROR", f"Compilation failed: {exc}; falling back to eager execution")
            return gm.forward
        raise RuntimeError(f"Neuron backend NEFF execution setup failed with unexpected error: {exc}") from exc
    if preserve:
        copy = debug / "neff" / "proc_0" / f"{model}_{stamp}.neff"
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    else:
        shutil.rmtree(debug, ignore_errors=True)

    def execute(*args: object) -> object:
        log("INFO", f"Executing compilable kernel operation= {model} async= 0")
        return gm.forward(*args)

    return execute


def neuron_backend(
    gm: torch.fx.GraphModule, example_inputs: list, *, options: dict | None = None, mode: str = "default"
) -> object:
    """The entry point ``torch_dynamo_backends: neuron`` names, with the real one's signature."""
    return _compile(gm, example_inputs, options)

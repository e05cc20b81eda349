"""From a module spec to what gets traced (torch; worker child only): resolve, construct, bind, build inputs, probe, wrap."""

from __future__ import annotations

import inspect
import itertools
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neffbench.kernels import steps
from neffbench.kernels.api import STATE_PREFIX, Built, KernelError
from neffbench.kernels.module import entry as entries
from neffbench.kernels.module import hf_compat, tensors, wrapper
from neffbench.kernels.module import outputs as outs
from neffbench.kernels.module.binding import bind
from neffbench.kernels.module.kwargs_check import check as check_kwargs
from neffbench.kernels.module.params import ModuleCompileSpec
from neffbench.kernels.module.signature import forward_of, kind_of
from neffbench.usercode import errors as user_errors

# Recorded in job.json: the module is put in eval mode, which changes what some layers compute.
EVAL_NOTE = (
    "module.eval() was called before anything else: dropout is off and batch norm uses its running statistics, "
    "as in inference"
)


@dataclass
class Target:
    """The resolved entry and the callable the inputs go to."""

    obj: Any  # what the entry names
    made: Any  # the module or function that is called (obj itself, or what the factory returned)
    mode: str  # "factory" or "object"
    kind: str  # "class", "function" or "instance"
    qualname: str
    label: str  # how the callee reads in a sentence: "MLP.forward", "scaled_add"
    notes: list[str] = field(default_factory=list)  # warnings found while making it (keys kept, not known)


def _qualname(obj: Any, entry: entries.Entry) -> str:
    """``transformers.models.bert.modeling_bert.BertModel``, or ``mlp.py:MLP`` for a class from a file."""
    target = obj if inspect.isclass(obj) or inspect.isfunction(obj) else type(obj)
    qualname = getattr(target, "__qualname__", type(obj).__name__)
    module = getattr(target, "__module__", "?")
    if module.startswith(entries.USER_PREFIX) and entry.is_file:
        return f"{Path(entry.target).name}:{qualname}"
    return f"{module}.{qualname}"


def _call_mode(requested: str, obj: Any, kwargs: dict[str, Any], inputs: list[str]) -> str:
    """auto: a class is a factory; a function is one when given kwargs, or when the inputs are not its
    parameters (``make_mlp(hidden_size=...)`` builds, ``scaled_add(x, y)`` is the forward)."""
    if requested != "auto":
        return requested
    if inspect.isclass(obj):
        return "factory"
    if kwargs and callable(obj):
        return "factory"
    if inspect.isfunction(obj) and inputs:
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            return "object"
        takes_inputs = any(name in params for name in inputs) or any(
            p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values()
        )
        return "object" if takes_inputs else "factory"
    return "object"


def build_value(value: Any, paths: tuple[str, ...], where: str, notes: list[str] | None = None) -> Any:
    """A kwargs value: a table with ``entry`` builds a nested object (a config); anything else is itself.
    ``notes`` collects warnings about keys a nested object keeps without being known to read them."""
    if isinstance(value, dict) and "entry" in value:
        try:
            obj = entries.resolve(str(value["entry"]), paths)
        except entries.EntryError as exc:
            raise KernelError(f"{where}: {exc}") from None
        given = value.get("kwargs") or {}
        if value.get("call", "factory") == "object":
            return obj
        kwargs = {k: build_value(v, paths, f"{where}.kwargs.{k}", notes) for k, v in given.items()}
        _refuse_unknown(obj, kwargs, f"{where}.kwargs", notes)
        try:
            return obj(**kwargs)
        except Exception as exc:  # noqa: BLE001 - the user's constructor may raise anything
            raise KernelError(f"{where}: calling {value['entry']}(...) raised {user_errors.describe(exc)}") from exc
    if isinstance(value, dict):
        return {k: build_value(v, paths, f"{where}.{k}", notes) for k, v in value.items()}
    if isinstance(value, list):
        return [build_value(v, paths, f"{where}[{i}]", notes) for i, v in enumerate(value)]
    return value


def _refuse_unknown(obj: Any, kwargs: dict[str, Any], where: str, notes: list[str] | None) -> None:
    """Keys the callable would silently ignore, refused by name before it is called (see kwargs_check)."""
    found = check_kwargs(obj, kwargs)
    if notes is not None:
        notes += [f"{where}: {w}" for w in found.warnings]
    if found.errors:
        more = f" (and {len(found.errors) - 1} more)" if len(found.errors) > 1 else ""
        raise KernelError(f"{where}: {found.errors[0]}{more}")


def seed_everything(seed: int) -> None:
    """Seed every generator a module's initialisation may draw from, so that building the same spec twice makes
    the same weights (they are inlined into the NEFF, and every later CPU run rebuilds them)."""
    import random

    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)


def resolve_target(spec: ModuleCompileSpec) -> Target:
    m = spec.module
    try:
        obj = entries.resolve(m.entry, m.path)
    except entries.EntryError as exc:
        raise KernelError(str(exc)) from None
    mode = _call_mode(m.call, obj, m.kwargs, list(spec.inputs))
    kind = kind_of(obj)
    notes: list[str] = []
    seed_everything(m.weights_seed)
    if mode == "factory":
        if not callable(obj):
            raise KernelError(
                f"entry {m.entry} is {type(obj).__name__}, which is not callable, so it cannot be a "
                'factory; use call = "object" if it is the module.'
            )
        kwargs = {k: build_value(v, m.path, f"module.kwargs.{k}", notes) for k, v in m.kwargs.items()}
        _refuse_unknown(obj, kwargs, "module.kwargs", notes)
        seed_everything(m.weights_seed)  # again: the module's own initialisation starts from the seed itself
        from neffbench.usercode.effects import marking_uninitialised, uninitialised

        try:
            with marking_uninitialised() as allocated:
                made = obj(**kwargs)
        except Exception as exc:  # noqa: BLE001 - the user's constructor may raise anything
            raise KernelError(f"calling {m.entry}(**kwargs) raised {user_errors.describe(exc)}") from exc
        notes += [_never_initialised(*found) for found in uninitialised(made, allocated)]
    else:
        if m.kwargs:
            raise KernelError(
                f'entry {m.entry} is used as the object (call = "object"), so [module.kwargs] '
                'would be ignored; remove them or use call = "factory".'
            )
        made = obj
    if not callable(made):
        what = f"calling {m.entry}" if mode == "factory" else f"entry {m.entry}"
        raise KernelError(
            f"{what} gave {type(made).__name__}, which is not callable: it needs a forward "
            "(an nn.Module) or to be a function."
        )
    import torch

    if isinstance(made, torch.nn.Module):
        made.eval()
        if m.dtype != "keep":
            made.to(getattr(torch, m.dtype))
        label = f"{type(made).__name__}.forward"
    else:
        label = getattr(made, "__qualname__", type(made).__name__)
    return Target(
        obj, made, mode, kind, _qualname(made if mode == "factory" else obj, entries.parse(m.entry)), label, notes
    )


def _never_initialised(kind: str, name: str, where: str) -> str:
    at = f" (allocated at {where})" if where else ""
    return (
        f"the {kind} '{name}'{at} is never initialised: it holds whatever memory torch.empty gave it, which differs "
        "from build to build, so neffbench sets it to zeros to compile, run and compare one module; initialise it "
        "in the constructor or load a checkpoint in the factory to compile real values."
    )


def single_bucket(spec: ModuleCompileSpec) -> dict[str, int]:
    return {axis: values[0] for axis, values in spec.buckets.items() if values}


def all_buckets(spec: ModuleCompileSpec) -> list[dict[str, int]]:
    axes = list(spec.buckets)
    return [dict(zip(axes, combo)) for combo in itertools.product(*(spec.buckets[a] for a in axes))]


def _examples(spec: ModuleCompileSpec, bucket: dict[str, int], step: int | None = None) -> dict[str, Any]:
    """What the examples function returns for the bucket (and, for a later call of a module with state, the
    step, when the function takes ``step``)."""
    import torch

    try:
        func = entries.resolve(spec.module.examples, spec.module.path)
    except entries.EntryError as exc:
        raise KernelError(f"module.examples: {exc}") from None
    torch.manual_seed(spec.seed)
    given: dict[str, Any] = dict(bucket)
    if step is not None:
        try:
            takes_step = "step" in inspect.signature(func).parameters
        except (TypeError, ValueError):
            takes_step = False
        if takes_step:
            given["step"] = step
    try:
        made = func(**given)
    except Exception as exc:  # noqa: BLE001 - the user's function may raise anything
        raise KernelError(f"the examples function {spec.module.examples} raised {user_errors.describe(exc)}") from exc
    if not isinstance(made, dict) or not all(isinstance(v, torch.Tensor) for v in made.values()):
        raise KernelError(
            f"the examples function {spec.module.examples} must return {{name: tensor}}; it "
            f"returned {type(made).__name__}."
        )
    return made


def make_inputs(
    spec: ModuleCompileSpec, names: list[str], step: int | None = None, consumed: Mapping[str, int] | None = None
) -> tuple[Any, ...]:
    """The example tensors of the spec's first bucket, in ``names`` order, from its seed. For call ``step`` of a
    module with state: random values from the seed moved on by ``step``, and ``arange`` going on from the
    elements each input took in the calls before (``consumed``)."""
    import torch

    bucket = single_bucket(spec)
    generator = torch.Generator().manual_seed(spec.seed + (step or 0))
    from_examples = _examples(spec, bucket, step) if spec.module.examples else {}
    out = []
    for name in names:
        if name in spec.inputs:
            try:
                start = (consumed or {}).get(name, 0)
                out.append(tensors.build(tensors.parse(spec.inputs[name]), bucket, generator, start=start))
            except tensors.TensorSpecError as exc:
                raise KernelError(f"inputs.{name}: {exc}") from None
        else:
            out.append(from_examples[name])
    return tuple(out)


def _embedding_problem(target: Any, names: list[str], inputs: tuple[Any, ...]) -> str | None:
    """Which input holds ids beyond which embedding table: the sentence for ``index out of range in self``."""
    import torch

    if not isinstance(target, torch.nn.Module):
        return None
    for mod_name, mod in target.named_modules():
        if not isinstance(mod, torch.nn.Embedding):
            continue
        for name, tensor in zip(names, inputs):
            if tensor.dtype.is_floating_point or tensor.dtype == torch.bool or tensor.numel() == 0:
                continue
            high, low = int(tensor.max()), int(tensor.min())
            if high >= mod.num_embeddings or low < 0:
                return (
                    f"input '{name}' has token ids from {low} to {high}, out of range of the embedding "
                    f"'{mod_name}' ({mod.num_embeddings} rows): use randint(0, {mod.num_embeddings})."
                )
    return None


def _bound(spec: ModuleCompileSpec) -> tuple[Target, Any]:
    target = resolve_target(spec)
    forward = forward_of(target.made)
    names = list(spec.inputs)
    if spec.module.examples:
        names += [n for n in _examples(spec, single_bucket(spec)) if n not in names]
    binding = bind(forward, target.label, names, spec.module.constants)
    if binding.errors:
        raise KernelError(binding.errors[0])
    return target, binding


def prepare(spec: ModuleCompileSpec) -> Any:
    """What a compile checks before any job starts: the entry resolves, the module is made, the inputs bind.
    Returns the module (or function) made."""
    return _bound(spec)[0].made


def _state_values(made: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    """Each named parameter or buffer's value now (a copy: the module keeps its own), refused by name when the
    module has no such tensor."""
    import torch

    if not names:
        return ()
    if not isinstance(made, torch.nn.Module):
        raise KernelError("module.state names state, but the entry is a function: only an nn.Module has buffers.")
    tensors = dict(made.named_buffers())
    tensors.update(made.named_parameters())
    unknown = [n for n in names if n not in tensors]
    if unknown:
        known = ", ".join(list(dict(made.named_buffers()))[:8]) or "none"
        raise KernelError(
            f"module.state: {', '.join(repr(n) for n in unknown)} is not a parameter or buffer of "
            f"{type(made).__name__} (its buffers: {known})."
        )
    return tuple(tensors[n].detach().clone() for n in names)


def build(spec: ModuleCompileSpec) -> Built:
    from neffbench.usercode.effects import undone

    target, binding = _bound(spec)
    inputs = make_inputs(spec, binding.inputs)
    kwargs = {n: t for n, t in zip(binding.inputs, inputs)}
    import torch

    positional = [kwargs.pop(n) for n in binding.inputs if n in binding.positional_only]
    steps.step(steps.FORWARD)
    try:
        # This call only learns what the module returns: what it writes into the module (a KV cache) or into
        # its inputs is put back, so the state and the inputs traced, saved and run are the ones before any call.
        with torch.no_grad(), undone(target.made, inputs):
            raw = target.made(*positional, **kwargs, **spec.module.constants)
    except IndexError as exc:
        sentence = _embedding_problem(target.made, binding.inputs, inputs) if "out of range" in str(exc) else None
        raise KernelError(sentence or f"calling {target.label} raised {user_errors.describe(exc)}") from exc
    except Exception as exc:  # noqa: BLE001 - the user's forward may raise anything
        raise KernelError(f"calling {target.label} raised {user_errors.describe(exc)}") from exc
    steps.step(steps.OUTPUTS)
    found = outs.leaves(raw, spec.module.outputs)
    if found.errors:
        raise KernelError(found.errors[0])
    eager = tuple(outs.reach(raw, path).detach().clone() for path in found.paths)
    state = tuple(spec.module.state)
    initial = _state_values(target.made, state)
    src = wrapper.source(
        binding.inputs, binding.positional_only, spec.module.constants, found.paths, target.label, state
    )
    module = wrapper.make(src, target.made).eval()
    parsed = entries.parse(spec.module.entry)
    info = {
        "entry": spec.module.entry,
        "resolved": target.qualname,
        "kind": target.kind,
        "call": target.mode,
        "dtype": spec.module.dtype,
        "file_sha256": entries.file_sha256(parsed),
        "kwargs": spec.module.kwargs,
        "constants": spec.module.constants,
        "inputs": [
            tensors.describe(n, tensors.parse(spec.inputs[n]), single_bucket(spec))
            if n in spec.inputs
            else f"{n}: {str(t.dtype).replace('torch.', '')}{list(t.shape)} (examples function)"
            for n, t in zip(binding.inputs, inputs)
        ],
        "outputs": [outs.name_of(p) for p in found.paths],
        "wrapper": src,
        "versions": _library_versions(),
    }
    if isinstance(target.made, torch.nn.Module):
        info["eval"] = EVAL_NOTE
    if state:
        info["state"] = list(state)
    hf_compat.apply(target.made, info)  # transformers 4.5x's vmap-built masks, which torch.jit.trace cannot trace
    return Built(
        module,
        inputs + initial,
        tuple(binding.inputs) + tuple(STATE_PREFIX + n for n in state),
        tuple(outs.name_of(p) for p in found.paths) + tuple(STATE_PREFIX + n for n in state),
        info,
        warnings=[*target.notes, *binding.warnings],
        state=state,
        eager_outputs=eager,
        path_prefix="inner.",
        value_ranges=tensors.value_ranges(spec.inputs, binding.inputs, inputs),
    )


def _library_versions() -> dict[str, str | None]:
    """The versions of model libraries the user's code imported (transformers, diffusers)."""
    import sys

    out: dict[str, str | None] = {}
    for name in ("transformers", "diffusers"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = getattr(mod, "__version__", None)
    return out

"""The module kernel's spec: an entry to resolve, how to call it, and tensor specs by forward-parameter name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neffbench.schema import SpecHeader, kernel_spec, ui


@dataclass(frozen=True)
class ModuleSection:
    """What to compile: the entry, how to get a callable from it, and what to pass it besides tensors."""

    entry: str = field(
        default="",
        metadata=ui(
            "Entry",
            "What to compile: 'package.module:attr' (imported) or 'path/to/file.py:attr' (run in the "
            "worker only; relative to the spec file, or to the folder it was typed in).",
        ),
    )
    call: str = field(
        default="auto",
        metadata=ui(
            "Call",
            "factory: entry(**kwargs) builds the module; object: entry is the module or function already; "
            "auto: a class is a factory, anything else is the object (a function with kwargs is a factory).",
            choices=("auto", "factory", "object"),
        ),
    )
    dtype: str = field(
        default="keep",
        metadata=ui(
            "Module dtype",
            "Cast the module's parameters and buffers (module.to(dtype)) before tracing, as when "
            "deploying a float32 checkpoint in bfloat16; keep: as the entry builds it.",
            choices=("keep", "float32", "bfloat16", "float16"),
        ),
    )
    weights_seed: int = field(
        default=0,
        metadata=ui(
            "Weights seed",
            "Seed of every random generator while the entry builds the module, so randomly initialised "
            "weights are the same in every build (they are inlined into the NEFF; a checkpoint's are its own).",
            min=0,
            max=2**31 - 1,
            advanced=True,
        ),
    )
    path: tuple[str, ...] = field(
        default=(),
        metadata=ui(
            "Import path",
            "Folders put on sys.path before the entry is imported (relative to the spec file, or to the folder "
            "they were typed in).",
            neff=False,
            advanced=True,
        ),
    )
    outputs: tuple[str, ...] = field(
        default=(),
        metadata=ui(
            "Outputs",
            "Pick and order the outputs by dict key, ModelOutput field or tuple index (empty: all tensor "
            "leaves in order).",
            advanced=True,
        ),
    )
    state: tuple[str, ...] = field(
        default=(),
        metadata=ui(
            "State",
            "Buffers the forward writes that must carry from call to call (a KV cache), by name as "
            "named_buffers() gives them: passed in and returned by the compiled graph, and kept on the device "
            "(torch_neuronx.trace's input_output_aliases, TorchNeuron's buffer mutation). Pre-flight names the "
            "buffers a forward writes.",
            advanced=True,
        ),
    )
    examples: str = field(
        default="",
        metadata=ui(
            "Examples function",
            "'file.py:func' taking the bucket axes as keyword arguments and returning "
            "{name: tensor}, for inputs a tensor spec cannot describe.",
            advanced=True,
        ),
    )
    kwargs: dict[str, Any] = field(
        default_factory=dict,
        metadata=ui(
            "Arguments",
            "Constructor or factory arguments; a table with 'entry' (and 'kwargs') builds a nested "
            "object, such as a config.",
        ),
    )
    constants: dict[str, Any] = field(
        default_factory=dict,
        metadata=ui(
            "Constants",
            "Non-tensor forward arguments, bound by name (return_dict = false, use_cache = false); never NEFF inputs.",
        ),
    )


@kernel_spec("module")
class ModuleCompileSpec(SpecHeader):
    """Any nn.Module or function: inputs by forward-parameter name, one NEFF per bucket combination."""

    seed: int = field(
        default=0,
        metadata=ui(
            "Seed",
            "Seed for the example input values (values do not change the NEFF).",
            min=0,
            max=2**31 - 1,
            neff=False,
        ),
    )
    module: ModuleSection = field(default_factory=ModuleSection)
    # name -> "dtype[dims] init", one per forward parameter that takes a tensor
    inputs: dict[str, str] = field(
        default_factory=dict,
        metadata=ui("Inputs", "One tensor spec per forward parameter, by name: 'i64[{batch},{seq}] randint(0, 1000)'."),
    )
    # axis -> values; one NEFF per combination
    buckets: dict[str, tuple[int, ...]] = field(
        default_factory=dict,
        metadata=ui(
            "Buckets",
            "Values of each {axis} the inputs use; one NEFF per combination (shapes are fixed at trace time).",
        ),
    )

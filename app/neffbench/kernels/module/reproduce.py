"""The module kernel's part of ``reproduce.py``: load the entry, build it, wrap it (the traced wrapper, verbatim), make the inputs."""

from __future__ import annotations

from pathlib import Path

from neffbench.kernels.api import STATE_PREFIX, Built
from neffbench.kernels.module.hf_compat import reproduce_source as hf_compat_source
from neffbench.kernels.module.params import ModuleCompileSpec
from neffbench.kernels.script_template import fill
from neffbench.kernels.source import module_source


def source(spec: ModuleCompileSpec, built: Built) -> str:
    """A fragment for after ``import torch``: the tensor specs' code, the entry's loader, this job's values, the
    traced wrapper verbatim, ``build_module()`` and ``example_inputs()`` (``templates/reproduce.py``)."""
    m = spec.module
    info = built.info
    here = Path(__file__).parent
    return fill(
        here / "templates" / "reproduce.py",
        tensors_source=module_source(here / "tensors.py"),
        hf_compat=hf_compat_source(info),
        entry=m.entry,
        resolved=info.get("resolved"),
        entry_sha256=info.get("file_sha256"),
        call=info.get("call"),
        module_dtype=m.dtype,
        import_path=list(m.path),
        kwargs=m.kwargs,
        input_names=[n for n in built.input_names if not n.startswith(STATE_PREFIX)],
        input_specs=dict(spec.inputs),
        examples=m.examples,
        bucket={axis: values[0] for axis, values in spec.buckets.items()},
        seed=spec.seed,
        weights_seed=m.weights_seed,
        wrapper=info.get("wrapper", "").strip(),
    )

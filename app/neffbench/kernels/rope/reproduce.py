"""RoPE's part of ``reproduce.py``: the kernel's source as it ran and this job's values, torch alone."""

from __future__ import annotations

from pathlib import Path

from neffbench.kernels.rope.params import RopeCompileSpec
from neffbench.kernels.script_template import fill
from neffbench.kernels.source import module_source


def source(spec: RopeCompileSpec) -> str:
    """A fragment for after ``import torch``: ops.py as it ran, this job's values, ``build_module()`` and
    ``example_inputs()`` (``templates/reproduce.py``)."""
    from neffbench.kernels.rope.build import rope_scaling

    m, r, i = spec.model, spec.rope, spec.inputs
    here = Path(__file__).parent
    return fill(
        here / "templates" / "reproduce.py",
        ops_source=module_source(here / "ops.py"),
        head_size=m.head_size,
        rotary_dim=m.effective_rotary_dim,
        is_neox_style=m.is_neox_style,
        with_key=m.with_key,
        num_heads_q=m.num_heads_q,
        num_heads_k=m.num_heads_k,
        max_pos=r.max_pos,
        base=r.base,
        rope_scaling=rope_scaling(spec),
        cache_mode=r.cache_mode,
        cache_dtype=r.cache_dtype,
        num_tokens=i.num_tokens[0],
        positions=i.positions,
        position_offset=i.position_offset,
        dtype=i.dtype,
        seed=i.seed,
    )

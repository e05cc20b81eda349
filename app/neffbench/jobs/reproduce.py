"""``reproduce.py``: a standalone script (torch and torch_neuronx only) that rebuilds a job's NEFF with the same values."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import neffbench
from neffbench.jobs.compiler_command import base_args, equivalent_command, job_compiler_args, shell_line
from neffbench.spec import CompileSpec, spec_hash

SCRIPT_NAME = "reproduce.py"
_OUT = "OUTPUT_DIR"


def _kernel_source() -> str:
    """rope.py as it ran, without its docstring and ``__future__`` import (the script has its own)."""
    text = (Path(neffbench.__file__).parent / "kernels" / "rope.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    first = tree.body[0]
    lines = text.splitlines()
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant):
        lines = lines[first.end_lineno:]
    body = "\n".join(line for line in lines if line.strip() != "from __future__ import annotations")
    return body.strip() + "\n"


def _wrap_command(argv: list[str], width: int = 92) -> list[str]:
    """Shell lines that never separate an option from its value."""
    groups: list[list[str]] = []
    for tok in argv:
        if tok.startswith("-") or not groups:
            groups.append([tok])
        else:
            groups[-1].append(tok)
    lines: list[str] = []
    for group in groups:
        text = shell_line(group)
        if lines and len(lines[-1]) + 1 + len(text) <= width:
            lines[-1] += " " + text
        else:
            lines.append(text)
    return lines


def render(spec: CompileSpec, *, job_id: str, rope_scaling: dict[str, Any] | None, backend: str | None) -> str:
    """The script's text for a single-bucket spec."""
    m, r, i, c = spec.model, spec.rope, spec.inputs, spec.compiler
    n = i.num_tokens[0]
    args = job_compiler_args(spec, f"{_OUT}/compiler")
    wrapped = _wrap_command(equivalent_command(f"{_OUT}/compiler", args))
    ends = [" \\"] * (len(wrapped) - 1) + [""]
    command_comment = "\n".join(f"#     {line}{end}" for line, end in zip(wrapped, ends))
    note = ""
    if backend == "cpu-check":
        note = ("# The job that wrote this script used the cpu-check backend: it made no NEFF. This script\n"
                "# makes one, on a host with the Neuron toolchain.\n")
    return f'''#!/usr/bin/env python3
"""Rebuild the NEFF of neffbench job {job_id}: {spec.name}, {n} token(s), spec hash {spec_hash(spec)[:8]}.

Standalone: needs torch and torch-neuronx with neuronx-cc (from AWS's package index), not neffbench.

    python reproduce.py [OUTPUT_DIR]    # default: reproduce-out/ beside this file

Writes OUTPUT_DIR/model.pt (the traced module holding the NEFF), OUTPUT_DIR/compiler/ (HLO, log and
NEFF), and the example inputs and eager outputs as .pt files.
"""
{note}
# torch_neuronx.trace lowers the module to HLO in OUTPUT_DIR/compiler/model and then runs the
# equivalent of:
#
{command_comment}

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

TARGET = {c.target!r}
# "auto": trace with cpu_backend=True when this host has no Neuron device.
CPU_BACKEND_SETTING = {c.cpu_backend!r}
CPU_BACKEND = CPU_BACKEND_SETTING == "on" or (CPU_BACKEND_SETTING == "auto" and not glob.glob("/dev/neuron*"))
if CPU_BACKEND:
    # Must be set before torch_neuronx is imported, for hosts where platform detection fails.
    os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = TARGET

import torch
import torch_neuronx

# ---- the RoPE forward pass and its cos/sin table, exactly as neffbench {neffbench.__version__} traced them ----

{_kernel_source()}
# ---- this job's values ----

HEAD_SIZE = {m.head_size!r}
ROTARY_DIM = {m.effective_rotary_dim!r}
IS_NEOX_STYLE = {m.is_neox_style!r}
WITH_KEY = {m.with_key!r}
NUM_HEADS_Q = {m.num_heads_q!r}
NUM_HEADS_K = {m.num_heads_k!r}
MAX_POS = {r.max_pos!r}
BASE = {r.base!r}
ROPE_SCALING = {rope_scaling!r}
CACHE_MODE = {r.cache_mode!r}  # "input": the table is the last input; "buffer": inlined into the NEFF
CACHE_DTYPE = {r.cache_dtype!r}
NUM_TOKENS = {n!r}
POSITIONS = {i.positions!r}
POSITION_OFFSET = {i.position_offset!r}
DTYPE = {i.dtype!r}
SEED = {i.seed!r}
COMPILER_ARGS = {base_args(spec)!r}  # --logfile is added below


def build_cache() -> torch.Tensor:
    return build_cos_sin_cache(ROTARY_DIM, MAX_POS, BASE, ROPE_SCALING).to(TORCH_DTYPES[CACHE_DTYPE])


def example_inputs(cache: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Seeded inputs in the module's order: positions, query, [key], [cos_sin_cache]."""
    generator = torch.Generator().manual_seed(SEED)
    if POSITIONS == "range":
        positions = torch.arange(NUM_TOKENS, dtype=torch.int64)
    elif POSITIONS == "offset":
        positions = torch.arange(POSITION_OFFSET, POSITION_OFFSET + NUM_TOKENS, dtype=torch.int64)
    else:
        positions = torch.randint(0, MAX_POS, (NUM_TOKENS,), generator=generator, dtype=torch.int64)
    dtype = TORCH_DTYPES[DTYPE]
    query = torch.randn(NUM_TOKENS, NUM_HEADS_Q * HEAD_SIZE, generator=generator, dtype=torch.float32).to(dtype)
    out = [positions, query]
    if WITH_KEY:
        out.append(torch.randn(NUM_TOKENS, NUM_HEADS_K * HEAD_SIZE, generator=generator, dtype=torch.float32).to(dtype))
    if CACHE_MODE == "input":
        out.append(cache)
    return tuple(out)


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent / "reproduce-out"
    compiler_dir = out / "compiler"
    compiler_dir.mkdir(parents=True, exist_ok=True)
    cache = build_cache()
    module = RopeModule(HEAD_SIZE, ROTARY_DIM, IS_NEOX_STYLE, with_key=WITH_KEY,
                        cache=cache if CACHE_MODE == "buffer" else None)
    inputs = example_inputs(cache)
    with torch.no_grad():
        reference = module(*inputs)
    torch.save(inputs, out / "example_inputs.pt")
    torch.save(reference, out / "reference_outputs.pt")
    args = COMPILER_ARGS + ["--logfile", str(compiler_dir / "log-neuron-cc.txt")]
    traced = torch_neuronx.trace(module, inputs, compiler_workdir=str(compiler_dir), compiler_args=args,
                                 cpu_backend=CPU_BACKEND)
    torch.jit.save(traced, out / "model.pt")
    neffs = sorted(compiler_dir.glob("**/*.neff"))
    for neff in neffs:
        print(f"NEFF {{neff}} ({{neff.stat().st_size}} bytes)")
    if not neffs:
        print(f"no NEFF found under {{compiler_dir}}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''


def write(job_dir: Path, spec: CompileSpec, *, rope_scaling: dict[str, Any] | None, backend: str | None) -> Path:
    path = Path(job_dir) / SCRIPT_NAME
    path.write_text(render(spec, job_id=Path(job_dir).name, rope_scaling=rope_scaling, backend=backend),
                    encoding="utf-8")
    path.chmod(0o755)
    return path

"""reproduce.py: standalone (torch and torch_neuronx only) and rebuilding the NEFF with the job's values."""

from __future__ import annotations

import ast
import dataclasses
import os
import subprocess
import sys

import pytest
import torch

from neffbench.jobs import reproduce
from neffbench.kernels.rope.build import build_module, example_inputs
from neffbench.kernels.rope.kernel import KERNEL
from neffbench.presets import load_preset
from tests.fakes import fake_env

SEED = load_preset("seed")
# Every value that reaches the inputs or the table away from its default.
FANCY = dataclasses.replace(
    load_preset("llama3.1-8b"),
    model=dataclasses.replace(
        load_preset("llama3.1-8b").model, num_heads_q=4, num_heads_k=2, with_key=False, is_neox_style=False
    ),
    rope=dataclasses.replace(load_preset("llama3.1-8b").rope, max_pos=64, cache_mode="buffer"),
    inputs=dataclasses.replace(
        load_preset("llama3.1-8b").inputs,
        num_tokens=(3,),
        positions="offset",
        position_offset=5,
        dtype="bfloat16",
        seed=7,
    ),
)


def _script(spec, backend="neuron"):
    return reproduce.render(spec, job_id="job-1", backend=backend, built=KERNEL.build(spec))


def test_script_is_python_that_imports_no_neffbench():
    tree = ast.parse(_script(SEED))
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "neffbench" not in imported
    assert {"torch", "torch_neuronx"} <= imported
    assert imported <= {
        "torch",
        "torch_neuronx",
        "glob",
        "hashlib",
        "os",
        "sys",
        "pathlib",
        "math",
        "dataclasses",
        "typing",
        "__future__",
    }


def test_script_names_the_equivalent_compiler_command():
    text = _script(SEED)
    assert "#     neuronx-cc compile OUTPUT_DIR/compiler/model --framework XLA --target trn1" in text
    comment = " ".join(line[1:].strip().rstrip("\\") for line in text.splitlines() if line.startswith("#  "))
    for token in (
        "--target trn2",
        "--lnc 2",
        "-O2",
        "--verbose info",
        "--logfile OUTPUT_DIR/compiler/log-neuron-cc.txt",
    ):
        assert token in comment, token
    assert "made no NEFF" in _script(SEED, backend="cpu-check")
    assert "made no NEFF" not in text


@pytest.mark.slow
def test_script_rebuilds_with_the_same_values(tmp_path):
    procs = {}
    env = {**os.environ, **fake_env("success")}
    for name, spec in (("seed", SEED), ("fancy", FANCY)):
        path = tmp_path / f"{name}.py"
        path.write_text(_script(spec))
        procs[name] = subprocess.Popen(
            [sys.executable, str(path), str(tmp_path / name)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    for name, spec in (("seed", SEED), ("fancy", FANCY)):
        out, _ = procs[name].communicate(timeout=120)
        assert procs[name].returncode == 0, out
        assert "NEFF " in out
        assert list((tmp_path / name / "compiler").glob("**/*.neff"))
        assert (tmp_path / name / "model.pt").is_file()
        inputs = torch.load(tmp_path / name / "example_inputs.pt")
        expected = example_inputs(spec)
        assert len(inputs) == len(expected)
        for got, want in zip(inputs, expected):
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want, rtol=0, atol=0)
        reference = torch.load(tmp_path / name / "reference_outputs.pt")
        with torch.no_grad():
            want_out = build_module(spec)(*expected)
        want_out = want_out if isinstance(want_out, tuple) else (want_out,)
        reference = reference if isinstance(reference, tuple) else (reference,)
        for got, want in zip(reference, want_out):
            torch.testing.assert_close(got, want, rtol=0, atol=0)

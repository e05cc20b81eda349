"""Job directories written before kernels existed (no ``kernel``, no ``bucket`` in job.json, no ``kernel``
in spec.toml) still list, summarise, re-open and mark as interrupted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from neffbench.jobs.summary import bucket_table, summary_lines
from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec
from neffbench.spec import from_dict, load, spec_hash
from neffbench.views.job import bucket_of
from tests.neff_factory import build_neff

REPO = Path(__file__).resolve().parents[1]
# spec.toml as the workbench wrote it before kernels: no kernel key.
OLD_SPEC = """name = "seed"
description = ""
workdir = "neffbench-workdir"

[model]
head_size = 64
rotary_dim = 64
partial_rotary_factor = 1.0
num_heads_q = 32
num_heads_k = 8
is_neox_style = true
with_key = true

[rope]
max_pos = 128
base = 500000.0
rope_type = "default"
cache_mode = "input"
cache_dtype = "float32"

[inputs]
num_tokens = [1]
positions = "random"
dtype = "float32"
seed = 0

[compiler]
target = "trn2"
lnc = 2
"""


def _old_job(root: Path, name: str, outcome: str = "succeeded") -> Path:
    spec = load_text(OLD_SPEC)
    job = root / f"seed-20251101T000000Z-{spec_hash(spec)[:8]}{name}"
    (job / "compiler").mkdir(parents=True)
    (job / "spec.toml").write_text(OLD_SPEC)
    neff = job / "compiler" / "graph.neff"
    build_neff(neff, inputs={"input0": ("int64", [1])}, outputs={"output0": ("float32", [1, 2048])})
    from neffbench.spec.files import tomllib  # the standard library's from 3.11, tomli before

    record = {
        "schema_version": 1,
        "job_id": job.name,
        "name": "seed",
        "num_tokens": 1,
        "spec": tomllib.loads(OLD_SPEC),
        "spec_hash": spec_hash(spec),
        "backend": "neuron",
        "outcome": outcome,
        "reason": None,
        "created": "2025-11-01T00:00:00.000Z",
        "duration_s": 12.5,
        "neffs": [{"path": "compiler/graph.neff", "size": neff.stat().st_size, "sha256": "0" * 64}],
        "metrics": {"compile_s": 10.0},
        "numerics": None,
        "warnings": [],
        "versions": {},
        "pid": 999999999,
        "pid_start": None,
        "host": __import__("platform").node(),
    }
    (job / "job.json").write_text(json.dumps(record))
    return job


def load_text(text: str):
    from neffbench.spec import loads_toml

    return loads_toml(text)


def test_old_spec_files_are_rope_specs_with_the_same_hash(tmp_path):
    from neffbench.spec.files import tomllib

    spec = load_text(OLD_SPEC)
    assert type(spec) is CompileSpec
    # The hash (and so job directory names and "last similar job") did not change with kernels.
    assert spec_hash(spec) == spec_hash(from_dict(json.loads(json.dumps(tomllib.loads(OLD_SPEC)))))
    assert spec_hash(spec) == "7696da23" + spec_hash(spec)[8:]


def test_old_records_summarise_and_list(tmp_path, neffbench_in_process):
    job = _old_job(tmp_path, "")
    record = json.loads((job / "job.json").read_text())
    assert bucket_of(record) == {"num_tokens": 1}
    assert bucket_table([record])[0].startswith("num_tokens  outcome")
    assert any("NEFF compiler/graph.neff" in line for line in summary_lines(record))
    listing = neffbench_in_process("list", tmp_path, "--json")
    assert listing.returncode == 0, listing.stderr
    (row,) = json.loads(listing.stdout)
    assert job.name in json.dumps(row) and "succeeded" in json.dumps(row)
    assert load(job / "spec.toml") == from_dict(record["spec"])


def test_an_old_running_job_is_marked_interrupted(tmp_path):
    from neffbench.jobs import mark_interrupted, read_record

    job = _old_job(tmp_path, "-1", outcome="running")
    assert mark_interrupted(tmp_path) == [job]
    assert read_record(job)["outcome"] == "interrupted"
    shutil.rmtree(job)

"""A job explained by its record as well as its log: a cpu-check job (no compiler output at all) by its outcome
and cause, a compile by the compiler's first error, a cache hit by where it was served from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from neffbench.jobs.explained import explain_job, job_dir_of
from tests.cli import neffbench
from tests.fakes import fake_env

pytestmark = [pytest.mark.slow]
BAD_MODULE = """import torch
class Bad(torch.nn.Module):
    def forward(self, x):
        raise ValueError("shapes do not line up: 3 vs 4")
"""


def _compile(root: Path, *args: str, env: dict | None = None) -> list[Path]:
    before = set(root.glob("*/job.json"))
    neffbench("compile", *args, "--workdir", str(root), cwd=root, env=env)
    return sorted(p.parent for p in set(root.glob("*/job.json")) - before)


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("explained")
    (root / "bad.py").write_text(BAD_MODULE)
    (ok,) = _compile(root, "seed", "--backend", "cpu-check")
    (hit,) = _compile(root, "seed", "--backend", "cpu-check")
    (raised,) = _compile(root, "bad.py:Bad", "--input", "x:f32[2,3]", "--backend", "cpu-check")
    (nla,) = _compile(root, "seed", "--backend", "neuron", env=fake_env("compile-error"))
    return {"ok": ok, "hit": hit, "raised": raised, "nla": nla}


def test_a_succeeded_cpu_check_job_is_explained_by_its_outcome_not_a_missing_compiler(jobs):
    data = explain_job(jobs["ok"]).to_json()
    assert data["outcome"] == "passed" and data["runs_compiler"] is False
    assert data["headline"].startswith("Succeeded: cpu-check checked the module on the CPU")
    assert "No outcome" not in data["headline"]
    facts = dict(data["facts"])
    assert facts["Job"].startswith(f"{jobs['ok'].name}: succeeded in ")
    assert facts["Backend"].startswith("cpu-check: ") and "match" in facts["Numerics"]
    assert facts["Compiler"].startswith("none ran (cpu-check)")
    assert data["job_id"] == jobs["ok"].name and data["lines"] > 0  # the log's explanation is there too


def test_a_failed_cpu_check_job_says_what_raised_where(jobs):
    data = explain_job(jobs["raised"]).to_json()
    assert data["outcome"] == "failed"
    assert data["headline"].startswith("Failed: calling Bad.forward raised ValueError at bad.py:4: shapes do not")
    facts = dict(data["facts"])
    assert "shapes do not line up" in facts["Cause"] and facts["NEFF"] == "none: cpu-check makes none"
    assert data["first_error"]["message"] == "ValueError: shapes do not line up: 3 vs 4"


def test_a_compile_that_failed_is_explained_by_the_compilers_first_error(jobs):
    data = explain_job(jobs["nla"]).to_json()
    assert data["outcome"] == "failed" and data["runs_compiler"] is True
    assert data["headline"].startswith("Failed") and "NLA001" in data["headline"]
    assert data["status"] == "FAIL" and data["first_error"]["code"] == "NLA001"
    assert "Compiler" not in dict(data["facts"])


def test_a_cache_hit_says_where_it_was_served_from(jobs):
    data = explain_job(jobs["hit"]).to_json()
    assert data["headline"].startswith(f"Succeeded, served from the cache of {jobs['ok']}")
    assert "no worker ran" in dict(data["facts"])["Cache"]


def test_an_unreadable_record_or_a_missing_log_is_said_so(jobs, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(jobs["nla"], broken)
    (broken / "job.json").write_text("{not json")
    data = explain_job(broken).to_json()
    assert "NLA001" in data["headline"]  # the log alone still explains the compile
    assert dict(data["facts"])["Record"].startswith("cannot be read: ")
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "job.json").write_text((jobs["raised"] / "job.json").read_text())
    data = explain_job(bare).to_json()
    assert data["no_log"] is True and data["headline"].startswith("Failed: calling Bad.forward raised")
    assert data["record_error"]["message"] == "ValueError: shapes do not line up: 3 vs 4"
    assert json.loads((bare / "job.json").read_text())["outcome"] == "failed"


def test_what_counts_as_a_job_directory(jobs, tmp_path):
    assert job_dir_of(jobs["ok"]) == jobs["ok"]
    assert job_dir_of(jobs["ok"] / "job.log") == jobs["ok"]
    loose = tmp_path / "job.log"
    loose.write_text("Compiler status PASS\n")
    assert job_dir_of(loose) is None and job_dir_of(tmp_path) is None


def test_neffbench_explain_of_a_job_directory_explains_the_job(jobs, neffbench_in_process):
    """As the window does: a cpu-check job by its outcome (no "No outcome in this output"), a failed compile by the
    compiler's first error as well; JSON carries the job's headline and facts."""
    ok = neffbench_in_process("explain", str(jobs["ok"]))
    assert ok.returncode == 0, ok.stderr
    assert "Succeeded: cpu-check checked the module" in ok.stdout and "No outcome" not in ok.stdout
    assert "Compiler: none ran (cpu-check)" in ok.stdout
    raised = neffbench_in_process("explain", str(jobs["raised"] / "job.log")).stdout
    assert "Failed" in raised and "shapes do not line up" in raised
    nla = neffbench_in_process("explain", str(jobs["nla"])).stdout
    assert "NLA001" in nla and "first error (line" in nla
    data = json.loads(neffbench_in_process("explain", str(jobs["ok"]), "--json").stdout)
    assert data["job_id"] == jobs["ok"].name and data["outcome"] == "passed" and data["facts"]

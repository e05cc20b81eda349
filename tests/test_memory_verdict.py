"""The memory verdict: a compile whose estimate passes the free memory warns, one past all of it is refused (unless
allowed), in the core and in ``check``, ``compile`` and ``sweep``."""

from __future__ import annotations

import dataclasses

import pytest

from neffbench.jobs import memory_verdict
from neffbench.jobs.memory_estimate import Estimate
from neffbench.kernels.rope.params import RopeCompileSpec
from neffbench.sweeps import plan
from tests.cli import neffbench

GiB = 2**30

# 1M tokens of 2048 heads of 1024 floats: a kernel estimate of about 128 TiB, beyond any machine.
HUGE = """kernel = "rope"
name = "huge"
[model]
head_size = 1024
num_heads_q = 1024
num_heads_k = 1024
[inputs]
num_tokens = [1, 1048576]
"""


@pytest.fixture
def small_machine(monkeypatch):
    """A machine with 4 GiB in all, 2 GiB of it free."""
    monkeypatch.setattr(memory_verdict, "total_bytes", lambda: 4 * GiB)
    monkeypatch.setattr(memory_verdict, "available_bytes", lambda: 2 * GiB)


def test_fits_warns_past_free_and_blocks_past_total():
    ok = memory_verdict.judge(Estimate(1 * GiB, "kernel"), free=2 * GiB, total=4 * GiB)
    assert ok.level == "ok" and ok.message == ""
    warn = memory_verdict.judge(Estimate(3 * GiB, "kernel"), free=2 * GiB, total=4 * GiB)
    assert warn.level == "warn" and not warn.refused(False)
    assert "3.0 GiB" in warn.message and "2.0 GiB free" in warn.message
    block = memory_verdict.judge(Estimate(5 * GiB, "user"), where="at num_tokens=8", free=2 * GiB, total=4 * GiB)
    assert block.level == "block" and block.refused(False) and not block.refused(True)
    assert "5.0 GiB (as given, at num_tokens=8)" in block.message and "4.0 GiB" in block.message
    assert memory_verdict.OVERRIDE_FLAG in block.sentence()
    assert 'tick "Go"' in block.sentence('tick "Go"')


def test_a_guess_by_backend_never_blocks():
    guess = memory_verdict.judge(Estimate(5 * GiB, "default"), free=2 * GiB, total=4 * GiB)
    assert guess.level == "warn"


def test_the_largest_bucket_decides_and_is_named(small_machine):
    spec = RopeCompileSpec()
    spec = dataclasses.replace(
        spec,
        model=dataclasses.replace(spec.model, head_size=1024, num_heads_q=512, num_heads_k=512),
        inputs=dataclasses.replace(spec.inputs, num_tokens=(1, 4096)),
    )
    verdict = memory_verdict.spec_verdict(spec, "cpu-check")
    assert verdict.level == "block" and "at num_tokens=4096" in verdict.message
    assert memory_verdict.spec_verdict(RopeCompileSpec(), "cpu-check").level == "ok"


def test_a_sweeps_largest_valid_point_decides(small_machine):
    spec = RopeCompileSpec()
    planned = plan(
        spec, ["model.head_size=64,1024", "model.num_heads_q=1024", "inputs.num_tokens=4096"], backend="cpu-check"
    )
    verdict = memory_verdict.plan_verdict(planned)
    assert verdict.level == "block" and "head_size=1024" in verdict.message


def _huge(tmp_path):
    path = tmp_path / "huge.toml"
    path.write_text(HUGE)
    return path


def test_check_refuses_a_spec_beyond_the_machine_unless_allowed(tmp_path, neffbench_in_process):
    path = _huge(tmp_path)
    refused = neffbench_in_process("check", str(path), "--backend", "cpu-check")
    assert refused.returncode == 2, refused.stderr
    assert "error: memory: One compile may take up to" in refused.stderr
    assert "at num_tokens=1048576" in refused.stderr and "--allow-over-memory" in refused.stderr
    allowed = neffbench_in_process("check", str(path), "--backend", "cpu-check", "--allow-over-memory")
    assert allowed.returncode == 0, allowed.stderr
    assert "warning: memory:" in allowed.stderr and "Allowed by --allow-over-memory" in allowed.stderr


def test_compile_and_sweep_start_nothing_beyond_the_machine(tmp_path):
    path, workdir = _huge(tmp_path), tmp_path / "wd"
    done = neffbench("compile", str(path), "--backend", "cpu-check", "--workdir", str(workdir))
    assert done.returncode == 2 and "error: memory:" in done.stderr and "nothing was started" in done.stderr
    assert not any(workdir.glob("huge-*"))
    swept = neffbench(
        "sweep", str(path), "--over", "compiler.optlevel=1,2", "--backend", "cpu-check", "--workdir", str(workdir)
    )
    assert swept.returncode == 2 and "error: memory:" in swept.stderr and "nothing was started" in swept.stderr
    assert not (workdir / "sweeps").exists() or not any((workdir / "sweeps").iterdir())

"""``neffbench explain``: any compiler output a user has, explained; the CLI's failure summary shows code help."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neffbench.cli.main import main
from tests.explain_agreement import check_job
from tests.fakes import fake_env

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "data" / "compiler_logs"
KEYS = ("status", "exit_code", "first_error", "errors", "codes", "passes", "compiler_version", "command")


def _compile(tmp_path, monkeypatch, scenario: str) -> Path:
    for key, value in fake_env(scenario).items():
        monkeypatch.setenv(key, value)
    main(["compile", "seed", "--workdir", str(tmp_path / "wd")])
    (job,) = [p.parent for p in (tmp_path / "wd").glob("*/job.json")]
    return job


@pytest.mark.slow
def test_a_failed_job_is_explained_as_its_record_says(tmp_path, monkeypatch, capsys):
    job = _compile(tmp_path, monkeypatch, "compile-error")
    summary = capsys.readouterr().out
    # The compile's own failure summary names the code's meaning and docs page.
    assert "first error: [NLA001] Unhandled exception" in summary
    assert "Unhandled exception inside the compiler" in summary and "docs: https://awsdocs-neuron" in summary
    assert main(["explain", "--json", str(job)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(KEYS) <= set(got)
    assert (got["status"], got["exit_code"], got["codes"]) == ("FAIL", 1, ["NLA001"])
    assert got["first_error"]["code"] == "NLA001" and got["first_error"]["level"] == "USER"
    assert got["passes"] == [{"name": "Frontend", "seconds": 0.08}] and got["unfinished_passes"] == ["WalrusDriver"]
    assert got["compiler_version"].endswith("+fake") and got["command"].startswith("neuronx-cc compile ")
    assert got["exit_meaning"] == "the compiler reported an error"
    assert got["code_help"]["NLA001"]["known"] is True
    check_job(job)
    assert main(["explain", str(job / "job.log")]) == 0
    text = capsys.readouterr().out
    assert "Failed (Compiler status FAIL; exit 1 (the compiler reported an error)): [NLA001]" in text
    assert "first error (line" in text and "  >" in text  # the lines around it, the error's marked
    assert "Frontend" in text and "(never finished: the compile stopped in it)" in text
    assert "docs: https://awsdocs-neuron.readthedocs-hosted.com/" in text


@pytest.mark.slow
@pytest.mark.parametrize("scenario, exit_code", [("oom", -9), ("success", None), ("python-error", None)])
def test_other_outcomes_agree_with_their_records(tmp_path, monkeypatch, capsys, scenario, exit_code):
    job = _compile(tmp_path, monkeypatch, scenario)
    capsys.readouterr()
    main(["explain", "--json", str(job)])
    got = json.loads(capsys.readouterr().out)
    assert got["exit_code"] == exit_code
    if scenario == "oom":
        assert "out-of-memory killer" in got["exit_meaning"]
    if scenario == "success":
        assert got["status"] == "PASS" and got["outcome"] == "passed" and got["first_error"] is None
    check_job(job)


def test_standard_input_and_a_log_with_several_compiles(neffbench_in_process):
    log = (CORPUS / "multi_compile_training.log").read_bytes()
    done = neffbench_in_process("explain", "--json", "-", stdin=log)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["source"] == "<stdin>"
    assert len(got["compiles"]) > 1
    assert got == {**got, **json.loads((CORPUS / "multi_compile_training.expected.json").read_text())}


def test_an_unknown_code_says_so_with_the_search_url(tmp_path, capsys):
    log = tmp_path / "log.txt"
    log.write_text("2025-01-01T00:00:00Z ERROR 1 [root]: [NCC_EZZZ999] something new\nCompiler status FAIL\n")
    assert main(["explain", str(log)]) == 0
    text = capsys.readouterr().out
    assert "NCC_EZZZ999: Unknown error code NCC_EZZZ999" in text
    assert "search.html?q=NCC_EZZZ999" in text


def test_what_cannot_be_read_is_one_sentence(tmp_path, capsys):
    assert main(["explain", str(tmp_path / "missing.log")]) == 1
    assert "missing.log: no such file" in capsys.readouterr().err
    assert main(["explain", str(tmp_path)]) == 1
    assert "is a directory without a job.log or log-neuron-cc.txt" in capsys.readouterr().err


def test_output_that_says_nothing_is_unknown(tmp_path, capsys):
    log = tmp_path / "empty.log"
    log.write_text("hello\n")
    main(["explain", "--json", str(log)])
    got = json.loads(capsys.readouterr().out)
    assert got["outcome"] == "unknown" and got["status"] is None and got["errors"] == []

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


def test_the_line_above_an_internal_error_is_marked_as_its_likely_root_cause(capsys):
    """``HLO import failed`` (a WARNING, so no error by the rules) just above the banner of an internal error whose
    first error is NLA001: the explanation names it, with its line."""
    assert main(["explain", str(CORPUS / "nla001_after_import_failed.log")]) == 0
    text = capsys.readouterr().out
    marked = "likely root cause (line 4, just above the internal compiler error):\n  HLO import failed for custom-call"
    assert marked in text and "first error (line 9, USER):" in text
    main(["explain", "--json", str(CORPUS / "nla001_after_import_failed.log")])
    assert json.loads(capsys.readouterr().out)["cause_above_internal_error"]["line"] == 4
    main(["explain", "--json", str(CORPUS / "nla001_user_code.log")])  # the line above its banner states no failure
    assert json.loads(capsys.readouterr().out)["cause_above_internal_error"] is None


def test_the_errors_after_the_first_are_counted_and_shown_on_asking(capsys, neffbench_in_process):
    log = str(CORPUS / "multi_compile_training.log")
    errors = json.loads((CORPUS / "multi_compile_training.expected.json").read_text())["errors"]
    assert main(["explain", log]) == 0
    text = capsys.readouterr().out
    assert f"other errors: {len(errors) - 1} (lines " in text and "--all-errors shows each" in text
    assert main(["explain", "--all-errors", log]) == 0
    every = capsys.readouterr().out
    assert f"other errors ({len(errors) - 1}):" in every and "--all-errors shows each" not in every
    for error in errors[1:]:
        assert f"line {error['line']}" in every and error["message"].split("\n")[0] in every
    assert "--all-errors" in " ".join(neffbench_in_process("explain", "--help").stdout.split())


def test_a_command_with_two_targets_is_flagged_with_the_one_used(tmp_path, capsys):
    log = tmp_path / "two.log"
    log.write_text(
        "2025-01-01T00:00:00Z INFO 7 [root]: /opt/bin/neuronx-cc compile model --framework XLA --target trn1 "
        "--output graph.neff --verbose info --target inf2\nCompiler status PASS\n"
    )
    assert main(["explain", str(log)]) == 0
    text = capsys.readouterr().out
    assert (
        "note: the command gives --target trn1 and --target inf2: neuronx-cc uses the right-most, --target inf2" in text
    )
    main(["explain", "--json", str(log)])
    assert json.loads(capsys.readouterr().out)["command_notes"] == [
        "the command gives --target trn1 and --target inf2: neuronx-cc uses the right-most, --target inf2"
    ]
    log.write_text(log.read_text().replace("--target inf2", "--target trn1"))  # repeated, not competing
    main(["explain", "--json", str(log)])
    assert json.loads(capsys.readouterr().out)["command_notes"] == []


def test_a_cached_jobs_compiler_version_comes_from_its_record(tmp_path, capsys):
    """A cache hit's job.log holds no compiler output: the version and command are the record's, and said so."""
    job = tmp_path / "seed-cached"
    job.mkdir()
    command = ["neuronx-cc", "compile", "model", "--framework", "XLA", "--target", "trn1", "--output", "graph.neff"]
    record = {
        "schema_version": 1,
        "job_id": job.name,
        "outcome": "succeeded",
        "backend": "neuron",
        "cache": {"hit": True, "from": "wd/seed-first"},
        "versions": {"neuronx_cc": "2.21.33363.0"},
        "compiler": {"version_from_log": "2.21.33363.0", "status": "PASS"},
        "compiler_command": {"actual": command},
    }
    (job / "job.json").write_text(json.dumps(record))
    (job / "job.log").write_text("neffbench: served from the cache: an identical compile already succeeded\n")
    assert main(["explain", str(job)]) == 0
    text = capsys.readouterr().out
    assert "compiler version: 2.21.33363.0 (from the job's record: this output does not say)" in text
    assert "served from the cache of wd/seed-first" in text.splitlines()[0] and "(not in this output)" not in text
    main(["explain", "--json", str(job)])
    data = json.loads(capsys.readouterr().out)
    assert data["compiler_version"] == "2.21.33363.0" and data["compiler_version_from"] == "job.json"
    assert data["command"] == " ".join(command) and data["command_from"] == "job.json"

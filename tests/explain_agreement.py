"""``neffbench explain`` on a job directory must say what the job's own record says (issue: logs as they are).

``check_job`` compares the explanation of a job's job.log with its job.json; the suite's conftest runs
it on every job directory a test leaves in its ``tmp_path``.
"""

from __future__ import annotations

import json
from pathlib import Path

from neffbench.compilerlog.commands import command_from_text
from neffbench.compilerlog.explain import explain


def check_job(job_dir: Path) -> None:
    try:
        record = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # a test's deliberately broken record
    if (
        not isinstance(record, dict)
        or not (job_dir / "job.log").is_file()
        or record.get("outcome") in (None, "running")
    ):
        return
    if not {"schema_version", "stages", "worker_pid"} <= set(record):
        return  # written by a test to stand for an older or broken job, not made by the job runner
    got = explain(job_dir).to_json()
    where = f"{job_dir.name}: explain disagrees with job.json on"
    compiler = record.get("compiler")
    if (record.get("cache") or {}).get("hit"):
        compiler = None  # a hit's record carries the compile it reuses; its own log only says so
    if compiler:
        assert got["status"] == compiler.get("status"), f"{where} status"
        assert got["exit_code"] == compiler.get("exit_code"), f"{where} exit_code"
        assert got["codes"] == compiler.get("error_codes"), f"{where} codes"
        finished = [
            {"name": p["name"], "seconds": p["duration_s"]}
            for p in compiler.get("passes", [])
            if p.get("duration_s") is not None
        ]
        assert got["passes"] == finished, f"{where} passes"
        assert got["compiler_version"] == compiler.get("version_from_log"), f"{where} compiler_version"
        command = command_from_text(got["command"]) if got["command"] else None
        assert command == compiler.get("command_from_log"), f"{where} command"
    if record.get("outcome") != "succeeded":
        error, first = record.get("error"), got["first_error"]
        if error is None:
            assert first is None or compiler is None, f"{where} first_error (job.json has none)"
        else:
            assert first is not None, f"{where} first_error (explain found none)"
            assert (first["code"], first["message"]) == (error.get("code"), error.get("message")), (
                f"{where} first_error"
            )
            if "line_number" in error:
                assert first["line"] == error["line_number"], f"{where} the first error's line"


def check_jobs_below(root: Path) -> int:
    checked = 0
    for record in root.rglob("job.json"):
        check_job(record.parent)
        checked += 1
    return checked

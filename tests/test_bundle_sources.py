"""A module job's bug report carries the user's own code: the source closure job.json records, copied unchanged
when it still holds what the job compiled, and every file left out named with the reason."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from neffbench.jobs.bundle import make_bundle
from tests.cli import neffbench

pytestmark = pytest.mark.slow

MODEL = """
import json
from pathlib import Path

from torch import nn

from helpers import width


def make():
    config = json.loads((Path(__file__).parent / "config.json").read_text())
    return nn.Linear(width(), config["out"])
"""


@pytest.fixture(scope="module")
def module_job(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bundle-sources")
    project = root / "project"
    project.mkdir()
    (project / "model.py").write_text(MODEL, encoding="utf-8")
    (project / "helpers.py").write_text("def width():\n    return 4\n", encoding="utf-8")
    (project / "config.json").write_text('{"out": 3}', encoding="utf-8")
    (project / "weights.bin").write_bytes(b"\0" * 8)  # never read by the build: not in the closure
    work = root / "work"
    proc = neffbench(
        "compile",
        f"{project / 'model.py'}:make",
        "--input",
        "input:f32[2,4]",
        "--backend",
        "cpu-check",
        "--workdir",
        str(work),
        cwd=root,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [job_dir] = [p.parent for p in work.glob("*/job.json")]
    return job_dir


def _zip(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name.split("/", 1)[1]: zf.read(name) for name in zf.namelist()}


def test_the_source_closure_is_bundled_unchanged_and_listed(module_job, tmp_path):
    record = json.loads((module_job / "job.json").read_text())
    files = {Path(f["path"]).name: f for f in record["sources"]["files"]}
    assert {"model.py", "helpers.py", "config.json"} <= set(files)
    result = make_bundle(module_job, tmp_path / "report.zip")
    members = _zip(result.path)
    for name in ("model.py", "helpers.py"):
        data = members[f"sources/{name}"]
        assert hashlib.sha256(data).hexdigest() == files[name]["sha256"]  # byte for byte what was compiled
    assert members["sources/data/config.json"] == b'{"out": 3}'
    readme = members["README.txt"].decode()
    assert "sources/model.py" in readme and "your source file the build imported, copied unchanged" in readme
    assert not any("sources/" in p for p, _s, _w in result.left_out)


def test_a_source_changed_since_the_job_is_left_out_with_why(module_job, tmp_path):
    record = json.loads((module_job / "job.json").read_text())
    helpers = next(Path(f["path"]) for f in record["sources"]["files"] if f["path"].endswith("helpers.py"))
    before = helpers.read_text()
    helpers.write_text("def width():\n    return 8\n")
    try:
        result = make_bundle(module_job, tmp_path / "report.zip")
    finally:
        helpers.write_text(before)
    members = _zip(result.path)
    assert "sources/helpers.py" not in members and "sources/model.py" in members
    [(path, _size, why)] = [o for o in result.left_out if o[0].endswith("helpers.py")]
    assert why.startswith("your source file: it changed since the job compiled it")
    readme = members["README.txt"].decode()
    assert "Left out" in readme and f"{path}" in readme.replace("~", str(Path.home())) and "changed since" in readme


def test_the_bug_report_dialog_says_the_users_code_is_in(module_job, tmp_path):
    from neffbench.gui.shell.bug_report import bundle_summary

    text = bundle_summary(make_bundle(module_job, tmp_path / "report.zip"))
    assert "It includes 3 files of your own (the job's source closure), unchanged." in text

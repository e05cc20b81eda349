"""``neffbench inspect``, ``list`` and ``diff`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from neffbench.cli.main import main
from tests.neff_factory import build_neff, write_job

IO = {"inputs": {"x": ("float16", (4, 8))}, "outputs": {"output0": ("float16", (4, 8))}}


def test_inspect_summary(sample_neff: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(sample_neff)]) == 0
    out = capsys.readouterr().out
    for text in (
        "file.neff",
        "2.23.6484.0",
        "cayman",
        "LNC        2",
        "62,464 bytes",
        "72 members",
        "5100752fb155fff1c3c2a5f9d68aa13373b049f838057cf54a125e26856742de",
    ):
        assert text in out
    assert any(line.split() == ["x", "float16", "[128,256]", "65,536"] for line in out.splitlines())
    assert any(line.split() == ["output0", "float16", "[128,128]", "32,768"] for line in out.splitlines())
    assert "sg00/def.json" not in out


def test_inspect_json_and_members(sample_neff: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(sample_neff), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["header"]["neff_version"] == [2, 0] and doc["header"]["lnc_size"] == 2
    assert {"pkg_version", "name", "uuid", "num_tpb", "feature_bits"} <= set(doc["header"])
    assert (doc["compiler_version"], doc["target"], doc["member_count"]) == ("2.23.6484.0", "cayman", 72)
    assert doc["subgraphs"] == ["sg00", "sg01"] and "members" not in doc
    assert [{k: t[k] for k in ("name", "dtype", "shape")} for t in doc["inputs"]] == [
        {"name": "x", "dtype": "float16", "shape": [128, 256]},
        {"name": "y", "dtype": "float16", "shape": [256, 128]},
    ]
    assert main(["inspect", str(sample_neff), "--json", "--members"]) == 0
    assert len(json.loads(capsys.readouterr().out)["members"]) == 72
    assert main(["inspect", str(sample_neff), "--members"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ["sg01/value_sg0000_identity_82_CRSM.npy", "32,896", "file"] in [line.split() for line in lines]


def test_inspect_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.neff"
    bad.write_bytes(b"\0" * 2000)
    assert main(["inspect", str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (
        captured.err.strip() == f"{bad}: header_size at offset 8 is 0, not 1024: not a NEFF, or a layout this "
        "reader does not know"
    )


@pytest.mark.slow
def test_inspect_as_a_child_process(sample_neff: Path, tmp_path: Path) -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "neffbench", "inspect", "--json", str(sample_neff)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0 and json.loads(ok.stdout)["outputs"][0]["name"] == "output0"
    bad = subprocess.run(
        [sys.executable, "-m", "neffbench", "inspect", str(tmp_path / "none.neff")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1 and "cannot read the file" in bad.stderr and bad.stdout == ""


def test_list_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = tmp_path / "rope-20260102T030405Z-1a2b3c4d"
    neff = build_neff(job / "compiler" / "graph.neff", **IO, name="ropeA")
    write_job(job, outcome="succeeded", neffs=[neff])
    (tmp_path / "junk.neff").write_bytes(b"short")
    assert main(["list", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rope-20260102T030405Z-1a2b3c4d/compiler/graph.neff" in out and "succeeded" in out
    assert "x float16[4,8] -> output0 float16[4,8]" in out and "ropeA" in out
    assert "shorter than the 1024-byte NEFF header" in out and "2 NEFF files, 1 unreadable" in out
    assert main(["list", str(tmp_path), "--json"]) == 0
    rows = {r["path"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["rope-20260102T030405Z-1a2b3c4d/compiler/graph.neff"]["job"]["outcome"] == "succeeded"
    assert rows["junk.neff"]["error"]
    assert main(["list", str(tmp_path), "--header-only"]) == 0
    assert "ropeA" in capsys.readouterr().out


def test_list_bad_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", str(tmp_path / "nope")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_diff_neffs_and_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job_a, job_b = tmp_path / "rope-a", tmp_path / "rope-b"
    a = build_neff(job_a / "compiler" / "graph.neff", **IO, lnc_size=1)
    b = build_neff(
        job_b / "compiler" / "graph.neff",
        inputs={"x": ("bfloat16", (4, 8))},
        outputs=IO["outputs"],
        lnc_size=2,
        compiler_version="2.24.1.0+ffff",
    )
    write_job(
        job_a,
        spec={"name": "rope", "model": {"head_size": 128}},
        requested=["neuronx-cc", "compile", "--target", "trn2", "-O2"],
    )
    write_job(
        job_b,
        spec={"name": "rope", "model": {"head_size": 64}},
        requested=["neuronx-cc", "compile", "--target", "trn2", "-O3", "--auto-cast", "all"],
    )
    assert main(["diff", str(a), str(b), "--json"]) == 0
    diffs = {(d["section"], d["key"]): (d["a"], d["b"]) for d in json.loads(capsys.readouterr().out)["differences"]}
    assert diffs[("header", "lnc_size")] == (1, 2)
    assert diffs[("payload", "compiler_version")] == ("2.23.6484.0", "2.24.1.0")
    assert diffs[("inputs", "x")] == ("float16[4,8]", "bfloat16[4,8]")
    assert diffs[("spec", "model.head_size")] == (128, 64)
    assert diffs[("compiler_command", "requested (arguments only in one)")] == ("-O2", "-O3 --auto-cast all")
    assert ("members", "info.json") in diffs  # a longer tool_version
    assert main(["diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "[spec]" in out and "model.head_size" in out and "[compiler_command]" in out


def test_diff_identical_and_unreadable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = build_neff(tmp_path / "a.neff", **IO)
    b = tmp_path / "b.neff"
    b.write_bytes(a.read_bytes())
    assert main(["diff", str(a), str(b)]) == 0
    assert "no differences" in capsys.readouterr().out
    (tmp_path / "c.neff").write_bytes(b"x")
    assert main(["diff", str(a), str(tmp_path / "c.neff")]) == 1
    assert "shorter than the 1024-byte NEFF header" in capsys.readouterr().err


def test_diff_ignores_each_jobs_own_directory_in_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    neffs = []
    for name in ("rope-a", "rope-b"):
        job = tmp_path / name
        neff = build_neff(job / "compiler" / "graph.neff", **IO)
        write_job(
            job,
            requested=[
                "neuronx-cc",
                "compile",
                f"{job}/compiler/model",
                "--output",
                f"{job}/compiler/graph.neff",
                "--target",
                "trn2",
            ],
        )
        neffs.append(neff)
    assert main(["diff", *map(str, neffs), "--json"]) == 0
    sections = {d["section"] for d in json.loads(capsys.readouterr().out)["differences"]}
    assert "compiler_command" not in sections

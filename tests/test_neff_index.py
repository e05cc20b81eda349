"""The workdir index: finding NEFFs, pairing them with job records, caching, and unreadable entries."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import neffbench.neff.index as index_module
import neffbench.views.job_file as job_file_module
from neffbench.neff import find_job
from neffbench.views.fields import RecordError
from neffbench.views.job_file import read_job
from neffbench.views.workdir import WorkdirCache, scan_workdir
from tests.neff_factory import build_neff, write_job

IO = {"inputs": {"x": ("float16", (4, 8))}, "outputs": {"output0": ("float16", (4, 8))}}


def _touch(path: Path, mtime: float) -> None:
    os.utime(path, (mtime, mtime))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    job_a = root / "rope-20260102T030405Z-1a2b3c4d"
    a = build_neff(job_a / "compiler" / "graph.neff", **IO, name="a")
    write_job(job_a, neffs=[a])
    job_b = root / "rope-20260102T040000Z-5e6f7a8b"
    b = build_neff(job_b / "out" / "deep" / "model_3f9a0c1e2d4b5a6978.neff", **IO, name="b", gzip=False)
    write_job(job_b, outcome="failed", reason="neuronx-cc failed with -9")
    loose = build_neff(root / "scratch" / "loose.neff", **IO, name="loose")
    broken_job = root / "rope-20260102T050000Z-deadbeef"
    c = build_neff(broken_job / "graph.neff", **IO, name="c")
    (broken_job / "job.json").write_text("{not json")
    bad = root / "scratch" / "bad.neff"
    bad.write_bytes(b"not a neff at all")
    for i, path in enumerate([a, b, loose, c, bad]):
        _touch(path, 1_700_000_000 + 100 * i)
    return root


def test_scan_finds_pairs_and_sorts_newest_first(workdir: Path) -> None:
    records = scan_workdir(workdir, cache=WorkdirCache())
    assert [r.rel_path for r in records] == [
        "scratch/bad.neff",
        "rope-20260102T050000Z-deadbeef/graph.neff",
        "scratch/loose.neff",
        "rope-20260102T040000Z-5e6f7a8b/out/deep/model_3f9a0c1e2d4b5a6978.neff",
        "rope-20260102T030405Z-1a2b3c4d/compiler/graph.neff",
    ]
    bad, broken, loose, b, a = records
    assert bad.info is None and "shorter than the 1024-byte NEFF header" in bad.error
    assert broken.info.header.name == "c" and broken.job is None and "not valid JSON" in broken.job_error
    assert loose.job is None and loose.job_path is None and loose.error is None
    assert b.job.outcome == "failed" and b.job.reason == "neuronx-cc failed with -9" and b.info.compressed is False
    assert a.job.job_id == "rope-20260102T030405Z-1a2b3c4d" and a.job.outcome == "succeeded"
    assert a.job.requested_command[:2] == ("neuronx-cc", "compile")
    assert a.info.inputs[0].summary() == "x float16[4,8]" and a.warnings == ()
    doc = json.loads(json.dumps([r.to_dict() for r in records]))
    assert doc[4]["job"]["outcome"] == "succeeded" and doc[0]["error"] and doc[4]["modified"].endswith("Z")
    assert doc[4]["io"] == "x float16[4,8] -> output0 float16[4,8]"


def test_rescan_of_unchanged_tree_reads_nothing(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = WorkdirCache()
    first = scan_workdir(workdir, cache=cache)
    assert (cache.neff_reads, cache.job_reads) == (5, 3)

    def no_reads(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unchanged NEFF was read again")

    monkeypatch.setattr(index_module, "read_neff", no_reads)
    monkeypatch.setattr(job_file_module, "read_job", no_reads)
    again = scan_workdir(workdir, cache=cache)
    assert [(r.rel_path, r.error, r.info) for r in again] == [(r.rel_path, r.error, r.info) for r in first]
    # A full read also answers a header-only listing.
    assert len(scan_workdir(workdir, cache=cache, header_only=True)) == 5
    assert (cache.neff_reads, cache.job_reads) == (5, 3)


def test_changed_files_are_read_again_and_deleted_ones_forgotten(workdir: Path) -> None:
    cache = WorkdirCache()
    scan_workdir(workdir, cache=cache)
    loose = workdir / "scratch" / "loose.neff"
    build_neff(loose, **IO, name="loose2")
    _touch(loose, 1_800_000_000)
    shutil.rmtree(workdir / "rope-20260102T050000Z-deadbeef")
    records = scan_workdir(workdir, cache=cache)
    assert cache.neff_reads == 6 and len(records) == 4
    assert records[0].rel_path == "scratch/loose.neff" and records[0].info.header.name == "loose2"
    assert not [k for k in cache._neffs if "deadbeef" in k[0]]


def test_header_only_scan_then_full_scan(workdir: Path) -> None:
    cache = WorkdirCache()
    quick = scan_workdir(workdir, cache=cache, header_only=True)
    assert all(r.info is None or (r.info.header_only and r.info.sha256 is None) for r in quick)
    assert quick[0].error  # the bad file fails even header-only
    full = scan_workdir(workdir, cache=cache)
    assert cache.neff_reads == 10 and full[-1].info.sha256


def test_changed_after_job_is_flagged(workdir: Path) -> None:
    neff = workdir / "rope-20260102T030405Z-1a2b3c4d" / "compiler" / "graph.neff"
    build_neff(neff, **IO, name="rewritten")
    record = next(r for r in scan_workdir(workdir, cache=WorkdirCache()) if r.path == str(neff))
    assert record.warnings and "changed after job rope-20260102T030405Z-1a2b3c4d" in record.warnings[0]


def test_nested_jobs_pair_with_the_nearest(tmp_path: Path) -> None:
    outer = tmp_path / "outer-job"
    write_job(outer, outcome="succeeded")
    inner = outer / "sub" / "inner-job"
    write_job(inner, outcome="cancelled")
    build_neff(outer / "x.neff", **IO)
    build_neff(inner / "deeper" / "y.neff", **IO)
    by_name = {Path(r.path).name: r.job.outcome for r in scan_workdir(tmp_path, cache=WorkdirCache())}
    assert by_name == {"x.neff": "succeeded", "y.neff": "cancelled"}
    # A job.json above the scan root is not paired.
    records = scan_workdir(inner, cache=WorkdirCache())
    assert records[0].job.outcome == "cancelled"
    assert scan_workdir(outer / "sub" / "inner-job" / "deeper", cache=WorkdirCache())[0].job is None


def test_find_job_levels(tmp_path: Path) -> None:
    job = tmp_path / "job"
    write_job(job)
    neff = build_neff(job / "a" / "b" / "c" / "x.neff", **IO)
    assert find_job(neff) == job / "job.json"  # c, b, a, job: the fourth directory looked at
    assert find_job(neff, max_levels=3) is None
    assert find_job(neff, root=tmp_path) == job / "job.json"
    assert find_job(neff, root=job / "a") is None


def test_job_records_are_read_defensively(tmp_path: Path) -> None:
    path = tmp_path / "j" / "job.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {"job_id": "j", "outcome": 7, "spec": "nope", "neffs": {}, "compiler_command": {"requested": "neuronx-cc"}}
        )
    )
    job = read_job(path)
    assert job.outcome is None and job.spec is None and job.requested_command is None and job.job_id == "j"
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(RecordError, match="not a job record"):
        read_job(tmp_path / "list.json")


def test_thousands_of_files_rescan_from_cache(tmp_path: Path) -> None:
    one = build_neff(tmp_path / "one.neff", **IO).read_bytes()
    root = tmp_path / "many"
    for i in range(1500):
        d = root / f"job-{i // 50:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"g{i}.neff").write_bytes(one)
    cache = WorkdirCache()
    assert len(scan_workdir(root, cache=cache, header_only=True)) == 1500
    assert len(scan_workdir(root, cache=cache, header_only=True)) == 1500
    assert cache.neff_reads == 1500


def test_bad_root(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        scan_workdir(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        scan_workdir(tmp_path / "file")


def test_the_copies_a_backend_keeps_are_not_listed_twice(tmp_path: Path) -> None:
    job = tmp_path / "tn-job"
    kept = build_neff(job / "cache" / "m.neff", **IO)
    build_neff(job / "debug" / "neff" / "proc_0" / "m.neff", **IO)  # TorchNeuron's debug copy of the same NEFF
    write_job(job, neffs=[kept], backend="torchneuron")
    assert [r.rel_path for r in scan_workdir(tmp_path, cache=WorkdirCache())] == ["tn-job/cache/m.neff"]
    write_job(job, neffs=[kept], backend="neuron")  # another backend's debug/ folder is its own
    assert len(scan_workdir(tmp_path, cache=WorkdirCache())) == 2

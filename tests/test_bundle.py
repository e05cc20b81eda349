"""``neffbench bundle``: real job directories (fake neuronx-cc and cpu-check compiles) zipped for a bug report."""

from __future__ import annotations

import argparse
import errno
import getpass
import io
import json
import os
import random
import shutil
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from neffbench import __version__
from neffbench.cli import bundle_cmd
from neffbench.jobs import bundle
from neffbench.jobs.bundle import MIB, BundleError, find_job_dir, make_bundle
from neffbench.jobs.home_paths import HomeShortener
from tests.fakes import fake_env

# --- real jobs, compiled once per session ------------------------------------------------------------------


@pytest.fixture(scope="module")
def jobs(compiled) -> dict[str, Path]:
    """The seed compiled by the fake neuronx-cc failing and succeeding, and by cpu-check: never changed, copied."""
    plans = {
        "compile-error": (["--backend", "neuron"], fake_env("compile-error"), 1),
        "success": (["--backend", "neuron"], fake_env("success"), 0),
        "cpu-check": (["--backend", "cpu-check"], None, 0),
    }
    made = {}
    for name, (args, env, returncode) in plans.items():
        [made[name]] = [
            p.parent for p in compiled.original("seed", *args, env=env, returncode=returncode).glob("*/job.json")
        ]
    return made


def _copy(job_dir: Path, tmp_path: Path) -> Path:
    """A job of one's own to change (and to bundle beside), in a folder of its own."""
    return Path(shutil.copytree(job_dir, tmp_path / "work" / job_dir.name, symlinks=True))


def _members(result) -> dict[str, bytes]:
    with zipfile.ZipFile(result.path) as zf:
        assert zf.testzip() is None
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}
        return {name.split("/", 1)[1]: zf.read(name) for name in zf.namelist()}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neffbench")
    bundle_cmd.register(parser.add_subparsers(dest="command"))
    return parser


def _cli(argv: list[str]) -> int:
    args = _parser().parse_args(["bundle", *argv])
    return args.func(args)


# --- what goes in ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_failed_compile_bundle_holds_logs_command_input_versions_and_readme(jobs, tmp_path):
    job = _copy(jobs["compile-error"], tmp_path)
    record = json.loads((job / "job.json").read_text())
    result = make_bundle(job)
    assert result.path == job.parent / f"{record['job_id']}-bugreport.zip"
    members = _members(result)
    assert set(members) == {
        "spec.toml",
        "job.json",
        "job.log",
        "events.jsonl",
        "reproduce.py",
        "compiler/command.txt",
        "compiler/log-neuron-cc.txt",
        "compiler/model/graph.hlo",
        "compiler/model/metadata.json",
        "compiler-command.txt",
        "versions.json",
        "README.txt",
    }
    with zipfile.ZipFile(result.path) as zf:
        assert all(n.startswith(record["job_id"] + "/") for n in zf.namelist())
        assert result.included == [(i.filename, i.file_size) for i in zf.infolist()]
    assert members["compiler/model/graph.hlo"] == (job / "compiler/model/graph.hlo").read_bytes()
    assert "neuronx-cc compile" in members["compiler-command.txt"].decode()
    versions = json.loads(members["versions.json"])
    assert versions["job"]["versions"] == record["versions"] and versions["job"]["host"] == record["host"]
    assert versions["job"]["backend"] == "neuron"
    assert versions["bundle"]["neffbench"] == __version__ and versions["bundle"]["python"]
    assert "bundle" in versions["bundle"]["about"] and "ran the compile" in versions["job"]["about"]

    readme = members["README.txt"].decode()
    for text in (
        record["job_id"],
        "name:     seed",
        "kernel:   rope",
        "outcome:  failed",
        record["reason"],
        "first error: [NLA001] Unhandled exception",
        "shortened to ~",
    ):
        assert text in readme
    inside = readme.split("What is inside", 1)[1].split("\n\n", 1)[0]
    for name, _size in result.included[:-1]:
        rel = name.split("/", 1)[1]
        assert rel in inside
    # A compile that failed never wrote the module or its arrays: the README says they are not there.
    missing = readme.split("Not in the job directory", 1)[1]
    assert result.missing == ["model.pt", "inputs.npz", "reference.npz"]
    assert all(f"  {name}\n" in missing for name in result.missing)
    assert "Left out" not in readme


@pytest.mark.slow
def test_success_bundle_holds_weights_and_the_neff(jobs, tmp_path):
    job = _copy(jobs["success"], tmp_path)
    members = _members(make_bundle(job))
    for name in ("model.pt", "inputs.npz", "reference.npz", "compiler/graph.neff"):
        assert members[name] == (job / name).read_bytes()


@pytest.mark.slow
def test_cpu_check_bundle_has_no_compiler_part_and_misses_nothing(jobs, tmp_path):
    job = _copy(jobs["cpu-check"], tmp_path)
    result = make_bundle(job)
    members = _members(result)
    assert result.missing == [] and result.left_out == []
    assert {"model.pt", "inputs.npz", "reference.npz", "versions.json", "README.txt"} <= set(members)
    assert not any(n.startswith("compiler") for n in members)
    assert "backend:  cpu-check" in members["README.txt"].decode()


# --- the home directory ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_home_is_shortened_in_text_members_and_binaries_are_untouched(jobs, tmp_path, monkeypatch):
    job = _copy(jobs["compile-error"], tmp_path)
    # The job files name the folder the job was compiled in: the home holds it and this test's copy.
    home = Path(os.path.commonpath([tmp_path, jobs["compile-error"]]))
    compiled_in = jobs["compile-error"].parent.relative_to(home).as_posix()
    monkeypatch.setenv("HOME", str(home))
    user = getpass.getuser()
    with (job / "job.log").open("a", encoding="utf-8") as fh:
        fh.write(f"cache at {Path.home()}/.cache and /home/{user}/data, not /home/{user}x/data\n")
    (job / "compiler/model/graph.hlo").write_bytes(f"binary {home} keeps its bytes".encode())
    members = _members(make_bundle(job))
    for name, data in members.items():
        if name.endswith((".toml", ".json", ".jsonl", ".log", ".txt", ".py")):
            assert str(home).encode() not in data, name
    assert "cache at ~/.cache and ~/data, not " in members["job.log"].decode()
    assert f"/home/{user}x/data" in members["job.log"].decode()
    assert json.loads(members["job.json"])["compiler_command"]["actual"][2].startswith(f"~/{compiled_in}/seed-")
    assert f"~/{compiled_in}/seed-" in members["compiler/command.txt"].decode()
    assert "from the job directory ~/" in members["README.txt"].decode()
    assert members["compiler/model/graph.hlo"] == f"binary {home} keeps its bytes".encode()


def test_shortening_streams_across_block_boundaries():
    shortener = HomeShortener(["/home/al", "/tmp/h"])
    assert (
        shortener.bytes(b"/home/al/x /home/alice /mnt/home/al --log=/home/al '/tmp/h'")
        == b"~/x /home/alice /mnt/home/al --log=~ '~'"
    )
    pieces = [b"/home/al", b"/home/alice", b"/mnt/home/al", b"x", b"/", b"\n", b" ", b"/tmp/h", b'"', b"/home/a l"]
    rng = random.Random(7)
    # Small blocks often hold no separator, so both ways of cutting a block are exercised; a home with a
    # space in it takes the space off the separators.
    for cut in (shortener, HomeShortener(["/home/a l"])):
        for _ in range(400):
            data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
            for block in (1, 2, 3, 7, 64):
                out = io.BytesIO()
                assert cut.copy(io.BytesIO(data), out, block) == len(out.getvalue())
                assert out.getvalue() == cut.bytes(data), (data, block)


def test_a_big_log_is_bundled_without_holding_it_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    job = _old_job(tmp_path, "big-log")
    line = f"{tmp_path}/home/x " * 4000  # one 100+ KiB line, repeated without a newline
    with (job / "job.log").open("w", encoding="utf-8") as fh:
        for _ in range(200):
            fh.write(line)
    size = (job / "job.log").stat().st_size
    assert size > 20 * MIB
    tracemalloc.start()
    try:
        result = make_bundle(job)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * MIB, f"peak {peak} bytes for a {size} byte log"
    with zipfile.ZipFile(result.path) as zf, zf.open("big-log/job.log") as fh:
        head = fh.read(200).decode()
    assert (
        head.startswith("~/x ~/x ")
        and dict(result.included)["big-log/job.log"] == size - 200 * 4000 * len(f"{tmp_path}/home") + 200 * 4000
    )


# --- what stays out -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_size_limit_leaves_out_big_files_with_the_reason(jobs, tmp_path):
    job = _copy(jobs["success"], tmp_path)
    (job / "compiler/model/weights.bin").write_bytes(os.urandom(2 * MIB + 100))
    result = make_bundle(job, size_limit=MIB)
    members = _members(result)
    assert "compiler/model/weights.bin" not in members
    assert {"compiler/model/graph.hlo", "compiler/model/metadata.json", "model.pt", "inputs.npz"} <= set(members)
    [(path, size, reason)] = result.left_out
    assert (path, size) == ("compiler/model/weights.bin", 2 * MIB + 100)
    assert reason.startswith("over the 1 MiB limit; rerun `neffbench bundle ") and "--max-size 3 --force`" in reason
    readme = members["README.txt"].decode()
    assert "compiler/model/weights.bin (2.0 MiB): over the 1 MiB limit; rerun" in readme.split("Left out", 1)[1]

    assert _cli([str(job), "--max-size", "3", "--force"]) == 0
    assert "compiler/model/weights.bin" in _members(result)

    small = make_bundle(job, tmp_path / "small.zip", size_limit=10_000)
    left = {p: r for p, _, r in small.left_out}
    assert set(left) == {"compiler/model/weights.bin", "inputs.npz", "reference.npz"}
    assert all(r.startswith("over the 9.8 KiB limit") for r in left.values())


@pytest.mark.slow
def test_links_out_of_the_job_are_not_followed(jobs, tmp_path):
    job = _copy(jobs["success"], tmp_path)
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("TOPSECRET\n")
    (job / "compiler/leak.log").symlink_to(secret / "secret.txt")
    (job / "compiler/model/outside").symlink_to(secret, target_is_directory=True)
    (job / "reference.npz").unlink()
    (job / "reference.npz").symlink_to(secret / "secret.txt")
    (job / "compiler/alias.txt").symlink_to("../job.log")  # inside the job: fine to read
    result = make_bundle(job)
    members = _members(result)
    assert not any(b"TOPSECRET" in data for data in members.values())
    assert members["compiler/alias.txt"] == members["job.log"]
    left = {p: r for p, _, r in result.left_out}
    assert left == {
        "compiler/leak.log": "a link to a file outside the job directory (not followed)",
        "reference.npz": "a link to a file outside the job directory (not followed)",
        "compiler/model/outside/": "a link to a folder (not followed)",
    }
    assert "reference.npz: a link to a file outside" in members["README.txt"].decode()


# --- writing ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_no_overwrite_without_force_and_never_the_earlier_bundle(jobs, tmp_path):
    job = _copy(jobs["cpu-check"], tmp_path)
    first = make_bundle(job)
    before = first.path.read_bytes()
    with pytest.raises(BundleError, match="already exists; pass --force to replace it"):
        make_bundle(job)
    assert first.path.read_bytes() == before
    assert _cli([str(job)]) == 1
    again = make_bundle(job, force=True)
    assert again.path == first.path and not any(n.endswith(".zip") for n in _members(again))
    assert not list(job.rglob("*.zip"))
    with pytest.raises(BundleError, match="inside the job directory"):
        make_bundle(job, job / "bundle.zip")
    into_folder = make_bundle(job, tmp_path)
    assert into_folder.path == tmp_path / first.path.name


def test_a_failed_write_leaves_no_zip_under_the_final_name(tmp_path, monkeypatch):
    job = _old_job(tmp_path, "old")
    (job / "model.pt").write_bytes(b"\0" * 1000)
    out = tmp_path / "report.zip"

    def full_disk(src, dst):
        dst.write(src.read(10))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(bundle, "_copy", full_disk)
    with pytest.raises(BundleError, match=r"cannot write .*report\.zip: No space left on device\."):
        make_bundle(job, out)
    assert not out.exists() and list(tmp_path.glob(".*.tmp")) == []

    out.write_bytes(b"the old bundle")
    with pytest.raises(BundleError):
        make_bundle(job, out, force=True)
    assert out.read_bytes() == b"the old bundle" and list(tmp_path.glob(".*.tmp")) == []

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(bundle, "_copy", interrupted)
    with pytest.raises(KeyboardInterrupt):
        make_bundle(job, out, force=True)
    assert out.read_bytes() == b"the old bundle" and list(tmp_path.glob(".*.tmp")) == []


# --- old and broken job directories, and errors ----------------------------------------------------------------


def _old_job(tmp_path: Path, name: str, record: dict | None = None) -> Path:
    job = tmp_path / "workdir" / name
    job.mkdir(parents=True)
    doc = {"job_id": name, "name": "seed", "outcome": "failed", "reason": "it broke", "error": "boom"}
    (job / "job.json").write_text(json.dumps(doc if record is None else record))
    (job / "job.log").write_text("compiling\n")
    return job


def test_an_older_job_directory_bundles_what_exists_and_lists_the_rest(tmp_path):
    job = _old_job(tmp_path, "old-job")
    result = make_bundle(job)
    members = _members(result)
    assert set(members) == {"job.json", "job.log", "versions.json", "README.txt"}
    assert result.missing == [
        "spec.toml",
        "events.jsonl",
        "reproduce.py",
        "compiler/",
        "model.pt",
        "inputs.npz",
        "reference.npz",
    ]
    readme = members["README.txt"].decode()
    assert "first error: boom" in readme and "reason:   it broke" in readme
    missing = readme.split("Not in the job directory", 1)[1]
    assert all(f"  {name}\n" in missing for name in result.missing)

    (job / "compiler").mkdir()
    assert make_bundle(job, force=True).missing[3:6] == [
        "compiler/command.txt",
        "compiler/log-neuron-cc.txt",
        "compiler/model/",
    ]


def test_an_unreadable_job_json_is_still_bundled(tmp_path):
    job = _old_job(tmp_path, "broken")
    (job / "job.json").write_text("{not json")
    members = _members(make_bundle(job))
    assert members["job.json"] == b"{not json"
    assert "job.json could not be read:" in members["README.txt"].decode()


def test_errors_say_what_is_wrong(tmp_path, capsys):
    with pytest.raises(BundleError, match=r"nowhere does not exist\.$"):
        make_bundle(tmp_path / "nowhere")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(BundleError, match=r"notes.txt is not a directory\.$"):
        make_bundle(tmp_path / "notes.txt")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(BundleError, match=r"plain has no job.json: it is not a job directory\.$"):
        make_bundle(plain)
    with pytest.raises(BundleError, match=r"notes.txt is a file, not a job directory\.$"):
        find_job_dir(tmp_path / "notes.txt")
    job = _old_job(tmp_path, "ok-job")
    with pytest.raises(BundleError, match=r"the output folder .*missing does not exist\."):
        make_bundle(job, tmp_path / "missing" / "x.zip")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        with pytest.raises(BundleError, match=r"the output folder .*locked is not writable\."):
            make_bundle(job, locked / "x.zip")
    finally:
        locked.chmod(0o755)
    assert _cli([str(plain)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("neffbench bundle: ") and "has no job.json: it is not a job directory." in err


# --- finding the job -----------------------------------------------------------------------------------------


def test_a_job_is_found_by_id_prefix_job_json_or_neff_in_it(tmp_path):
    a = _old_job(tmp_path, "seed-20260101T000000Z-aaaa1111")
    b = _old_job(tmp_path, "seed-20260102T000000Z-bbbb2222")
    workdir = a.parent
    assert find_job_dir(a.name, workdir) == a.resolve()
    assert find_job_dir("seed-20260102", workdir) == b.resolve()
    assert find_job_dir(a / "job.json") == a.resolve()
    (a / "compiler").mkdir()
    (a / "compiler" / "graph.neff").write_bytes(b"not read")
    assert find_job_dir(a / "compiler" / "graph.neff") == a.resolve()
    with pytest.raises(BundleError, match="seed- matches 2 jobs in .*: give more of it"):
        find_job_dir("seed-", workdir)
    with pytest.raises(BundleError, match="no job other in"):
        find_job_dir("other", workdir)
    with pytest.raises(BundleError, match="the workdir .* is not a directory"):
        find_job_dir("seed", tmp_path / "none")


# --- the command -----------------------------------------------------------------------------------------------


def test_cli_prints_the_zip_and_what_was_left_out(tmp_path, capsys):
    job = _old_job(tmp_path, "cli-job")
    (job / "model.pt").write_bytes(b"\0" * 3 * MIB)
    assert _cli(["cli-job", "--workdir", str(job.parent), "--max-size", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == str(job.parent / "cli-job-bugreport.zip")
    assert "4 files included" in out[1] and "1 left out (3.0 MiB):" in out[2]
    assert out[3].startswith("    model.pt (3.0 MiB): over the 1 MiB limit; rerun `neffbench bundle ")
    assert _cli([str(job), "--out", str(tmp_path / "b.zip"), "--max-size", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["path"] == str(tmp_path / "b.zip") and doc["size"] == (tmp_path / "b.zip").stat().st_size
    assert {m["name"] for m in doc["included"]} == {
        f"cli-job/{n}" for n in ("job.json", "job.log", "versions.json", "README.txt")
    }
    assert [(m["path"], m["size"]) for m in doc["left_out"]] == [("model.pt", 3 * MIB)]
    assert "spec.toml" in doc["missing"]


def test_main_runs_bundle(tmp_path, capsys):
    """Passes once ``"bundle": "neffbench.cli.bundle_cmd"`` is in cli/main.py's COMMANDS."""
    from neffbench.cli.main import main

    job = _old_job(tmp_path, "main-job")
    assert main(["bundle", str(job)]) == 0
    assert capsys.readouterr().out.startswith(str(job.parent / "main-job-bugreport.zip"))
    assert main(["bundle", str(job)]) == 1
    assert "already exists" in capsys.readouterr().err

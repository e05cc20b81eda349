"""The cache key, the spec hash and job.json cover every file the module was built from (found by watching the
build, not by parsing), the checkpoints it read and the versions of its libraries; an unrelated file does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from neffbench import installed
from neffbench.jobs import read_record
from neffbench.usercode import closure
from neffbench.usercode.origin import classify
from tests.cli import neffbench

REPO = Path(__file__).resolve().parents[1]


_cli = neffbench


def _project(root: Path) -> Path:
    """An entry file that builds its model from code in two other files of the project, plus a file it never
    imports: the usual layout of a user's repository."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "blocks.py").write_text(
        textwrap.dedent("""
        import torch
        from torch import nn

        from pkg.acts import act


        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc = nn.Linear(dim, dim)

            def forward(self, x):
                return act(self.fc(x))
        """)
    )
    (root / "pkg" / "acts.py").write_text("import torch\n\n\ndef act(x):\n    return torch.relu(x)\n")
    (root / "model.py").write_text(
        textwrap.dedent("""
        from torch import nn

        from pkg.blocks import Block


        def make(dim: int = 8):
            return nn.Sequential(Block(dim), Block(dim))
        """)
    )
    (root / "unrelated.py").write_text("VALUE = 1\n")
    return root / "model.py"


def _compile(root: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    proc = _cli(
        "compile",
        "model.py:make",
        "--input",
        "input:f32[2,8]",
        "--workdir",
        "wd",
        "--backend",
        "cpu-check",
        *extra,
        cwd=root,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    newest = max((read_record(p.parent) for p in (root / "wd").glob("*/job.json")), key=lambda r: r["created"])
    return proc, newest


@pytest.mark.slow
def test_editing_any_file_the_module_was_built_from_misses_the_cache_and_an_unrelated_one_does_not(
    tmp_path, neffbench_in_process
):
    _project(tmp_path)
    _, first = _compile(tmp_path)
    names = {f["name"]: f for f in first["sources"]["files"]}
    # What was imported while building, each with its sha256; not the file nothing imported.
    assert set(names) == {"model.py", "pkg/__init__.py", "pkg/blocks.py", "pkg/acts.py"}
    assert names["pkg/acts.py"]["sha256"] == closure.file_sha256(tmp_path / "pkg" / "acts.py")
    assert all(f["kind"] == "source" for f in names.values())
    assert first["spec_hash"][:8] in first["job_id"]  # the job's name carries the hash that covers its sources

    (tmp_path / "unrelated.py").write_text("VALUE = 2\n")
    _, again = _compile(tmp_path)
    assert again["cache"]["hit"] and again["spec_hash"] == first["spec_hash"]

    # Two imports away from the entry, and not named anywhere in the spec.
    (tmp_path / "pkg" / "acts.py").write_text("import torch\n\n\ndef act(x):\n    return torch.tanh(x)\n")
    proc, edited = _compile(tmp_path)
    assert not edited["cache"]["hit"], proc.stdout
    assert edited["spec_hash"] != first["spec_hash"]
    assert "found by a probe" in edited["sources"].get("how", "") or "read by this job" in edited["sources"]["how"]

    diff = neffbench_in_process(
        "diff", str(tmp_path / "wd" / first["job_id"]), str(tmp_path / "wd" / edited["job_id"]), cwd=tmp_path
    )
    assert diff.returncode == 0, diff.stderr
    assert "[sources]" in diff.stdout and "source pkg/acts.py" in diff.stdout
    assert "source pkg/blocks.py" not in diff.stdout  # only what changed
    as_json = json.loads(
        neffbench_in_process(
            "diff",
            str(tmp_path / "wd" / first["job_id"]),
            str(tmp_path / "wd" / edited["job_id"]),
            "--json",
            cwd=tmp_path,
        ).stdout
    )
    assert {d["key"] for d in as_json["differences"] if d["section"] == "sources"} == {"source pkg/acts.py"}


@pytest.mark.slow
def test_checkpoints_a_factory_reads_are_in_the_key(tmp_path):
    """torch.load (Python's open) and safetensors (opened from Rust) both count; editing either misses."""
    pytest.importorskip("safetensors")
    (tmp_path / "model.py").write_text(
        textwrap.dedent("""
        import torch
        from safetensors.torch import load_file
        from torch import nn


        def make():
            net = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))
            net[0].load_state_dict(torch.load("first.pt"))
            net[1].load_state_dict(load_file("second.safetensors"))
            return net
        """)
    )
    import torch
    from safetensors.torch import save_file

    torch.save(torch.nn.Linear(4, 4).state_dict(), tmp_path / "first.pt")
    save_file(torch.nn.Linear(4, 4).state_dict(), str(tmp_path / "second.safetensors"))

    def compile_() -> dict:
        proc = _cli(
            "compile",
            "model.py:make",
            "--input",
            "input:f32[2,4]",
            "--workdir",
            "wd",
            "--backend",
            "cpu-check",
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return max((read_record(p.parent) for p in (tmp_path / "wd").glob("*/job.json")), key=lambda r: r["created"])

    first = compile_()
    data = {Path(f["path"]).name for f in first["sources"]["files"] if f["kind"] == "data"}
    assert data == {"first.pt", "second.safetensors"}
    assert compile_()["cache"]["hit"]
    save_file(torch.nn.Linear(4, 4).state_dict(), str(tmp_path / "second.safetensors"))
    changed = compile_()
    assert not changed["cache"]["hit"]
    assert changed["weights"]["sha256"] != first["weights"]["sha256"]


@pytest.mark.slow
def test_from_pretrained_on_a_local_folder_reads_its_checkpoint_into_the_key(tmp_path):
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
    )
    transformers.BertModel(config).save_pretrained(tmp_path / "ckpt")
    spec = tmp_path / "bert.toml"
    spec.write_text(
        textwrap.dedent(f"""
        kernel = "module"
        name = "local-bert"
        workdir = "wd"

        [module]
        entry = "transformers:BertModel.from_pretrained"
        call = "factory"
        kwargs = {{ pretrained_model_name_or_path = "{tmp_path / "ckpt"}" }}

        [module.constants]
        return_dict = false

        [inputs]
        input_ids = "i64[1,8] randint(0, 50)"
        """)
    )
    proc = _cli("compile", str(spec), "--backend", "cpu-check", cwd=tmp_path, env={"HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (record,) = [read_record(p.parent) for p in (tmp_path / "wd").glob("*/job.json")]
    read = {Path(f["path"]).name for f in record["sources"]["files"] if f["kind"] == "data"}
    assert "config.json" in read and any(name.endswith((".safetensors", ".bin")) for name in read), read
    assert record["sources"]["distributions"].get("transformers") == transformers.__version__


def test_files_are_judged_by_where_they_lie():
    import json as stdlib_json

    import numpy

    import neffbench

    assert classify(os.path.realpath(stdlib_json.__file__)) == "stdlib"
    assert classify(os.path.realpath(numpy.__file__)) == "distribution"
    assert classify(os.path.realpath(neffbench.__file__)) == "workbench"
    assert classify(str(Path(__file__).resolve())) == "user"


def test_a_recorded_closure_says_what_changed(tmp_path):
    src = tmp_path / "a.py"
    src.write_text("x = 1\n")
    block = closure.record([str(src)], [], {"numpy": "0.0.1"})
    assert block["files"][0]["name"] == "a.py"
    changes = closure.changes(block)
    assert any("numpy is" in c for c in changes)  # installed numpy is not 0.0.1
    src.write_text("x = 2\n")
    assert "a.py changed" in closure.changes(block)
    src.unlink()
    assert "a.py is gone" in closure.changes(block)


def _edit_keeping_size_and_time(path: Path, text: str) -> None:
    """An edit Python's bytecode cache cannot see (same size, same modification time): made within the second of
    the last import, as a quick save or a script does."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_warm_probe_sees_an_edit_of_a_file_the_entry_imports(tmp_path, monkeypatch):
    """The probe stays up between requests; the user's modules it imported are imported afresh each time, so an
    edit of a file the entry imports is seen (and its closure's digest follows it), even one that Python's
    bytecode cache, written as Python writes it by default, would take for the old file."""
    import dataclasses

    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)

    from neffbench.kernels.module.kernel import KERNEL
    from neffbench.probe.client import WarmProbe
    from neffbench.spec import to_dict

    (tmp_path / "helper.py").write_text("WIDTH = 4\n")
    (tmp_path / "entry.py").write_text(
        textwrap.dedent("""
        from torch import nn

        import helper


        def make():
            return nn.Linear(helper.WIDTH, helper.WIDTH)
        """)
    )
    spec = KERNEL.cli.spec_from_source(f"{tmp_path / 'entry.py'}:make")
    spec = dataclasses.replace(spec, inputs={"input": "f32[2,4]"}, workdir=str(tmp_path / "wd"))
    probe = WarmProbe()
    try:
        first = probe.ask("prepare", {"spec": to_dict(spec)})
        ok = probe.ask("check", {"spec": to_dict(spec)})
        _edit_keeping_size_and_time(tmp_path / "helper.py", "WIDTH = 6\n")
        second = probe.ask("prepare", {"spec": to_dict(spec)})
        broken = probe.ask("check", {"spec": to_dict(spec)})
    finally:
        probe.close()
    assert first["ok"] and second["ok"] and ok["ok"], (first, second, ok)
    assert first["sources"]["digest"] != second["sources"]["digest"]
    helper = next(f for f in second["sources"]["files"] if f["name"] == "helper.py")
    assert helper["sha256"] == closure.file_sha256(tmp_path / "helper.py")
    # The edited width is what the module was built with: a [2, 4] input no longer fits.
    assert not broken["ok"] and any("mat1 and mat2" in p["message"] for p in broken["problems"]), broken


def test_an_entry_file_edited_within_the_second_is_loaded_as_it_is_now(tmp_path, monkeypatch):
    from neffbench.kernels.module.entry import _load_file

    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # Python's default: caches are written and read
    monkeypatch.setattr(sys, "path", list(sys.path))
    entry = tmp_path / "entry.py"
    entry.write_text("WIDTH = 4\n")
    assert _load_file(entry).WIDTH == 4
    _edit_keeping_size_and_time(entry, "WIDTH = 6\n")
    assert _load_file(entry).WIDTH == 6
    assert not (tmp_path / "__pycache__").exists()  # nothing written beside the user's files


def test_a_large_checkpoint_is_hashed_once_for_its_size_and_time(tmp_path, monkeypatch):
    monkeypatch.setattr(closure, "STAT_TRUSTED_BYTES", 8)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ckpt = tmp_path / "big.bin"
    ckpt.write_bytes(b"0123456789abcdef")
    first = closure.record([], [str(ckpt)], {})
    assert first["files"][0]["sha256"] == closure.file_sha256(ckpt)
    calls = []
    monkeypatch.setattr(closure, "file_sha256", lambda path: calls.append(path) or "x")
    assert closure.record([], [str(ckpt)], {})["digest"] == first["digest"] and calls == []  # remembered
    assert closure.changes(first) == []  # trusted by size and time
    ckpt.write_bytes(b"0123456789abcdeX")
    os.utime(ckpt, ns=(0, 1))
    assert closure.changes(first) == ["big.bin changed".replace("big.bin", str(ckpt))]


@pytest.mark.slow
def test_the_folder_the_build_runs_in_is_part_of_what_it_reads(tmp_path):
    """Code that opens a file relative to the current folder builds another module from another folder: no
    compile from one folder is served to a compile from the other."""
    (tmp_path / "relcfg.py").write_text(
        textwrap.dedent("""
        import json

        from torch import nn


        def make():
            width = json.load(open("cfg.json"))["width"]
            return nn.Linear(8, width)
        """)
    )
    for name, width in (("a", 4), ("b", 16)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cfg.json").write_text(json.dumps({"width": width}))
    outputs = []
    for name in ("a", "b"):
        proc = _cli(
            "compile",
            "../relcfg.py:make",
            "--input",
            "input:f32[2,8]",
            "--workdir",
            str(tmp_path / "wd"),
            "--backend",
            "cpu-check",
            cwd=tmp_path / name,
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        newest = max((read_record(p.parent) for p in (tmp_path / "wd").glob("*/job.json")), key=lambda r: r["created"])
        outputs.append(newest)
    assert not outputs[1]["cache"]["hit"]
    assert str(tmp_path / "b" / "cfg.json") in {f["path"] for f in outputs[1]["sources"]["files"]}
    import numpy as np

    assert np.load(tmp_path / "wd" / outputs[1]["job_id"] / "reference.npz")["output0"].shape == (2, 16)


def test_a_nested_entry_is_relative_to_the_spec_file_as_the_entry_is(tmp_path):
    from neffbench.spec import load

    (tmp_path / "proj").mkdir()
    spec_file = tmp_path / "proj" / "m.toml"
    spec_file.write_text(
        textwrap.dedent("""
        kernel = "module"
        [module]
        entry = "model.py:make"
        [module.kwargs.config]
        entry = "model.py:Config"
        [inputs]
        x = "f32[2]"
        """)
    )
    spec = load(spec_file)
    assert spec.module.kwargs["config"]["entry"] == f"{tmp_path / 'proj' / 'model.py'}:Config"
    from neffbench.spec import spec_hash

    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (moved / "m.toml").write_text(spec_file.read_text())
    assert spec_hash(load(moved / "m.toml")) == spec_hash(spec)  # their place is not in the hash


def test_a_folder_of_plain_modules_on_the_path_does_not_look_the_distributions_up_again(tmp_path, monkeypatch, request):
    """Each traced object's folder goes on sys.path for its build: reading every distribution's metadata again for
    it cost a warm ``neffbench.trace`` most of a second; a folder holding a distribution still does."""
    looked_up = []
    monkeypatch.setattr(installed.metadata, "packages_distributions", lambda: looked_up.append(1) or {})
    installed.forget()  # and again when the test ends, so nothing read from the stand-in above stays
    request.addfinalizer(installed.forget)
    closure.distributions_of(["torch"])
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "saved.py").write_text("")
        monkeypatch.syspath_prepend(str(tmp_path / name))
        closure.distributions_of(["torch"])
    assert len(looked_up) == 1
    (tmp_path / "site" / "thing-1.0.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    closure.distributions_of(["torch"])
    assert len(looked_up) == 2
    # A distribution installed into a folder already on the path: pip adds its .dist-info folder there.
    closure.distributions_of(["torch"])
    assert len(looked_up) == 2
    (tmp_path / "site" / "other-2.0.dist-info").mkdir()
    os.utime(tmp_path / "site", ns=(0, 1))  # a different time, whatever the clock's resolution
    closure.distributions_of(["torch"])
    assert len(looked_up) == 3

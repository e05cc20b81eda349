"""Workdirs compiled once per test session and copied for each test: the ``compiled`` and ``seed_cpu_check_job``
fixtures.

A compile is a child process or three, each importing torch: tests that only read or change what a compile
leaves (a job's record, log, inputs; runs, bundles, compares, explanations of it) share one compile of each
distinct command and get a copy of their own. Under pytest-xdist each worker compiles once. A test about the
compile itself (its output, its processes, its cache) compiles on its own.

The user's own files (``compiled.project``) are compiled once too, in a folder of the session's that nothing
changes, and each test gets a copy of that folder, the files and the workdir beside them. Its jobs still name the
files where they were compiled (the build's closure is keyed by their paths): a test that edits the user's files,
or that is about where they lie, compiles its own.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest

from tests.cli import neffbench


class CompiledWorkdirs:
    """``neffbench compile ARGS --workdir W``, run once per distinct command and environment, in a folder of its
    own that holds the workdir."""

    def __init__(self, root: Path):
        self._root = root
        self._made: dict[tuple, Path] = {}
        self._lock = threading.Lock()

    def original(self, *args: str, env: dict[str, str] | None = None, returncode: int = 0) -> Path:
        """The workdir the compile filled (compiled on first use): read it, never change it; ``copy`` to change it."""
        key = (args, tuple(sorted((env or {}).items())))
        with self._lock:
            if key not in self._made:
                workdir = self._root / f"c{len(self._made)}" / "workdir"
                workdir.parent.mkdir()
                done = neffbench("compile", *args, "--workdir", str(workdir), cwd=workdir.parent, env=env)
                assert done.returncode == returncode, f"neffbench compile {' '.join(args)}:\n{done.stdout}{done.stderr}"
                self._made[key] = workdir
            return self._made[key]

    def copy(self, dest: Path, *args: str, **how) -> Path:
        """A copy (shutil.copytree: a real one, for one test to change) of the compile's folder at ``dest`` (which
        may exist); returns the copied workdir. ``how``: as for ``original``."""
        made = self.original(*args, **how)
        shutil.copytree(made.parent, dest, symlinks=True, dirs_exist_ok=True)
        return dest / made.name

    def project(self, dest: Path, files: dict[str, str | Path], *args: str, env: dict[str, str] | None = None) -> Path:
        """The user's project (``files``: each file's name and its text, or the file to copy) compiled by
        ``neffbench compile ARGS`` in its folder, once per distinct project, command and environment; a copy of
        that folder (the files and what the compile left beside them) at ``dest`` (which may exist), returned."""
        texts = {name: f.read_text(encoding="utf-8") if isinstance(f, Path) else f for name, f in files.items()}
        key = ("project", tuple(sorted(texts.items())), args, tuple(sorted((env or {}).items())))
        with self._lock:
            if key not in self._made:
                folder = self._root / f"p{len(self._made)}"
                folder.mkdir()
                for name, text in texts.items():
                    (folder / name).write_text(text, encoding="utf-8")
                done = neffbench("compile", *args, cwd=folder, env=env)
                assert done.returncode == 0, f"neffbench compile {' '.join(args)}:\n{done.stdout}{done.stderr}"
                self._made[key] = folder
            folder = self._made[key]
        shutil.copytree(folder, dest, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        return dest

    def jobs(self, dest: Path, *args: str, **how) -> list[Path]:
        """The job directories of a copy at ``dest``, in the order the compile made them."""
        workdir = self.copy(dest, *args, **how)
        return sorted((p.parent for p in workdir.glob("*/job.json")), key=_created)


def _created(job_dir: Path) -> tuple[str, str]:
    record = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
    return record.get("created") or "", job_dir.name


@pytest.fixture(scope="session")
def compiled(tmp_path_factory) -> CompiledWorkdirs:
    """Workdirs compiled once this session: ``compiled.jobs(tmp_path, "seed", "--backend", "cpu-check")`` gives
    a test its own copy of the job directories that command makes (in ``tmp_path / "workdir"``)."""
    return CompiledWorkdirs(tmp_path_factory.mktemp("compiled"))


@pytest.fixture
def seed_cpu_check_job(compiled, tmp_path) -> Path:
    """A job directory of this test's own, in ``tmp_path / "workdir"``: the seed preset compiled with cpu-check."""
    [job] = compiled.jobs(tmp_path, "seed", "--backend", "cpu-check")
    return job

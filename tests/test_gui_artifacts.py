"""The Artifacts tab: NEFFs and jobs of the workdir, watched for changes, with detail and actions."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from neffbench.gui.shell.tabs import ARTIFACTS_TAB
from neffbench.presets import load_preset
from neffbench.spec import to_dict
from tests.neff_factory import build_neff, write_job

pytestmark = pytest.mark.gui


def make_job(workdir, name: str, *, spec=None, neff: bool = True, reproduce: bool = True):
    job_dir = workdir / name
    neffs = []
    if neff:
        neffs.append(
            build_neff(
                job_dir / "compiler" / "graph.neff",
                inputs={"input0": ("float32", (4, 8))},
                outputs={"output0": ("float32", (4, 8))},
                name="graph.neff",
            )
        )
    write_job(job_dir, spec=to_dict(spec or load_preset("seed")), neffs=neffs, stages={"tracing": {"duration_s": 1.5}})
    if reproduce:
        (job_dir / "reproduce.py").write_text("print('reproduce me')\n")
    return job_dir


@pytest.fixture
def panel(window, tmp_path, qtbot):
    artifacts = window.panels.artifacts
    workdir = tmp_path / "workdir"
    workdir.mkdir(exist_ok=True)
    artifacts.confirm = lambda text: True
    return artifacts, workdir


def scan(qtbot, artifacts):
    with qtbot.waitSignal(artifacts.scanned, timeout=30_000):
        artifacts.rescan()


def test_new_files_appear_through_the_watcher(panel, qtbot):
    artifacts, workdir = panel
    scan(qtbot, artifacts)
    assert artifacts.artifacts == [] and "Nothing compiled yet" in artifacts.summary.text()
    with qtbot.waitSignal(artifacts.scanned, timeout=30_000):
        make_job(workdir, "job-a")  # no rescan asked for: the watcher notices
    assert [a.job_id for a in artifacts.artifacts] == ["job-a"]
    row = artifacts.list.topLevelItem(0)
    assert row.text(0) == "graph.neff" and row.text(2) == "succeeded"
    assert "input0 float32[4,8] -> output0 float32[4,8]" in row.text(5)


def test_unreadable_neffs_are_listed_with_their_error(panel, qtbot):
    artifacts, workdir = panel
    bad = workdir / "job-bad" / "broken.neff"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not a neff at all")
    scan(qtbot, artifacts)
    row = artifacts.list.topLevelItem(0)
    assert row.text(0) == "broken.neff" and row.text(5).startswith("unreadable:")
    artifacts.select(str(bad))
    assert artifacts.detail.topLevelItem(artifacts.detail.topLevelItemCount() - 1).text(0) == "Error"


def test_the_real_sample_shows_its_header_and_io(panel, qtbot, sample_neff):
    artifacts, workdir = panel
    target = workdir / "sample" / sample_neff.name
    target.parent.mkdir(parents=True)
    shutil.copy(sample_neff, target)  # into the test's temporary workdir only
    scan(qtbot, artifacts)
    art = artifacts.artifacts[0]
    assert art.neff.info.compiler_version == "2.23.6484.0"
    artifacts.select(art.key)
    text = [
        artifacts.detail.topLevelItem(i).text(0) + "=" + artifacts.detail.topLevelItem(i).text(1)
        for i in range(artifacts.detail.topLevelItemCount())
    ]
    assert "Target=trn2 (cayman)" in text  # as users name it, the NEFF's codename beside
    inputs = next(
        artifacts.detail.topLevelItem(i)
        for i in range(artifacts.detail.topLevelItemCount())
        if artifacts.detail.topLevelItem(i).text(0) == "Inputs"
    )
    assert [inputs.child(i).text(0) for i in range(inputs.childCount())] == ["x", "y"]


def test_actions_copy_reopen_and_delete(panel, window, qtbot):
    artifacts, workdir = panel
    llama = load_preset("llama3.1-8b")
    job_dir = make_job(workdir, "job-llama", spec=llama)
    make_job(workdir, "job-cpu", neff=False)
    scan(qtbot, artifacts)
    assert {a.job_id for a in artifacts.artifacts} == {"job-llama", "job-cpu"}
    artifacts.select(str(job_dir / "compiler" / "graph.neff"))
    assert all(b.isEnabled() for b in artifacts.buttons.values())
    artifacts.buttons["copy_path"].click()
    assert QGuiApplication.clipboard().text() == str(job_dir / "compiler" / "graph.neff")
    artifacts.buttons["copy_reproduce"].click()
    assert QGuiApplication.clipboard().text() == "print('reproduce me')\n"
    with qtbot.waitSignal(artifacts.spec_requested):
        artifacts.buttons["reopen"].click()
    assert window.form.spec().name == "llama3.1-8b" and window.form.spec().rope.max_pos == 131072
    asked = []
    artifacts.confirm = lambda text: asked.append(text) or False
    artifacts.buttons["delete"].click()
    assert asked and job_dir.exists()  # declined: nothing happens
    artifacts.confirm = lambda text: True
    with qtbot.waitSignal(artifacts.scanned, timeout=30_000):
        artifacts.buttons["delete"].click()
    assert not job_dir.exists()
    assert [a.job_id for a in artifacts.artifacts] == ["job-cpu"]


def test_delete_refuses_anything_but_a_job_directory(tmp_path):
    from neffbench.jobs.workdir_jobs import delete_job

    (tmp_path / "workdir" / "notajob").mkdir(parents=True)
    with pytest.raises(ValueError):
        delete_job(tmp_path / "workdir", tmp_path / "workdir" / "notajob")
    with pytest.raises(ValueError):
        delete_job(tmp_path / "workdir", tmp_path)


def _listing_workdir(workdir):
    """An old job with a NEFF, its compare's tapped job (newer), a failed job, and a newest job with a NEFF whose
    pre-flight check named its tensors."""
    old = make_job(workdir, "seed-20260101T000000Z-7696da23")
    write_job(
        old, spec=to_dict(load_preset("seed")), neffs=[old / "compiler" / "graph.neff"], created="2026-01-01T00:00:00Z"
    )
    taps = make_job(workdir, "seed-taps-20260105T000000Z-0badc0de")
    write_job(
        taps,
        spec=to_dict(load_preset("seed")),
        neffs=[taps / "compiler" / "graph.neff"],
        created="2026-01-05T00:00:00Z",
        taps_request={"of": "seed-20260101T000000Z-7696da23", "patterns": ["*"]},
    )
    make_job(workdir, "seed-20260103T000000Z-50051aec", neff=False)
    write_job(workdir / "seed-20260103T000000Z-50051aec", outcome="failed", created="2026-01-03T00:00:00Z")
    new = make_job(workdir, "seed-20260104T000000Z-a04883a1")
    write_job(
        new,
        spec=to_dict(load_preset("seed")),
        neffs=[new / "compiler" / "graph.neff"],
        created="2026-01-04T00:00:00Z",
        preflight={"interface": {"inputs": ["input0 <- query"], "outputs": ["output0 <- rotated"]}},
    )


def test_rows_are_newest_first_with_variants_folded_under_their_job(panel, qtbot):
    artifacts, workdir = panel
    _listing_workdir(workdir)
    scan(qtbot, artifacts)
    tops = [artifacts.list.topLevelItem(i) for i in range(artifacts.list.topLevelItemCount())]
    # NEFFs and a failed job in one order, the newest first; the tapped job is not a row of its own.
    assert [t.text(1) for t in tops] == [
        "seed-20260104T000000Z-a04883a1",
        "seed-20260103T000000Z-50051aec",
        "seed-20260101T000000Z-7696da23",
    ]
    old = tops[2]
    assert old.childCount() == 1 and old.child(0).text(1) == "seed-taps-20260105T000000Z-0badc0de"
    assert not old.isExpanded()
    artifacts.select(str(workdir / "seed-taps-20260105T000000Z-0badc0de"))  # still reachable
    assert [a.job_id for a in artifacts.selected()] == ["seed-taps-20260105T000000Z-0badc0de"]


def test_a_neffs_tensors_carry_the_modules_names(panel, qtbot):
    artifacts, workdir = panel
    _listing_workdir(workdir)
    scan(qtbot, artifacts)
    newest = artifacts.list.topLevelItem(0)
    assert newest.text(5) == "input0 (query) float32[4,8] -> output0 (rotated) float32[4,8]"
    assert "(" not in artifacts.list.topLevelItem(2).text(5)  # a job that recorded no names: the NEFF's own
    artifacts.select(str(workdir / "seed-20260104T000000Z-a04883a1"))
    inputs = artifacts.detail.findItems("Inputs", Qt.MatchFlag.MatchExactly, 0)[0]
    assert inputs.child(0).text(0) == "input0 (query)"


@pytest.mark.parametrize("size", [(1024, 700), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_columns_that_matter_are_on_screen(window, panel, qtbot, size):
    from neffbench.gui.artifacts.panel import COLUMNS

    artifacts, workdir = panel
    _listing_workdir(workdir)
    window.resize(*size)
    window.tabs.setCurrentIndex(ARTIFACTS_TAB)
    qtbot.waitUntil(artifacts.isVisible, timeout=30_000)
    scan(qtbot, artifacts)
    header, room = artifacts.list.header(), artifacts.list.viewport().width()
    qtbot.waitUntil(lambda: header.length() <= room + 1, timeout=30_000)
    shown = [title for col, title in enumerate(COLUMNS) if not header.isSectionHidden(col)]
    # In a narrow window the compiler and target step aside (the NEFF tab below shows them), the others stay.
    wide = size[0] > 1024
    assert shown == list(COLUMNS) if wide else [c for c in COLUMNS if c not in ("Compiler", "Target")]
    for col in range(header.count()):
        if not header.isSectionHidden(col):
            assert header.sectionViewportPosition(col) + header.sectionSize(col) <= room + 1, COLUMNS[col]
            needs = max(artifacts.list.sizeHintForColumn(col), header.sectionSizeHint(col))
            assert header.sectionSize(col) >= min(needs, 100), COLUMNS[col]  # whole, or enough to tell rows apart

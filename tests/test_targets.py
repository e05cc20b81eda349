"""Targets as users name them (trn1, inf2, trn2, trn3), with the NEFF's codename in parentheses where it is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from neffbench import targets
from neffbench.cli.main import main
from neffbench.spec import TARGETS, CompilerSpec, dumps_toml
from tests.fakes.neuronx_cc import CODENAMES as FAKE_CODENAMES
from tests.neff_factory import build_neff

IO = {"inputs": {"x": ("float16", (4, 8))}, "outputs": {"output0": ("float16", (4, 8))}}


# ---- the mapping (plain Python) ----


def test_every_spec_target_has_a_codename_and_agrees_with_the_fake_compiler():
    assert TARGETS == targets.FAMILIES
    assert {f: targets.codename(f) for f in TARGETS} == FAKE_CODENAMES


def test_a_family_reads_with_its_codename():
    assert targets.family_label("trn2") == "trn2 (cayman)"
    assert targets.family_label("trn1") == "trn1 (sunda)"
    assert targets.family_label("inf2") == "inf2 (sunda)"
    assert targets.family_label("trn3") == "trn3 (mariana)"
    assert targets.family_label("trn9") == "trn9"  # unknown: as given, nothing invented


def test_a_codename_reads_as_the_families_it_stands_for():
    assert targets.families_of("sunda") == ("trn1", "trn1n", "inf2")
    assert targets.codename_label("sunda") == "trn1/inf2 (sunda)"  # trn1n is a trn1
    assert targets.codename_label("cayman") == "trn2 (cayman)"
    assert targets.codename_label("atlantis") == "atlantis"
    assert targets.codename_label(None) == "unknown"


def test_only_trn2_and_later_take_lnc():
    assert [f for f in TARGETS if targets.supports_lnc(f)] == ["trn2", "trn3"]


def test_the_host_check_refuses_only_over_a_codename_a_real_neff_has_shown():
    assert targets.confirmed_codename("trn2") == "cayman" and targets.confirmed_codename("inf2") == "sunda"
    assert targets.confirmed_codename("trn3") is None


def test_the_target_field_offers_the_labels_and_keeps_the_values():
    meta = CompilerSpec.__dataclass_fields__["target"].metadata
    assert meta["choices"] == TARGETS
    assert meta["choice_labels"]["trn2"] == "trn2 (cayman)"


# ---- the CLI ----


def test_inspect_names_the_family_with_the_codename(sample_neff: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["inspect", str(sample_neff)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("target"))
    assert line.split(None, 1)[1] == "trn2 (cayman), kelf 0.5, subgraphs: sg00, sg01"
    assert main(["inspect", str(sample_neff), "--json"]) == 0
    assert '"target": "cayman"' in capsys.readouterr().out  # machines get what the NEFF says


def test_list_shows_a_target_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    build_neff(tmp_path / "a" / "graph.neff", **IO, target="sunda")
    build_neff(tmp_path / "b" / "graph.neff", **IO, target="cayman")
    assert main(["list", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split()
    assert header[:5] == ["path", "size", "modified", "name", "target"]
    rows = {line.split()[0]: line for line in lines[1:-1]}
    assert "trn1/inf2 (sunda)" in rows["a/graph.neff"] and "trn2 (cayman)" in rows["b/graph.neff"]


def test_the_artifacts_model_names_the_target(tmp_path: Path):
    from neffbench.jobs.workdir_jobs import scan

    build_neff(tmp_path / "job" / "graph.neff", **IO, target="sunda")
    assert [a.target for a in scan(tmp_path)] == ["trn1/inf2 (sunda)"]


# ---- the window ----


@pytest.mark.gui
def test_the_form_shows_target_labels_while_the_spec_keeps_the_value(window, qtbot):
    window.apply_preset("seed")
    combo = window.form.editor("compiler.target").widget
    assert combo.currentText() == "trn2 (cayman)" and window.form.spec().compiler.target == "trn2"
    assert [combo.itemText(i) for i in range(combo.count())] == [
        "inf2 (sunda)",
        "trn1 (sunda)",
        "trn1n (sunda)",
        "trn2 (cayman)",
        "trn3 (mariana)",
    ]
    combo.setCurrentIndex(combo.findData("trn1"))
    assert window.form.spec().compiler.target == "trn1"
    assert 'target = "trn1"' in dumps_toml(window.form.spec())


@pytest.mark.gui
def test_the_artifacts_list_target_column(window, qtbot, tmp_path):
    workdir = tmp_path / "workdir"
    build_neff(workdir / "job" / "graph.neff", **IO, target="cayman")
    artifacts = window.panels.artifacts
    with qtbot.waitSignal(artifacts.scanned, timeout=30_000):
        artifacts.rescan()
    header = artifacts.list.headerItem()
    column = next(i for i in range(header.columnCount()) if header.text(i) == "Target")
    assert artifacts.list.topLevelItem(0).text(column) == "trn2 (cayman)"

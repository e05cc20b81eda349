"""Job records are read through one typed view (old layouts included); backends are named by one registry."""

from __future__ import annotations

import json

import pytest

from neffbench.backends import registry
from neffbench.jobs import summary
from neffbench.views.job import SCHEMA_VERSION, JobView, RecordError, bucket_of
from tests.neff_factory import write_job
from tests.test_old_job_dirs import _old_job


def test_every_old_job_directory_reads_into_a_view(tmp_path):
    old = json.loads((_old_job(tmp_path, "") / "job.json").read_text())
    view = JobView.of(old)
    assert view.bucket == {"num_tokens": 1} == bucket_of(old)  # before kernels: num_tokens only
    assert (view.kernel, view.backend, view.outcome, view.duration_s) == (None, "neuron", "succeeded", 12.5)
    assert view.backend_class is registry.get("neuron") and not view.no_neff_by_design
    assert view.neffs[0]["path"] == "compiler/graph.neff" and view.metrics == {"compile_s": 10.0}
    assert JobView.of(view) is view
    factory = json.loads(write_job(tmp_path / "factory").read_text())
    assert JobView.of(factory).job_id == "factory" and JobView.of(factory).bucket == {}


def test_a_record_without_a_schema_version_is_the_first_layout():
    assert JobView.of({"outcome": "failed"}).schema_version == 1


def test_missing_and_mistyped_fields_are_none_or_empty():
    view = JobView.of(
        {
            "schema_version": 1,
            "neffs": "not a list",
            "duration_s": True,
            "cache": None,
            "warnings": None,
            "backend": 7,
            "bucket": "b",
            "extra": {"kept": 1},
        }
    )
    assert view.neffs == () and view.duration_s is None and view.cache == {} and view.warnings == ()
    assert view.backend is None and view.backend_class is None and view.bucket == {}
    assert view.raw["extra"] == {"kept": 1}  # unknown fields are kept, not read


def test_an_unknown_backend_name_in_a_record_is_no_backend():
    view = JobView.of({"backend": "some-future-backend", "neffs": []})
    assert view.backend_class is None and not view.no_neff_by_design
    assert summary.describe_neffs(view) == ["no NEFF: none was found under the job directory"]


def test_a_record_from_a_newer_schema_is_refused_with_a_sentence():
    with pytest.raises(RecordError, match=rf"schema_version {SCHEMA_VERSION + 1}, newer than this neffbench reads"):
        JobView.of({"schema_version": SCHEMA_VERSION + 1}, "wd/job/job.json")
    with pytest.raises(RecordError, match="not a job record object"):
        JobView.of([1, 2])  # type: ignore[arg-type]


def test_a_cpu_check_record_says_it_makes_no_neff_through_its_class():
    view = JobView.of({"backend": "cpu-check", "neffs": []})
    assert view.no_neff_by_design
    assert summary.neff_cell(view) == registry.get("cpu-check").neff_note == "no NEFF (cpu-check)"


def test_the_registry_names_each_backend_once_and_refuses_unknown_names():
    assert tuple(registry.REGISTRY) == ("neuron", "torchneuron", "cpu-check")
    assert registry.CHOICES == ("auto", "neuron", "torchneuron", "cpu-check")
    assert registry.NEFF_BACKENDS == ("neuron", "torchneuron")
    for name, cls in registry.REGISTRY.items():
        assert cls.name == name and cls.label and cls.short
    with pytest.raises(registry.UnknownBackend) as caught:
        registry.get("tpu")
    assert str(caught.value) == "unknown backend 'tpu'; known backends: neuron, torchneuron, cpu-check"
    assert registry.recorded("tpu") is None and registry.recorded(None) is None


def test_what_each_backend_says_of_its_jobs():
    legacy, torchneuron, cpu = (registry.get(n) for n in ("neuron", "torchneuron", "cpu-check"))
    assert [c.makes_neff for c in (legacy, torchneuron, cpu)] == [True, True, False]
    assert torchneuron.neff_copies == ("debug",) and not torchneuron.keeps_model_pt
    assert not cpu.runs_compiler and cpu.no_neff_reason() == "a cpu-check job makes no NEFF"
    assert registry.neff_in_model_pt("neuron") and not registry.neff_in_model_pt("torchneuron")
    assert not registry.neff_in_model_pt("cpu-check") and registry.makes_no_neff("cpu-check")


def test_the_worker_refuses_an_unknown_backend_naming_the_choices():
    from neffbench.backends.base import JobFailure
    from neffbench.backends.choose import resolve
    from neffbench.presets import load_preset

    with pytest.raises(JobFailure, match="unknown backend 'tpu'; expected one of auto, neuron, torchneuron, cpu-check"):
        resolve("tpu", load_preset("seed"))

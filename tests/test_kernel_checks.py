"""A kernel is checked as it loads: each way of breaking the declared hooks is named in one sentence."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from neffbench.kernels import checks
from neffbench.kernels.api import Built, Kernel


@dataclass
class _Spec:
    kernel: str = "probe_kernel"


class _Sound(Kernel):
    name = "probe_kernel"
    spec_class = _Spec

    def build(self, spec):
        return Built(module=None, inputs=(), input_names=())


def _problems(**members) -> list[str]:
    cls = type("Probe", (_Sound,), members)
    return checks.problems(cls(), "probe_kernel")


def test_a_sound_kernel_has_no_problems():
    assert _problems() == []
    assert _problems(commands={"hello": "pkg.hello_cmd"}, probe_requests={"hello": "pkg.hello:report"}) == []


@pytest.mark.parametrize(
    ("members", "sentence"),
    [
        ({"bucket": lambda self, spec: []}, "defines bucket, which is no hook"),
        ({"buckets": lambda self, other: []}, "hook buckets(other) must take (spec)"),
        ({"buckets": lambda self, spec, extra: []}, "hook buckets requires extra, which the workbench never passes"),
        ({"title": lambda self: "x"}, "defines title as a method, but title is a value"),
        ({"preview": "not a method"}, "sets preview to str, but preview is a hook"),
        ({"commands": ["resolve"]}, "sets commands to a list, but kernels/api.py declares a dict"),
        ({"probe_requests": {"resolve": 3}}, "probe_requests must map names to qualified names"),
        ({"runs_user_code": "yes"}, "sets runs_user_code to a str, but kernels/api.py declares a bool"),
    ],
)
def test_each_way_of_breaking_a_hook_is_named(members, sentence):
    found = _problems(**members)
    assert len(found) == 1 and sentence in found[0], found


def test_name_spec_class_and_build_are_checked():
    class NoBuild(Kernel):
        name = "other"
        spec_class = dict

    found = checks.problems(NoBuild(), "registered")
    assert "names itself 'other'" in found
    assert "does not implement build" in found
    assert any("which is not a dataclass" in p for p in found)
    assert checks.problems(object(), "x") == ["is of type object, not a neffbench.kernels.api.Kernel"]

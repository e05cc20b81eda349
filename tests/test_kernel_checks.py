"""A kernel is checked as it loads: each way of breaking the declared hooks is named in one sentence."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from neffbench.kernels import hook_checks
from neffbench.kernels.api import Built, Kernel
from neffbench.kernels.cli_contribution import CliContribution


@dataclass
class _Spec:
    kernel: str = "probe_kernel"


class _Sound(Kernel):
    name = "probe_kernel"
    spec_class = _Spec

    def build(self, spec):
        return Built(module=None, inputs=(), input_names=())

    def reproduce_source(self, spec, built):
        return ""


def _problems(**members) -> list[str]:
    cls = type("Probe", (_Sound,), members)
    return hook_checks.problems(cls(), "probe_kernel")


def _cli(**members) -> CliContribution:
    return type("ProbeCli", (CliContribution,), members)()


def test_a_sound_kernel_has_no_problems():
    assert _problems() == []
    assert _problems(probe_requests={"hello": "pkg.hello:report"}) == []
    assert _problems(cli=_cli(commands={"hello": "pkg.hello_cmd"}, source_help="a thing")) == []


@pytest.mark.parametrize(
    ("members", "sentence"),
    [
        ({"bucket": lambda self, spec: []}, "defines bucket, which is no hook"),
        ({"buckets": lambda self, other: []}, "hook buckets(other) must take (spec)"),
        ({"buckets": lambda self, spec, extra: []}, "hook buckets requires extra, which the workbench never passes"),
        ({"title": lambda self: "x"}, "defines title as a method, but title is a value"),
        ({"preview": "not a method"}, "sets preview to str, but preview is a hook"),
        ({"probe_requests": ["resolve"]}, "sets probe_requests to a list, but kernels/api.py declares a dict"),
        ({"probe_requests": {"resolve": 3}}, "probe_requests must map names to qualified names"),
        ({"runs_user_code": "yes"}, "sets runs_user_code to a str, but kernels/api.py declares a bool"),
        ({"cli": object()}, "sets cli to a object, but it must be a CliContribution"),
        ({"cli": _cli(commands=["resolve"])}, "sets cli.commands to a list, but kernels/cli_contribution.py declares"),
        ({"cli": _cli(commands={"resolve": 3})}, "cli.commands must map names to qualified names"),
        ({"cli": _cli(add_option=lambda self, group: None)}, "defines cli.add_option, which is no hook"),
        ({"cli": _cli(apply_options=lambda self, args: None)}, "hook cli.apply_options(args) must take (spec, args)"),
        (
            {"add_cli_options": lambda self, group: None},
            "defines add_cli_options, which is a hook of its command-line contribution now: cli = a CliContribution "
            "whose add_options it is",
        ),
    ],
)
def test_each_way_of_breaking_a_hook_is_named(members, sentence):
    found = _problems(**members)
    assert len(found) == 1 and sentence in found[0], found


def test_name_spec_class_and_build_are_checked():
    class NoBuild(Kernel):
        name = "other"
        spec_class = dict

    found = hook_checks.problems(NoBuild(), "registered")
    assert "names itself 'other'" in found
    assert "does not implement build, reproduce_source (required: kernels/api.py has no default)" in found
    assert any("which is not a dataclass" in p for p in found)
    assert hook_checks.problems(object(), "x") == ["is of type object, not a neffbench.kernels.api.Kernel"]


def test_a_kernel_without_its_reproduction_source_is_refused_as_it_loads():
    """Every job writes reproduce.py: a kernel that cannot would load, then fail every job."""

    class NoScript(Kernel):
        name = "probe_kernel"
        spec_class = _Spec

        def build(self, spec):
            return Built(module=None, inputs=(), input_names=())

    assert hook_checks.problems(NoScript(), "probe_kernel") == [
        "does not implement reproduce_source (required: kernels/api.py has no default)"
    ]


def test_the_required_hooks_are_the_ones_without_a_default():
    required = sorted(n for n, v in vars(Kernel).items() if getattr(v, "required", False))
    assert required == ["build", "reproduce_source"]

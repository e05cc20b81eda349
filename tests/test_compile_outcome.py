"""What a compile of every bucket came to is one rule: the window's status line and the command's exit code say it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from neffbench.jobs import run_outcome


def _jobs(*outcomes: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(outcome=o, view=SimpleNamespace(cache_hit=False, makes_neff=True)) for o in outcomes]


@pytest.mark.parametrize(
    ("outcomes", "cancelled", "expected"),
    [
        (("succeeded", "succeeded"), False, "succeeded"),
        (("succeeded", "failed"), False, "failed"),
        (("succeeded", "interrupted"), False, "failed"),
        (("failed", "cancelled"), False, "cancelled"),
        (("succeeded",), True, "cancelled"),
        ((), False, "failed"),
    ],
)
def test_a_compile_succeeds_only_when_every_bucket_did_and_a_cancel_wins(outcomes, cancelled, expected):
    from neffbench.gui.compile.controller import CompileRun

    assert run_outcome(_jobs(*outcomes), cancelled) == expected
    assert CompileRun(spec=None, results=_jobs(*outcomes), cancelled=cancelled).outcome == expected


def test_the_command_exits_as_the_compile_came_to(monkeypatch):
    """The exit code follows the same outcome (130 cancelled, 1 failed, 0 succeeded)."""
    import threading

    from neffbench.cli import compile_cmd

    for outcomes, cancel, code in [
        (("succeeded",), False, 0),
        (("succeeded", "failed"), False, 1),
        (("failed",), True, 130),
    ]:
        event = threading.Event()
        if cancel:
            event.set()
        monkeypatch.setattr(compile_cmd, "_checked", lambda *a: (None, None))
        monkeypatch.setattr(compile_cmd, "_compile", lambda *a, o=outcomes, e=event: (_jobs(*o), [], e))
        monkeypatch.setattr(compile_cmd, "_print_results", lambda args, results: None)
        assert compile_cmd._run(SimpleNamespace(), None) == code

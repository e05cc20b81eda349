"""Answers you can trust: the classes of real compiler output that used to be misread (issue "Answers you
can trust"), each read live line by line and by ``explain``; the corpus logs of the same shapes are in
tests/data/compiler_logs/ (see its README)."""

from __future__ import annotations

from neffbench.compilerlog.explain import explain_text
from neffbench.compilerlog.reader import CompilerLog
from neffbench.compilerlog.scan import is_boring


def _live(lines: list[str]) -> CompilerLog:
    log = CompilerLog()
    for line in lines:
        log.feed(line)
    return log


def _both(lines: list[str]) -> tuple[CompilerLog, dict]:
    """The live reader's result and explain's, checked to agree on the first error."""
    live, got = _live(lines), explain_text("\n".join(lines) + "\n").to_json()
    first = live.first_error
    assert (first.to_json() if first else None) == got["first_error"]
    return live, got


# ---- 1. a pass whose name holds "error" is a pass -----------------------------------------------------------

def test_a_pass_named_error_injector_is_a_pass_and_no_failure():
    lines = ["2024-01-09T08:14:02Z Running error_injector",
             "2024-01-09T08:14:02Z error_injector finished after 0.004 seconds",
             "2024-01-09T08:14:03Z INFO 77 [root]: Subcommand returned with exitcode=0"]
    live, got = _both(lines)
    assert [(p.name, p.duration_s) for p in live.passes] == [("error_injector", 0.004)]
    assert got["errors"] == [] and got["outcome"] == "passed"


def test_running_pass_and_finished_pass_make_a_run_timed_by_their_timestamps():
    lines = ["2025-03-04T10:11:12.250Z INFO 4242 [sg0000/Tensorizer/ErrorInjector]: Running pass ErrorInjector",
             "2025-03-04T10:11:13.000Z INFO 4242 [sg0000/Tensorizer/ErrorInjector]: Finished pass ErrorInjector",
             "2025-03-04T10:11:13Z Running pass FaultInjection",
             "2025-03-04T10:11:14Z Finished pass FaultInjection in 0.8 seconds",
             "Compiler status PASS"]
    live, got = _both(lines)
    assert got["passes"] == [{"name": "ErrorInjector", "seconds": 0.75}, {"name": "FaultInjection", "seconds": 0.8}]
    assert got["errors"] == [] and got["outcome"] == "passed" and not live.pass_tracker.unfinished()
    # The fast scan must not skip the end of such a run as an uninteresting INFO record.
    assert not is_boring(lines[1])


def test_a_pass_that_failed_is_still_a_failure():
    _, got = _both(["2024-01-09T08:14:02Z Running error_injector",
                    "2024-01-09T08:14:02Z error_injector failed after 0.2 seconds"])
    assert got["first_error"]["message"] == "error_injector failed after 0.2 seconds"

"""Answers you can trust: the classes of real compiler output that used to be misread (issue "Answers you
can trust"), each read live line by line and by ``explain``; the corpus logs of the same shapes are in
tests/data/compiler_logs/ (see its README)."""

from __future__ import annotations

from neffbench.compilerlog.explain import explain_text
from neffbench.compilerlog.lines import parse_line
from neffbench.compilerlog.reader import CompilerLog
from neffbench.compilerlog.scan import is_boring
from neffbench.compilerlog.wrapping import by_characters, logical_lines, wrap_width


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
    lines = [
        "2024-01-09T08:14:02Z Running error_injector",
        "2024-01-09T08:14:02Z error_injector finished after 0.004 seconds",
        "2024-01-09T08:14:03Z INFO 77 [root]: Subcommand returned with exitcode=0",
    ]
    live, got = _both(lines)
    assert [(p.name, p.duration_s) for p in live.passes] == [("error_injector", 0.004)]
    assert got["errors"] == [] and got["outcome"] == "passed"


def test_running_pass_and_finished_pass_make_a_run_timed_by_their_timestamps():
    lines = [
        "2025-03-04T10:11:12.250Z INFO 4242 [sg0000/Tensorizer/ErrorInjector]: Running pass ErrorInjector",
        "2025-03-04T10:11:13.000Z INFO 4242 [sg0000/Tensorizer/ErrorInjector]: Finished pass ErrorInjector",
        "2025-03-04T10:11:13Z Running pass FaultInjection",
        "2025-03-04T10:11:14Z Finished pass FaultInjection in 0.8 seconds",
        "Compiler status PASS",
    ]
    live, got = _both(lines)
    assert got["passes"] == [{"name": "ErrorInjector", "seconds": 0.75}, {"name": "FaultInjection", "seconds": 0.8}]
    assert got["errors"] == [] and got["outcome"] == "passed" and not live.pass_tracker.unfinished()
    # The fast scan must not skip the end of such a run as an uninteresting INFO record.
    assert not is_boring(lines[1])


def test_a_pass_that_failed_is_still_a_failure():
    _, got = _both(
        ["2024-01-09T08:14:02Z Running error_injector", "2024-01-09T08:14:02Z error_injector failed after 0.2 seconds"]
    )
    assert got["first_error"]["message"] == "error_injector failed after 0.2 seconds"


# ---- 2. records with a thread id ----------------------------------------------------------------------------


def test_thread_id_records_in_every_form_are_records():
    iso = parse_line("2025-03-04T10:11:12.345Z USER 4242 139912345 [root/Tensorizer]: [NLA001] tensor size 0")
    assert (iso.level, iso.pid, iso.tid, iso.logger, iso.codes) == (
        "USER",
        4242,
        139912345,
        "root/Tensorizer",
        ("NLA001",),
    )
    old = parse_line("06/16/2021 04:16:55 PM ERROR 12345 139912345 [WalrusDriver]: Bad input file")
    assert (old.level, old.pid, old.tid, old.logger, old.message) == (
        "ERROR",
        12345,
        139912345,
        "WalrusDriver",
        "Bad input file",
    )
    absl = parse_line("F0000 00:00:1741083072.345678    4242 debug_macros.h:20] Check failed: status.ok()")
    assert (absl.kind, absl.level, absl.tid, absl.logger, absl.message) == (
        "glog",
        "FATAL",
        4242,
        "debug_macros.h:20",
        "Check failed: status.ok()",
    )


def test_an_error_record_with_a_thread_id_is_an_error():
    _, got = _both(["2025-03-04T10:11:12,020Z ERROR 4242 139912345 (nc01/sg00) [Tensorizer]: Unsupported reduce"])
    assert got["first_error"] == {"code": None, "message": "Unsupported reduce", "level": "ERROR", "line": 1}


def test_numbers_before_no_logger_are_the_message_not_a_pid_and_thread():
    rec = parse_line("2024-10-07T21:55:32Z 3 modules need more than 24 MB of state buffer")
    assert rec.message == "3 modules need more than 24 MB of state buffer" and rec.pid is None
    rec = parse_line("2024-10-07T21:55:32Z ERROR 4242 12 instructions failed to schedule")
    assert (rec.pid, rec.tid, rec.message) == (4242, None, "12 instructions failed to schedule")


def test_another_threads_indented_record_does_not_continue_this_one():
    head = "2025-07-21T14:02:33Z ERROR 30524 {} [neuronxcc.driver.CommandDriver]: "
    live, _ = _both(
        [
            head.format(1401) + "[NCC_EOOM002] module sg0000 needs 26 MB of state buffer",
            head.format(1401) + "  largest tensor: attn.4",
            head.format(1402) + "  module sg0001 was cancelled",
        ]
    )
    assert live.first_error.message.split("\n") == [
        "[NCC_EOOM002] module sg0000 needs 26 MB of state buffer",
        "largest tensor: attn.4",
    ]
    assert len(live.errors) == 2


# ---- 3. a code pushed onto the next line ---------------------------------------------------------------------


def test_a_terminal_width_paste_is_joined_back_without_spaces():
    version = (
        "2025-04-18T06:52:02Z INFO 77112 [root]: NeuronX Compiler version 2.19.1281.0+d51cdfa1 Python version 3.10"
    )
    logical = (
        "2025-04-18T06:52:37Z ERROR 77120 [neuronxcc.starfish.penguin.GraphRunner]: [NCC_EOOM001] The model "
        "needs 17.9 GB of device memory and the NeuronCore has 16 GB, 1.2 GB of it for spills and more"
    )
    lines = [text[i : i + 80] for text in (version, logical) for i in range(0, len(text), 80)]
    assert lines[2].endswith("NCC_") and wrap_width(lines) == 80 and by_characters(lines, 80)
    assert [text for _, text in logical_lines(lines)] == [version, logical]
    got = explain_text("\n".join(lines)).to_json()
    assert got["first_error"]["code"] == "NCC_EOOM001" and got["first_error"]["message"] == logical.split(": ", 1)[1]


def test_a_lone_path_longer_than_the_width_does_not_hide_the_wrap():
    lines = [
        "2025-01-22T03:41:07Z INFO 261408 [root]: NeuronX Compiler version 2.15.128.0",
        "/tmp/ubuntu/neuroncc_compile_workdir/7f3c2a91-0d4e-4b8a-9e61-52c0b7d1a3e4/model.MODULE_4410923385137700812.pb",
        "2025-01-22T03:44:52Z ERROR 261415 [neuronxcc.starfish.penguin.GraphRunner]:",
        "[XTP002] Instruction count 13104442 is above the threshold of 10000000",
    ]
    assert wrap_width(lines) == 80 and not by_characters(lines, 80)
    got = explain_text("\n".join(lines)).to_json()
    assert got["first_error"] == {
        "code": "XTP002",
        "level": "ERROR",
        "line": 3,
        "message": "[XTP002] Instruction count 13104442 is above the threshold of 10000000",
    }


def test_a_code_on_a_continuation_line_is_the_errors_code():
    live, _ = _both(
        [
            "2025-01-22T03:44:52Z ERROR 615 [neuronxcc.driver.CommandDriver]: The HLO verifier stopped the "
            "compile of graph sg0000:",
            "[NCC_EVRF004] scatter.1187 reduces with a multiply",
            "2025-01-22T03:44:53Z ERROR 615 [root]: Compilation failed",
        ]
    )
    first = live.first_error
    assert (first.code, first.line) == ("NCC_EVRF004", 1) and first.message.endswith("reduces with a multiply")
    assert live.codes == ["NCC_EVRF004"]
    # Under a record that is no error the line is still the message's, and its code still a code of the output.
    quiet = _live(
        [
            "2025-01-22T03:44:52Z INFO 615 [root]: Retrying the graph the cache marks as failed:",
            "the earlier compile stopped with NCC_EVRF004",
        ]
    )
    assert quiet.codes == ["NCC_EVRF004"] and quiet.first_error is None


# ---- 4. the compiler's message before its harness's report --------------------------------------------------

CAUSE = "2023-10-16T09:31:44Z Too many instructions after unroll for function sg0001 !"


def test_a_rust_panic_alone_is_the_first_error_with_its_payload():
    live, got = _both(
        [
            "thread 'main' panicked at src/compile.rs:112:17:",
            "`neuronx-cc compile --framework=XLA m.pb --target=trn1 --output m.neff` exited with status 70",
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        ]
    )
    assert live.first_error.message.split("\n")[0] == "thread 'main' panicked at src/compile.rs:112:17:"
    assert len(live.errors) == 1 and got["exit_code"] == 70
    assert got["command"] == "neuronx-cc compile --framework=XLA m.pb --target=trn1 --output m.neff"


def test_an_xla_fatal_alone_is_the_first_error():
    _, got = _both(["F0000 00:00:1741083072.345678    4242 pjrt_computation_client.cc:664] Check failed: compiled"])
    assert got["first_error"]["level"] == "FATAL" and got["first_error"]["message"] == "Check failed: compiled"


def test_the_compilers_message_wins_wherever_the_harness_report_stands():
    reports = [
        "thread 'main' panicked at src/compile.rs:9:5: neuronx-cc failed: exit status: 70",
        "F0000 00:00:1741083072.345678    4242 debug_macros.h:20] Check failed: neuronx-cc exited with 70",
        "2025-02-03 18:31:55.000112:  9921  ERROR ||NEURON_CC_WRAPPER||: Compilation failed for m.pb",
        "RuntimeError: neuronx-cc failed with 70",
        "subprocess.CalledProcessError: Command '['neuronx-cc', 'compile']' returned non-zero exit status 70.",
    ]
    for report in reports:
        for lines in ([report, "", CAUSE], [CAUSE, "", report]):
            live, got = _both(lines)
            assert got["first_error"]["message"] == CAUSE.split("Z ", 1)[1], lines
            assert len(live.errors) == 2, lines


def test_an_exception_raised_in_the_compiler_is_the_compilers_own():
    lines = [
        "Process Process-1:",
        "Traceback (most recent call last):",
        '  File "neuronxcc/driver/jobs/Frontend.py", line 216, in neuronxcc.driver.jobs.Frontend.runXLAFrontend',
        "KeyError: 'dot.12'",
        "Traceback (most recent call last):",
        '  File "/home/u/run.py", line 9, in <module>',
        "    trace(model)",
        "RuntimeError: neuronx-cc failed with 70",
    ]
    _, got = _both(lines)
    assert got["first_error"]["message"] == "KeyError: 'dot.12'"

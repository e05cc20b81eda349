"""Understanding neuronx-cc output: records, passes, codes, status, exit codes, commands and the first error."""

from __future__ import annotations

from neffbench.compilerlog.commands import command_from_text, dropped_options
from neffbench.compilerlog.exits import meaning as explain_exit_code
from neffbench.compilerlog.lines import parse_line
from neffbench.compilerlog.passes import pass_path
from neffbench.compilerlog.reader import CompilerLog


def test_record_fields():
    rec = parse_line(
        "2024-12-04T01:01:23Z INFO 10200 [root]: Pipeline: Frontend WalrusDriver BIRLinker Kelper SaveTemps"
    )
    assert rec.is_record
    assert (rec.timestamp, rec.level, rec.pid, rec.logger) == ("2024-12-04T01:01:23Z", "INFO", 10200, "root")
    assert rec.message == "Pipeline: Frontend WalrusDriver BIRLinker Kelper SaveTemps"
    assert rec.codes == ()


def test_user_level_and_code():
    rec = parse_line("2024-08-15T14:51:19Z USER 3835 [root/Tensorizer]: [NLA001] Unhandled exception with message: x")
    assert rec.level == "USER" and rec.pid == 3835 and rec.logger == "root/Tensorizer"
    assert rec.codes == ("NLA001",)


def test_old_format_and_level_without_pid():
    rec = parse_line("06/16/2021 04:17:15 PM CRITICAL [WalrusDriver]: Bad input file - failed static checks.")
    assert rec.timestamp == "06/16/2021 04:17:15 PM" and rec.level == "CRITICAL" and rec.pid is None
    assert rec.logger == "WalrusDriver"


def test_timestamp_and_code_without_level():
    rec = parse_line("2024-08-15T14:51:41Z [NLA001]  Unhandled exception with message: tensor size must be more than 0")
    assert rec.is_record and rec.level is None and rec.logger is None
    assert rec.codes == ("NLA001",)


def test_codes_anywhere_and_logger_names_are_not_codes():
    assert parse_line("[F134] neuronx-cc terminated abnormally").codes == ("F134",)
    # In the order they appear (codes_in keeps the text's order).
    assert parse_line("error NCC_EOOM001: out of memory; see [XTP002]").codes == ("NCC_EOOM001", "XTP002")
    assert parse_line("2024-08-15T14:51:19Z INFO 1 [job.Frontend.0]: Job #0 finished").codes == ()
    assert parse_line("2024-08-15T14:51:19Z INFO 1 [sg0000/Tensorizer/DumpGraph]: x").codes == ()
    assert not parse_line("plain text").is_record


def test_pass_path_is_the_same_for_start_and_end():
    assert pass_path("root/Frontend", "Frontend") == "root/Frontend"
    assert pass_path("root/Frontend/Frontend", "Frontend") == "root/Frontend"
    assert pass_path("sg0000/Tensorizer/BirCodeGenLoop", "BirCodeGenLoop") == "sg0000/Tensorizer/BirCodeGenLoop"
    assert pass_path("Tensorizer", "BirCodeGen") == "Tensorizer/BirCodeGen"
    assert pass_path(None, "Kelper") == "Kelper"


def test_passes_pipeline_and_status():
    log = CompilerLog()
    events = []
    for line in [
        "2024-12-04T01:01:23Z INFO 10200 [root]: Pipeline: Frontend WalrusDriver",
        "2024-08-15T14:51:04Z INFO 3835 [sg0000/Tensorizer/BirCodeGenLoop]: Running BirCodeGenLoop",
        "2024-08-15T14:51:13Z INFO 3835 [sg0000/Tensorizer/BirCodeGenLoop]: BirCodeGenLoop finished after 8.984 seconds",
        "2024-08-15T14:51:19Z USER 3835 [root/Tensorizer/Tensorizer]: Tensorizer finished after 288.153 seconds",
        ".",
        "Compiler status PASS",
    ]:
        keep, derived = log.feed(line)
        assert keep
        events += derived
    kinds = [(e["type"], e.get("name"), e.get("state")) for e in events]
    assert kinds == [
        ("pipeline", None, None),
        ("pass", "BirCodeGenLoop", "started"),
        ("pass", "BirCodeGenLoop", "finished"),
        ("pass", "Tensorizer", "finished"),
        ("compiler_status", None, None),
    ]
    assert events[2]["duration_s"] == 8.984
    summary = log.summary()
    assert summary["status"] == "PASS" and summary["pipeline"] == ["Frontend", "WalrusDriver"]
    timings = {p["path"]: p for p in summary["passes"]}
    assert timings["sg0000/Tensorizer/BirCodeGenLoop"]["started"] == "2024-08-15T14:51:04Z"
    assert timings["root/Tensorizer"]["duration_s"] == 288.153
    assert summary["first_error"] is None


def test_first_error_names_the_code_with_context():
    lines = [
        "2024-08-15T14:51:19Z INFO 1 [root/Frontend]: Running Frontend",
        "2024-08-15T14:51:19Z WARNING 1 [root]: a warning with no code",
        "2024-08-15T14:51:20Z ERROR 1 [neuronx-cc]: ***************************************************************",
        "2024-08-15T14:51:20Z ERROR 1 [neuronx-cc]:  An Internal Compiler Error has occurred",
        "2024-08-15T14:51:20Z USER 1 [root/WalrusDriver]: [NLA001] Unhandled exception with message: tensor size",
        "2024-08-15T14:51:20Z USER 1 [root/WalrusDriver]: [NLA001] Please open a support ticket",
        "Root cause only on stdout",
        "Compiler status FAIL",
        "Traceback (most recent call last):",
        "RuntimeError: neuronx-cc failed with 1",
        "one more",
        "and another",
    ]
    log = CompilerLog()
    for line in lines:
        log.feed(line)
    error = log.summary()["first_error"]
    assert error["code"] == "NLA001"
    assert error["message"].startswith("[NLA001] Unhandled exception")
    assert error["before"] == lines[0:4]
    assert error["after"] == lines[5:9]
    summary = log.summary()
    assert summary["status"] == "FAIL" and summary["exit_code"] == 1
    assert summary["error_codes"] == ["NLA001"]


def test_without_a_code_the_first_error_record_or_exception_is_used():
    log = CompilerLog()
    log.feed("2024-08-15T14:51:20Z ERROR 1 [neuronx-cc]: *****")
    log.feed("2024-08-15T14:51:20Z ERROR 1 [neuronx-cc]: Error message:  unexpected operator")
    log.feed("RuntimeError: neuronx-cc failed with -9")
    error = log.summary()["first_error"]
    assert error["code"] is None and error["message"] == "unexpected operator"
    assert log.summary()["exit_explanation"].startswith("killed by SIGKILL, most often by the out-of-memory killer")
    only_python = CompilerLog()
    only_python.feed("ValueError: example_inputs[0] is a int")
    assert only_python.summary()["first_error"]["message"] == "ValueError: example_inputs[0] is a int"


def test_exit_codes_explained():
    assert "out-of-memory" in explain_exit_code(-9)
    assert "SIGABRT" in explain_exit_code(-6)
    assert "SIGSEGV" in explain_exit_code(-11)
    assert explain_exit_code(None) is None
    assert explain_exit_code(3) == "exited with 3"


def test_the_copy_of_a_record_from_the_log_file_is_dropped_but_real_repeats_are_kept():
    log = CompilerLog()
    rec = "2023-06-15T12:11:12Z ERROR 85724 [neuronx-cc]: "
    kept = []
    # The compiler printed the same record twice on stdout (both real); the log file has both too.
    for line, from_logfile in [
        (rec, False),
        (rec, False),
        ("plain", False),
        (rec, True),
        (rec, True),
        ("2023-06-15T12:11:12Z DEBUG 85724 [root]: log file only", True),
    ]:
        keep, _ = log.feed(line, from_logfile=from_logfile)
        if keep:
            kept.append(line)
    assert kept == [rec, rec, "plain", "2023-06-15T12:11:12Z DEBUG 85724 [root]: log file only"]
    assert log.duplicates_dropped == 2
    # The log file may also be ahead of stdout.
    log2 = CompilerLog()
    assert log2.feed(rec, from_logfile=True)[0] and not log2.feed(rec)[0]


def test_command_from_command_txt_and_log():
    argv = command_from_text("neuronx-cc compile /w/model --framework XLA --target trn1 --output '/w/graph.neff'\n")
    assert argv == [
        "neuronx-cc",
        "compile",
        "/w/model",
        "--framework",
        "XLA",
        "--target",
        "trn1",
        "--output",
        "/w/graph.neff",
    ]
    log = CompilerLog()
    log.feed("2024-04-12T07:13:06Z DEBUG 1 [root]: Command line: neuronx-cc compile m --target trn2 --lnc 2")
    assert log.summary()["command_from_log"] == ["neuronx-cc", "compile", "m", "--target", "trn2", "--lnc", "2"]
    assert command_from_text("  ") is None


def test_dropped_options_right_most_wins():
    requested = ["--verbose", "info", "--target", "trn2", "--lnc", "2", "-O2", "--auto-cast", "none"]
    actual = [
        "neuronx-cc",
        "compile",
        "m",
        "--framework",
        "XLA",
        "--target",
        "trn1",
        "--output",
        "g.neff",
        "--verbose",
        "info",
        "--target",
        "trn2",
        "-O2",
        "--auto-cast=none",
    ]
    assert dropped_options(requested, actual) == ["--lnc 2"]
    assert dropped_options(requested, actual + ["--target", "trn1", "--lnc", "2"]) == ["--target trn2 (ran with trn1)"]
    assert dropped_options(None, actual) == [] and dropped_options(requested, None) == []

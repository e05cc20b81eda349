"""The worker's line protocol: event lines, log lines and incremental UTF-8 decoding."""

from __future__ import annotations

import pytest

from neffbench.procs import EVENT_PREFIX, LineSplitter, encode_event, parse_event, stage_event


def test_event_round_trip():
    event = {"type": "pass", "name": "Frontend", "state": "finished", "duration_s": 0.5, "text": "λ ✓"}
    line = encode_event(event)
    assert line.startswith(EVENT_PREFIX) and line.endswith("\n") and line.count("\n") == 1
    assert parse_event(line.rstrip("\n")) == event


@pytest.mark.parametrize(
    "line",
    [
        "2024-12-04T01:01:23Z INFO 10200 [root]: Pipeline: Frontend",
        EVENT_PREFIX + "{not json",
        EVENT_PREFIX + '["a list"]',
        EVENT_PREFIX + '{"no": "type"}',
        "",
    ],
)
def test_anything_else_is_log_text(line):
    assert parse_event(line) is None


def test_stage_event_has_time():
    event = stage_event("tracing")
    assert event["type"] == "stage" and event["stage"] == "tracing" and event["t"] > 0


def test_multibyte_characters_split_at_every_byte_survive():
    text = "naïve λ → ✓ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢\nsecond line ü\n"
    data = text.encode("utf-8")
    for cut in range(1, len(data)):
        splitter = LineSplitter()
        lines = splitter.feed(data[:cut]) + splitter.feed(data[cut:]) + splitter.flush()
        assert lines == ["naïve λ → ✓ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "second line ü"], cut


def test_byte_at_a_time():
    data = "a✓\r\nb\n".encode()
    splitter = LineSplitter()
    lines = [line for i in range(len(data)) for line in splitter.feed(data[i : i + 1])]
    assert lines == ["a✓", "b"]
    assert splitter.flush() == []


def test_invalid_bytes_are_replaced_not_fatal():
    splitter = LineSplitter()
    assert splitter.feed(b"bad \xff\xfe byte\n") == ["bad \ufffd\ufffd byte"]


def test_unterminated_last_line_and_truncated_character_are_flushed():
    splitter = LineSplitter()
    assert splitter.feed(b"one\ntwo \xe2\x9c") == ["one"]
    assert splitter.flush() == ["two \ufffd"]
    assert splitter.flush() == []


def test_a_tool_s_partial_line_glued_to_the_worker_s_own_is_split_at_the_marker():
    # The compiler shares the worker's stdout: its unfinished line and the worker's next line arrive as one.
    from neffbench.jobs.protocol import LOGFILE_PREFIX
    from neffbench.jobs.streaming import Streaming
    from neffbench.procs import encode_event

    seen: list[tuple[str, str]] = []

    class Probe(Streaming):
        def __init__(self):
            pass

        def _handle_event(self, ev):
            seen.append(("event", ev["type"]))

    probe = Probe()
    probe._parser = type(
        "P", (), {"feed": lambda self, line, from_logfile: seen.append(("line", line)) or (False, [])}
    )()
    probe._handle_line("neuronx-cc 2.21.33363.0+fake" + LOGFILE_PREFIX + "INFO: a log line")
    probe._handle_line("partial" + encode_event({"type": "metric", "name": "x", "value": 1}).rstrip("\n"))
    assert seen == [
        ("line", "neuronx-cc 2.21.33363.0+fake"),
        ("line", "INFO: a log line"),
        ("line", "partial"),
        ("event", "metric"),
    ]

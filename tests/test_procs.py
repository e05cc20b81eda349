"""The process supervisor with real children: TERM then KILL, process groups, lifelines, timeouts, reaping,
the line protocol and atomic writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from neffbench import procs
from neffbench.procs import LineReader, LineSplitter, collect, process_alive, pump, spawn
from tests.processes import until

# A child that ignores SIGTERM, starts a grandchild in its group, says both pids, then waits for ever.
STUBBORN = """
import signal, subprocess, sys, threading
signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen([sys.executable, "-c", "import threading; threading.Event().wait()"])
print(grandchild.pid, flush=True)
threading.Event().wait()
"""

# A child that watches its lifeline, starts a grandchild and says its pid, then waits for ever.
WATCHING = """
import subprocess, sys, threading
from neffbench.procs import watch
watch()
grandchild = subprocess.Popen([sys.executable, "-c", "import threading; threading.Event().wait()"])
print(grandchild.pid, flush=True)
threading.Event().wait()
"""

# A parent that spawns WATCHING, says the child's and the grandchild's pids, then waits to be killed.
PARENT = """
import sys, threading
from neffbench import procs
child = procs.spawn([sys.executable, "-c", sys.argv[1]])
print(child.pid, child.stdout.readline().decode().strip(), flush=True)
threading.Event().wait()
"""


def _python(code: str, **kwargs) -> procs.Child:
    return spawn([sys.executable, "-c", code], **kwargs)


def _no_zombie(pid: int) -> bool:
    """Our child ``pid`` has been reaped: no process, not even a zombie, is left under it."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return False


def test_terminate_kills_a_child_that_ignores_term_after_the_grace_period_and_its_grandchild_with_it():
    child = _python(STUBBORN)
    try:
        grandchild = int(LineReader(child).read_line(60) or 0)
        assert process_alive(grandchild)
        t0 = time.monotonic()
        child.terminate(0.3)
        code = child.reap(60)
        assert code == -signal.SIGKILL
        assert time.monotonic() - t0 >= 0.3  # TERM first; KILL only once the grace period was over
    finally:
        child.kill_and_reap()
    assert not process_alive(grandchild)
    assert not procs.group_alive(child.pid)
    assert _no_zombie(child.pid)


def test_a_child_that_ends_on_term_is_reaped_and_its_kill_timer_goes_with_it():
    child = _python("import threading; print('up', flush=True); threading.Event().wait()")
    try:
        assert LineReader(child).read_line(60) == "up"
        child.terminate(30.0)
        assert child.reap(60) == -signal.SIGTERM
        timer = child._kill_timer  # the child's own KILL timer: cancelled when it was reaped, not left to fire
        assert timer is not None
        timer.join(60)
        assert not timer.is_alive()
        assert child.signal(signal.SIGKILL) is False  # a reaped child's pid may be another's: no signal is sent
    finally:
        child.kill_and_reap()
    assert _no_zombie(child.pid)


def test_reaping_leaves_no_zombie_and_closes_the_pipes():
    child = _python("print('bye')")
    lines: list[str] = []
    assert pump(child, lines.append) is True
    assert child.reap() == 0 and lines == ["bye"]
    assert _no_zombie(child.pid) and child.reaped
    assert child.stdout is not None and child.stdout.closed
    assert child.reap() == 0  # once reaped, reaping again only says how it ended


def test_the_leader_exiting_takes_the_rest_of_its_group():
    # The child leaves its grandchild behind with the pipe closed: reaping still kills it.
    code = (
        "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import threading; "
        "threading.Event().wait()'], stdout=subprocess.DEVNULL); print(p.pid)"
    )
    child = _python(code)
    lines: list[str] = []
    pump(child, lines.append)
    assert child.reap(60) == 0
    assert not process_alive(int(lines[0]))


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "terminated"])
def test_when_the_parent_dies_its_child_and_grandchild_go_too(how):
    parent = subprocess.Popen([sys.executable, "-c", PARENT, WATCHING], stdout=subprocess.PIPE, text=True)
    try:
        child, grandchild = (int(pid) for pid in parent.stdout.readline().split())
        assert process_alive(child) and process_alive(grandchild)
        parent.send_signal(how)
        parent.wait(60)
        until(
            lambda: not process_alive(child) and not process_alive(grandchild),
            timeout=60,
            what="the child of a dead parent to go",
        )
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()


def test_a_deadline_is_reported_once_and_the_caller_decides_how_the_child_stops():
    child = _python("import threading; threading.Event().wait()")
    calls: list[float] = []

    def on_deadline() -> None:
        calls.append(time.monotonic())
        child.kill()

    t0 = time.monotonic()
    assert pump(child, lambda line: None, deadline=t0 + 0.2, on_deadline=on_deadline, poll_s=0.02) is True
    assert child.reap(60) == -signal.SIGKILL
    assert len(calls) == 1 and calls[0] - t0 >= 0.2


def test_a_reply_reader_times_out_without_losing_the_line_that_comes_later():
    child = _python("import sys; sys.stdin.readline(); print('answer', flush=True)", stdin="pipe")
    try:
        reader = LineReader(child)
        assert reader.read_line(0.05) is None
        child.write(b"go\n")
        assert reader.read_line(60) == "answer"
        with pytest.raises(EOFError):
            reader.read_line(60)
    finally:
        child.kill_and_reap()


def test_collect_gives_up_after_its_timeout():
    child = _python("import threading; threading.Event().wait()", stderr="pipe")
    try:
        assert collect(child, 0.05) is None
    finally:
        child.kill_and_reap()
    child = _python("import sys; print('out'); print('err', file=sys.stderr)", stderr="pipe")
    try:
        assert collect(child, 60) == (b"out\n", b"err\n")
    finally:
        child.kill_and_reap()


# Writes a line in pieces, waiting on stdin between them: the parent sees each piece as a partial line.
PIECES = r"""
import os, sys
for piece in (b"par", b"tial \xce", b"\xbb\nnext", b"\n\xff\r\nlast"):
    os.write(1, piece)
    sys.stdin.readline()
"""


def test_partial_lines_are_held_back_until_they_end_and_a_split_character_is_never_broken():
    child = _python(PIECES, stdin="pipe")
    lines: list[str] = []
    pending: list[str] = []

    def on_read(text: str) -> None:
        pending.append(text)
        try:
            child.write(b"\n")  # the next piece
        except OSError:
            pass

    try:
        assert pump(child, lines.append, on_read=on_read) is True
        assert child.reap(60) == 0
    finally:
        child.kill_and_reap()
    assert lines == ["partial λ", "next", "\ufffd", "last"]
    assert pending[:2] == ["par", "partial "]


def test_events_and_log_lines_round_trip_through_the_emitter():
    code = (
        "from neffbench.procs import Emitter\n"
        "out = Emitter()\nout.line('plain')\nout.stage('loading')\nout.event({'type': 'x', 'v': 'λ'})\n"
    )
    child = _python(code)
    lines: list[str] = []
    pump(child, lines.append)
    child.reap()
    assert lines[0] == "plain" and procs.parse_event(lines[0]) is None
    stage, event = procs.parse_event(lines[1]), procs.parse_event(lines[2])
    assert stage["type"] == "stage" and stage["stage"] == "loading" and stage["t"] > 0
    assert event == {"type": "x", "v": "λ"}


def test_the_splitter_keeps_a_line_without_its_end_for_flush():
    splitter = LineSplitter()
    assert splitter.feed(b"a\r\nb") == ["a"] and splitter.pending == "b"
    assert splitter.flush() == ["b"] and splitter.flush() == []


def test_an_atomic_write_that_fails_leaves_the_old_file_whole_and_nothing_beside_it(tmp_path):
    target = tmp_path / "record.json"
    procs.write_json(target, {"n": 1})
    with pytest.raises(RuntimeError):
        with procs.replacing(target) as tmp:
            tmp.write_text('{"n": 2, "half')
            raise RuntimeError("the writer failed half-way")
    with pytest.raises(OSError) as failure:
        with procs.replacing(target) as tmp:
            raise OSError(28, "No space left on device", str(tmp))
    assert failure.value.filename == str(target)  # the file meant, not the temporary one
    assert target.read_text() == '{\n  "n": 1\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]


# Starts replacing the file, then waits to be killed half-way through.
KILLED_WRITER = """
import sys, threading
from neffbench import procs
with procs.replacing(sys.argv[1]) as tmp:
    tmp.write_text("half of the new")
    print("writing", flush=True)
    threading.Event().wait()
"""


def test_a_writer_killed_half_way_leaves_the_old_file_and_a_temporary_that_is_recognised_as_stale(tmp_path):
    target = tmp_path / "spec.toml"
    procs.write_text(target, "old = 1\n")
    child = spawn([sys.executable, "-c", KILLED_WRITER, str(target)])
    try:
        assert LineReader(child).read_line(60) == "writing"
        child.kill()
        assert child.reap(60) == -signal.SIGKILL
    finally:
        child.kill_and_reap()
    assert target.read_text() == "old = 1\n"
    [tmp] = [p for p in tmp_path.iterdir() if p != target]
    assert tmp.name == f".spec.toml.{child.pid}{procs.TMP_SUFFIX}"
    assert procs.remove_stale_temporaries(tmp_path) == [tmp]
    assert list(tmp_path.iterdir()) == [target]


def _imports(folder: str) -> set[str]:
    import ast
    from pathlib import Path

    names = set()
    for path in (Path(procs.__file__).parent.parent / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
    return names


def test_procs_is_a_leaf_and_runs_stand_below_jobs():
    assert {name for name in _imports("procs") if name.split(".")[0] in ("neffbench", "PySide6", "shiboken6")} <= {
        "neffbench",  # the warm-start server asks which neffbench it is
        "neffbench.procs",
        "neffbench.procs.warm_server",
        *(
            f"neffbench.procs._{m}"
            for m in ("atomic", "child", "exit", "lifeline", "lines", "pids", "stream", "warm", "warm_owner")
        ),
    }
    assert not {name for name in _imports("runs") if name.startswith("neffbench.jobs")}


# A process that ends through exit_now: a late thread, an exit function, output left in the buffer.
ENDING = """
import atexit, os, sys, threading
from pathlib import Path
from neffbench.procs import exit_now

folder = Path(sys.argv[1])
read_end, write_end = os.pipe()

def late():  # finishes only once the main thread has returned from its work
    os.read(read_end, 1)
    (folder / "thread").write_text("done")

threading.Thread(target=late).start()
atexit.register(lambda: (folder / "atexit").write_text("ran"))
sys.stdout.write("no newline, still in the buffer")
os.write(write_end, b"x")
exit_now(7, exit_functions=sys.argv[2] == "command")
"""


@pytest.mark.parametrize("role", ["command", "worker"])
def test_exit_now_ends_as_the_interpreter_would_less_its_teardown(tmp_path, role):
    proc = subprocess.run(
        [sys.executable, "-c", ENDING, str(tmp_path), role], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 7, proc.stderr
    assert proc.stdout == "no newline, still in the buffer"
    if role == "command":  # its threads were waited for, then its exit functions ran
        assert (tmp_path / "thread").read_text() == "done"
        assert (tmp_path / "atexit").read_text() == "ran"
    else:  # a worker's job is done: it ends at once
        assert not (tmp_path / "atexit").exists()

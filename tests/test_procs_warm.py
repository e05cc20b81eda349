"""The warm-start server: a worker it forks is the process ``python -m`` would have started, only with torch (here a
lighter module) imported already; what it cannot start faithfully it declines, and the worker starts afresh."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from neffbench.procs import WARM_ENV, process_alive, pump, spawn, start_warm_server, warm_server
from tests.processes import until

REPO = Path(__file__).resolve().parents[1]
PRELOADED = "xml.dom.minidom"  # imported by the server, never by these children: its presence says "forked"

# What a test compares between a forked and a plain child: everything but the parent and the preloaded module.
DESCRIBE = f"""
import json, os, sys
print(json.dumps({{
    "argv": sys.argv[1:], "cwd": os.getcwd(), "path0": sys.path[0], "asked": os.environ.get("ASKED"),
    "pythonpath_first": sys.path[1], "main": __name__, "own_group": os.getpgid(0) == os.getpid(),
    "own_session": os.getsid(0) == os.getpid(), "stdin": sys.stdin.readline().strip(),
    "encoding": sys.stdout.encoding, "ppid": os.getppid(), "preloaded": {PRELOADED!r} in sys.modules,
}}), flush=True)
print("to stderr", file=sys.stderr)
"""


@pytest.fixture(scope="module")
def server():
    started = start_warm_server(preload=(PRELOADED,), timeout=120)
    assert started is not None
    yield started
    started.stop()


def _env(server=None, **extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != WARM_ENV}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    if server is not None:
        env[WARM_ENV] = server.address
    return {**env, **extra}


def _start(code: str, env: dict[str, str], *args: str, **kwargs):
    return spawn([sys.executable, "-m", "tests.exec_child", code, *args], env=env, warm=True, **kwargs)


def _described(child, stdin: bytes = b"") -> tuple[dict, list[str]]:
    child.write(stdin)
    child.close_stdin()
    lines: list[str] = []
    pump(child, lines.append)
    assert child.reap(60) == 0, lines
    return json.loads(lines[0]), lines[1:]


def test_a_forked_worker_is_the_process_python_m_would_have_started(server, tmp_path):
    seen = {}
    for how, env in (("forked", _env(server, ASKED="yes")), ("plain", _env(ASKED="yes"))):
        child = _start(DESCRIBE, env, "one", "two words", cwd=tmp_path, stdin="pipe", stderr="stdout")
        seen[how] = _described(child, "über\n".encode())
    (forked, forked_rest), (plain, plain_rest) = seen["forked"], seen["plain"]
    assert forked.pop("preloaded") and not plain.pop("preloaded")
    assert forked.pop("ppid") != os.getpid() and plain.pop("ppid") == os.getpid()
    assert forked == plain
    assert forked["argv"] == ["one", "two words"] and forked["stdin"] == "über" and forked["asked"] == "yes"
    assert forked["path0"] == str(tmp_path) and forked["pythonpath_first"] == str(REPO)
    assert forked["own_group"] and forked["own_session"] and forked["main"] == "__main__"
    assert forked_rest == plain_rest == ["to stderr"]


@pytest.mark.parametrize(
    ("code", "expected"),
    [("import sys; sys.exit(3)", 3), ("raise SystemExit('said why')", 1), ("raise ValueError", 1),
     ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -signal.SIGKILL), ("pass", 0)],
    ids=["exit-3", "exit-text", "exception", "killed", "normal"],
)  # fmt: skip
def test_the_exit_status_is_the_workers_own(server, code, expected):
    child = _start(code, _env(server), stderr="null")
    pump(child, lambda line: None)
    assert child.reap(60) == expected


def test_terminate_and_reap_leave_nothing_of_a_forked_worker_or_what_it_started(server):
    code = (
        "import signal, subprocess, sys, threading; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "p = subprocess.Popen([sys.executable, '-c', 'import threading; threading.Event().wait()']); "
        "print(p.pid, flush=True); threading.Event().wait()"
    )
    child = _start(code, _env(server))
    grandchild = int(child.stdout.readline())
    child.terminate(grace_s=0.2)  # it ignores TERM: KILL follows
    assert child.reap(60) == -signal.SIGKILL
    assert not process_alive(child.pid) and not process_alive(grandchild)
    with pytest.raises(ProcessLookupError):  # reaped by the server before reap returned: no zombie either
        os.kill(child.pid, 0)


PARENT = """
import sys, threading
from neffbench import procs
child = procs.spawn([sys.executable, "-m", "tests.exec_child", "import threading; from neffbench import procs; "
                     "procs.watch(); print('ok', flush=True); threading.Event().wait()"], warm=True)
print(child.pid, child.stdout.readline().decode().strip(), flush=True)
threading.Event().wait()
"""


def test_a_forked_worker_dies_with_the_process_that_asked_for_it(server):
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=_env(server))
    try:
        pid, said = parent.stdout.readline().split()
        assert said == "ok" and process_alive(int(pid))
        assert int(pid) not in _children_of(parent.pid)  # the server's child, not the parent's
        parent.kill()
        parent.wait(60)
        until(lambda: not process_alive(int(pid)), timeout=60, what="the worker of a dead parent to go")
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()


def _children_of(pid: int) -> set[int]:
    try:
        return {int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except OSError:
        return set()


@pytest.mark.parametrize(
    "differs",
    ["MKL_NUM_THREADS", "PYTHONHASHSEED", "a torch on PYTHONPATH", "no server"],
)
def test_a_worker_the_server_cannot_start_faithfully_starts_afresh(server, tmp_path, differs):
    env = _env(server)
    if differs == "a torch on PYTHONPATH":
        (tmp_path / "torch").mkdir()
        (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('not this one')\n")
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(tmp_path)])
    elif differs == "no server":
        env[WARM_ENV] = str(tmp_path / "no-such-socket")
    else:
        env[differs] = "1" if env.get(differs) != "1" else "2"
    child = _start(DESCRIBE, env, stdin="pipe", stderr="stdout")
    described, _ = _described(child)
    assert described["ppid"] == os.getpid() and not described["preloaded"]


THREADS_SEEN = """
import os, torch
print(os.getppid(), repr(torch.__config__.parallel_info()))
"""


def test_a_worker_with_a_thread_count_of_its_own_is_forked_with_it_as_torch_would_have_read_it():
    """A Ray task's workers carry OMP_NUM_THREADS (its CPUs): forked, they set it as torch reads it at import."""
    from tests.processes import SESSION

    if SESSION.server is None or warm_server.THREADS in os.environ:
        pytest.skip("needs the session's warm-start server, started without OMP_NUM_THREADS")
    seen = {}
    for how, server in (("forked", SESSION.server), ("plain", None)):
        child = _start(THREADS_SEEN, _env(server, OMP_NUM_THREADS="1"), stderr="null")
        lines: list[str] = []
        pump(child, lines.append)
        assert child.reap(120) == 0, lines
        ppid, seen[how] = " ".join(lines).split(" ", 1)
        assert (int(ppid) == os.getpid()) is (how == "plain")
    assert seen["forked"] == seen["plain"]
    assert "at::get_num_threads() : 1" in seen["forked"] and "omp_get_max_threads() : 1" in seen["forked"]


INSTALLED_READ = """
from neffbench import installed
before = installed._entry_points.cache_info().misses, installed._packages_distributions.cache_info().misses
installed.entry_points("neffbench.kernels"), installed.packages_distributions()
after = installed._entry_points.cache_info().misses, installed._packages_distributions.cache_info().misses
print(before == after)
"""


def test_a_forked_worker_starts_with_what_the_server_read_of_the_installed_distributions(tmp_path):
    """Each build of the user's code and each listing of the kernels asks what is installed (a fifth of a CPU-second
    to read): a forked worker is served what its server read, when nothing has been installed since."""
    from tests.processes import SESSION

    if SESSION.server is None:
        pytest.skip("needs the session's warm-start server")
    child = _start(INSTALLED_READ, _env(SESSION.server), cwd=tmp_path, stderr="null")
    lines: list[str] = []
    pump(child, lines.append)
    assert child.reap(120) == 0 and lines == ["True"]


@pytest.mark.parametrize(
    ("mine", "theirs", "forked"),
    [(None, None, True), (None, "1", True), (None, "8", True), ("2", "2", True), (None, "0", False),
     (None, "4,2", False), (None, "", False), ("2", "1", False), ("2", None, False)],
)  # fmt: skip
def test_a_thread_count_is_taken_up_only_where_torch_read_none(mine, theirs, forked):
    assert warm_server.threads_taken_up(mine, theirs) is forked


def test_forked_workers_draw_their_own_random_numbers(server):
    code = "import random; print(random.random())"
    numbers = set()
    for _ in range(2):
        child = _start(code, _env(server))
        lines: list[str] = []
        pump(child, lines.append)
        assert child.reap(60) == 0
        numbers.add(lines[0])
    assert len(numbers) == 2


def test_a_folder_that_does_not_exist_fails_the_start_as_it_does_without_a_server(server, tmp_path):
    with pytest.raises(FileNotFoundError):
        _start("pass", _env(server), cwd=tmp_path / "gone")

"""Fakes of the Neuron toolchain for tests (never imported by the product).

``python/torch_neuronx`` is a fake ``torch_neuronx`` package (put ``PYTHON_DIR`` on PYTHONPATH) and
``bin/neuronx-cc`` a fake compiler (put ``BIN_DIR`` on PATH); both behave as
shared/docs/neuron-facts.md describes. ``FAKE_NEURONX_CC_SCENARIO`` picks what happens:

- ``success`` (default): passes logged in the real format, ``Compiler status PASS``, a NEFF at ``--output``.
- ``hashed-name``: as success, but the NEFF is ``graph.<hash>.neff`` beside ``--output``.
- ``compile-error``: ``[NLA001]`` USER lines, a root cause printed only on stdout, ``Compiler status FAIL``, exit 1.
- ``oom``: a few passes, then the compiler kills itself with SIGKILL (exit -9), as the OOM killer would.
- ``slow``: spawns a grandchild, writes both pids to ``FAKE_NEURONX_CC_PIDFILE``, then prints dots for minutes;
  with ``FAKE_NEURONX_CC_IGNORE_TERM=1`` both ignore SIGTERM.
- ``split-output``: lines only on stdout, only on stderr and only in the log file (multibyte text, an
  unterminated last log line), then success.
- ``unsupported-op``: one pass, then ``[ERROR] [NCC_EVRF001] ...`` on stderr only, exit 70.

Whatever the scenario, ``FAKE_NEURONX_CC_WAIT_FOR=PATH`` holds the compiler (up to 300 s) until that file exists:
a test's gate, so that what it does mid-compile happens while the compile still runs, however fast the machine.
- ``dropped-flag`` (torch_neuronx): the trace silently drops ``--lnc`` from the command it runs.
- ``python-error`` (torch_neuronx): the trace raises the RuntimeError a ``None`` output gives.
- ``worker-segfault`` (torch_neuronx): the process calling trace dies of SIGSEGV.

``torchneuron/`` is a fake TorchNeuron: ``torch_neuronx`` 2.13.3.0 (the native flavour, no ``trace``) with
its dynamo backend ``"neuron"`` registered through the ``torch_dynamo_backends`` entry point of the
``.dist-info`` beside it. It replaces the fake above, so ``torchneuron_env()`` puts ``TORCHNEURON_DIR`` on
PYTHONPATH instead of ``PYTHON_DIR``, with ``bin/`` on PATH (it runs the fake neuronx-cc) and
``NEFFBENCH_TORCHNEURON_DEVICE=cpu`` (it has no "neuron" device; the worker compiles on CPU tensors).
``FAKE_TORCHNEURON_SCENARIO``: ``success`` or ``no-device``; see its module.

The Neuron *runtime* fakes live apart, under ``runtime/``, so that ``fake_env()`` keeps giving exactly the
compiler fakes (the product probes ``import nrtpy`` and ``which neuron-ls``): ``runtime/python`` holds fake
``nrtpy`` and ``spike`` packages over a shared ``fake_libnrt`` (put ``RUNTIME_PYTHON_DIR`` on PYTHONPATH or
sys.path) and ``runtime/bin`` fake ``neuron-ls``, ``neuron-explorer`` and ``neuron-profile`` (put
``RUNTIME_BIN_DIR`` on PATH). ``runtime_env(**controls)`` (or ``fake_env(..., runtime=True)``) puts both in
place. They follow shared/docs/neuron-facts.md and the pages named in each module; controls, all read at
call time:

- ``FAKE_NRT_OUTPUTS`` (an .npz of output arrays by name; missing ones are zeros), ``FAKE_NRT_VOID=1``
  (nrtpy's auto-allocated outputs come back ``|V2``/``|V4``), ``FAKE_NRT_DURATIONS_MS="0.5,0.61"`` (device
  times, cycled; ``none``: no device events), ``FAKE_NRT_EXTRA_ITERATIONS=N`` (N extra device events per
  execution), ``FAKE_NRT_ERROR="LOAD:NRT_RESOURCE(4): text"`` / ``"EXEC:..."`` / ``"INIT:..."``,
  ``FAKE_NRT_CRASH=1`` (SIGSEGV at execution), ``FAKE_NRT_IMPORT_ERROR=1`` (import fails: no libnrt.so.1).
- ``FAKE_NEURON_LS``: ``trn2`` (default), ``busy`` (pid 4242 ``python`` holds the device), ``none``, or a
  JSON file to print. ``FAKE_PROFILE_SUMMARY``: a JSON object (inline or a file) of summary metrics;
  ``FAKE_PROFILE_VIEW_ERROR``: ``view`` prints this on stderr and exits 1 (a profile it cannot process).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

FAKES = Path(__file__).resolve().parent
PYTHON_DIR = FAKES / "python"
TORCHNEURON_DIR = FAKES / "torchneuron"
TORCHNEURON_SCENARIO_ENV = "FAKE_TORCHNEURON_SCENARIO"
BIN_DIR = FAKES / "bin"
SCENARIO_ENV = "FAKE_NEURONX_CC_SCENARIO"
PIDFILE_ENV = "FAKE_NEURONX_CC_PIDFILE"
WAIT_FOR_ENV = "FAKE_NEURONX_CC_WAIT_FOR"
RUNTIME_DIR = FAKES / "runtime"
RUNTIME_PYTHON_DIR = RUNTIME_DIR / "python"
RUNTIME_BIN_DIR = RUNTIME_DIR / "bin"
RUNTIME_CONTROLS = (
    "FAKE_NRT_OUTPUTS",
    "FAKE_NRT_VOID",
    "FAKE_NRT_DURATIONS_MS",
    "FAKE_NRT_EXTRA_ITERATIONS",
    "FAKE_NRT_ERROR",
    "FAKE_NRT_CRASH",
    "FAKE_NRT_IMPORT_ERROR",
    "FAKE_NEURON_LS",
    "FAKE_PROFILE_SUMMARY",
    "FAKE_PROFILE_VIEW_ERROR",
)


def fake_env(
    scenario: str = "success", *, path: bool = True, python: bool = True, runtime: bool = False, **extra: str
) -> dict[str, str]:
    """Environment variables that put the fakes in place (set them with monkeypatch).

    ``runtime=True`` adds the runtime fakes (nrtpy, spike, neuron-ls, neuron-explorer, neuron-profile)
    after the compiler fakes; without it the result is what it always was.
    """
    env = {SCENARIO_ENV: scenario, "FAKE_NEURONX_CC_PYTHON": sys.executable, **extra}
    if python:
        dirs = (str(PYTHON_DIR), str(RUNTIME_PYTHON_DIR)) if runtime else (str(PYTHON_DIR),)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (*dirs, os.environ.get("PYTHONPATH")) if p)
    if path:
        dirs = (str(BIN_DIR), str(RUNTIME_BIN_DIR)) if runtime else (str(BIN_DIR),)
        env["PATH"] = os.pathsep.join((*dirs, os.environ.get("PATH", "")))
    return env


def torchneuron_env(
    scenario: str = "success", *, compiler: str = "success", runtime: bool = False, **extra: str
) -> dict[str, str]:
    """Environment variables for the fake TorchNeuron (``scenario``) over the fake neuronx-cc (``compiler``)."""
    env = fake_env(compiler, python=False, runtime=runtime, **extra)
    dirs = (str(TORCHNEURON_DIR), str(RUNTIME_PYTHON_DIR)) if runtime else (str(TORCHNEURON_DIR),)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (*dirs, os.environ.get("PYTHONPATH")) if p)
    env[TORCHNEURON_SCENARIO_ENV] = scenario
    env["NEFFBENCH_TORCHNEURON_DEVICE"] = "cpu"
    return env


def runtime_controls(
    *,
    outputs: str | os.PathLike[str] | None = None,
    void: bool = False,
    durations_ms: str | Sequence[float] | None = None,
    extra_iterations: int = 0,
    error: str | None = None,
    crash: bool = False,
    import_error: bool = False,
    neuron_ls: str | os.PathLike[str] = "trn2",
    profile_summary: str | os.PathLike[str] | Mapping[str, object] | None = None,
    profile_view_error: str | None = None,
) -> dict[str, str]:
    """Every FAKE_NRT_* / FAKE_NEURON_LS / FAKE_PROFILE_SUMMARY variable, set or blank (so none leaks in).

    durations_ms: a list of milliseconds or the variable's own text (``"none"`` for no device events);
    error: ``"LOAD:NRT_RESOURCE(4): text"``, ``"EXEC:NRT_EXEC_NC_BUSY(1005)"``, ``"INIT:..."``;
    profile_summary: a dict of metrics, inline JSON or a JSON file.
    """
    if durations_ms is not None and not isinstance(durations_ms, str):
        durations_ms = ",".join(repr(float(d)) for d in durations_ms)
    if isinstance(profile_summary, Mapping):
        profile_summary = json.dumps(dict(profile_summary))
    return {
        "FAKE_NRT_OUTPUTS": str(outputs or ""),
        "FAKE_NRT_VOID": "1" if void else "",
        "FAKE_NRT_DURATIONS_MS": durations_ms or "",
        "FAKE_NRT_EXTRA_ITERATIONS": str(extra_iterations or ""),
        "FAKE_NRT_ERROR": error or "",
        "FAKE_NRT_CRASH": "1" if crash else "",
        "FAKE_NRT_IMPORT_ERROR": "1" if import_error else "",
        "FAKE_NEURON_LS": str(neuron_ls or ""),
        "FAKE_PROFILE_SUMMARY": str(profile_summary or ""),
        "FAKE_PROFILE_VIEW_ERROR": profile_view_error or "",
    }


def runtime_env(
    scenario: str = "success",
    *,
    path: bool = True,
    python: bool = True,
    extra: Mapping[str, str] | None = None,
    **controls: object,
) -> dict[str, str]:
    """``fake_env(scenario, runtime=True)`` plus ``runtime_controls(**controls)``: a process with this
    environment finds the fake runtime and tools, configured as asked."""
    return fake_env(
        scenario, path=path, python=python, runtime=True, **runtime_controls(**controls), **dict(extra or {})
    )  # type: ignore[arg-type]


def read_pidfile(path: Path) -> dict[str, int]:
    """``{"compiler": pid, "grandchild": pid}`` as the slow scenario writes them (empty until it has)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return {name: int(pid) for name, pid in (line.split() for line in text.splitlines() if line.strip())}

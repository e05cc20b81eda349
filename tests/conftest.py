"""Shared test set-up: headless Qt, the shared NEFF sample, and where the toolchain fakes live."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Fixtures for every test that asks for one by name: the window's (make_window, window, settings_path), the
# command's in this process (neffbench_in_process, neffbench_unless_env), workdirs compiled once a session (compiled,
# seed_cpu_check_job).
pytest_plugins = ["tests.gui_fixtures", "tests.cli", "tests.compiled"]

# Before any Qt import: tests never need a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Hypothesis' clock checks (an example's 200 ms deadline, data generation "too slow") fail on a loaded machine and
# say nothing about the code: the suite's properties are about what comes out, make bench about how fast.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

REPO = Path(__file__).resolve().parents[1]
SHARED_SAMPLES = REPO.parent / "shared" / "neff-samples"
SAMPLE_NEFF = SHARED_SAMPLES / "nkipy_matmul_small.neff"


def pytest_addoption(parser):
    parser.addoption(
        "--cold-workers",
        action="store_true",
        help="start every worker afresh, as a command with no warm-start server does (the default forks them from "
        "one server per test process, which has imported torch once)",
    )


@pytest.fixture(scope="session", autouse=True)
def _warm_workers(request):
    """Workers forked from a warm-start server of this test process's (and its commands'): each would otherwise
    import torch afresh, most of the suite's time. The window and sweeps use the same server; the plain start is
    covered by tests/test_procs_warm.py, the tests marked ``cold_workers`` and ``--cold-workers``."""
    from neffbench.procs import WARM_ENV, warm_workers
    from neffbench.toolchain.flavour import NATIVE_PRELOAD
    from tests.processes import SESSION

    if request.config.getoption("--cold-workers"):
        os.environ[WARM_ENV] = "off"  # nor does a window or a sweep start one of its own
        yield None
        return
    # Dynamo as well, as on a TorchNeuron host (toolchain.flavour.warm_preload): the suite's TorchNeuron jobs, a
    # tenth of its compiles, go through torch.compile; the tests of what a worker imports start theirs afresh.
    with warm_workers(NATIVE_PRELOAD) as server:
        SESSION.server = server
        yield server
        SESSION.server = None


@pytest.fixture(scope="session", autouse=True)
def _imports_frozen():
    """What collection imported (torch, Qt, transformers, every test module) lives as long as this process: out of
    the collector's reach, each full collection (a window's close makes one) walks what the tests made, not the
    400,000 objects of the libraries, a fifth of a second each time."""
    import gc

    gc.collect()
    gc.freeze()
    yield  # and frozen it stays: the process ends with the session, and pytest's last collection need not walk it


@pytest.fixture(autouse=True)
def _cold_workers_when_marked(request, monkeypatch):
    if request.node.get_closest_marker("cold_workers"):
        from neffbench.procs import WARM_ENV

        monkeypatch.setenv(WARM_ENV, "off")


@pytest.fixture
def sample_neff() -> Path:
    """The real NEFF from the shared folder beside the checkout (never copied into the repo)."""
    if not SAMPLE_NEFF.is_file():
        pytest.skip(f"shared NEFF sample not found at {SAMPLE_NEFF} (the shared/ folder sits beside the checkout)")
    return SAMPLE_NEFF


@pytest.fixture(autouse=True)
def _explain_agrees_with_every_job(request):
    """After each test, ``neffbench explain`` of every job it left in tmp_path agrees with that job's job.json."""
    tmp_path = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if tmp_path is not None:
        from tests.explain_agreement import check_jobs_below

        check_jobs_below(tmp_path)


_TOOLCHAIN_PACKAGES = ("torch_neuronx", "neuronxcc", "nrtpy", "spike")


@pytest.fixture(autouse=True)
def _no_fake_toolchain_left_imported():
    """A test that imports a toolchain fake in this process (tests/fakes/python) takes it out again: the versions a
    later test's cache key reads would otherwise name the fake, and its cached jobs would not be found."""
    before = set(sys.modules)
    yield
    # Only what the test imported is looked at (a set difference: sys.modules holds some 15,000 names, each test).
    for name in [n for n in sys.modules.keys() - before if n.split(".")[0] in _TOOLCHAIN_PACKAGES]:
        del sys.modules[name]


@pytest.fixture(autouse=True)
def _no_user_code_left_imported():
    """A test that runs user code in this process (a module entry from a file) leaves neither the module nor
    its folder on sys.path behind: the window's tests check that user code never reaches the GUI process,
    and they must pass in any order (pytest-randomly shuffles it)."""
    from neffbench.kernels.module.entry import USER_PREFIX

    path = list(sys.path)
    before = set(sys.modules)
    yield
    for name in [n for n in sys.modules.keys() - before if n.startswith(USER_PREFIX)]:
        del sys.modules[name]
    sys.path[:] = path


def _checkout_entries() -> set[str]:
    return {p.name for p in REPO.iterdir() if not p.name.startswith(".")}


_ENTRIES_AT_START = _checkout_entries()


def pytest_sessionfinish(session, exitstatus):
    """A test that writes into the checkout (a tool's log in the working directory) fails the run: such files
    end up committed, and a second run sees them."""
    left = sorted(_checkout_entries() - _ENTRIES_AT_START)
    if left:
        session.config.get_terminal_writer().line(f"\ntests wrote into the checkout: {', '.join(left)}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

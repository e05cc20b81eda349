"""The registry finds each kind of kernel one way: the built-ins by their folders, plugins by their entry points."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

from neffbench import installed
from neffbench.kernels import registry

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


class _Dist:
    def __init__(self, name: str):
        self.name = name


def _entry_point(name: str, value: str, dist: str) -> metadata.EntryPoint:
    ep = metadata.EntryPoint(name, value, registry.GROUP)
    # EntryPoint.dist is set by the metadata reader; a frozen object, so set as importlib does.
    vars(ep)["dist"] = _Dist(dist)
    return ep


def test_the_workbench_declares_no_entry_points_for_its_own_kernels():
    """A built-in kernel is its folder: pyproject.toml names none, so a new one needs no line there."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert registry.GROUP not in project.get("entry-points", {})


def test_an_older_install_s_entry_points_for_the_built_ins_change_nothing(monkeypatch):
    """Metadata an older install wrote (kernels it had, one since removed) is not a second way of finding them."""
    stale = [
        _entry_point("rope", "neffbench.kernels.rope.kernel:KERNEL", registry.DISTRIBUTION),
        _entry_point("gone", "neffbench.kernels.gone.kernel:KERNEL", registry.DISTRIBUTION),
        _entry_point("demo", "demo_plugin:KERNEL", "demo-plugin"),
    ]
    monkeypatch.setattr(installed, "entry_points", lambda group: stale)
    found = registry.entries()
    assert list(found) == ["rope", "rms_norm", "silu_and_mul", "module", "demo"]
    assert found["demo"].origin == "demo-plugin"
    assert found["rope"].origin == registry.BUILT_IN


def test_a_plugin_cannot_take_a_built_in_kernel_s_name(monkeypatch, caplog):
    stale = [_entry_point("rope", "impostor:KERNEL", "impostor")]
    monkeypatch.setattr(installed, "entry_points", lambda group: stale)
    found = registry.entries()
    assert found["rope"].value == "neffbench.kernels.rope.kernel:KERNEL"
    assert "kernel plugin rope (impostor:KERNEL) ignored: a kernel of that name exists" in caplog.text


def test_get_returns_a_kernel():
    from neffbench.kernels.api import Kernel

    assert all(isinstance(registry.get(name), Kernel) for name in registry.names())

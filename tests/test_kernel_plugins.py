"""Third-party kernels: a plugin package pip-installed in a test registers a kernel through the
``neffbench.kernels`` entry points; the CLI lists it, shows its presets and compiles it, and a
broken plugin is reported by name while the others still load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugin_wheel import install

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    return install(tmp_path_factory.mktemp("plugin") / "site")


def _cli(plugin_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(plugin_path), os.environ.get("PYTHONPATH"))))}
    return subprocess.run(
        [sys.executable, "-m", "neffbench", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_pip_installed_the_entry_point(plugin_path):
    from importlib import metadata

    dists = list(metadata.distributions(path=[str(plugin_path)]))
    assert [d.metadata["Name"] for d in dists] == ["neffbench-demo-kernel"]
    assert [(ep.group, ep.name) for ep in dists[0].entry_points] == [("neffbench.kernels", "demo_scale")]


def test_the_cli_lists_shows_and_compiles_the_plugin_kernel(plugin_path, tmp_path):
    listing = _cli(plugin_path, "kernel", "list")
    assert listing.returncode == 0, listing.stderr
    assert "demo_scale    Demo scale (plugin)  [plugin: neffbench-demo-kernel]" in listing.stdout
    assert "presets: demo-scale-small" in listing.stdout
    shown = _cli(plugin_path, "kernel", "show", "demo_scale")
    assert "scale.scale" in shown.stdout and "What every element is multiplied by." in shown.stdout
    presets = _cli(plugin_path, "preset", "list")
    assert "demo-scale-small" in presets.stdout and "demo_scale" in presets.stdout
    checked = _cli(plugin_path, "check", "demo-scale-small", "--scale", "5", "--width", "0")
    assert checked.returncode == 2
    assert "error: scale.width: Width must be between 1 and 4096; got 0." in checked.stderr
    compiled = _cli(plugin_path, "compile", "demo-scale-small", "--workdir", str(tmp_path), "--backend", "cpu-check")
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert "numerics on CPU (torch.jit trace; no NEFF, cpu-check): match" in compiled.stdout
    # Without the plugin on the path the kernel is unknown, with a sentence.
    without = subprocess.run(
        [sys.executable, "-m", "neffbench", "check", str(next(tmp_path.glob("*/spec.toml")))],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert without.returncode == 2
    assert "No kernel named 'demo_scale'." in without.stderr


def test_a_broken_plugin_is_named_and_the_others_still_load(tmp_path):
    site = tmp_path / "site"
    info = site / "broken_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[neffbench.kernels]\nbroken = no_such_module_xyz:KERNEL\n")
    listing = _cli(site, "kernel", "list")
    assert listing.returncode == 0
    assert (
        "broken        BROKEN (broken-plugin): Kernel 'broken' from broken-plugin (no_such_module_xyz:KERNEL) "
        "could not be loaded: ModuleNotFoundError: No module named 'no_such_module_xyz'" in listing.stdout
    )
    assert "rope" in listing.stdout and "module" in listing.stdout
    assert _cli(site, "check", "seed").returncode == 0


def test_the_built_in_kernels_are_found_by_their_folders_when_the_metadata_lists_none(monkeypatch):
    # An editable install made before the kernels were entry points has metadata that names none of them:
    # the RoPE presets and the seed must keep working from such a venv.
    from neffbench import installed
    from neffbench.kernels import registry

    monkeypatch.setattr(installed, "entry_points", lambda group: [])
    found = registry.entries()
    assert list(found)[:4] == ["rope", "rms_norm", "silu_and_mul", "module"]
    assert found["rope"].value == "neffbench.kernels.rope.kernel:KERNEL" and found["rope"].origin == registry.BUILT_IN

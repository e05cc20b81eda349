"""One way to read a version everywhere: as the package states it, local build tag included, without importing it."""

from __future__ import annotations

import subprocess
import sys

from neffbench.versions import package_version, torch_version


def test_torch_is_read_as_torch_itself_says_without_importing_it():
    code = (
        "import sys; from neffbench.versions import torch_version; v = torch_version(); "
        "assert 'torch' not in sys.modules; import torch; print(v == torch.__version__, v)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    same, version = proc.stdout.split()
    assert same == "True" and "+" in version  # 2.13.0+cpu, 2.9.1+cu128: the build is part of it


def test_a_package_without_a_stated_version_comes_from_its_metadata(tmp_path, monkeypatch):
    (tmp_path / "statedpkg").mkdir()
    (tmp_path / "statedpkg" / "__init__.py").write_text('__version__ = "1.2.3+local"\n')
    (tmp_path / "plainpkg").mkdir()
    (tmp_path / "plainpkg" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert package_version("statedpkg") == "1.2.3+local"
    assert package_version("plainpkg") is None  # no statement and no distribution
    assert package_version("pytest") == __import__("pytest").__version__
    assert package_version("no_such_package_here") is None


def test_job_sweep_and_run_records_and_the_cache_key_agree_on_torch():
    from neffbench.backends import registry
    from neffbench.backends.choose import versions
    from neffbench.jobs import cache
    from neffbench.presets import load_preset
    from neffbench.runs.runtimes.registry import versions as run_versions
    from neffbench.sweeps.versions import differences, tool_versions

    job = versions(registry.get("cpu-check")("asked"))
    sweep = tool_versions()
    assert job["torch"] == sweep["torch"] == run_versions()["torch"] == torch_version()
    assert cache.key(load_preset("seed"), "cpu-check")["versions"]["torch"] == torch_version()
    # A node with the same installs differs in nothing, and another build of the same release is told apart.
    assert differences(sweep, dict(sweep)) == {}
    assert (
        differences(sweep, {**sweep, "torch": sweep["torch"].split("+")[0] + "+another-build"})["torch"]["client"]
        == sweep["torch"]
    )

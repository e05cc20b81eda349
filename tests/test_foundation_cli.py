"""The foundation commands as a user runs them: check, preset list/show, doctor."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from neffbench.cli.main import main
from neffbench.presets import preset_names
from neffbench.spec import loads_toml


def run_cli(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "neffbench", *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_check_a_preset_passes(capsys):
    assert main(["check", "seed"]) == 0
    out = capsys.readouterr().out
    assert "seed: OK (seed, 1 bucket: 1 token, spec hash" in out


def test_check_lists_every_problem_by_field_and_exits_2(capsys, tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text("[model]\nhead_size = 64\nrotary_dim = 63\nnum_heads_q = 0\n[rope]\nbase = -1.0\n")
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "error: model.rotary_dim: Rotary dim must be even (elements are rotated in pairs); got 63." in err
    assert "error: model.num_heads_q: Query heads must be at least 1; got 0." in err
    assert "error: rope.base: Base must be greater than 0; got -1." in err
    assert "3 errors" in err


def test_check_reports_unknown_keys_with_a_suggestion(capsys, tmp_path):
    spec = tmp_path / "typo.toml"
    spec.write_text("[rope]\nmax_pos = 10\nbse = 3.0\n")
    assert main(["check", str(spec)]) == 2
    assert "Unknown key 'bse' in [rope]. Did you mean 'base'?" in capsys.readouterr().err


def test_check_overrides_from_the_command_line(capsys):
    assert main(["check", "seed", "--rotary-dim", "63", "--num-tokens", "1", "300", "--positions", "range"]) == 2
    err = capsys.readouterr().err
    assert "Rotary dim must be even" in err and "Positions 0..299 reach max positions (128)" in err


def test_check_warnings_do_not_fail(capsys):
    assert main(["check", "seed", "--cache-dtype", "bfloat16"]) == 0
    assert "warning: rope.cache_dtype:" in capsys.readouterr().err


def test_check_names_a_missing_spec(capsys):
    assert main(["check", "no-such-thing"]) == 2
    assert "'no-such-thing' is neither a spec file nor a preset" in capsys.readouterr().err
    assert main(["check", "missing.toml"]) == 2
    assert "Spec file missing.toml does not exist." in capsys.readouterr().err


def test_preset_list_names_every_preset(capsys):
    assert main(["preset", "list"]) == 0
    out = capsys.readouterr().out
    for name in (
        "seed",
        "llama3-8b",
        "llama3.1-8b",
        "mistral-7b-v0.1",
        "qwen2-7b",
        "gpt-j-6b",
        "gpt-neox-20b",
        "phi-2",
    ):
        assert name in out
    assert out.splitlines()[0].startswith("seed ")


@pytest.mark.parametrize("name", preset_names())
def test_preset_show_prints_a_spec_that_checks(name, capsys, tmp_path):
    assert main(["preset", "show", name]) == 0
    text = capsys.readouterr().out
    assert text.startswith("#"), "the source comment comes first"
    assert "huggingface.co" in text or name == "seed"
    spec_file = tmp_path / "my.toml"
    spec_file.write_text(text)
    loads_toml(text)
    assert main(["check", str(spec_file)]) == 0


def test_preset_show_unknown_suggests(capsys):
    assert main(["preset", "show", "llama3"]) == 2
    assert "No preset named 'llama3'. Did you mean" in capsys.readouterr().err


def test_doctor_json_reports_what_it_found(neffbench_in_process):
    proc = neffbench_in_process("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for key in (
        "python",
        "torch",
        "pyside6",
        "pyqtgraph",
        "torch_neuronx",
        "neuronx_cc",
        "devices",
        "display",
        "backend",
        "backend_reason",
        "advice",
    ):
        assert key in data
    assert data["torch"]["found"] is True
    # This suite runs without the Neuron toolchain unless a test puts the fakes on PATH.
    assert data["backend"] in ("neuron", "cpu-check")
    if not data["neuron_toolchain"]:
        assert data["backend"] == "cpu-check" and "make no NEFF" in data["backend_reason"]


def test_doctor_recognises_the_pypi_placeholder(tmp_path):
    # PyPI's torch-neuronx is a placeholder whose import raises ImportError("WRONG PACKAGE").
    pkg = tmp_path / "torch_neuronx"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise ImportError('WRONG PACKAGE: install from the Neuron index')\n")
    import os

    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = run_cli("doctor", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "PyPI placeholder is installed" in proc.stdout
    assert "cpu-check backend" in proc.stdout


def test_help_lists_the_commands(neffbench_in_process):
    proc = neffbench_in_process("--help")
    assert proc.returncode == 0
    for cmd in ("check", "preset", "doctor"):
        assert cmd in proc.stdout


def test_extra_args_are_one_shell_quoted_option(capsys):
    assert main(["check", "seed", "--extra-args=-O3 --verbose info"]) == 2
    assert "Extra args set --optlevel 3 but the optlevel field is 2" in capsys.readouterr().err
    assert main(["check", "seed", "--extra-args", "--verbose info"]) == 0


def test_no_display_gets_a_sentence_not_a_core_dump():
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    proc = run_cli(env=env)
    assert proc.returncode == 1
    assert "no display to open the workbench window on" in proc.stderr
    assert "neffbench preview SPEC --out DIR" in proc.stderr
    # The way that shows the window to someone comes first; a virtual display alone shows it to nobody.
    ways = proc.stderr
    assert "xvfb-run" not in ways and ways.index("`neffbench remote`") < ways.index("`ssh -X`")
    assert ways.index("`neffbench remote`") < ways.index("neffbench preview")


def test_an_option_kernels_share_says_what_it_sets_for_each_kernel():
    """--dtype is the query's and key's dtype for RoPE and the dtype a module is cast to for the module kernel: each
    kernel's meaning is said, named; none stands for another's."""
    from neffbench.cli.spec_args import per_kernel_help

    helped = " ".join(run_cli("check", "--help").stdout.split())
    start = helped.rindex("--dtype {")  # its entry, after the usage line
    dtype = helped[start : helped.index("--seed N", start)]
    assert "[rope] Dtype of query and key." in dtype
    assert "[module] Cast the module's parameters and buffers" in dtype
    assert "[rms_norm] Dtype of x, the residual and the weight." in dtype
    assert per_kernel_help([("a", "Same."), ("b", "Same.")]) == "Same."
    assert per_kernel_help([("a", "One."), ("b", "Two."), ("c", "One.")]) == "Per kernel: [a, c] One. [b] Two."

"""The module kernel end to end: spec files, the hash, static checks, and compiles of user files,
built-in kernels and tiny Hugging Face models with cpu-check and with the fake toolchain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neffbench.jobs import read_record
from neffbench.kernels.module.params import ModuleCompileSpec, ModuleSection
from neffbench.spec import SpecError, load, loads_toml, save, spec_hash, validate
from tests.cli import neffbench
from tests.data.modules.hf_models import HF_MODELS
from tests.fakes import fake_env

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "modules"

BERT_TOML = """
name = "bert-tiny"
kernel = "module"
seed = 0

[module]
entry = "transformers:BertModel"
call = "factory"

[module.kwargs]
config = { entry = "transformers:BertConfig", kwargs = { vocab_size = 1000, hidden_size = 32, num_hidden_layers = 2, num_attention_heads = 2, intermediate_size = 64 } }

[module.constants]
return_dict = false

[inputs]
input_ids = "i64[{batch},{seq}] randint(0, 1000)"
attention_mask = "i64[{batch},{seq}] ones"

[buckets]
batch = [1]
seq = [8, 16]
"""


def _problems(spec) -> list[str]:
    return [f"{p.severity}: {p.field}: {p.message}" for p in validate(spec)]


# ---- spec files, hash, static checks --------------------------------------------------------


def test_spec_file_round_trips_with_nested_kwargs_and_two_axes(tmp_path):
    spec = loads_toml(BERT_TOML)
    assert isinstance(spec, ModuleCompileSpec)
    assert spec.module.kwargs["config"]["kwargs"]["hidden_size"] == 32
    assert spec.buckets == {"batch": (1,), "seq": (8, 16)}
    assert load(save(spec, tmp_path / "b.toml")) == spec
    assert load(save(spec, tmp_path / "b.json")) == spec
    from neffbench.kernels import registry

    kernel = registry.for_spec(spec)
    assert kernel.buckets(spec) == [{"batch": 1, "seq": 8}, {"batch": 1, "seq": 16}]
    assert _problems(spec) == []


def test_relative_paths_are_relative_to_the_spec_file(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("import torch\ndef f(x):\n    return x * 2\n")
    (tmp_path / "spec.toml").write_text('kernel = "module"\n[module]\nentry = "src/m.py:f"\n[inputs]\nx = "f32[4]"\n')
    spec = load(tmp_path / "spec.toml")
    assert spec.module.entry == f"{tmp_path / 'src' / 'm.py'}:f"
    assert _problems(spec) == []


def test_hash_covers_the_file_content_not_its_place_nor_the_seed(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "m.py").write_text("def f(x):\n    return x\n")

    def spec(folder, seed=0, shape="f32[4]"):
        return ModuleCompileSpec(
            seed=seed, module=ModuleSection(entry=f"{tmp_path / folder / 'm.py'}:f"), inputs={"x": shape}
        )

    assert spec_hash(spec("a")) == spec_hash(spec("b")) == spec_hash(spec("a", seed=7))
    assert spec_hash(spec("a")) != spec_hash(spec("a", shape="f32[8]"))
    assert spec_hash(spec("a", shape="f32[4]")) == spec_hash(spec("a", shape="float32[4] randn"))
    (tmp_path / "b" / "m.py").write_text("def f(x):\n    return x + 1\n")
    assert spec_hash(spec("a")) != spec_hash(spec("b"))


def test_static_problems_are_listed_by_field(tmp_path):
    spec = ModuleCompileSpec(
        module=ModuleSection(entry="not an entry"),
        inputs={"x": "f32[{tokens},4", "y": "f32[{seq}]", "2bad": "f32[1]"},
        buckets={"tokens": (1, 1, 0), "batch": (2,)},
    )
    assert _problems(spec) == [
        "error: module.entry: Entry 'not an entry' has no ':attr'; give 'package.module:attr' or "
        "'path/to/file.py:attr'.",
        'error: inputs.x: "f32[{tokens},4" is not a tensor spec; expected dtype[dims] init, such as '
        '"f32[2,{seq}] randn".',
        "error: inputs.y: Input 'y' uses {seq}, which is not a [buckets] axis (axes: tokens, batch).",
        "error: inputs.2bad: Input name '2bad' is not a Python parameter name.",
        "error: buckets.tokens: tokens = 1 is listed twice.",
        "error: buckets.tokens: Every value of tokens must be at least 1; got 0.",
        "warning: buckets.tokens: Bucket axis 'tokens' is used by no input, so its buckets compile the same NEFF.",
        "warning: buckets.batch: Bucket axis 'batch' is used by no input, so its buckets compile the same NEFF.",
    ]
    missing = ModuleCompileSpec(module=ModuleSection(entry=f"{tmp_path}/gone.py:f"))
    assert _problems(missing) == [
        f"error: module.entry: The file of the entry, {tmp_path}/gone.py, does not exist.",
        "error: inputs: No inputs: give one tensor spec per forward parameter under [inputs] (such as x = "
        '"f32[{tokens},64]"), or an examples function.',
    ]


def test_a_negative_count_among_the_constructor_arguments_is_an_error_naming_it():
    config = {"entry": "transformers:BertConfig", "kwargs": {"num_hidden_layers": -2, "hidden_size": 64}}
    spec = ModuleCompileSpec(
        module=ModuleSection(
            entry="transformers:BertModel", kwargs={"layers": -1, "bias": -1, "shift": -3, "config": config}
        ),
        inputs={"x": "f32[2]"},
    )
    errors = [p for p in validate(spec) if p.severity == "error"]
    assert [(p.field, p.message) for p in errors] == [
        ("module.kwargs.layers", "layers is a count: it cannot be negative (it is -1)."),
        ("module.kwargs.config.kwargs.num_hidden_layers", "num_hidden_layers is a count: it cannot be negative (it is -2)."),
    ]  # fmt: skip


def test_old_rope_specs_are_rope_specs():
    from neffbench.kernels.rope.params import RopeCompileSpec as CompileSpec

    spec = loads_toml('name = "old"\n[model]\nhead_size = 64\n')
    assert type(spec) is CompileSpec and spec.kernel == "rope"
    with pytest.raises(SpecError, match="No kernel named 'ropee'. Did you mean 'rope'"):
        loads_toml('kernel = "ropee"\n')


def _cli_spec(*args: str):
    from neffbench.cli.main import build_parser
    from neffbench.cli.spec_args import spec_from_args

    return spec_from_args(build_parser("check").parse_args(["check", f"{DATA}/mlp.py:make_mlp", *args]))


def test_a_malformed_toml_value_is_refused_and_a_bare_word_is_still_a_string():
    """A table missing its closing brace was taken as the string it spells: the factory got a config it never
    asked for. TOML's punctuation in a value that does not parse is refused, with where TOML stopped."""
    broken = 'config={entry="transformers:BertConfig", kwargs={hidden_size=64,}'
    with pytest.raises(SpecError) as refused:
        _cli_spec("--kwarg", broken)
    (problem,) = refused.value.problems
    assert problem.field == "--kwarg" and "malformed TOML" in problem.message and broken in problem.message
    assert "(at character 58 of the value)" in problem.message
    for bad in ("sizes=[1, 2", 'name="abc', "hidden=64,", "table={a=1}}"):
        with pytest.raises(SpecError, match="malformed TOML"):
            _cli_spec("--kwarg", bad)
    with pytest.raises(SpecError, match="--constant 'mode=\\[causal': the value is malformed TOML"):
        _cli_spec("--constant", "mode=[causal")
    spec = _cli_spec(
        "--kwarg", "activation=gelu", "--kwarg", "name=bert-base-uncased", "--kwarg", "weights=./w.pt",
        "--kwarg", "hidden_size=64", "--kwarg", "eps=1e-6", "--kwarg", "flag=true", "--kwarg", "sizes=[1, 2]",
        "--kwarg", 'config={entry="transformers:BertConfig", kwargs={hidden_size=64}}', "--constant", "mode=causal lm",
    )  # fmt: skip
    kwargs = spec.module.kwargs
    assert (kwargs["activation"], kwargs["name"], kwargs["weights"]) == ("gelu", "bert-base-uncased", "./w.pt")
    assert (kwargs["hidden_size"], kwargs["eps"], kwargs["flag"], kwargs["sizes"]) == (64, 1e-6, True, [1, 2])
    assert kwargs["config"]["kwargs"] == {"hidden_size": 64} and spec.module.constants == {"mode": "causal lm"}


def test_a_library_message_that_explains_itself_over_several_lines_is_kept_whole():
    """Hugging Face's validation error puts its explanation under a line ending in a colon: it is the message."""
    from neffbench.usercode import errors

    validation = ValueError(
        "Validation error for field 'hidden_size':\n    TypeError: Field 'hidden_size' expected int"
    )
    assert errors.message(validation) == (
        "Validation error for field 'hidden_size': TypeError: Field 'hidden_size' expected int"
    )
    assert errors.message(ValueError("shapes do not line up\nsee the docs")) == "shapes do not line up"


# ---- compiles (real child processes) ---------------------------------------------------------


_cli = neffbench


@pytest.fixture
def cli(neffbench_unless_env):
    """A compile's command in this process (its worker is a child still), or a child with the fake toolchain's
    environment."""
    return neffbench_unless_env


def _records(workdir: Path) -> list[dict]:
    return sorted((read_record(p.parent) for p in workdir.glob("*/job.json")), key=lambda r: r["created"])


@pytest.mark.slow
def test_check_shows_a_librarys_validation_error_whole(tmp_path, cli):
    transformers = pytest.importorskip("transformers")
    try:
        transformers.BertConfig(hidden_size="64")
    except Exception as exc:  # noqa: BLE001 - whatever this version raises
        if "\n" not in str(exc).strip():
            pytest.skip("this transformers says it on one line")
    else:
        pytest.skip("this transformers does not validate its config's fields")
    config = 'config={entry="transformers:BertConfig", kwargs={hidden_size="64"}}'
    proc = cli(
        "check", "transformers:BertModel", "--kwarg", config, "--input", "input_ids:i64[1,8]", "--backend", "cpu-check",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Validation error for field 'hidden_size': TypeError: Field 'hidden_size' expected int" in proc.stderr


@pytest.mark.slow
def test_cli_compiles_a_factory_with_typed_arguments_as_the_issue_writes_it(tmp_path, cli):
    proc = cli(
        "compile",
        f"{DATA}/mlp.py:make_mlp",
        "--input",
        "x:f32[{tokens},64]",
        "--kwarg",
        "hidden_size=64",
        "--kwarg",
        "activation=gelu",
        "--bucket",
        "tokens=1,8",
        "--workdir",
        str(tmp_path),
        "--backend",
        "cpu-check",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recs = _records(tmp_path)
    assert [r["bucket"] for r in recs] == [{"tokens": 1}, {"tokens": 8}]
    info = recs[0]["kernel_info"]
    assert info["resolved"] == "mlp.py:MLP" and info["call"] == "factory" and info["kind"] == "function"
    assert info["kwargs"] == {"hidden_size": 64, "activation": "gelu"}
    assert info["inputs"] == ["x: float32[1,64] randn"] and info["outputs"] == ["output"]
    assert len(info["file_sha256"]) == 64 and "class NeffbenchWrapper" in info["wrapper"]
    assert recs[0]["preflight"]["op_counts"]["aten::gelu"] == 1
    assert recs[0]["numerics"]["match"] is True
    assert recs[0]["numerics"]["dtype_cost"]["checked"] is True
    assert "tokens  outcome" in proc.stdout
    # The wrapper that was traced is in reproduce.py, verbatim.
    script = next(tmp_path.glob("*/reproduce.py")).read_text()
    assert info["wrapper"].strip() in script


@pytest.mark.slow
@pytest.mark.parametrize(
    "what, spec_args",
    [
        (
            "function with a constant",
            [
                f"{DATA}/functions.py:scaled_add",
                "--input",
                "x:f32[4,8]",
                "--input",
                "y:f32[4,8]",
                "--constant",
                "alpha=0.25",
            ],
        ),
        ("nn.Module instance", [f"{DATA}/instances.py:norm", "--input", "input:f32[{t},16]", "--bucket", "t=3"]),
        ("dict outputs", [f"{DATA}/functions.py:two_outputs", "--input", "x:f32[4,8]"]),
        ("rms_norm", ["llama3-8b-rms-norm-residual", "--hidden-size", "256", "--num-tokens", "4"]),
        ("silu_and_mul", ["llama3-8b-silu-and-mul", "--intermediate-size", "128", "--num-tokens", "4"]),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
@pytest.mark.parametrize("backend", ["cpu-check", "fake-neuron"])
def test_kernels_compile_with_cpu_check_and_the_fake_toolchain(tmp_path, what, spec_args, backend, cli):
    env = fake_env("success") if backend == "fake-neuron" else None
    extra = ["--backend", "neuron"] if env else ["--backend", "cpu-check"]
    proc = cli("compile", *spec_args, "--workdir", str(tmp_path), "--target", "trn2", *extra, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (rec,) = _records(tmp_path)
    assert rec["outcome"] == "succeeded"
    if env:
        assert rec["backend"] == "neuron" and len(rec["neffs"]) == 1
        assert rec["numerics"]["checked"] is False  # cpu_backend: no device here
    else:
        assert rec["neffs"] == [] and rec["numerics"]["match"] is True
    assert rec["preflight"]["interface"]["inputs"]


@pytest.mark.slow
def test_a_child_only_problem_fails_the_job_with_its_sentence(tmp_path, cli):
    proc = cli(
        "compile",
        f"{DATA}/problems.py:NoneOutput",
        "--input",
        "x:f32[4]",
        "--workdir",
        str(tmp_path),
        "--backend",
        "cpu-check",
    )
    assert proc.returncode == 1
    (rec,) = _records(tmp_path)
    assert rec["outcome"] == "failed"
    assert rec["reason"].startswith("output[1] is None: a traced graph returns tensors only")
    bad = cli("compile", f"{DATA}/mlp.py:make_mlp", "--input", "x:f32[{nope},64]", "--workdir", str(tmp_path))
    assert bad.returncode == 2
    assert "error: inputs.x: Input 'x' uses {nope}, which is not a [buckets] axis (axes: none)." in bad.stderr


@pytest.mark.slow
def test_a_data_dependent_op_fails_a_neuron_compile_before_the_compiler_runs(tmp_path, cli):
    proc = cli(
        "compile",
        f"{DATA}/problems.py:NonzeroModule",
        "--input",
        "x:f32[8]",
        "--workdir",
        str(tmp_path),
        "--backend",
        "neuron",
        env=fake_env("success"),
    )
    assert proc.returncode == 1
    (rec,) = _records(tmp_path)
    assert rec["reason"].startswith("pre-flight: the traced graph uses aten::nonzero")
    assert rec["neffs"] == [] and "compiling" not in rec["stages"]


def _hf_spec(tmp_path: Path, name: str) -> Path:
    model = HF_MODELS[name]
    import tomli_w

    data = {
        "name": f"hf-{name}",
        "kernel": "module",
        "module": {
            "entry": model["entry"],
            "call": "factory",
            "kwargs": {"config": {"entry": model["config"], "kwargs": model["config_kwargs"]}},
            "constants": model["constants"],
        },
        "inputs": model["inputs"],
        "buckets": model["buckets"],
    }
    path = tmp_path / f"{name}.toml"
    path.write_text(tomli_w.dumps(data))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HF_MODELS))
def test_tiny_hugging_face_models_compile_from_their_configs(tmp_path, name, cli):
    proc = cli("compile", str(_hf_spec(tmp_path, name)), "--workdir", str(tmp_path / "wd"), "--backend", "cpu-check")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (rec,) = _records(tmp_path / "wd")
    assert rec["numerics"]["match"] is True
    assert rec["kernel_info"]["versions"]["transformers"]
    assert rec["kernel_info"]["resolved"].startswith("transformers.models.")


@pytest.mark.slow
def test_bert_compiles_with_the_fake_toolchain_and_its_script_reproduces_it(tmp_path, cli):
    env = fake_env("success")
    proc = cli(
        "compile",
        str(_hf_spec(tmp_path, "bert")),
        "--workdir",
        str(tmp_path / "wd"),
        "--backend",
        "neuron",
        "--target",
        "trn2",
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (rec,) = _records(tmp_path / "wd")
    assert rec["neffs"] and rec["preflight"]["interface"]["outputs"] == ["output0 <- output[0]", "output1 <- output[1]"]
    job = next((tmp_path / "wd").glob("*/reproduce.py")).parent
    run = subprocess.run(
        [sys.executable, "reproduce.py", str(tmp_path / "out")],
        cwd=job,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert list((tmp_path / "out" / "compiler").glob("**/*.neff"))
    import torch

    saved = torch.load(tmp_path / "out" / "example_inputs.pt")
    assert [tuple(t.shape) for t in saved] == [(1, 16), (1, 16), (1, 16)]


@pytest.mark.slow
def test_resolve_and_kernel_commands(neffbench_in_process):
    proc = neffbench_in_process("resolve", f"{DATA}/mlp.py:make_mlp")
    assert proc.returncode == 0, proc.stderr
    assert "factory: make_mlp(hidden_size: int = 64" in proc.stdout
    assert "activation: Literal['gelu', 'silu', 'relu'] = 'silu'" in proc.stdout
    assert "forward(x: Tensor)" in proc.stdout
    report = json.loads(neffbench_in_process("resolve", f"{DATA}/mlp.py:GatedMLP", "--json").stdout)
    scale = next(p for p in report["factory"] if p["name"] == "scale")
    assert (scale["widget"], scale["min"], scale["max"]) == ("float", 0.0, 10.0)
    missing = neffbench_in_process("resolve", f"{DATA}/mlp.py:Nope")
    assert missing.returncode == 1 and "'mlp.py' has no attribute 'Nope'." in missing.stderr
    listing = neffbench_in_process("kernel", "list")
    from neffbench.kernels import registry

    for name in registry.names():
        assert name in listing.stdout
    shown = neffbench_in_process("kernel", "show", "rms_norm")
    assert "norm.eps" in shown.stdout and "llama3-8b-rms-norm" in shown.stdout


@pytest.mark.slow
def test_analyze_lists_unsupported_operators_before_the_compile(tmp_path, cli):
    env = fake_env("success", FAKE_ANALYZE_UNSUPPORTED="aten::gelu")
    proc = cli(
        "compile",
        f"{DATA}/mlp.py:make_mlp",
        "--input",
        "x:f32[4,64]",
        "--kwarg",
        "activation=gelu",
        "--workdir",
        str(tmp_path),
        "--backend",
        "neuron",
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (rec,) = _records(tmp_path)
    assert rec["analyze"]["unsupported_operators"][0]["kind"] == "aten::gelu"
    assert rec["analyze"]["supported_operators"]["aten::linear"] == 2
    assert (
        "neuronx-cc cannot compile aten::gelu (failed at neuronx-cc), called at model.py(12): forward."
        in rec["warnings"]
    )
    failing = cli(
        "compile",
        f"{DATA}/mlp.py:make_mlp",
        "--input",
        "x:f32[4,64]",
        "--workdir",
        str(tmp_path / "b"),
        "--backend",
        "neuron",
        env=fake_env("success", FAKE_ANALYZE_RAISE="boom"),
    )
    assert failing.returncode == 0
    (rec,) = _records(tmp_path / "b")
    assert "torch_neuronx.analyze failed (RuntimeError: boom); the compile goes ahead." in rec["warnings"]


@pytest.mark.slow
def test_check_runs_pre_flight_for_user_code(neffbench_in_process):
    ok = neffbench_in_process("check", f"{DATA}/problems.py:UnusedInput", "--input", "x:f32[4]", "--input", "y:f32[4]")
    assert ok.returncode == 0, ok.stderr
    assert "warning: pre-flight: input 'y' is never used by the traced graph" in ok.stderr
    assert "NEFF inputs:  input0 <- x" in ok.stdout
    assert "OK (UnusedInput, 1 bucket: no bucket axes, spec hash" in ok.stdout
    bad = neffbench_in_process("check", f"{DATA}/problems.py:NoneOutput", "--input", "x:f32[4]")
    assert bad.returncode == 2
    assert "error: pre-flight: output[1] is None" in bad.stderr
    assert (
        neffbench_in_process("check", f"{DATA}/problems.py:NoneOutput", "--input", "x:f32[4]", "--no-probe").returncode
        == 0
    )

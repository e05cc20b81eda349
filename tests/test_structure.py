"""``neffbench structure``: every job's model as a tree (kept by the compile), with the latest compare's error on it;
old jobs get theirs computed; two jobs compared layer by layer; the Model Explorer export and the HTML report."""

from __future__ import annotations

import json
import runpy
import shutil
import sys
from functools import partial
from pathlib import Path

import pytest
import torch

from tests.cli import neffbench

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent

NET = """
import torch
from torch import nn
from taps_models import Block


class Net(nn.Module):
    def __init__(self, width=8, layers=4, lossy_at=2, wide_at=-1):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList(Block(width, lossy=(i == lossy_at)) for i in range(layers))
        if wide_at >= 0:
            self.layers[wide_at].mlp.up = nn.Linear(width, 4 * width)
            self.layers[wide_at].mlp.down = nn.Linear(4 * width, width)
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)
"""
_cli = partial(neffbench, timeout=600)


def _compile(project: Path, *args: str) -> Path:
    before = set(project.glob("wd/*/job.json"))
    proc = _cli(
        "compile",
        "net.py:Net",
        "--input",
        "x:f32[2,8]",
        "--workdir",
        "wd",
        "--backend",
        "cpu-check",
        *args,
        cwd=project,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (new,) = set(project.glob("wd/*/job.json")) - before
    return new.parent


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("structure")
    shutil.copy(HERE / "taps_models.py", root / "taps_models.py")
    (root / "net.py").write_text(NET, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def job(project) -> Path:
    return _compile(project)


@pytest.fixture
def cli(neffbench_in_process):
    """The commands that read a job (structure, diff, report, compare) in this process: a compile's processes are
    not what these tests are about."""
    return neffbench_in_process


def _structure(cli, job: Path, *args: str) -> dict:
    proc = cli("structure", str(job), "--json", *args, cwd=job.parent.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def _torch_truth(project: Path) -> tuple[dict[str, int], dict[str, tuple], list[str]]:
    """What torch itself says of the model: each module's parameters, first call's input and output shapes, and the
    order the calls start in."""
    sys.path.insert(0, str(project))
    try:
        net = runpy.run_path(str(project / "net.py"))["Net"]().eval()
    finally:
        sys.path.remove(str(project))
        sys.modules.pop("taps_models", None)
    shapes: dict[str, tuple] = {}
    order: list[str] = []

    def before(path: str, module: torch.nn.Module, args: tuple) -> None:
        if path not in order:
            order.append(path)

    def after(path: str, module: torch.nn.Module, args: tuple, out: torch.Tensor) -> None:
        shapes.setdefault(path, (tuple(args[0].shape), tuple(out.shape)))

    for path, module in net.named_modules():
        module.register_forward_pre_hook(partial(before, path))
        module.register_forward_hook(partial(after, path))
    with torch.no_grad():
        net(torch.randn(2, 8))
    params = {p: sum(x.numel() for x in m.parameters()) for p, m in net.named_modules()}
    return params, shapes, order


def own_copy(job: Path, tmp_path: Path) -> Path:
    """The job in a copy of its folder (the workdir and the user's files beside it), for a test that adds to it (a
    compare, a run): the module's job stays as compiled for the tests that read it, in any order."""
    shutil.copytree(job.parent.parent, tmp_path / "own", symlinks=True)
    return tmp_path / "own" / job.parent.name / job.name


def test_a_four_layer_models_structure_is_torchs_own(job, project, cli):
    """Every path of named_modules(), with the parameters parameters() counts and the shapes its first call saw."""
    doc = _structure(cli, job)
    nodes = {n["path"]: n for n in doc["nodes"]}
    params, shapes, order = _torch_truth(project)
    assert set(nodes) == set(params)
    for path, count in params.items():
        assert nodes[path]["params"] == count, path
    for path, (given, made) in shapes.items():
        assert tuple(nodes[path]["inputs"][0]["shape"]) == given and tuple(nodes[path]["outputs"][0]["shape"]) == made
        assert nodes[path]["inputs"][0]["dtype"] == "float32"
    # The tree in call order: the layers in the order the forward calls them, the head last.
    layers = [p for p in (n["path"] for n in doc["nodes"]) if p.count(".") == 1 and p.startswith("layers.")]
    assert layers == [p for p in order if p.count(".") == 1 and p.startswith("layers.")]
    assert [n["path"] for n in doc["nodes"]][-1] == "head"
    # Each module's own traced operations, and FLOPs as torch's FlopCounterMode counts them: 2 x 8 x 16 x 2.
    assert nodes["layers.2.cast"]["ops"] == {"aten::to": 2} and nodes["layers.0"]["ops"] == {"aten::add": 1}
    assert nodes["layers.0.mlp.up"]["flops"] == 2 * 2 * 8 * 16 and nodes[""]["op_total"] == 23
    assert nodes["layers.0.mlp.up"]["called_at"].endswith("taps_models.py:27")
    assert doc["how"].startswith("the compile worker") and doc["profile"] is None
    # Kept by the compile in the job, read by the command.
    assert (job / "structure.json").is_file() and "structure_s" in json.loads((job / "job.json").read_text())["metrics"]


def test_the_text_says_where_each_figure_comes_from_and_how_to_get_the_others(job, cli):
    text = cli("structure", str(job), "--depth", "1", cwd=job.parent.parent).stdout
    assert "Net, 30 submodules, 1,220 parameters" in text
    assert "no compare yet (`neffbench compare" in text and "no profile yet (`neffbench run" in text
    rows = [line.split() for line in text.splitlines()]
    assert any(r[:2] == ["2", "Block"] for r in rows) and not any(r[:1] == ["norm"] for r in rows)  # depth 1 only


def test_the_first_divergent_layer_of_a_compare_is_marked_on_the_tree(job, tmp_path, cli):
    job = own_copy(job, tmp_path)
    proc = cli("compare", str(job), "--runtime", "cpu", "--json", cwd=job.parent.parent)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # layers.2.cast diverges against float64
    doc = _structure(cli, job)
    nodes = {n["path"]: n for n in doc["nodes"]}
    assert nodes["layers.2.cast"]["first_divergent"] == ["vs_float64"]
    assert [p for p, n in nodes.items() if n["first_divergent"]] == ["layers.2.cast"]
    assert nodes["layers.2.cast"]["vs_float64"]["ok"] is False and nodes["layers.1"]["vs_float64"]["ok"] is True
    assert doc["compare"]["first_divergent"] == {"vs_eager": None, "vs_float64": "layers.2.cast"}
    text = cli("structure", str(job), cwd=job.parent.parent).stdout
    (row,) = [line for line in text.splitlines() if "◀ first" in line]
    assert row.split()[:2] == ["cast", "AutoCastLike"] and "FAIL" in row
    assert "first divergent against float64: layers.2.cast" in text


def test_a_job_from_before_structures_gets_one_from_its_spec(job, tmp_path, cli):
    old = tmp_path / job.name
    shutil.copytree(job, old)
    (old / "structure.json").unlink()
    proc = cli("structure", str(old), "--json", cwd=job.parent.parent)
    assert proc.returncode == 0, proc.stderr
    assert "has no structure yet (compiled before structures were kept): computing it" in proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["how"] == "computed later from the job's spec" and (old / "structure.json").is_file()
    assert {n["path"] for n in doc["nodes"]} == {n["path"] for n in _structure(cli, job)["nodes"]}
    again = cli("structure", str(old), cwd=job.parent.parent)
    assert "computing it" not in again.stderr  # kept: never computed again
    # A module that no longer builds the same (another seed in its source) is refused, not described.
    changed = tmp_path / "changed"
    shutil.copytree(old, changed)
    (changed / "structure.json").unlink()
    record = json.loads((changed / "job.json").read_text())
    record["weights"]["sha256"] = "0" * 64
    (changed / "job.json").write_text(json.dumps(record))
    refused = cli("structure", str(changed), cwd=job.parent.parent)
    assert refused.returncode == 1 and "the module built now differs from the one compiled" in refused.stderr


def test_the_layer_diff_of_two_jobs_shows_the_one_changed_layer(project, job, cli):
    wide = _compile(project, "--kwarg", "wide_at=1")
    proc = cli("diff", str(job), str(wide), "--layers", "--depth", "1", cwd=project)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("1 of 5 modules differ")
    rows = [line for line in lines[3:] if line.strip()]
    assert len(rows) == 1 and rows[0].startswith("layers.1 ") and "own parameters 144 → 288" in rows[0]
    doc = json.loads(cli("diff", str(job), str(wide), "--layers", "--json", cwd=project).stdout)
    assert doc["differ"] == ["layers.1.mlp.up", "layers.1.mlp.act", "layers.1.mlp.down"]
    same = cli("diff", str(job), str(job), "--layers", cwd=project).stdout
    assert "all 30 modules alike" in same


def test_model_explorer_files_and_the_html_report(job, tmp_path, monkeypatch, cli):
    proc = cli("structure", str(job), "--export", str(tmp_path / "me"), cwd=job.parent.parent)
    assert proc.returncode == 0, proc.stderr
    graph = json.loads((tmp_path / "me" / f"{job.name}.json").read_text())
    (g,) = graph["graphs"]
    ids = {n["id"] for n in g["nodes"]}
    assert {"input0", "output0", "module:layers.0.mlp.up", "module:head"} <= ids
    assert all(e["sourceNodeId"] in ids for n in g["nodes"] for e in n["incomingEdges"])
    up = next(n for n in g["nodes"] if n["id"] == "module:layers.0.mlp.up")
    assert up["namespace"] == "layers/0/mlp" and {"key": "class", "value": "Linear"} in up["attrs"]
    flops = json.loads((tmp_path / "me" / f"{job.name}.FLOPs.json").read_text())
    assert flops[job.name]["results"]["module:layers.0.mlp.up"] == {"value": 512.0}
    assert set(flops[job.name]["results"]) <= ids
    opened = cli("structure", str(job), "--model-explorer", cwd=job.parent.parent)
    assert opened.returncode == 1 and "pip install 'neffbench[explorer]'" in opened.stderr
    report = cli("report", str(job), "--out", str(tmp_path / "r.html"), cwd=job.parent.parent)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "r.html").read_text()
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "AutoCastLike" in page and "<svg" in page and "Frontend" not in page  # cpu-check: no compiler passes


def test_a_library_models_layers_are_called_at_the_line_of_the_librarys_forward_that_calls_them():
    """A Hugging Face model built from a config: no line of the user's calls its layers, its own forwards do."""
    import linecache

    pytest.importorskip("transformers")
    from neffbench.kernels import registry
    from neffbench.spec import from_dict
    from neffbench.structure import cells, document
    from neffbench.structure.capture import capture
    from tests.bench.bench_structure import LLAMA

    config = LLAMA["module"]["kwargs"]["config"]
    small = {**config, "kwargs": {**config["kwargs"], "num_hidden_layers": 2}}
    spec = from_dict({**LLAMA, "module": {**LLAMA["module"], "kwargs": {"config": small}}})
    doc = capture(registry.for_spec(spec).build(spec), how="test")
    nodes = {n["path"]: n for n in doc["nodes"]}

    def source(where: str) -> str:
        file, _, line = where.rpartition(":")
        return linecache.getline(file, int(line))

    layer, mlp = nodes["model.layers.1"], nodes["model.layers.1.mlp"]
    assert layer["called_in"] == "LlamaModel" and layer["called_at"].rpartition(":")[0].endswith("modeling_llama.py")
    assert "decoder_layer(" in source(layer["called_at"]) or "layer(" in source(layer["called_at"])
    assert mlp["called_in"] == "LlamaDecoderLayer" and "self.mlp(" in source(mlp["called_at"])
    assert nodes[""]["called_at"] is None
    tree = document.of(doc)
    assert cells.call_site(tree.by_path["model.layers.1.mlp"]).endswith(
        "(in LlamaDecoderLayer's forward: library code, not yours)"
    )
    assert "no line of your code calls it" in cells.call_site(tree.by_path[""])

"""GPT-2 and Llama through the module kernel trace on transformers 4.5x (whose masks are built with torch.vmap,
which torch.jit.trace cannot follow) and on transformers 5 (where the remedy changes nothing)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from neffbench.kernels.module.hf_compat import explain_trace_failure
from tests.data.modules.hf_models import HF_MODELS

CAUSAL = ("gpt2", "llama")
REPO = Path(__file__).resolve().parents[1]


def _transformers_major() -> int:
    import transformers

    return int(transformers.__version__.split(".")[0])


def _spec(name: str):
    from neffbench.spec import from_dict

    model = HF_MODELS[name]
    return from_dict(
        {
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
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", CAUSAL)
# transformers 5 warns when torch.jit.trace probes a module's attributes: theirs to fix, not a problem here.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_a_tiny_causal_lm_traces_and_matches_eager_with_padding(name):
    import torch

    from neffbench.backends.tracing import cpu_check_trace
    from neffbench.kernels.module.build import build

    built = build(_spec(name))
    traced, _warnings = cpu_check_trace(built.module, built.inputs)
    ids, mask = built.inputs
    padded = mask.clone()
    padded[:, :5] = 0  # traced with an all-ones mask; the graph must still honour padding
    fresh = torch.randint(0, 1000, ids.shape, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        for args in ((ids, mask), (fresh, padded)):
            for eager, got in zip(built.module(*args), traced(*args)):
                torch.testing.assert_close(got, eager)
    if _transformers_major() < 5:
        record = built.info["hf_compat"]
        assert record["applied"] == "attention masks built without torch.vmap"
        assert record["attn_implementation"] == ["sdpa"] and "unordered_map::at" in record["why"]
    else:  # transformers 5 builds its masks without vmap already: nothing is applied or recorded
        assert "hf_compat" not in built.info


@pytest.mark.slow
def test_a_model_without_those_masks_is_left_alone():
    from neffbench.kernels.module.build import build

    assert "hf_compat" not in build(_spec("bert")).info


UNREMEDIED = """
import traceback, torch, transformers
from transformers import GPT2Config, GPT2Model
from neffbench.kernels.module.hf_compat import explain_trace_failure
model = GPT2Model(GPT2Config(vocab_size=1000, n_embd=32, n_layer=2, n_head=2, n_inner=64, n_positions=64)).eval()

class Wrapper(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, ids, mask):
        return self.inner(input_ids=ids, attention_mask=mask, use_cache=False, return_dict=False)[0]

try:
    torch.jit.trace(Wrapper(model), (torch.zeros(1, 8, dtype=torch.long), torch.ones(1, 8, dtype=torch.long)),
                    strict=False, check_trace=False)
    print("TRACED")
except RuntimeError as exc:
    print("FAILED", explain_trace_failure("".join(traceback.format_exception(type(exc), exc, exc.__traceback__))))
"""


@pytest.mark.slow
def test_without_the_remedy_transformers_4_fails_with_unordered_map_and_is_explained():
    """What the remedy is for, in a child that never applied it: 4.5x fails (and is explained), 5 traces."""
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", textwrap.dedent(UNREMEDIED)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    if _transformers_major() < 5:
        assert (
            "FAILED torch.jit.trace failed with unordered_map::at in transformers' attention-mask code" in proc.stdout
        )
    else:
        assert "TRACED" in proc.stdout


def test_the_explanation_names_the_cause_and_the_remedies():
    text = (
        'Traceback (most recent call last):\n  File ".../transformers/masking_utils.py", line 392, in '
        "sdpa_mask_recent_torch\nRuntimeError: unordered_map::at"
    )
    sentence = explain_trace_failure(text)
    assert sentence.endswith(".") and ". " not in sentence  # one sentence
    assert "torch.vmap" in sentence and "masks_without_vmap()" in sentence and "transformers 5" in sentence
    assert explain_trace_failure("RuntimeError: unordered_map::at") is None  # not from the masks: not ours to say
    assert explain_trace_failure("RuntimeError: something else in masking_utils") is None


@pytest.mark.slow
def test_a_gpt2_compile_with_the_fake_toolchain_records_the_remedy_and_its_script_reproduces_it(tmp_path):
    import tomli_w

    from neffbench.jobs import read_record
    from tests.fakes import fake_env

    model = HF_MODELS["gpt2"]
    spec = tmp_path / "gpt2.toml"
    spec.write_text(
        tomli_w.dumps(
            {
                "name": "hf-gpt2",
                "kernel": "module",
                "inputs": model["inputs"],
                "buckets": model["buckets"],
                "module": {
                    "entry": model["entry"],
                    "call": "factory",
                    "constants": model["constants"],
                    "kwargs": {"config": {"entry": model["config"], "kwargs": model["config_kwargs"]}},
                },
            }
        )
    )
    env = {**os.environ, **fake_env("success")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "neffbench",
            "compile",
            str(spec),
            "--workdir",
            str(tmp_path / "wd"),
            "--backend",
            "neuron",
            "--target",
            "trn1",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (job,) = [p.parent for p in (tmp_path / "wd").glob("*/job.json")]
    record = read_record(job)
    script = (job / "reproduce.py").read_text(encoding="utf-8")
    remedied = _transformers_major() < 5
    assert ("hf_compat" in record["kernel_info"]) == remedied
    assert ("masks_without_vmap()" in script) == remedied
    run = subprocess.run(
        [sys.executable, "reproduce.py", str(tmp_path / "out")],
        cwd=job,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert list((tmp_path / "out" / "compiler").glob("**/*.neff"))


def test_the_mask_remedy_says_it_changed_something_only_once(monkeypatch):
    """A second masks_without_vmap() finds its broadcast in place (the check once looked for a mark that the
    installed function never carried, so every call said it changed something)."""
    import contextlib
    import types

    from neffbench.kernels.module import hf_masks

    masking = types.SimpleNamespace(_vmap_for_bhqkv=lambda *a: None, TransformGetItemToIndex=object)
    monkeypatch.setitem(sys.modules, "transformers.masking_utils", masking)
    assert hf_masks.masks_without_vmap() is True
    assert masking._vmap_for_bhqkv is hf_masks._broadcast_for_bhqkv
    assert masking.TransformGetItemToIndex is contextlib.nullcontext
    assert hf_masks.masks_without_vmap() is False

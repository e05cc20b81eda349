"""Which Python stack the workbench finds itself in (the legacy Neuron venv of an Inf2/Trn1 box, TorchNeuron's,
or neither), and the known bad combinations of versions it can see, each with its remedy.

Read from versions alone (``neffbench.versions``, distribution metadata): nothing is imported, so it is
cheap enough for ``neffbench doctor`` and the window's status bar.
"""

from __future__ import annotations

import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from neffbench.versions import package_version

# The DLAMIs' Neuron venvs: /opt/aws_neuronx_venv_pytorch_2_8_nxd_inference and the like.
_DLAMI_VENV = re.compile(r"aws_neuronx_venv_pytorch")
# torchvision 0.N is built for torch 2.(N - 15): 0.24 for torch 2.9, 0.23 for 2.8.
_TORCHVISION_OFFSET = 15


@dataclass
class Stack:
    kind: str  # "legacy-neuron", "torchneuron" or "other"
    summary: str  # one line: which stack, and the versions that make it so
    versions: dict[str, str | None] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # known bad combinations, each with its remedy

    def to_dict(self) -> dict:
        return asdict(self)


def _minor(version: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(m[1]), int(m[2])) if m else None


def _versions() -> dict[str, str | None]:
    return {
        "python": ".".join(map(str, sys.version_info[:3])),
        "torch": package_version("torch"),
        "numpy": package_version("numpy"),
        "transformers": package_version("transformers"),
        "torch_neuronx": package_version("torch_neuronx", "torch-neuronx"),
        "neuronx_cc": package_version("neuronxcc", "neuronx-cc"),
        "torchvision": package_version("torchvision"),
        "pyside6": package_version("PySide6", "PySide6-Essentials"),
    }


def _kind(v: dict[str, str | None], flavour: str | None, prefix: str) -> tuple[str, str]:
    listed = ", ".join(f"{k} {v[k]}" for k in ("python", "torch", "numpy", "transformers", "torch_neuronx") if v.get(k))
    venv = f" at {prefix}" if _DLAMI_VENV.search(prefix) else ""
    if flavour == "native":
        return "torchneuron", f"a TorchNeuron venv (SDK 2.33+, Trn2/Trn3){venv}: {listed}"
    if flavour == "legacy" or _DLAMI_VENV.search(prefix):
        return "legacy-neuron", f"the legacy Neuron venv of an Inf2/Trn1 box (SDK ≤ 2.31){venv}: {listed}"
    torch, numpy = _minor(v.get("torch")), _minor(v.get("numpy"))
    if sys.version_info[:2] == (3, 10) and torch and torch < (2, 10) and numpy and numpy < (2, 0):
        return "other", (
            f"not a Neuron venv, but the legacy Neuron stack's versions (as `make test-legacy` tests them): {listed}"
        )
    return "other", f"not a Neuron venv: {listed}"


def _warnings(v: dict[str, str | None], backend: str) -> list[str]:
    out = []
    torch, numpy = _minor(v.get("torch")), _minor(v.get("numpy"))
    transformers = _minor(v.get("transformers"))
    if transformers and transformers < (5, 0) and torch and torch >= (2, 6) and backend in ("neuron", "cpu-check"):
        out.append(
            f"transformers {v['transformers']} with torch {v['torch']} and a torch.jit.trace-based compile "
            f"({backend}): torch.jit.trace of GPT-2, Llama and other models that build their attention masks "
            "with torch.vmap fails with unordered_map::at. Remedy: the module kernel builds those masks "
            "without vmap for the models it builds (the job's kernel_info says hf_compat); in scripts of your "
            "own call neffbench.kernels.module.hf_masks.masks_without_vmap() before tracing, or use "
            "transformers 5."
        )
    if v.get("neuronx_cc") and numpy and numpy >= (2, 0):
        out.append(
            f"numpy {v['numpy']} with neuronx-cc {v['neuronx_cc']}: neuronx-cc needs numpy 1.26.4 (pinned "
            "since Neuron SDK 2.26). Remedy: pip install numpy==1.26.4."
        )
    neuronx = _minor(v.get("torch_neuronx"))
    if neuronx and torch and neuronx < (2, 13) and neuronx != torch:
        out.append(
            f"torch {v['torch']} with torch-neuronx {v['torch_neuronx']}, which is built for torch "
            f"{neuronx[0]}.{neuronx[1]}. Remedy: pip install 'torch=={neuronx[0]}.{neuronx[1]}.*' "
            "(or the torch-neuronx for your torch) from the Neuron package index."
        )
    vision = _minor(v.get("torchvision"))
    if vision and torch and torch[0] == 2 and vision[0] == 0 and vision[1] != torch[1] + _TORCHVISION_OFFSET:
        built_for = f"2.{vision[1] - _TORCHVISION_OFFSET}"
        out.append(
            f"torchvision {v['torchvision']} is built for torch {built_for}, not torch {v['torch']}: importing "
            "it fails (torchvision::nms does not exist), and so does `from transformers import BertModel`. "
            f"Remedy: pip uninstall torchvision, or install torchvision==0.{torch[1] + _TORCHVISION_OFFSET}.* "
            "from the index your torch came from."
        )
    if v.get("pyside6") == "6.12.0" and sys.version_info < (3, 12):
        out.append(
            "PySide6 6.12.0 on Python < 3.12 ends a window session with 'Fatal Python error: none_dealloc'. "
            "Remedy: pip install 'PySide6-Essentials!=6.12.0'."
        )
    return out


def detect(backend: str, flavour: str | None = None) -> Stack:
    """The stack of this interpreter; ``backend`` is what an ``auto`` compile gets, ``flavour`` torch_neuronx's."""
    versions = _versions()
    kind, summary = _kind(versions, flavour, str(Path(sys.prefix)))
    return Stack(kind, summary, versions, _warnings(versions, backend))

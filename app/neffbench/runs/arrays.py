"""``inputs.npz`` and ``reference.npz``: example inputs and eager outputs saved beside every NEFF, any dtype included.

numpy has no bfloat16, so a bfloat16 array is stored as its raw uint16 bits and the true dtype is
written in the archive's ``__meta__`` entry; whoever reads it back gets the dtype it was made with.
Keys are the NEFF's own names (``input0``.. for what torch_neuronx passes, ``output0``..); inputs
the traced graph never uses keep their place in the call order under ``unused:<name>``, because
the TorchScript takes them even though the NEFF does not.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from neffbench.procs import replacing

META = "__meta__"
INPUTS_NAME, REFERENCE_NAME = "inputs.npz", "reference.npz"
# A compare's tapped job: each tap's output of a float64 run of the module (what the dtype itself costs).
FLOAT64_REFERENCE_NAME = "reference64.npz"
# Stored as the bits of another numpy dtype: (storage dtype, true dtype).
_BITS = {"bfloat16": "uint16"}


class ArraysError(ValueError):
    """A file of arrays that cannot be used; one sentence naming the file and what is wrong."""


@dataclass
class Arrays:
    """Named arrays in order, with their true dtypes (``bfloat16`` arrays hold uint16 bits)."""

    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)  # name -> what it is to the kernel ("x", "input_ids")

    def add(self, name: str, array: np.ndarray, dtype: str | None = None, role: str | None = None) -> None:
        self.arrays[name] = array
        self.dtypes[name] = dtype or str(array.dtype)
        if role:
            self.roles[name] = role

    @property
    def neff_names(self) -> list[str]:
        """The names the NEFF is fed (unused inputs left out)."""
        return [n for n in self.arrays if not n.startswith("unused:")]

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.arrays[name].shape)


def from_tensor(tensor: Any) -> tuple[np.ndarray, str]:
    """A torch tensor as (numpy array, true dtype); bfloat16 as its uint16 bits, a sparse one made dense, a quantized
    one dequantized (``neffbench.usercode.tensors.dense``, which raises UnreadableTensor for one without values)."""
    import torch

    from neffbench.usercode.tensors import dense

    t = dense(tensor).contiguous()
    dtype = str(t.dtype).replace("torch.", "")
    if dtype in _BITS:
        return t.view(getattr(torch, _BITS[dtype])).numpy(), dtype
    return t.numpy(), dtype


def to_tensor(array: np.ndarray, dtype: str) -> Any:
    """The torch tensor an array holds (bfloat16 reinterpreted from its bits)."""
    import torch

    t = torch.from_numpy(np.ascontiguousarray(array))
    if dtype in _BITS:
        return t.view(getattr(torch, dtype))
    return t


def tensors(arrays: Arrays, keys: list[str]) -> tuple[Any, ...]:
    """The arrays of ``keys`` as torch tensors, in that order."""
    return tuple(to_tensor(arrays.arrays[k], arrays.dtypes[k]) for k in keys)


def split(arrays: Arrays) -> tuple[list[str], list[str]]:
    """The keys of the inputs that are the module's, and of those that are its state (by role)."""
    from neffbench.kernels.api import STATE_PREFIX

    state = [n for n in arrays.arrays if arrays.roles.get(n, "").startswith(STATE_PREFIX)]
    return [n for n in arrays.arrays if n not in state], state


def save(path: Path, arrays: Arrays) -> Path:
    """Write atomically (a temporary file renamed), so a crash never leaves half an archive."""
    meta = json.dumps({"dtypes": arrays.dtypes, "roles": arrays.roles, "order": list(arrays.arrays)})
    # numpy's zip writer loses the file name: replacing puts it back, the message must name the path.
    with replacing(path, fsync=False) as tmp, tmp.open("wb") as fh:
        # Any: to mypy a name could be np.savez's own allow_pickle; none is (NEFF and parameter names).
        members: dict[str, Any] = {**arrays.arrays, META: np.array(meta)}
        np.savez(fh, **members)
    return path


def load(path: str | Path) -> Arrays:
    """An archive written by :func:`save`, or any ``.npz`` of named arrays (dtypes then as stored)."""
    p = Path(path)
    try:
        with np.load(p, allow_pickle=False) as data:
            raw = {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise ArraysError(f"{p} does not exist.") from None
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise ArraysError(f"{p} is not a readable .npz archive: {exc}.") from None
    meta: dict[str, Any] = {}
    if META in raw:
        try:
            meta = json.loads(str(raw.pop(META)))
        except ValueError:
            raise ArraysError(f"{p} has a damaged {META} entry.") from None
    out = Arrays()
    for name in meta.get("order") or list(raw):
        if name in raw:
            out.add(name, raw[name], (meta.get("dtypes") or {}).get(name), (meta.get("roles") or {}).get(name))
    return out


def load_npy(name: str, path: str | Path) -> tuple[np.ndarray, str]:
    p = Path(path)
    try:
        array = np.load(p, allow_pickle=False)
    except FileNotFoundError:
        raise ArraysError(f"input '{name}': {p} does not exist.") from None
    except (OSError, ValueError) as exc:
        raise ArraysError(f"input '{name}': {p} is not a readable .npy array: {exc}.") from None
    return array, str(array.dtype)

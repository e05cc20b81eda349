"""The JSON members (info.json, neff.json, kelf-N.json, sgN/*.json), checked, and the IO signature they give."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from neffbench.neff.errors import NeffError
from neffbench.neff.info import TensorInfo

# Bytes per element for the dtype names NEFFs use (numpy spelling); unknown names get no byte count.
ITEMSIZE = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "float64": 8,
    "float8_e4m3": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
}

_KELF = re.compile(r"kelf-(\d+)\.json")
_SG_FILE = re.compile(r"(sg\d+)/(tensor_map|def)\.json")


def _what(value: Any) -> str:
    # Containers by type only: repr of a deeply nested value could itself recurse too far.
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'array'}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _bad(member: str, where: str, should: str, value: Any) -> NeffError:
    return NeffError(f"member {member}: {where} should be {should}, not {_what(value)}")


def _load_json(data: bytes, member: str) -> Any:
    try:
        return json.loads(data)
    except RecursionError:
        raise NeffError(f"member {member} nests its JSON too deeply to read") from None
    except ValueError as exc:  # includes bad UTF-8 and integers too long to convert
        raise NeffError(f"member {member} is not valid JSON: {exc}") from None


def _obj(value: Any, member: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(member, where, "a JSON object", value)
    return value


def _opt_str(obj: dict[str, Any], key: str, member: str, *, numbers: bool = False) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    if numbers and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise _bad(member, key, "text", value)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shape(value: Any, member: str, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(_whole(d) for d in value):
        raise _bad(member, where, "a list of whole numbers", value)
    return tuple(value)


def _dtype(value: Any, member: str, where: str) -> str:
    if not isinstance(value, str):
        raise _bad(member, where, "a dtype name", value)
    return value


def _nbytes(dtype: str | None, shape: tuple[int, ...] | None) -> int | None:
    if dtype is None or shape is None or dtype not in ITEMSIZE:
        return None
    return ITEMSIZE[dtype] * math.prod(shape)


def _signature(doc: Any, member: str) -> tuple[list[TensorInfo], list[TensorInfo]]:
    """``metadata.signatures.default.{inputs,outputs}`` = {name: {id, dtype, shape}}, ordered by id."""
    meta = _obj(doc, member, "the document").get("metadata")
    if meta is None:
        return [], []
    sig = _obj(meta, member, "metadata").get("signatures")
    if sig is None:
        return [], []
    default = _obj(sig, member, "metadata.signatures").get("default")
    if default is None:
        return [], []
    default = _obj(default, member, "metadata.signatures.default")
    result: list[list[TensorInfo]] = []
    for side in ("inputs", "outputs"):
        where = f"metadata.signatures.default.{side}"
        entries = _obj(default.get(side) or {}, member, where)
        rows = []
        for order, (name, spec) in enumerate(entries.items()):
            spec = _obj(spec, member, f"{where}.{name}")
            dtype = _dtype(spec.get("dtype"), member, f"{where}.{name}.dtype")
            shape = _shape(spec.get("shape"), member, f"{where}.{name}.shape")
            ident = spec.get("id")
            if ident is not None and not _whole(ident):
                raise _bad(member, f"{where}.{name}.id", "a whole number", ident)
            rows.append(
                (ident if ident is not None else math.inf, order, TensorInfo(name, dtype, shape, _nbytes(dtype, shape)))
            )
        result.append([t for _, _, t in sorted(rows, key=lambda r: (r[0], r[1]))])
    return result[0], result[1]


def _tensor_map(doc: Any, member: str) -> dict[str, list[TensorInfo]]:
    """Entries with ``kind`` input/output: {tensor: {dtype, kind, tf_shape, sim_shape, ...}}."""
    out: dict[str, list[TensorInfo]] = {"input": [], "output": []}
    for name, entry in _obj(doc, member, "the document").items():
        entry = _obj(entry, member, name)
        kind = entry.get("kind")
        if kind not in out:
            continue
        dtype = _dtype(entry.get("dtype"), member, f"{name}.dtype")
        key = "tf_shape" if "tf_shape" in entry else "sim_shape"
        shape = _shape(entry.get(key), member, f"{name}.{key}")
        out[kind].append(TensorInfo(name, dtype, shape, _nbytes(dtype, shape)))
    return out


def _def_vars(doc: Any, member: str) -> dict[str, list[tuple[str, int]]]:
    """``var`` entries of type input/output with their byte sizes (no dtype or shape there)."""
    out: dict[str, list[tuple[str, int]]] = {"input": [], "output": []}
    for name, entry in _obj(_obj(doc, member, "the document").get("var") or {}, member, "var").items():
        entry = _obj(entry, member, f"var.{name}")
        kind = entry.get("type")
        if kind not in out:
            continue
        size = entry.get("size")
        if not isinstance(size, int) or not _whole(size):
            raise _bad(member, f"var.{name}.size", "a whole number", size)
        out[kind].append((name, size))
    return out


def _natural(name: str) -> list[Any]:
    # input2 before input10
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _merge(groups: list[list[TensorInfo]]) -> list[TensorInfo]:
    """Subgraphs repeat the same tensors (LNC=2 has two); keep each name once."""
    seen: dict[str, TensorInfo] = {}
    for group in groups:
        for t in group:
            seen.setdefault(t.name, t)
    return sorted(seen.values(), key=lambda t: _natural(t.name))

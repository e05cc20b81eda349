"""Read a NEFF (a 1024-byte header, then a tar, usually gzipped) in pure Python, never extracting anything."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from neffbench.neff.errors import NeffError
from neffbench.neff.header import HEADER_SIZE, NeffHeader, _parse_header
from neffbench.neff.info import MemberInfo, NeffInfo, TensorInfo
from neffbench.neff.members import (
    _KELF,
    _SG_FILE,
    ITEMSIZE,
    _bad,
    _def_vars,
    _load_json,
    _merge,
    _obj,
    _opt_str,
    _signature,
    _tensor_map,
)
from neffbench.neff.stream import DEFAULT_LIMITS, Limits, _Payload, _Raw
from neffbench.neff.tar import _iter_tar

# The code lives in the sibling modules; these names stay importable from here, where callers took them.
__all__ = [
    "DEFAULT_LIMITS",
    "HEADER_SIZE",
    "ITEMSIZE",
    "Limits",
    "MemberInfo",
    "NeffError",
    "NeffHeader",
    "NeffInfo",
    "TensorInfo",
    "read_neff",
]

_GZIP_MAGIC = b"\x1f\x8b"


def read_neff(path: str | os.PathLike[str], *, header_only: bool = False, limits: Limits = DEFAULT_LIMITS) -> NeffInfo:
    """Everything the file says about itself; raises ``NeffError`` (and nothing else) when it is not a good NEFF."""
    where = str(path)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise NeffError("not a regular file")
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(HEADER_SIZE)
            header = _parse_header(head, size)
            if header_only:
                return NeffInfo(path=where, size=size, header=header, header_only=True)
            return _read_payload(f, where, size, head, header, limits)
    except NeffError as exc:
        raise NeffError(exc.reason, where, exc.internal) from None
    except OSError as exc:
        raise NeffError(f"cannot read the file: {exc.strerror or exc}", path=where) from None
    except Exception as exc:  # a reader bug; still reported the one documented way
        raise NeffError(
            f"internal error while reading ({type(exc).__name__}: {exc})", path=where, internal=True
        ) from exc


def _read_payload(f: BinaryIO, where: str, size: int, head: bytes, header: NeffHeader, limits: Limits) -> NeffInfo:
    sha = hashlib.sha256(head)
    raw = _Raw(f, size, sha)
    if header.data_size == 0:
        raise NeffError("the payload at offset 1024 is empty: there is no tar archive")
    magic = f.read(2)
    f.seek(HEADER_SIZE)
    gzipped = magic == _GZIP_MAGIC
    payload = _Payload(raw, gzipped, limits)
    found = _scan(payload, limits)
    payload_size = payload.pos
    payload.drain()

    warnings: list[str] = []
    tool_version, compiler_version = _versions(found.info, warnings)
    target, kelf_version, subgraphs = _kelf_facts(found.kelfs, warnings)
    io, source = _io(found, warnings)
    return NeffInfo(
        path=where,
        size=size,
        header=header,
        sha256=sha.hexdigest(),
        compressed=gzipped,
        payload_size=payload_size,
        compiler_version=compiler_version,
        tool_version=tool_version,
        target=target,
        kelf_version=kelf_version,
        subgraphs=tuple(subgraphs),
        inputs=tuple(io["inputs"]),
        outputs=tuple(io["outputs"]),
        io_source=source,
        constants_count=found.const_count,
        constants_bytes=found.const_bytes,
        members=tuple(found.members),
        warnings=tuple(warnings),
    )


@dataclass
class _Found:
    """What one pass over the tar gathered: every member, the JSON members that describe the NEFF, the constants."""

    members: list[MemberInfo] = field(default_factory=list)
    info: dict[str, Any] | None = None
    kelfs: dict[int, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    signature: tuple[list[TensorInfo], list[TensorInfo]] | None = None
    tmaps: dict[str, dict[str, list[TensorInfo]]] = field(default_factory=dict)
    dvars: dict[str, dict[str, list[tuple[str, int]]]] = field(default_factory=dict)
    const_count: int = 0
    const_bytes: int = 0


def _scan(payload: _Payload, limits: Limits) -> _Found:
    """Every member of the tar, reading only the JSON members that describe the NEFF (each under the size limit)."""
    found = _Found()
    for member, _ in _iter_tar(payload, limits):
        found.members.append(member)
        if member.type != "file":
            continue
        name = member.name[2:] if member.name.startswith("./") else member.name
        if name.endswith(".npy"):
            found.const_count += 1
            found.const_bytes += member.size
            continue
        kelf = _KELF.fullmatch(name)
        sg = _SG_FILE.fullmatch(name)
        if not (name in ("info.json", "neff.json") or kelf or sg):
            continue
        if member.size > limits.max_json_bytes:
            raise NeffError(
                f"member {member.name} is {member.size} bytes, over the {limits.max_json_bytes}-byte "
                "limit for a JSON member"
            )
        data = payload.read(member.size)
        if len(data) < member.size:
            raise NeffError(f"the tar archive ends inside member {member.name!r} (payload offset {payload.pos})")
        doc = _load_json(data, member.name)
        if name == "info.json":
            found.info = _obj(doc, name, "the document")
        elif name == "neff.json":
            found.signature = _signature(doc, name)
        elif kelf:
            found.kelfs[int(kelf.group(1))] = (name, _obj(doc, name, "the document"))
        elif sg and sg.group(2) == "tensor_map":
            found.tmaps[sg.group(1)] = _tensor_map(doc, member.name)
        elif sg:
            found.dvars[sg.group(1)] = _def_vars(doc, member.name)
    return found


def _versions(info: dict[str, Any] | None, warnings: list[str]) -> tuple[str | None, str | None]:
    """The tool version info.json gives, and the compiler version it starts with."""
    tool_version = compiler_version = None
    if info is None:
        warnings.append("no info.json member: the compiler version is unknown")
    else:
        tool_version = _opt_str(info, "tool_version", "info.json")
        compiler_version = tool_version.split("+", 1)[0].strip() if tool_version else None
    return tool_version, compiler_version


def _kelf_facts(
    kelfs: dict[int, tuple[str, dict[str, Any]]], warnings: list[str]
) -> tuple[str | None, str | None, list[str]]:
    """The target and kelf version (from the first kelf that has them) and every kelf's subgraph names."""
    target = kelf_version = None
    subgraphs: list[str] = []
    if not kelfs:
        warnings.append("no kelf-0.json member: the target is unknown")
    for index in sorted(kelfs):
        member_name, kelf_doc = kelfs[index]
        target = target or _opt_str(kelf_doc, "target", member_name)
        kelf_version = kelf_version or _opt_str(kelf_doc, "version", member_name, numbers=True)
        graphs = kelf_doc.get("graphs") or []
        if not isinstance(graphs, list):
            raise _bad(member_name, "graphs", "a JSON array", graphs)
        for i, graph in enumerate(graphs):
            graph_name = _opt_str(_obj(graph, member_name, f"graphs[{i}]"), "name", member_name)
            if graph_name:
                subgraphs.append(graph_name)
    return target, kelf_version, subgraphs


def _io(found: _Found, warnings: list[str]) -> tuple[dict[str, list[TensorInfo]], dict[str, str | None]]:
    """The inputs and outputs, each side with the member it was read from."""
    signature, tmaps, dvars = found.signature, found.tmaps, found.dvars
    # Each side from the best source that has it: the sample's neff.json lists inputs but no outputs.
    sizes = {n: s for sg_vars in dvars.values() for side in sg_vars.values() for n, s in side}
    io: dict[str, list[TensorInfo]] = {}
    source: dict[str, str | None] = {}
    for i, side in enumerate(("inputs", "outputs")):
        kind = side[:-1]
        from_sig = signature[i] if signature else []
        from_map = _merge([tmaps[s][kind] for s in sorted(tmaps)])
        from_def = _merge([[TensorInfo(n, None, None, s) for n, s in dvars[g][kind]] for g in sorted(dvars)])
        for label, tensors in (
            ("neff.json", from_sig),
            ("tensor_map.json", from_map),
            ("def.json", from_def),
            (None, []),
        ):
            if tensors or label is None:
                io[side], source[side] = tensors, label
                break
        io[side] = [
            t if t.nbytes is not None else TensorInfo(t.name, t.dtype, t.shape, sizes.get(t.name)) for t in io[side]
        ]
    if not io["inputs"] and not io["outputs"]:
        warnings.append("no inputs or outputs found in neff.json, tensor_map.json or def.json")
    return io, source

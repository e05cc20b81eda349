"""What a read finds: NeffInfo with its TensorInfo and MemberInfo rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neffbench.neff.header import NeffHeader


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str | None
    shape: tuple[int, ...] | None
    nbytes: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dtype": self.dtype,
            "shape": None if self.shape is None else list(self.shape),
            "bytes": self.nbytes,
        }

    def summary(self, known_as: str | None = None) -> str:
        """``x float16[128,256]``, the form the listing and diff show; ``input0 (query) ...`` with the module's name."""
        shape = "?" if self.shape is None else ",".join(str(d) for d in self.shape)
        name = f"{self.name} ({known_as})" if known_as else self.name
        return f"{name} {self.dtype or '?'}[{shape}]"


@dataclass(frozen=True)
class MemberInfo:
    name: str
    size: int
    type: str  # file, dir, symlink, hardlink, device, fifo, other

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "type": self.type}


@dataclass(frozen=True)
class NeffInfo:
    path: str
    size: int
    header: NeffHeader
    header_only: bool = False
    sha256: str | None = None
    compressed: bool | None = None
    payload_size: int | None = None  # bytes of tar read (after decompression)
    compiler_version: str | None = None  # info.json tool_version without its "+build" suffix
    tool_version: str | None = None
    target: str | None = None
    kelf_version: str | None = None
    subgraphs: tuple[str, ...] = ()
    inputs: tuple[TensorInfo, ...] = ()
    outputs: tuple[TensorInfo, ...] = ()
    io_source: dict[str, str | None] = field(default_factory=lambda: {"inputs": None, "outputs": None})
    constants_count: int = 0
    constants_bytes: int = 0
    members: tuple[MemberInfo, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def member_count(self) -> int | None:
        return None if self.header_only else len(self.members)

    def io_summary(self, names: Mapping[str, str] | None = None) -> str:
        """``input0 float32[4,8] -> output0 float32[4,8]``; ``names`` adds the module's name of each tensor."""
        if self.header_only:
            return ""
        names = names or {}
        inputs = ", ".join(t.summary(names.get(t.name)) for t in self.inputs)
        outputs = ", ".join(t.summary(names.get(t.name)) for t in self.outputs)
        return f"{inputs or '-'} -> {outputs or '-'}"

    def to_dict(self, *, members: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "size": self.size,
            "sha256": self.sha256,
            "header_only": self.header_only,
            "header": self.header.to_dict(),
            "compressed": self.compressed,
            "payload_size": self.payload_size,
            "compiler_version": self.compiler_version,
            "tool_version": self.tool_version,
            "target": self.target,
            "kelf_version": self.kelf_version,
            "subgraphs": list(self.subgraphs),
            "inputs": [t.to_dict() for t in self.inputs],
            "outputs": [t.to_dict() for t in self.outputs],
            "io_source": dict(self.io_source),
            "constants": {"count": self.constants_count, "bytes": self.constants_bytes},
            "member_count": self.member_count,
            "warnings": list(self.warnings),
        }
        if members:
            out["members"] = [m.to_dict() for m in self.members]
        return out

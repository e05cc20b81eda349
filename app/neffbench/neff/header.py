"""The fixed 1024-byte header in front of every NEFF, parsed into NeffHeader."""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from typing import Any

from neffbench.neff.errors import NeffError

HEADER_SIZE = 1024
# Layout from the Neuron runtime docs (work-with-neff-files.rst); little-endian, no padding, no magic.
_HEADER = struct.Struct("<QQQQQ128sI32s16s256sI64sQI")


@dataclass(frozen=True)
class NeffHeader:
    pkg_version: int
    header_size: int
    data_size: int
    neff_version: tuple[int, int]
    build_version: str
    num_tpb: int
    hash: str
    uuid: str
    name: str
    requested_tpb_count: int
    tpb_per_node: tuple[int, ...]
    feature_bits: int
    lnc_size: int

    @property
    def feature_bits_set(self) -> tuple[int, ...]:
        return tuple(i for i in range(64) if self.feature_bits >> i & 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pkg_version": self.pkg_version,
            "header_size": self.header_size,
            "data_size": self.data_size,
            "neff_version": list(self.neff_version),
            "build_version": self.build_version,
            "num_tpb": self.num_tpb,
            "hash": self.hash,
            "uuid": self.uuid,
            "name": self.name,
            "requested_tpb_count": self.requested_tpb_count,
            "tpb_per_node": list(self.tpb_per_node),
            "feature_bits": self.feature_bits,
            "feature_bits_set": list(self.feature_bits_set),
            "lnc_size": self.lnc_size,
        }


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _parse_header(head: bytes, file_size: int) -> NeffHeader:
    if len(head) < HEADER_SIZE:
        raise NeffError(f"the file is {file_size} bytes, shorter than the {HEADER_SIZE}-byte NEFF header")
    (pkg, hsize, dsize, vmaj, vmin, build, num_tpb, hsh, uid, name, req, per_node, feat, lnc) = _HEADER.unpack_from(
        head
    )
    if hsize != HEADER_SIZE:
        raise NeffError(
            f"header_size at offset 8 is {hsize}, not {HEADER_SIZE}: not a NEFF, or a layout this reader does not know"
        )
    if dsize != file_size - HEADER_SIZE:
        raise NeffError(
            f"data_size at offset 16 says {dsize} bytes follow the header but the file holds "
            f"{file_size - HEADER_SIZE}: the file is truncated, padded or not a NEFF"
        )
    return NeffHeader(
        pkg_version=pkg,
        header_size=hsize,
        data_size=dsize,
        neff_version=(vmaj, vmin),
        build_version=_cstr(build),
        num_tpb=num_tpb,
        hash=hsh.hex(),
        uuid=str(uuid.UUID(bytes=uid)),
        name=_cstr(name),
        requested_tpb_count=req,
        tpb_per_node=tuple(per_node),
        feature_bits=feat,
        lnc_size=lnc,
    )

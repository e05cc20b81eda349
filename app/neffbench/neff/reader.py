"""Read a NEFF (a 1024-byte header, then a tar, usually gzipped) in pure Python, never extracting anything."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import struct
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterator

HEADER_SIZE = 1024
# Layout from the Neuron runtime docs (work-with-neff-files.rst); little-endian, no padding, no magic.
_HEADER = struct.Struct("<QQQQQ128sI32s16s256sI64sQI")
_BLOCK = 512
_ZERO_BLOCK = bytes(_BLOCK)
_CHUNK = 1 << 20
_MAX_META_BYTES = 1 << 20  # pax headers and GNU long names: real ones are a few hundred bytes
_GZIP_MAGIC = b"\x1f\x8b"

# Bytes per element for the dtype names NEFFs use (numpy spelling); unknown names get no byte count.
ITEMSIZE = {
    "bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "float8_e4m3": 1, "float8_e4m3fn": 1,
    "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1, "fp8_e4m3": 1, "fp8_e5m2": 1,
}


class NeffError(Exception):
    """A file that is not a readable NEFF; the message is one sentence saying what and where."""

    def __init__(self, reason: str, path: str | None = None, internal: bool = False):
        self.reason = reason
        self.path = path
        # True only when the reader itself failed (a bug); the fuzz tests check it never happens.
        self.internal = internal
        super().__init__(reason, path, internal)  # all three in args, so the error pickles (worker processes)

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


@dataclass(frozen=True)
class Limits:
    """Bounds on the work one read may do, so a hostile file costs an error, not the machine."""

    max_payload_bytes: int = 16 << 30  # tar bytes read after decompression (NEFFs may inline weights)
    max_expansion: int = 200  # gzip: unpacked bytes per packed byte beyond expansion_floor
    expansion_floor: int = 256 << 20
    max_members: int = 100_000
    max_json_bytes: int = 32 << 20  # any one JSON member that is parsed

    def payload_cap(self, packed: int, gzipped: bool) -> int:
        if not gzipped:
            return self.max_payload_bytes
        return min(self.max_payload_bytes, max(self.expansion_floor, self.max_expansion * packed))


DEFAULT_LIMITS = Limits()


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
            "pkg_version": self.pkg_version, "header_size": self.header_size, "data_size": self.data_size,
            "neff_version": list(self.neff_version), "build_version": self.build_version, "num_tpb": self.num_tpb,
            "hash": self.hash, "uuid": self.uuid, "name": self.name, "requested_tpb_count": self.requested_tpb_count,
            "tpb_per_node": list(self.tpb_per_node), "feature_bits": self.feature_bits,
            "feature_bits_set": list(self.feature_bits_set), "lnc_size": self.lnc_size,
        }


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str | None
    shape: tuple[int, ...] | None
    nbytes: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": None if self.shape is None else list(self.shape),
                "bytes": self.nbytes}

    def summary(self) -> str:
        """``x float16[128,256]``, the form the listing and diff show."""
        shape = "?" if self.shape is None else ",".join(str(d) for d in self.shape)
        return f"{self.name} {self.dtype or '?'}[{shape}]"


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

    def io_summary(self) -> str:
        if self.header_only:
            return ""
        return f"{', '.join(t.summary() for t in self.inputs) or '-'} -> {', '.join(t.summary() for t in self.outputs) or '-'}"

    def to_dict(self, *, members: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path, "size": self.size, "sha256": self.sha256, "header_only": self.header_only,
            "header": self.header.to_dict(), "compressed": self.compressed, "payload_size": self.payload_size,
            "compiler_version": self.compiler_version, "tool_version": self.tool_version, "target": self.target,
            "kelf_version": self.kelf_version, "subgraphs": list(self.subgraphs),
            "inputs": [t.to_dict() for t in self.inputs], "outputs": [t.to_dict() for t in self.outputs],
            "io_source": dict(self.io_source),
            "constants": {"count": self.constants_count, "bytes": self.constants_bytes},
            "member_count": self.member_count, "warnings": list(self.warnings),
        }
        if members:
            out["members"] = [m.to_dict() for m in self.members]
        return out


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
        raise NeffError(f"internal error while reading ({type(exc).__name__}: {exc})", path=where,
                        internal=True) from exc


# --- header -------------------------------------------------------------------------------------------------


def _cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _parse_header(head: bytes, file_size: int) -> NeffHeader:
    if len(head) < HEADER_SIZE:
        raise NeffError(f"the file is {file_size} bytes, shorter than the {HEADER_SIZE}-byte NEFF header")
    (pkg, hsize, dsize, vmaj, vmin, build, num_tpb, hsh, uid, name, req, per_node, feat,
     lnc) = _HEADER.unpack_from(head)
    if hsize != HEADER_SIZE:
        raise NeffError(f"header_size at offset 8 is {hsize}, not {HEADER_SIZE}: not a NEFF, or a layout this "
                        "reader does not know")
    if dsize != file_size - HEADER_SIZE:
        raise NeffError(f"data_size at offset 16 says {dsize} bytes follow the header but the file holds "
                        f"{file_size - HEADER_SIZE}: the file is truncated, padded or not a NEFF")
    return NeffHeader(
        pkg_version=pkg, header_size=hsize, data_size=dsize, neff_version=(vmaj, vmin), build_version=_cstr(build),
        num_tpb=num_tpb, hash=hsh.hex(), uuid=str(uuid.UUID(bytes=uid)), name=_cstr(name), requested_tpb_count=req,
        tpb_per_node=tuple(per_node), feature_bits=feat, lnc_size=lnc,
    )


# --- byte streams -------------------------------------------------------------------------------------------


class _Raw:
    """The file after the header, hashed as it is read; ``pos`` is the file offset for error messages."""

    def __init__(self, f: BinaryIO, size: int, sha: Any):
        self.f, self.pos, self.size, self.sha = f, HEADER_SIZE, size, sha

    def read(self, n: int = -1) -> bytes:
        # Only gzip and _Payload call this; an unbounded read is served a chunk at a time.
        n = min(_CHUNK if n is None or n < 0 else n, self.size - self.pos)
        if n <= 0:
            return b""
        try:
            data = self.f.read(n)
        except OSError as exc:
            raise NeffError(f"cannot read the file at offset {self.pos}: {exc.strerror or exc}") from None
        self.pos += len(data)
        self.sha.update(data)
        return data

    def drain(self) -> None:
        while self.read(_CHUNK):
            pass


class _Gunzip:
    """Gzip members (and the zero padding tar writers put after them) unpacked a bounded piece at a time.

    Not ``gzip.GzipFile``: that one reads trailing padding a byte per call, which is most of the time on real NEFFs.
    """

    def __init__(self, raw: _Raw):
        self.raw = raw
        self.unzip: Any = zlib.decompressobj(31)  # gzip wrapper: zlib checks the CRC and length trailer
        self.pending = b""
        self.buf = b""
        self.off = 0

    def read(self, n: int) -> bytes:
        if self.off >= len(self.buf):
            self.buf, self.off = self._unpack(n), 0
        data = self.buf[self.off:self.off + n]
        self.off += len(data)
        return data

    def _unpack(self, want: int) -> bytes:
        while True:
            if self.unzip is None:  # between members: skip zero padding, else another member must start
                data = self.pending or self.raw.read(_CHUNK)
                self.pending = b""
                if not data:
                    return b""
                data = data.lstrip(b"\0")
                if not data:
                    continue
                self.unzip = zlib.decompressobj(31)
            else:
                data = self.unzip.unconsumed_tail or self.raw.read(_CHUNK)
                if not data:
                    raise NeffError(f"the gzip stream ends early at file offset {self.raw.pos}: the file is truncated")
            out = self.unzip.decompress(data, max(want, 1 << 16))  # bounded output: a bomb never fills memory
            if self.unzip.eof:
                self.pending, self.unzip = self.unzip.unused_data, None
            if out:
                return out


class _Payload:
    """The tar stream (unpacked when gzipped); ``pos`` counts tar bytes, which the limits cap."""

    def __init__(self, raw: _Raw, gzipped: bool, limits: Limits):
        self.raw, self.gzipped = raw, gzipped
        self.src: _Gunzip | _Raw = _Gunzip(raw) if gzipped else raw
        self.pos = 0
        self.cap = limits.payload_cap(raw.size - HEADER_SIZE, gzipped)

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes; fewer only at the end of the stream."""
        if self.pos + n > self.cap:
            raise NeffError(f"the payload unpacks to more than {self.cap} bytes, the limit for this file (stopped at "
                            f"payload offset {self.pos}): a gzip bomb, or a NEFF too large to inspect")
        parts: list[bytes] = []
        want = n
        try:
            while want > 0:
                data = self.src.read(want)
                if not data:
                    break
                parts.append(data)
                want -= len(data)
        except zlib.error as exc:
            raise NeffError(f"corrupt gzip data near file offset {self.raw.pos}: {exc}") from None
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        self.pos += len(data)
        return data

    def skip(self, n: int) -> bool:
        """Read past ``n`` bytes; False when the stream ended first."""
        while n > 0:
            got = len(self.read(min(n, _CHUNK)))
            if not got:
                return False
            n -= got
        return True

    def drain(self) -> None:
        """Read to the end, so the gzip CRC is checked and the whole file is hashed."""
        while self.read(_CHUNK):
            pass
        self.raw.drain()


# --- tar ----------------------------------------------------------------------------------------------------

_TYPES = {b"0": "file", b"\0": "file", b"7": "file", b"1": "hardlink", b"2": "symlink", b"3": "device",
          b"4": "device", b"5": "dir", b"6": "fifo"}
_META_TYPES = (b"x", b"g", b"L", b"K")


def _number(raw: bytes, what: str, offset: int) -> int:
    if raw[:1] and raw[0] & 0x80:  # GNU base-256 for values that do not fit in octal
        if raw[0] != 0x80:
            raise NeffError(f"the tar header at payload offset {offset} has a negative {what}")
        return int.from_bytes(raw[1:], "big")
    text = raw.split(b"\0", 1)[0].strip(b" ")
    if not text:
        return 0
    try:
        return int(text, 8)
    except ValueError:
        raise NeffError(f"the tar header at payload offset {offset} has an unreadable {what} field") from None


def _checksum_ok(block: bytes, offset: int) -> bool:
    try:
        stored = _number(block[148:156], "checksum", offset)
    except NeffError:
        return False
    unsigned = sum(block) - sum(block[148:156]) + 256  # the checksum field counts as eight spaces
    if stored == unsigned:
        return True
    # Some old tars summed signed bytes.
    return stored == unsigned - 256 * sum(1 for b in block if b > 127) + 256 * sum(1 for b in block[148:156] if b > 127)


def _parse_pax(data: bytes, offset: int) -> dict[str, str]:
    records: dict[str, str] = {}
    pos = 0
    while pos < len(data):
        if data[pos] == 0:  # NUL padding after the last record
            break
        space = data.find(b" ", pos)
        try:
            length = int(data[pos:space]) if space > pos else 0
        except ValueError:
            length = 0
        record = data[pos:pos + length]
        if length <= space - pos or len(record) < length or not record.endswith(b"\n") or b"=" not in record:
            raise NeffError(f"the pax header at payload offset {offset} is malformed")
        key, _, value = record[space - pos + 1:-1].partition(b"=")
        records[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
        pos += length
    return records


def _iter_tar(payload: _Payload, limits: Limits) -> Iterator[tuple[MemberInfo, int]]:
    """Yield each member with its data offset; the caller may read its data before asking for the next."""
    count = 0
    pax: dict[str, str] = {}
    long_name: str | None = None
    while True:
        start = payload.pos
        block = payload.read(_BLOCK)
        if not block:
            if start == 0:
                raise NeffError("the payload at offset 1024 is empty: there is no tar archive")
            return  # EOF without the end-of-archive blocks: tar accepts it, and so do we
        if len(block) < _BLOCK:
            raise NeffError(f"the tar archive ends inside a header at payload offset {start}")
        if block == _ZERO_BLOCK:
            return
        if not _checksum_ok(block, start):
            if start == 0:
                what = "the gzip data does not hold" if payload.gzipped else "the payload at offset 1024 is neither gzip nor"
                raise NeffError(f"{what} a tar archive (bad tar header checksum)")
            raise NeffError(f"the tar header at payload offset {start} has a bad checksum: the archive is corrupt")
        typeflag = block[156:157]
        size = _number(block[124:136], "size", start)
        if typeflag in _META_TYPES:
            if size > _MAX_META_BYTES:
                raise NeffError(f"the tar extension header at payload offset {start} claims {size} bytes")
            data = payload.read(size)
            if len(data) < size or not payload.skip(-size % _BLOCK):
                raise NeffError(f"the tar archive ends inside the extension header at payload offset {start}")
            if typeflag == b"x":
                pax = _parse_pax(data, start)
            elif typeflag == b"L":
                long_name = data.split(b"\0", 1)[0].decode("utf-8", "replace")
            continue
        name = block[:100].split(b"\0", 1)[0].decode("utf-8", "replace")
        prefix = block[345:500].split(b"\0", 1)[0]
        if block[257:265] == b"ustar\x0000" and prefix:  # POSIX ustar splits long paths into prefix/name
            name = prefix.decode("utf-8", "replace") + "/" + name
        name = pax.get("path", long_name or name)
        if "size" in pax:
            try:
                size = int(pax["size"])
            except ValueError:
                size = -1
            if size < 0:
                raise NeffError(f"the pax header before payload offset {start} has an unreadable size")
        pax, long_name = {}, None
        count += 1
        if count > limits.max_members:
            raise NeffError(f"the tar archive has more than {limits.max_members} members (at payload offset {start})")
        kind = _TYPES.get(typeflag, "other")
        data_start = payload.pos
        yield MemberInfo(name, size, kind), data_start
        # Like tar: regular files and unknown types carry data; links, directories and devices do not.
        if kind == "file" or typeflag not in _TYPES:
            end = data_start + size + (-size % _BLOCK)
            if payload.pos > end or not payload.skip(end - payload.pos):
                raise NeffError(f"the tar archive ends inside member {name!r} (payload offset {payload.pos})")


# --- member JSON --------------------------------------------------------------------------------------------

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
            rows.append((ident if ident is not None else math.inf, order, TensorInfo(name, dtype, shape, _nbytes(dtype, shape))))
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
        if not _whole(size):
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


# --- payload ------------------------------------------------------------------------------------------------


def _read_payload(f: BinaryIO, where: str, size: int, head: bytes, header: NeffHeader, limits: Limits) -> NeffInfo:
    sha = hashlib.sha256(head)
    raw = _Raw(f, size, sha)
    if header.data_size == 0:
        raise NeffError("the payload at offset 1024 is empty: there is no tar archive")
    magic = f.read(2)
    f.seek(HEADER_SIZE)
    gzipped = magic == _GZIP_MAGIC
    payload = _Payload(raw, gzipped, limits)

    members: list[MemberInfo] = []
    info: dict[str, Any] | None = None
    kelfs: dict[int, tuple[str, dict[str, Any]]] = {}
    signature: tuple[list[TensorInfo], list[TensorInfo]] | None = None
    tmaps: dict[str, dict[str, list[TensorInfo]]] = {}
    dvars: dict[str, dict[str, list[tuple[str, int]]]] = {}
    const_count = const_bytes = 0
    warnings: list[str] = []

    for member, _ in _iter_tar(payload, limits):
        members.append(member)
        if member.type != "file":
            continue
        name = member.name[2:] if member.name.startswith("./") else member.name
        if name.endswith(".npy"):
            const_count += 1
            const_bytes += member.size
            continue
        kelf = _KELF.fullmatch(name)
        sg = _SG_FILE.fullmatch(name)
        if not (name in ("info.json", "neff.json") or kelf or sg):
            continue
        if member.size > limits.max_json_bytes:
            raise NeffError(f"member {member.name} is {member.size} bytes, over the {limits.max_json_bytes}-byte "
                            "limit for a JSON member")
        data = payload.read(member.size)
        if len(data) < member.size:
            raise NeffError(f"the tar archive ends inside member {member.name!r} (payload offset {payload.pos})")
        doc = _load_json(data, member.name)
        if name == "info.json":
            info = _obj(doc, name, "the document")
        elif name == "neff.json":
            signature = _signature(doc, name)
        elif kelf:
            kelfs[int(kelf.group(1))] = (name, _obj(doc, name, "the document"))
        elif sg and sg.group(2) == "tensor_map":
            tmaps[sg.group(1)] = _tensor_map(doc, member.name)
        elif sg:
            dvars[sg.group(1)] = _def_vars(doc, member.name)
    payload_size = payload.pos
    payload.drain()

    tool_version = compiler_version = None
    if info is None:
        warnings.append("no info.json member: the compiler version is unknown")
    else:
        tool_version = _opt_str(info, "tool_version", "info.json")
        compiler_version = tool_version.split("+", 1)[0].strip() if tool_version else None

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

    # Each side from the best source that has it: the sample's neff.json lists inputs but no outputs.
    sizes = {n: s for sg_vars in dvars.values() for side in sg_vars.values() for n, s in side}
    io: dict[str, list[TensorInfo]] = {}
    source: dict[str, str | None] = {}
    for i, side in enumerate(("inputs", "outputs")):
        kind = side[:-1]
        from_sig = signature[i] if signature else []
        from_map = _merge([tmaps[s][kind] for s in sorted(tmaps)])
        from_def = _merge([[TensorInfo(n, None, None, s) for n, s in dvars[g][kind]] for g in sorted(dvars)])
        for label, tensors in (("neff.json", from_sig), ("tensor_map.json", from_map), ("def.json", from_def), (None, [])):
            if tensors or label is None:
                io[side], source[side] = tensors, label
                break
        io[side] = [t if t.nbytes is not None else TensorInfo(t.name, t.dtype, t.shape, sizes.get(t.name))
                    for t in io[side]]
    if not io["inputs"] and not io["outputs"]:
        warnings.append("no inputs or outputs found in neff.json, tensor_map.json or def.json")

    return NeffInfo(
        path=where, size=size, header=header, sha256=sha.hexdigest(), compressed=gzipped, payload_size=payload_size,
        compiler_version=compiler_version, tool_version=tool_version, target=target, kelf_version=kelf_version,
        subgraphs=tuple(subgraphs), inputs=tuple(io["inputs"]), outputs=tuple(io["outputs"]), io_source=source,
        constants_count=const_count, constants_bytes=const_bytes, members=tuple(members), warnings=tuple(warnings),
    )

"""The bytes after the header, hashed and (when gzipped) unpacked a bounded piece at a time under Limits."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, BinaryIO

from neffbench.neff.errors import NeffError
from neffbench.neff.header import HEADER_SIZE

_CHUNK = 1 << 20


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
        data = self.buf[self.off : self.off + n]
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
                return bytes(out)


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
            raise NeffError(
                f"the payload unpacks to more than {self.cap} bytes, the limit for this file (stopped at "
                f"payload offset {self.pos}): a gzip bomb, or a NEFF too large to inspect"
            )
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

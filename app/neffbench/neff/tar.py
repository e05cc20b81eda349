"""The tar archive inside the payload, walked header by header without extracting anything."""

from __future__ import annotations

from collections.abc import Iterator

from neffbench.neff.errors import NeffError
from neffbench.neff.info import MemberInfo
from neffbench.neff.stream import Limits, _Payload

_BLOCK = 512
_ZERO_BLOCK = bytes(_BLOCK)
_MAX_META_BYTES = 1 << 20  # pax headers and GNU long names: real ones are a few hundred bytes

_TYPES = {
    b"0": "file",
    b"\0": "file",
    b"7": "file",
    b"1": "hardlink",
    b"2": "symlink",
    b"3": "device",
    b"4": "device",
    b"5": "dir",
    b"6": "fifo",
}
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
        record = data[pos : pos + length]
        if length <= space - pos or len(record) < length or not record.endswith(b"\n") or b"=" not in record:
            raise NeffError(f"the pax header at payload offset {offset} is malformed")
        key, _, value = record[space - pos + 1 : -1].partition(b"=")
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
                what = (
                    "the gzip data does not hold"
                    if payload.gzipped
                    else "the payload at offset 1024 is neither gzip nor"
                )
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

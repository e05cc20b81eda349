"""Hostile NEFFs: mutated, truncated and spliced samples, gzip bombs and escaping member names.

Whatever the bytes, ``read_neff`` returns a NeffInfo or raises NeffError (never an internal one), with bounded work
(each byte of the file read once, the unpacked tar within the limit) and memory, and writes nothing anywhere.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import struct
import tarfile
import tracemalloc
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neffbench.neff import HEADER_SIZE, Limits, NeffError, NeffInfo, read_neff
from neffbench.neff import reader as neff_reader
from tests.neff_factory import neff_members, tar_bytes, wrap_payload

# Small limits keep each example cheap; the defaults are exercised by the bomb tests below.
FUZZ_LIMITS = Limits(max_payload_bytes=8 << 20, max_members=1000, max_json_bytes=1 << 20)
FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _fix_data_size(data: bytes) -> bytes:
    """Make the header agree with the length, so the payload parser (not the size check) meets the damage."""
    if len(data) < HEADER_SIZE:
        return data
    return data[:16] + struct.pack("<Q", len(data) - HEADER_SIZE) + data[24:]


@contextmanager
def _payloads() -> Iterator[list]:
    """The payload streams the reads inside make: each counts the tar bytes it unpacked (``pos``, capped at ``cap``)
    and the file bytes it read (``raw.pos``)."""
    made: list = []

    class Counted(neff_reader._Payload):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(neff_reader, "_Payload", Counted)
        yield made


def _check(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    tracemalloc.start()
    try:
        with _payloads() as payloads:
            result = read_neff(path, limits=FUZZ_LIMITS)
            assert isinstance(result, NeffInfo)
    except NeffError as exc:
        assert not exc.internal, str(exc)
        assert exc.reason
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    # Bounded work, counted: no byte of the file read twice, no more tar unpacked than the limits allow.
    for payload in payloads:
        assert payload.raw.pos <= len(data)
        assert payload.pos <= payload.cap <= FUZZ_LIMITS.max_payload_bytes
    assert peak < 64 << 20


@pytest.fixture
def sample_bytes(sample_neff: Path) -> bytes:
    return sample_neff.read_bytes()


@pytest.fixture
def sample_tar(sample_bytes: bytes) -> bytes:
    return zlib.decompressobj(31).decompress(sample_bytes[HEADER_SIZE:])


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, 62463), st.integers(0, 255)), min_size=1, max_size=8), fix=st.booleans())
def test_mutated_sample(tmp_path: Path, sample_bytes: bytes, edits: list[tuple[int, int]], fix: bool) -> None:
    data = bytearray(sample_bytes)
    for offset, value in edits:
        data[offset % len(data)] = value
    _check(tmp_path / "m.neff", _fix_data_size(bytes(data)) if fix else bytes(data))


@FUZZ
@given(cut=st.integers(0, 62464), fix=st.booleans())
def test_truncated_sample(tmp_path: Path, sample_bytes: bytes, cut: int, fix: bool) -> None:
    data = sample_bytes[:cut]
    _check(tmp_path / "t.neff", _fix_data_size(data) if fix else data)


@FUZZ
@given(start=st.integers(HEADER_SIZE, 62464), end=st.integers(HEADER_SIZE, 62464), junk=st.binary(max_size=600))
def test_spliced_sample(tmp_path: Path, sample_bytes: bytes, start: int, end: int, junk: bytes) -> None:
    lo, hi = sorted((start, end))
    _check(tmp_path / "s.neff", _fix_data_size(sample_bytes[:lo] + junk + sample_bytes[hi:]))


@FUZZ
@given(
    edits=st.lists(st.tuples(st.integers(0, 356863), st.integers(0, 255)), min_size=1, max_size=6),
    cut=st.none() | st.integers(0, 356864),
    gz=st.booleans(),
)
def test_mutated_tar_inside(
    tmp_path: Path, sample_bytes: bytes, sample_tar: bytes, edits: list[tuple[int, int]], cut: int | None, gz: bool
) -> None:
    # Damage below the gzip layer, where the CRC would otherwise catch nearly everything first.
    tar = bytearray(sample_tar)
    for offset, value in edits:
        tar[offset % len(tar)] = value
    payload = bytes(tar[:cut] if cut is not None else tar)
    _check(
        tmp_path / "i.neff", _fix_data_size(sample_bytes[:HEADER_SIZE] + (gzip.compress(payload, 1) if gz else payload))
    )


@FUZZ
@given(
    member=st.sampled_from(["info.json", "kelf-0.json", "neff.json", "sg00/tensor_map.json", "sg00/def.json"]),
    text=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=12,
    ),
)
def test_unexpected_json_shapes(tmp_path: Path, member: str, text: object) -> None:
    members = neff_members(inputs={"x": ("float16", (2, 2))}, outputs={"output0": ("float16", (2, 2))})
    members[member] = json.dumps(text).encode()
    _check(tmp_path / "j.neff", wrap_payload(tar_bytes(members)))


def _bomb(unpacked: int, member: str = "sg00/big.bin") -> bytes:
    """A tar claiming one ``unpacked``-byte member of zeros, as concatenated gzip members of 16 MiB each."""
    head = tarfile.TarInfo(member)
    head.size = unpacked
    piece = gzip.compress(bytes(16 << 20), 9, mtime=0)
    return gzip.compress(head.tobuf(tarfile.GNU_FORMAT), mtime=0) + piece * (unpacked // (16 << 20))


def test_gzip_bomb_stops_with_an_error(tmp_path: Path) -> None:
    path = tmp_path / "bomb.neff"
    path.write_bytes(wrap_payload(_bomb(1 << 30)))  # 1 GiB from about 1 MB
    tracemalloc.start()
    with (
        _payloads() as payloads,
        pytest.raises(NeffError, match=r"unpacks to more than \d+ bytes.*gzip bomb") as caught,
    ):
        read_neff(path)  # default limits: stops at the 256 MiB floor
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert not caught.value.internal
    assert peak < 16 << 20
    [payload] = payloads
    assert payload.pos <= payload.cap == 256 << 20  # it stopped there, not after the whole gigabyte


def test_json_bomb_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "jbomb.neff"
    path.write_bytes(wrap_payload(_bomb(1 << 30, member="neff.json")))
    with (
        _payloads() as payloads,
        pytest.raises(NeffError, match=r"member neff\.json is 1073741824 bytes, over the .* limit"),
    ):
        read_neff(path)
    [payload] = payloads
    assert payload.pos <= 1 << 20  # its header only: refused before its gigabyte was unpacked


def test_huge_pax_header_is_refused(tmp_path: Path) -> None:
    head = tarfile.TarInfo("././@PaxHeader")
    head.type = tarfile.XHDTYPE
    head.size = 1 << 30
    path = tmp_path / "pax.neff"
    path.write_bytes(wrap_payload(gzip.compress(head.tobuf(tarfile.USTAR_FORMAT) + bytes(4096))))
    with pytest.raises(NeffError, match=r"extension header at payload offset 0 claims 1073741824 bytes"):
        read_neff(path)


def _snapshot(root: Path) -> set[str]:
    return {os.path.relpath(os.path.join(d, n), root) for d, dirs, files in os.walk(root) for n in dirs + files}


def test_escaping_member_names_write_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "deep" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in neff_members(inputs={"x": ("float16", (2,))}, outputs={"y": ("float16", (2,))}).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name in ("../escaped.txt", "../../escaped2.txt", str(tmp_path / "absolute.txt"), "sg00/../../up.txt"):
            info = tarfile.TarInfo(name)
            info.size = 5
            tar.addfile(info, io.BytesIO(b"owned"))
        link = tarfile.TarInfo("sg00/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
        hard = tarfile.TarInfo("sg00/hard")
        hard.type, hard.linkname = tarfile.LNKTYPE, "../../escaped.txt"
        tar.addfile(hard)
    neff = work / "evil.neff"
    neff.write_bytes(wrap_payload(gzip.compress(buf.getvalue())))
    before = _snapshot(tmp_path)
    info = read_neff(neff)
    assert _snapshot(tmp_path) == before
    names = {m.name: m.type for m in info.members}
    assert names["../escaped.txt"] == "file" and names["sg00/link"] == "symlink" and names["sg00/hard"] == "hardlink"
    assert info.inputs[0].name == "x"

"""The NEFF reader against the real sample and synthetic NEFFs, good and malformed."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from neffbench.neff import HEADER_SIZE, Limits, NeffError, read_neff
from tests.neff_factory import build_neff, make_header, neff_members, tar_bytes, wrap_payload

SAMPLE_SHA256 = "5100752fb155fff1c3c2a5f9d68aa13373b049f838057cf54a125e26856742de"
IO = {"inputs": {"x": ("float16", (4, 8))}, "outputs": {"output0": ("float32", (4, 8))}}


def _io(tensors) -> list[tuple[str, str | None, list[int] | None, int | None]]:
    return [(t.name, t.dtype, list(t.shape) if t.shape is not None else None, t.nbytes) for t in tensors]


# --- the real sample ----------------------------------------------------------------------------------------


def test_sample_exact_values(sample_neff: Path) -> None:
    info = read_neff(sample_neff)
    assert _io(info.inputs) == [("x", "float16", [128, 256], 65536), ("y", "float16", [256, 128], 65536)]
    assert _io(info.outputs) == [("output0", "float16", [128, 128], 32768)]
    # The sample's neff.json has an empty outputs signature: outputs come from tensor_map.json.
    assert info.io_source == {"inputs": "neff.json", "outputs": "tensor_map.json"}
    assert info.compiler_version == "2.23.6484.0"
    assert info.tool_version == "2.23.6484.0+3b612583"
    assert (info.target, info.kelf_version, info.subgraphs) == ("cayman", "0.5", ("sg00", "sg01"))
    assert info.member_count == 72 and info.compressed is True
    assert (info.size, info.sha256) == (62464, SAMPLE_SHA256)
    assert (info.constants_count, info.constants_bytes) == (2, 2 * 32896)
    assert info.warnings == ()
    h = info.header
    assert (h.pkg_version, h.header_size, h.data_size, h.neff_version) == (2, 1024, 61440, (2, 0))
    assert (h.name, h.num_tpb, h.requested_tpb_count, h.lnc_size) == ("file.neff", 1, 1, 2)
    assert h.uuid == "00a04c53-5fd9-4f07-bffd-d5eacdefc852"
    assert h.hash.startswith("bcb3e9ef77301698cd8b4cb9471ff5ac") and len(h.hash) == 64
    assert h.feature_bits == 2137088 and h.feature_bits_set == (10, 11, 12, 15, 21)
    assert h.tpb_per_node[0] == 1 and len(h.tpb_per_node) == 64


def test_sample_to_dict_is_the_json_shape(sample_neff: Path) -> None:
    doc = json.loads(json.dumps(read_neff(sample_neff).to_dict()))
    for key in (
        "path",
        "size",
        "sha256",
        "header",
        "compiler_version",
        "target",
        "subgraphs",
        "inputs",
        "outputs",
        "member_count",
        "members",
    ):
        assert key in doc
    assert doc["header"]["neff_version"] == [2, 0] and doc["header"]["lnc_size"] == 2
    assert doc["inputs"][0] == {"name": "x", "dtype": "float16", "shape": [128, 256], "bytes": 65536}
    assert len(doc["members"]) == 72 and {"name", "size", "type"} == set(doc["members"][0])
    assert "members" not in read_neff(sample_neff).to_dict(members=False)


def test_header_only_reads_just_the_header(sample_neff: Path, tmp_path: Path) -> None:
    full = read_neff(sample_neff)
    quick = read_neff(sample_neff, header_only=True)
    assert quick.header == full.header and quick.header_only
    assert quick.sha256 is None and quick.member_count is None and quick.inputs == ()
    # A valid header over a garbage payload: only the full read notices.
    bad = tmp_path / "garbage.neff"
    bad.write_bytes(wrap_payload(b"\x01" * 4096))
    assert read_neff(bad, header_only=True).header.data_size == 4096
    with pytest.raises(NeffError, match="neither gzip nor a tar"):
        read_neff(bad)


# --- synthetic NEFFs ----------------------------------------------------------------------------------------


def test_synthetic_round_trip_gzip_and_uncompressed(tmp_path: Path) -> None:
    for gz in (True, False):
        path = build_neff(
            tmp_path / f"g{gz}.neff",
            inputs={"a": ("bfloat16", (2, 3)), "b": ("int32", (7,))},
            outputs={"output0": ("float32", (2, 3))},
            gzip=gz,
            name="mine",
            lnc_size=2,
            compiler_version="2.99.1.0+abc",
            target="trn1-codename",
        )
        info = read_neff(path)
        assert info.compressed is gz
        assert _io(info.inputs) == [("a", "bfloat16", [2, 3], 12), ("b", "int32", [7], 28)]
        assert _io(info.outputs) == [("output0", "float32", [2, 3], 24)]
        assert info.io_source == {"inputs": "neff.json", "outputs": "neff.json"}
        assert (info.compiler_version, info.target, info.header.name, info.header.lnc_size) == (
            "2.99.1.0",
            "trn1-codename",
            "mine",
            2,
        )


def test_io_from_tensor_map_without_neff_json(tmp_path: Path) -> None:
    path = build_neff(
        tmp_path / "n.neff",
        inputs={f"input{i}": ("float32", (i + 1,)) for i in range(12)},
        outputs={"output0": ("int32", (3, 3))},
        with_neff_json=False,
        subgraphs=3,
    )
    info = read_neff(path)
    assert info.io_source == {"inputs": "tensor_map.json", "outputs": "tensor_map.json"}
    # Natural order (input2 before input10), and each tensor once although three subgraphs list it.
    assert [t.name for t in info.inputs] == [f"input{i}" for i in range(12)]
    assert _io(info.outputs) == [("output0", "int32", [3, 3], 36)]
    assert info.subgraphs == ("sg00", "sg01", "sg02")


def test_io_from_def_json_when_nothing_else(tmp_path: Path) -> None:
    members = neff_members(
        inputs={"x": ("float16", (8, 8))}, outputs={"output0": ("float16", (8,))}, with_neff_json=False
    )
    del members["sg00/tensor_map.json"]
    path = tmp_path / "d.neff"
    path.write_bytes(wrap_payload(tar_bytes(members)))
    info = read_neff(path)
    assert info.io_source == {"inputs": "def.json", "outputs": "def.json"}
    assert _io(info.inputs) == [("x", None, None, 128)] and _io(info.outputs) == [("output0", None, None, 16)]


def test_signature_order_follows_ids_and_missing_outputs_fall_back(tmp_path: Path) -> None:
    path = build_neff(
        tmp_path / "s.neff",
        inputs={"z": ("float32", (1,)), "a": ("float32", (2,))},
        outputs={"output0": ("float32", (1,))},
        signature_outputs=False,
    )
    info = read_neff(path)
    assert [t.name for t in info.inputs] == ["z", "a"]  # ids 0, 1 as written
    assert info.io_source["outputs"] == "tensor_map.json"


def test_constants_and_long_hashed_member_names(tmp_path: Path) -> None:
    long_name = "sg00/value_" + "3f9a0c" * 30 + ".npy"  # > 100 characters: a pax header carries it
    path = build_neff(
        tmp_path / "c.neff",
        **IO,
        subgraphs=2,
        constants={"w": ("bfloat16", (16, 16)), "b": ("float32", (16,))},
        extra_members={long_name: b"\0" * 200},
    )
    info = read_neff(path)
    assert info.constants_count == 5
    assert long_name in {m.name for m in info.members}
    sizes = {m.name: m.size for m in info.members}
    assert sizes["sg01/value_w.npy"] == 128 + 16 * 16 * 2


def test_missing_info_and_kelf_are_warnings(tmp_path: Path) -> None:
    members = neff_members(**IO)
    del members["info.json"], members["kelf-0.json"]
    path = tmp_path / "w.neff"
    path.write_bytes(wrap_payload(tar_bytes(members)))
    info = read_neff(path)
    assert info.compiler_version is None and info.target is None
    assert len(info.warnings) == 2


def test_dot_slash_members_and_directories(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        d = tarfile.TarInfo("./sg00")
        d.type = tarfile.DIRTYPE
        tar.addfile(d)
        for name, data in neff_members(**IO).items():
            info = tarfile.TarInfo("./" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path = tmp_path / "dot.neff"
    path.write_bytes(wrap_payload(gzip.compress(buf.getvalue())))
    info = read_neff(path)
    assert info.compiler_version == "2.23.6484.0" and info.members[0].type == "dir"
    assert _io(info.inputs) == [("x", "float16", [4, 8], 64)]


# --- malformed files ----------------------------------------------------------------------------------------


def _good_payload(gz: bool = True) -> bytes:
    return tar_bytes(neff_members(**IO), gzip=gz)


def _with(members_change) -> bytes:
    members = neff_members(**IO)
    members_change(members)
    return wrap_payload(tar_bytes(members))


def _gzip_flipped() -> bytes:
    payload = bytearray(_good_payload())
    payload[len(payload) // 2] ^= 0xFF
    return wrap_payload(bytes(payload))


def _gzip_truncated() -> bytes:
    return wrap_payload(_good_payload()[:-40])


def _tar_truncated() -> bytes:
    raw = _good_payload(gz=False)
    return wrap_payload(raw[: len(raw) // 2 + 100])


def _set(name: str, data: bytes):
    return lambda m: m.__setitem__(name, data)


MALFORMED = {
    "shorter than the header": (b"\0" * 100, r"100 bytes, shorter than the 1024-byte NEFF header"),
    "wrong header_size": (make_header(0, header_size=512), r"header_size at offset 8 is 512"),
    "data_size too big": (make_header(999) + b"x" * 10, r"data_size at offset 16 says 999 bytes .* holds 10"),
    "data_size too small": (make_header(1) + b"x" * 10, r"data_size at offset 16"),
    "empty payload": (make_header(0), r"payload at offset 1024 is empty"),
    "not a tar": (wrap_payload(b"hello world" * 100), r"neither gzip nor a tar archive"),
    "gzip of not a tar": (wrap_payload(gzip.compress(b"hello world" * 100)), r"gzip data does not hold a tar"),
    "corrupt gzip": (_gzip_flipped(), r"corrupt gzip data near file offset \d+|bad checksum|member"),
    "truncated gzip": (_gzip_truncated(), r"gzip stream ends early at file offset \d+"),
    "truncated tar": (_tar_truncated(), r"ends inside member '.*' \(payload offset \d+\)"),
    "info.json not JSON": (_with(_set("info.json", b"{nope")), r"member info\.json is not valid JSON"),
    "info.json a list": (_with(_set("info.json", b"[1]")), r"member info\.json: the document should be a JSON object"),
    "tool_version a number": (
        _with(_set("info.json", b'{"tool_version": 2}')),
        r"info\.json: tool_version should be text",
    ),
    "kelf graphs not a list": (
        _with(_set("kelf-0.json", b'{"graphs": 3}')),
        r"kelf-0\.json: graphs should be a JSON array",
    ),
    "signature shape text": (
        _with(
            _set(
                "neff.json",
                json.dumps(
                    {
                        "metadata": {
                            "signatures": {
                                "default": {"inputs": {"x": {"id": 0, "dtype": "float16", "shape": "128x256"}}}
                            }
                        }
                    }
                ).encode(),
            )
        ),
        r"neff\.json: metadata\.signatures\.default\.inputs\.x\.shape should be a list of whole numbers, not '128x256'",
    ),
    "tensor_map entry not object": (
        _with(_set("sg00/tensor_map.json", b'{"x": 5}')),
        r"member sg00/tensor_map\.json: x should be a JSON object",
    ),
    "def var size negative": (
        _with(_set("sg00/def.json", b'{"var": {"x": {"type": "input", "size": -1}}}')),
        r"sg00/def\.json: var\.x\.size should be a whole number, not -1",
    ),
    "deep JSON": (
        _with(_set("neff.json", b"[" * 100_000)),
        r"neff\.json (nests its JSON too deeply|is not valid JSON)",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_raises_one_neff_error(tmp_path: Path, case: str) -> None:
    data, pattern = MALFORMED[case]
    path = tmp_path / "bad.neff"
    path.write_bytes(data)
    with pytest.raises(NeffError, match=pattern) as caught:
        read_neff(path)
    assert not caught.value.internal
    assert str(caught.value).startswith(str(path) + ": ")


def test_limits_on_members_and_json(tmp_path: Path) -> None:
    path = build_neff(tmp_path / "l.neff", **IO)
    with pytest.raises(NeffError, match=r"more than 3 members"):
        read_neff(path, limits=Limits(max_members=3))
    with pytest.raises(NeffError, match=r"member .*\.json is \d+ bytes, over the 100-byte limit for a JSON member"):
        read_neff(path, limits=Limits(max_json_bytes=100))
    with pytest.raises(NeffError, match=r"unpacks to more than 4096 bytes"):
        read_neff(path, limits=Limits(max_payload_bytes=4096))


def test_unreadable_paths_are_neff_errors(tmp_path: Path) -> None:
    with pytest.raises(NeffError, match="cannot read the file"):
        read_neff(tmp_path / "missing.neff")
    with pytest.raises(NeffError, match="not a regular file"):
        read_neff(tmp_path)


def test_trailing_garbage_after_gzip_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "t.neff"
    path.write_bytes(wrap_payload(_good_payload() + b"\0" * 300 + b"junk"))
    with pytest.raises(NeffError, match=r"corrupt gzip data near file offset"):
        read_neff(path)
    # Zero padding alone is what tar writers leave: fine.
    path.write_bytes(wrap_payload(_good_payload() + b"\0" * 7839))
    assert read_neff(path).inputs


def test_header_layout_matches_the_documented_offsets() -> None:
    head = make_header(5, name="abc", lnc_size=2, feature_bits=1 << 63, neff_version=(3, 1))
    assert len(head) == HEADER_SIZE
    assert head[8:16] == (1024).to_bytes(8, "little") and head[16:24] == (5).to_bytes(8, "little")
    assert head[24:32] == (3).to_bytes(8, "little") and head[220:223] == b"abc"
    assert head[544:552] == (1 << 63).to_bytes(8, "little") and head[552:556] == (2).to_bytes(4, "little")


def test_neff_error_pickles_with_its_path(tmp_path: Path) -> None:
    import pickle

    path = tmp_path / "p.neff"
    path.write_bytes(b"tiny")
    with pytest.raises(NeffError) as caught:
        read_neff(path)
    copy = pickle.loads(pickle.dumps(caught.value))
    assert (copy.reason, copy.path, copy.internal, str(copy)) == (
        caught.value.reason,
        str(path),
        False,
        str(caught.value),
    )

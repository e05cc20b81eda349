"""Synthetic NEFFs for tests and toolchain fakes: the real 1024-byte header and a payload shaped like neuronx-cc's.

The member JSON follows the shared sample (nkipy_matmul_small.neff, neuronx-cc 2.23): ``info.json``,
``kelf-0.json``, ``neff.json`` (optional), and per subgraph ``sgNN/def.json``, ``sgNN/tensor_map.json``,
engine files and inlined constants. Output is deterministic: the same arguments give the same bytes.

    from tests.neff_factory import build_neff
    build_neff(tmp / "graph.neff", inputs={"input0": ("float32", (4, 8))}, outputs={"output0": ("float32", (4, 8))})
"""

from __future__ import annotations

import gzip as _gzip
import hashlib
import io
import json
import math
import os
import random
import struct
import tarfile
import uuid as _uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

HEADER_SIZE = 1024
_HEADER = struct.Struct("<QQQQQ128sI32s16s256sI64sQI")  # see shared/docs/neuron-facts.md
SAMPLE_FEATURE_BITS = 2137088  # bits 10, 11, 12, 15 and 21, as in the shared sample
DEFAULT_COMPILER_VERSION = "2.23.6484.0+3b612583"

# Independent of the reader's own table on purpose: the tests must not share its mistakes.
_ITEMSIZE = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "float64": 8,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}
_NPY_DESCR = {
    "bool": "|b1",
    "int8": "|i1",
    "uint8": "|u1",
    "int16": "<i2",
    "uint16": "<u2",
    "int32": "<i4",
    "uint32": "<u4",
    "int64": "<i8",
    "float16": "<f2",
    "float32": "<f4",
    "float64": "<f8",
}

TensorSpecs = Mapping[str, "tuple[str, Sequence[int]]"]  # {name: (dtype, shape)}


def tensor_bytes(dtype: str, shape: Sequence[int]) -> int:
    return _ITEMSIZE[dtype] * math.prod(shape)


def make_header(
    data_size: int,
    *,
    name: str = "file.neff",
    pkg_version: int = 2,
    header_size: int = HEADER_SIZE,
    neff_version: tuple[int, int] = (2, 0),
    build_version: str = "",
    num_tpb: int = 1,
    hash: bytes = b"",
    uuid: _uuid.UUID | None = None,
    requested_tpb_count: int = 1,
    tpb_per_node: Sequence[int] = (1,),
    feature_bits: int = SAMPLE_FEATURE_BITS,
    lnc_size: int = 1,
) -> bytes:
    """The 1024-byte header; every field can be set, including wrong ``header_size``/``data_size`` for tests."""
    packed = _HEADER.pack(
        pkg_version,
        header_size,
        data_size,
        neff_version[0],
        neff_version[1],
        build_version.encode(),
        num_tpb,
        hash,
        (uuid or _uuid.UUID(int=0)).bytes,
        name.encode(),
        requested_tpb_count,
        bytes(list(tpb_per_node) + [0] * (64 - len(tpb_per_node))),
        feature_bits,
        lnc_size,
    )
    return packed + bytes(HEADER_SIZE - len(packed))


def wrap_payload(payload: bytes, **header: object) -> bytes:
    """A NEFF around any payload bytes (a hand-made tar, a gzip bomb, garbage); header fields as in ``make_header``."""
    digest = hashlib.md5(payload).digest()
    header.setdefault("hash", digest)  # the real compiler's hash looks like an MD5 padded to 32 bytes
    header.setdefault("uuid", _uuid.UUID(bytes=hashlib.md5(b"uuid" + payload).digest()))
    return make_header(len(payload), **header) + payload  # type: ignore[arg-type]


def tar_bytes(members: Mapping[str, bytes], *, gzip: bool = True) -> bytes:
    """A tar of regular files (mtime 0, owner like the sample's), gzipped with mtime 0 unless ``gzip=False``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member_name, data in members.items():
            info = tarfile.TarInfo(member_name)
            info.size, info.mode, info.mtime = len(data), 0o664, 0
            info.uid = info.gid = 1000
            info.uname = info.gname = "nobody"
            tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    return _gzip.compress(raw, compresslevel=6, mtime=0) if gzip else raw


def npy_bytes(dtype: str, shape: Sequence[int]) -> bytes:
    """A zero-filled ``.npy`` (format 1.0); dtypes numpy lacks (bfloat16, fp8) are stored as raw void items."""
    descr = _NPY_DESCR.get(dtype, f"|V{_ITEMSIZE[dtype]}")
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}"
    pad = -(10 + len(text) + 1) % 64
    head = (text + " " * pad + "\n").encode("latin-1")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head + bytes(tensor_bytes(dtype, shape))


def _dumps(doc: object) -> bytes:
    return json.dumps(doc, indent=4).encode()


def neff_members(
    *,
    inputs: TensorSpecs,
    outputs: TensorSpecs,
    name: str = "file.neff",
    compiler_version: str = DEFAULT_COMPILER_VERSION,
    target: str = "cayman",
    subgraphs: int = 1,
    with_neff_json: bool = True,
    signature_outputs: bool = True,
    constants: TensorSpecs | None = None,
    filler_bytes: int = 0,
) -> dict[str, bytes]:
    """The payload members, in the sample's order; see ``build_neff`` for the arguments."""
    constants = dict(constants or {})
    sg_names = [f"sg{i:02d}" for i in range(subgraphs)]
    members: dict[str, bytes] = {
        "debug_info/debug_info_stack_frame_index.dbg": b"\0" * 51,
        "info.json": json.dumps(
            {
                "tool_version": compiler_version,
                "kelp_version": "Dynamic",
                "name": name,
                "num_tpb": 1,
                "num_tpb_requested": 1,
                "num_tpb_per_node": [1] + [0] * 63,
            },
            indent=2,
        ).encode(),
        "kelf-0.json": _dumps(
            {
                "graphs": [{"definition": f"{sg}/def.json", "name": sg} for sg in sg_names],
                "version": "0.5",
                "target": target,
            }
        ),
    }
    rng = random.Random(f"{name}:{filler_bytes}")
    for sg in sg_names:
        var: dict[str, object] = {"SB": {"type": "state-buffer", "var_id": 0}}
        tensor_map: dict[str, object] = {}
        for kind, specs in (("input", inputs), ("output", outputs)):
            for tensor, (dtype, shape) in specs.items():
                var[tensor] = {"ops": [], "size": tensor_bytes(dtype, shape), "type": kind, "var_id": len(var)}
                tensor_map[tensor] = {
                    "dtype": dtype,
                    "is_const": False,
                    "kind": kind,
                    "layer_name": tensor,
                    "sim_format": "NC",
                    "sim_shape": list(shape),
                    "tf_file": f"value_{tensor}.npy",
                    "tf_format": "NC",
                    "tf_shape": list(shape),
                }
        for const, (dtype, shape) in constants.items():
            var[f"{const}_{sg}"] = {
                "alignment": 32768,
                "fabric_path": "main",
                "file_name": f"value_{const}.npy",
                "ops": [],
                "size": tensor_bytes(dtype, shape),
                "type": "file",
                "var_id": len(var),
            }
            tensor_map[const] = {
                "dtype": dtype,
                "is_const": True,
                "layer_name": const,
                "sim_format": "CRSM",
                "sim_shape": list(shape),
                "tf_file": f"value_{const}.npy",
                "tf_format": "CRSM",
                "tf_shape": list(shape),
            }
        members[f"{sg}/PE.bin"] = bytes(range(256)) * 3
        members[f"{sg}/PE.json"] = b'{"dma":[],"instr":"PE.bin","name":"PE.json"}'
        members[f"{sg}/def.json"] = _dumps(
            {
                "name": "definition",
                "neff_features": ["neff_feature_vnc"],
                "pe": "PE.json",
                "pe_instr": "PE.bin",
                "var": var,
                "version": "0.6",
            }
        )
        if filler_bytes and sg == sg_names[0]:
            # Engine tables compress about 4:1 in the sample; so does this.
            members[f"{sg}/exp_and_others_bkt.bin"] = rng.randbytes(filler_bytes // 4) + bytes(
                filler_bytes - filler_bytes // 4
            )
        members[f"{sg}/tensor_map.json"] = _dumps(dict(sorted(tensor_map.items())))
        for const, (dtype, shape) in constants.items():
            members[f"{sg}/value_{const}.npy"] = npy_bytes(dtype, shape)
    if with_neff_json:

        def signature(specs: TensorSpecs) -> dict[str, object]:
            return {t: {"id": i, "dtype": d, "shape": list(s)} for i, (t, (d, s)) in enumerate(specs.items())}

        all_specs = [*inputs.values(), *outputs.values()]
        members["neff.json"] = _dumps(
            {
                "nodes": [{"op": "null", "name": t, "inputs": [], "output_names": [t], "is_param": "0"} for t in inputs]
                + [
                    {
                        "op": "tvm_op",
                        "name": "sg_coreV10",
                        "attrs": {
                            "func_name": "__kelf",
                            "kelf": "kelf-0.json",
                            "num_inputs": str(len(inputs)),
                            "num_outputs": str(len(outputs)),
                        },
                        "inputs": [],
                        "output_names": list(outputs),
                    }
                ],
                "arg_nodes": list(range(len(inputs))),
                "attrs": {
                    "shape": ["list_shape", [list(s) for _, s in all_specs]],
                    "dltype": ["list_str", [d for d, _ in all_specs]],
                },
                "metadata": {
                    "signatures": {
                        "default": {
                            "inputs": signature(inputs),
                            # The sample's compiler leaves outputs empty here; signature_outputs=False does the same.
                            "outputs": signature(outputs) if signature_outputs else {},
                        }
                    }
                },
            }
        )
    return members


def build_neff(
    path: str | os.PathLike[str],
    *,
    inputs: TensorSpecs,
    outputs: TensorSpecs,
    name: str = "file.neff",
    compiler_version: str = DEFAULT_COMPILER_VERSION,
    target: str = "cayman",
    lnc_size: int = 1,
    gzip: bool = True,
    with_neff_json: bool = True,
    signature_outputs: bool = True,
    subgraphs: int = 1,
    constants: TensorSpecs | None = None,
    filler_bytes: int = 0,
    extra_members: Mapping[str, bytes] | None = None,
    **header: object,
) -> Path:
    """Write a NEFF at ``path`` (parent directories are created) and return the path.

    inputs, outputs, constants: ``{name: (dtype, shape)}`` with numpy dtype names ("float16", "bfloat16",
        "float32", "int32", ...); order is kept (neff.json ids follow it). Constants are zero-filled
        ``sgNN/value_<name>.npy`` members, one per subgraph as in the sample.
    name: the header name and info.json ``name``. compiler_version: info.json ``tool_version``.
    target: kelf-0.json codename ("cayman" is Trn2). lnc_size: the header field.
    gzip: False writes the uncompressed payload ``--enable-fast-loading-neuron-binaries`` gives.
    with_neff_json: False leaves neff.json out (readers fall back to tensor_map.json);
        signature_outputs=False keeps it but with empty outputs, like the sample.
    subgraphs: number of sgNN directories, each with def.json and tensor_map.json.
    filler_bytes: an extra engine table of that size, for NEFFs of a realistic size.
    extra_members: more {member name: bytes}, written last (any name, even ``../x``: nothing checks it).
    header: any other ``make_header`` field (neff_version, feature_bits, uuid, pkg_version, ...).
    """
    members = neff_members(
        inputs=inputs,
        outputs=outputs,
        name=name,
        compiler_version=compiler_version,
        target=target,
        subgraphs=subgraphs,
        with_neff_json=with_neff_json,
        signature_outputs=signature_outputs,
        constants=constants,
        filler_bytes=filler_bytes,
    )
    members.update(extra_members or {})
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(wrap_payload(tar_bytes(members, gzip=gzip), name=name, lnc_size=lnc_size, **header))
    return out


def write_job(
    job_dir: str | os.PathLike[str],
    *,
    outcome: str = "succeeded",
    spec: Mapping[str, object] | None = None,
    requested: Sequence[str] | None = None,
    actual: Sequence[str] | None = None,
    neffs: Sequence[str | os.PathLike[str]] = (),
    **fields: object,
) -> Path:
    """A ``job.json`` as the compile pipeline writes it; ``neffs`` are NEFF paths, recorded with size and sha256."""
    directory = Path(job_dir)
    directory.mkdir(parents=True, exist_ok=True)
    spec = dict(spec or {"name": "rope", "model": {"head_size": 128}, "compiler": {"target": "trn2"}})
    requested = list(requested or ["neuronx-cc", "compile", "model", "--target", "trn2"])
    doc = {
        "schema_version": 1,
        "job_id": directory.name,
        "spec": spec,
        "spec_hash": hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest(),
        "backend": "neuron",
        "outcome": outcome,
        "reason": None,
        "created": "2026-01-02T03:04:05Z",
        "compiler_command": {"requested": requested, "actual": list(actual) if actual is not None else requested},
        "neffs": [
            {
                "path": Path(n).relative_to(directory).as_posix(),
                "size": Path(n).stat().st_size,
                "sha256": hashlib.sha256(Path(n).read_bytes()).hexdigest(),
            }
            for n in neffs
        ],
    }
    doc.update(fields)
    out = directory / "job.json"
    out.write_text(json.dumps(doc, indent=2))
    return out

"""The fake ``neuron-explorer view``'s processed profile: the Parquet tables of a NEFF/NTFF pair.

Tables and fields are those of aws-neuron-sdk ``tools/neuron-explorer/profile-schema-reference.rst`` (schema 7.4.0),
in the layout of ``how-to-analyze-profile-output.rst`` (one ``<Table>.parquet`` per table in the output folder,
a large one split into ``<Table>_0.parquet``, ``<Table>_1.parquet``), with the hierarchy of
``overview-hierarchy-view.rst``: framework operation, its HLO instruction, its engine instructions.

What is measured is made up, deterministically, from the NEFF: each framework operation the compiler kept in
``debug_info/framework_ops.json`` (a NEFF compiled with the framework's debug names; none otherwise) runs in turn,
for a time that grows with the elements it makes and the multiply-adds it does (so an operation's time does not
depend on the others'), on the engine its kind would use (matrix multiplications on the tensor engine with their
weight loads, activations on the scalar engine, the rest on the vector engine), with a short gap between
operations; the execution takes the NTFF's ``total_time``, or longer when the operations need more. ``FrameworkNode`` rolls each level of the names up, as the hierarchy view shows them, so every node's
time is the merged time of the instructions under it.
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import tarfile
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "7.4.0"
BASE_TS = 1_000_000_000  # the first timestamp of the trace, in nanoseconds
SPLIT_ROWS = 64  # tables longer than this are written in two files, as large tables are
ENGINES = ("tensor", "vector", "scalar", "gpsimd", "sync")
ACTIVATIONS = {"gelu", "silu", "relu", "sigmoid", "tanh", "exp", "softmax", "log_softmax", "erf", "rsqrt"}
MATMULS = {"linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "scaled_dot_product_attention"}
PE_ROWS = PE_COLS = 128  # the tensor engine's systolic array
CLOCK_GHZ = 1.4
# How long an operation takes: a start-up, then its elements and its multiply-adds; a gap between operations.
START_NS, NS_PER_ELEMENT, MACS_PER_NS, GAP_NS = 200, 10, 4, 100


def neff_member(path: str | Path, name: str) -> Any:
    """A JSON member of a NEFF's payload, or None."""
    data = Path(path).read_bytes()
    header_size = struct.unpack_from("<Q", data, 8)[0]
    payload = data[header_size:]
    if payload[:2] == b"\x1f\x8b":
        payload = gzip.decompress(payload)
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r:") as tar:
        for member in tar.getmembers():
            if member.name.lstrip("./") == name:
                handle = tar.extractfile(member)
                return json.loads(handle.read()) if handle else None
    return None


def _merge(intervals: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def _text(intervals: list[list[int]]) -> str:
    return "[" + ", ".join(f"[{a}, {b}]" for a, b in intervals) + "]"


def _engine_of(op: str) -> str:
    if op in MATMULS:
        return "tensor"
    return "scalar" if op in ACTIVATIONS else "vector"


def timeline(framework_ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each framework operation with its engine instructions laid out over the execution, one after another."""
    laid = []
    t = BASE_TS + GAP_NS
    for fid, op in enumerate(framework_ops):
        elements, macs = int(op.get("elements") or 0), int(op.get("macs") or 0)
        span = START_NS + elements * NS_PER_ELEMENT + macs // MACS_PER_NS
        engine = _engine_of(op["op"])
        if engine == "tensor":  # the weights load, then the multiply, overlapping its last quarter
            load = max(1, span // 3)
            instructions = [
                ("tensor", "LDWEIGHTS", t, t + load, 0),
                ("tensor", "MATMUL", t + load - load // 4, t + span, macs or elements),
            ]
        else:
            instructions = [(engine, "ACTIVATE" if engine == "scalar" else "TENSOR_TENSOR", t, t + span, 0)]
        laid.append({"fid": fid, "op": op, "start": t, "end": t + span, "instructions": instructions})
        t += span + GAP_NS
    return laid


def tables(neff: str | Path, ntff_meta: dict[str, Any], *, explorer_version: str) -> dict[str, list[dict[str, Any]]]:
    """Every table's rows for the pair."""
    framework_ops = neff_member(neff, "debug_info/framework_ops.json") or []
    info = neff_member(neff, "info.json") or {}
    laid = timeline(framework_ops)
    # The execution's time as the runtime measured it, or longer when the operations need more.
    total_ns = max(
        int(round(float(ntff_meta.get("total_time") or 0.0005) * 1e9)),
        (laid[-1]["end"] - BASE_TS + GAP_NS) if laid else 0,
    )
    total_s = total_ns / 1e9
    instruction_rows, framework_rows, hlo_rows = [], [], []
    per_engine: dict[str, list[list[int]]] = {e: [] for e in ENGINES}
    counts = {e: 0 for e in ENGINES}
    iid = 0
    for entry in laid:
        fid, op = entry["fid"], entry["op"]
        name = op["name"]
        hlo = f"{op['op']}.{fid}"
        intervals, engine_counts, hbm_read, hbm_write, sbuf_read, sbuf_write, flops = (
            [],
            dict.fromkeys(ENGINES, 0),
            0,
            0,
            0,
            0,
            0,
        )
        for engine, opcode, start, end, macs in entry["instructions"]:
            elements = int(op.get("elements") or 0)
            read, write = elements * 4 if opcode != "TENSOR_TENSOR" else elements * 8, elements * 4
            instruction_rows.append(
                {
                    "start_ts": start, "end_ts": end, "duration_ns": end - start, "engine": engine,
                    "timeline_track": engine.capitalize(), "pcore_idx": 0, "opcode": opcode,
                    "operands": f"elements={elements}", "id": iid, "pc": iid, "bir_id": f"sg0000:{iid}",
                    "hlo_name": hlo, "raw_hlo_id": fid, "raw_framework_id": fid, "layer": name,
                    "hbm_read_bytes": read if opcode == "LDWEIGHTS" else 0, "hbm_write_bytes": 0,
                    "sbuf_read_bytes": read, "sbuf_write_bytes": write, "raw_flops": 2 * macs,
                }
            )  # fmt: skip
            iid += 1
            intervals.append([start, end])
            per_engine[engine].append([start, end])
            counts[engine] += 1
            engine_counts[engine] += 1
            hbm_read += read if opcode == "LDWEIGHTS" else 0
            sbuf_read += read
            sbuf_write += write
            flops += 2 * macs
        merged = _merge(intervals)
        rolled = {
            "hbm_read_bytes": hbm_read, "hbm_write_bytes": hbm_write, "sbuf_read_bytes": sbuf_read,
            "sbuf_write_bytes": sbuf_write, "load_weight_bytes": hbm_read,
        }  # fmt: skip
        framework_rows.append(
            {
                "id": fid, "raw_bir_id": fid, "raw_penguin_id": fid, "raw_hlo_id": fid, "raw_framework_id": fid,
                "modular_flow_invocation_idx": 0, "framework_name": name, "start_ts": merged[0][0],
                "end_ts": merged[-1][1], "time_intervals": _text(merged),
                "element_count_per_interval": [int(op.get("elements") or 0)] * len(merged),
                "transpose_element_count_per_interval": [0] * len(merged),
                "hbm_transfer_size_per_interval": [hbm_read] + [0] * (len(merged) - 1), **rolled,
                **{f"{e}_engine_instruction_count": engine_counts[e] for e in ENGINES},
                "_flops": flops, "_intervals": merged,
            }
        )  # fmt: skip
        hlo_rows.append(
            {
                "id": fid, "raw_bir_id": fid, "raw_penguin_id": fid, "raw_hlo_id": fid, "raw_framework_id": fid,
                "hlo_name": hlo, "modular_flow_invocation_idx": 0, "start_ts": merged[0][0], "end_ts": merged[-1][1],
                "time_intervals": _text(merged), "element_count_per_interval": [int(op.get("elements") or 0)] * len(merged),
                "transpose_element_count_per_interval": [0] * len(merged),
                "hbm_transfer_size_per_interval": [hbm_read] + [0] * (len(merged) - 1), **rolled,
            }
        )  # fmt: skip
    nodes = _framework_nodes(framework_rows)
    model_flops = sum(r["_flops"] for r in framework_rows)
    for row in framework_rows:
        del row["_flops"], row["_intervals"]
    active = _merge([i for e in ENGINES for i in per_engine[e]])
    busy = {e: sum(b - a for a, b in _merge(per_engine[e])) for e in ENGINES}
    cycles = int(total_s * CLOCK_GHZ * 1e9)
    peak = PE_ROWS * PE_COLS * 2 * cycles  # two FLOPs a multiply-add, one a cycle per cell
    summary = {
        "total_time": total_s,
        "total_active_time": sum(b - a for a, b in active) / 1e9,
        "total_active_time_percent": sum(b - a for a, b in active) / total_ns if total_ns else 0.0,
        "neuroncore_cycle_count": cycles,
        "model_flops": model_flops,
        "hardware_flops": model_flops,
        "mfu_estimated_percent": model_flops / peak if peak else 0.0,
        "hfu_estimated_percent": model_flops / peak if peak else 0.0,
        "dma_active_time": busy["tensor"] / 2e9,
        "dma_active_time_percent": busy["tensor"] / 2 / total_ns if total_ns else 0.0,
        "hbm_read_bytes": sum(r["hbm_read_bytes"] for r in framework_rows),
        "hbm_write_bytes": sum(r["hbm_write_bytes"] for r in framework_rows),
        "sbuf_read_bytes": sum(r["sbuf_read_bytes"] for r in framework_rows),
        "sbuf_write_bytes": sum(r["sbuf_write_bytes"] for r in framework_rows),
        "event_count": len(instruction_rows),
        "trace_count": len(instruction_rows),
        "matmul_instruction_count": sum(1 for r in instruction_rows if r["opcode"] == "MATMUL"),
        **{f"{e}_engine_active_time": busy[e] / 1e9 for e in ENGINES},
        **{f"{e}_engine_active_time_percent": busy[e] / total_ns if total_ns else 0.0 for e in ENGINES},
        **{f"{e}_engine_instruction_count": counts[e] for e in ENGINES},
    }
    opcodes: dict[tuple[str, str], list[int]] = {}
    for row in instruction_rows:
        opcodes.setdefault((row["engine"], row["opcode"]), []).append(row["duration_ns"])
    metadata = {
        "profile_schema_version": SCHEMA_VERSION, "ntff_version": 6, "num_physical_cores": 1, "vnc_enabled": False,
        "first_hw_timestamp": BASE_TS, "last_hw_timestamp": BASE_TS + total_ns,
        "first_ts": "1970-01-01 00:00:01+00:00", "last_ts": "1970-01-01 00:00:01+00:00",
        "dma_ddr_bandwidth": 1.0e11, "num_dma_engines_per_neuroncore": 16, "hbm_ddr_bandwidth": 8.2e11,
        "tensor_engine_num_rows": PE_ROWS, "tensor_engine_num_cols": PE_COLS, "tensor_engine_clock_freq": CLOCK_GHZ,
        "vector_engine_clock_freq": CLOCK_GHZ, "vector_engine_num_channels": 128, "scalar_engine_clock_freq": CLOCK_GHZ,
        "scalar_engine_num_channels": 128, "gpsimd_engine_clock_freq": CLOCK_GHZ, "gpsimd_engine_num_channels": 128,
        "neuroncore_clock_freq": CLOCK_GHZ, "ticks_per_nanosec": 1, "instance_type": "trn2.3xlarge",
        "runtime_version": "2.0.0", "explorer_version": explorer_version,
        "compiler_version": str(info.get("tool_version") or ""), "neuroncore_idx": int(ntff_meta.get("nc_idx") or 0),
        "neuron_device_idx": int(ntff_meta.get("nd_idx") or 0), "is_simulation": False,
    }  # fmt: skip
    header = {
        "network_name": str(info.get("name") or Path(neff).name), "uuid": str(ntff_meta.get("neff_uuid") or ""),
        "header_size": 1024, "data_size": Path(neff).stat().st_size - 1024, "major_version": 2, "minor_version": 0,
        "neuroncore_count": 1, "logical_neuroncore_count": 1, "pcore_count_per_lnc": 1,
    }  # fmt: skip
    out = {
        "Summary": [summary],
        "Metadata": [metadata],
        "NeffHeader": [header],
        "ExecutionInfo": [
            {
                "execution_index": 0,
                "neff_name": Path(neff).name,
                "execution_start_ts": 0,
                "execution_end_ts": total_ns,
                "num_subgraphs": 1,
                "row_count": len(instruction_rows),
            }
        ],  # fmt: skip
        "Instruction": instruction_rows,
        "OpcodeSummary": [
            {
                "engine": e,
                "opcode": o,
                "instruction_count": len(d),
                "instruction_time_ns": sum(d),
                "active_time_ns": sum(d),
                "active_time_percent": sum(d) / total_ns if total_ns else 0.0,
            }
            for (e, o), d in sorted(opcodes.items())
        ],  # fmt: skip
        "HloInstruction": hlo_rows,
        "FrameworkInstruction": framework_rows,
        "FrameworkNode": nodes,
    }
    out["SchemaFields"] = _schema(out)
    return out


def _framework_nodes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One node per level of the framework names (``a[0]/b[1]/aten.add`` gives ``a[0]`` and ``b[1]``), each with
    the operations under it and their merged time."""
    found: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in rows:
        parts = row["framework_name"].split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            key = tuple(parts[:depth])
            node = found.setdefault(key, {"ids": [], "intervals": [], "children": [], "rows": []})
            node["ids"].append(row["raw_framework_id"])
            node["intervals"] += row["_intervals"]
            node["rows"].append(row)
            if depth < len(parts) and parts[depth] not in node["children"]:
                node["children"].append(parts[depth])
    out = []
    for key, node in found.items():
        merged = _merge(node["intervals"])
        under = node["rows"]
        total = lambda field, under=under: sum(r[field] for r in under)  # noqa: E731
        busy = sum(b - a for a, b in merged)
        flops = sum(r["_flops"] for r in under)
        cycles = busy * CLOCK_GHZ
        out.append(
            {
                "node_name": key[-1], "children_names": "[" + ", ".join(node["children"]) + "]",
                "parent_name": key[-2] if len(key) > 1 else "", "children_ids": "[" + ", ".join(map(str, node["ids"])) + "]",
                "start_ts": merged[0][0], "end_ts": merged[-1][1], "time_intervals": _text(merged),
                "hfu": 100 * flops / (2 * PE_ROWS * PE_COLS * cycles) if cycles else 0.0,
                "mfu": 100 * flops / (2 * PE_ROWS * PE_COLS * cycles) if cycles else 0.0,
                "hbm_read_bytes": total("hbm_read_bytes"), "hbm_write_bytes": total("hbm_write_bytes"),
                "sbuf_read_bytes": total("sbuf_read_bytes"), "sbuf_write_bytes": total("sbuf_write_bytes"),
                "load_weight_bytes": total("load_weight_bytes"),
                **{f"{e}_engine_instruction_count": total(f"{e}_engine_instruction_count") for e in ENGINES},
            }
        )  # fmt: skip
    return out


# Our own short words for the fields the fake writes (the profile describes its schema in SchemaFields).
_UNITS = {"_ts": "nanoseconds", "_ns": "nanoseconds", "_bytes": "bytes", "total_time": "seconds"}


def _schema(out: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for table, values in out.items():
        if not values:
            continue
        for field, value in values[0].items():
            unit = next((u for suffix, u in _UNITS.items() if field.endswith(suffix)), None)
            rows.append(
                {
                    "table_name": table, "table_description": f"the {table} table of the fake profile",
                    "field_name": field, "field_description": field.replace("_", " "),
                    "field_type": "string" if isinstance(value, str) else "number" if isinstance(value, float)
                    else "boolean" if isinstance(value, bool) else "array" if isinstance(value, list) else "integer",
                    "field_required": False, "field_unit": unit,
                }
            )  # fmt: skip
    return rows


def write(folder: str | Path, out: dict[str, list[dict[str, Any]]]) -> list[Path]:
    """Each table as Parquet in ``folder`` (pyarrow); a table longer than SPLIT_ROWS in two numbered files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for table, rows in out.items():
        if not rows:
            continue  # "a table is only written if the profile holds that kind of activity"
        parts = [rows] if len(rows) <= SPLIT_ROWS else [rows[: len(rows) // 2], rows[len(rows) // 2 :]]
        for i, part in enumerate(parts):
            name = f"{table}.parquet" if len(parts) == 1 else f"{table}_{i}.parquet"
            pq.write_table(pa.Table.from_pylist(part), root / name)
            written.append(root / name)
    return written

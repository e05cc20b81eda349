"""A processed Neuron Explorer profile read: the Parquet tables (pandas and pyarrow, the ``profile`` extra), or the
``summary-json`` / legacy ``json`` output where that is what there is.

Tables, fields and units are aws-neuron-sdk ``tools/neuron-explorer/profile-schema-reference.rst``'s; the folder is
``how-to-analyze-profile-output.rst``'s (one ``<Table>.parquet`` each, a large table split into numbered files).
What is kept of it: the ``Summary`` and ``Metadata`` rows, and per ``FrameworkInstruction`` (a framework operation,
``framework_name`` like ``NeuronLlamaDecoderLayer[1]/function[2]/aten.add``) its merged time intervals, engine
instruction counts and HBM and SBUF bytes: what the model's tree needs to give each layer its time.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from neffbench.usercode.errors import install_hint

ENGINES = ("tensor", "vector", "scalar", "gpsimd", "sync")
COUNTS = tuple(f"{e}_engine_instruction_count" for e in ENGINES)
BYTES = ("hbm_read_bytes", "hbm_write_bytes", "sbuf_read_bytes", "sbuf_write_bytes")


class TablesUnreadable(Exception):
    """The tables cannot be read here (no pandas, a folder without them); one sentence saying why."""


def _plain(value: Any) -> Any:
    """A table's cell as JSON takes it: numpy numbers as numbers, NaN (an empty optional field) as None."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict, str)):
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def intervals(value: Any) -> list[list[int]]:
    """``time_intervals`` as the schema writes it: ``"[[1, 10], [20, 50]]"`` (a string), as nanosecond pairs."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    out = []
    for pair in value if isinstance(value, list) else []:
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            out.append([int(pair[0]), int(pair[1])])
    return out


def _table(folder: Path, name: str) -> Any:
    """One table, split files read together; None when the profile has no such table."""
    import pandas as pd

    files = sorted(folder.glob(f"{name}.parquet")) or sorted(folder.glob(f"{name}_*.parquet"))
    if not files:
        return None
    return pd.concat((pd.read_parquet(f) for f in files), ignore_index=True)


def read_parquet(folder: str | Path) -> dict[str, Any]:
    """The processed profile in ``folder``: ``{"summary", "metadata", "framework": [...]}``."""
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise TablesUnreadable(
            f"reading the profile's Parquet tables needs pandas and pyarrow{install_hint(exc.name)}"
        ) from None
    root = Path(folder)
    summary = _table(root, "Summary")
    if summary is None:
        raise TablesUnreadable(f"{root} holds no Summary table: it is not a processed profile")
    metadata = _table(root, "Metadata")
    framework = _table(root, "FrameworkInstruction")
    rows = []
    for record in [] if framework is None else framework.to_dict("records"):
        name = _plain(record.get("framework_name"))
        if not isinstance(name, str) or not name:
            continue
        row: dict[str, Any] = {"name": name, "intervals": intervals(record.get("time_intervals"))}
        for field in (*COUNTS, *BYTES):
            value = _plain(record.get(field))
            row[field] = int(value) if isinstance(value, (int, float)) else None
        rows.append(row)
    return {
        "source": "parquet",
        "summary": {k: _plain(v) for k, v in summary.iloc[0].to_dict().items()},
        "metadata": {} if metadata is None else {k: _plain(v) for k, v in metadata.iloc[0].to_dict().items()},
        "framework": rows,
    }


def read_summary_json(text: str) -> dict[str, Any]:
    """``view --output-format summary-json``: ``{profile_id: {metric: value}}``; the first profile's metrics."""
    data = json.loads(text[text.find("{") :]) if "{" in text else {}
    if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
        data = next(iter(data.values()))
    return {
        "source": "summary-json",
        "summary": data if isinstance(data, dict) else {},
        "metadata": {},
        "framework": [],
    }


def read_legacy_json(text: str) -> dict[str, Any]:
    """The legacy ``--output-format json``: ``{"summary": [...], "instruction": [...]}``. Instructions naming their
    framework layer (``layer``) give that layer their merged time."""
    data = json.loads(text[text.find("{") :]) if "{" in text else {}
    summaries = data.get("summary") if isinstance(data, dict) else None
    summary = summaries[0] if isinstance(summaries, list) and summaries and isinstance(summaries[0], dict) else {}
    by_layer: dict[str, dict[str, Any]] = {}
    for ins in data.get("instruction") or [] if isinstance(data, dict) else []:
        if not isinstance(ins, dict) or not isinstance(ins.get("layer"), str):
            continue
        start, end = ins.get("start_ts"), ins.get("end_ts")
        if not isinstance(start, int) or not isinstance(end, int):
            continue
        row = by_layer.setdefault(ins["layer"], {"name": ins["layer"], "intervals": [], **dict.fromkeys(COUNTS, 0)})
        row["intervals"].append([start, end])
        engine = ins.get("engine")
        if engine in ENGINES:
            row[f"{engine}_engine_instruction_count"] += 1
    return {"source": "json", "summary": summary, "metadata": {}, "framework": list(by_layer.values())}

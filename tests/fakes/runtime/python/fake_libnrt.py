"""What the fake ``nrtpy`` and ``spike`` share: the part of libnrt they wrap, driven by ``FAKE_NRT_*``.

Neither fake can run a NEFF. Both read the NEFF's tensors themselves (with this module's own small
reader, independent of neffbench's, as libnrt is), keep "device" tensors as host bytes, and take what an
execution returns, how long it takes and how it fails from the environment, read at each call:

- ``FAKE_NRT_OUTPUTS=/path/outputs.npz``: arrays by output name, copied byte for byte into the output
  tensors (the array's size must equal the tensor's); outputs it lacks come back as zeros.
- ``FAKE_NRT_VOID=1``: nrtpy's auto-allocated outputs have a void dtype (``|V2`` for 2-byte types,
  ``|V4`` for 4-byte ones), as nrtpy's troubleshooting page says they may.
- ``FAKE_NRT_DURATIONS_MS="0.5,0.61"``: the per-execution device times, cycled; ``none`` records no device
  event at all (device-mode benchmark then raises RuntimeError, as documented). Default 0.5.
- ``FAKE_NRT_EXTRA_ITERATIONS=N``: each execution records 1 + N device events, like a multi-subgraph NEFF,
  so a device benchmark reports ``iterations = benchmark_iter * (1 + N)``.
- ``FAKE_NRT_ERROR="LOAD:NRT_RESOURCE(4): text"``: raise that NrtError when a NEFF is loaded; ``EXEC:``
  at each execution, ``INIT:`` when the runtime starts (nrt_init). Without ``: text`` the text is the
  binding's own ("Failed to load model", "Failed to execute model", "Failed to initialize NRT runtime");
  ``EXEC:1005`` or ``EXEC:NRT_EXEC_NC_BUSY`` alone also work.
- ``FAKE_NRT_CRASH=1``: the process kills itself with SIGSEGV at execution, as a runtime crash would.
- ``FAKE_NRT_IMPORT_ERROR=1``: ``import nrtpy`` / ``import spike`` fail as without LD_LIBRARY_PATH.

Before raising an NrtError the fake writes one runtime log line to fd 2, in the runtime's format
(``2024-Jul-30 14:22:31.244396 65191:69012 ERROR   NRT:nrt_infodump  Failure: NRT_RESOURCE in nrt_load()``).
"""

from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import io
import itertools
import json
import math
import os
import re
import signal
import struct
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# nrt_status.h (aws-neuron-sdk neuron-runtime/api/nrt_status.rst); trust the numbers.
STATUS: dict[str, int] = {
    "NRT_SUCCESS": 0,
    "NRT_FAILURE": 1,
    "NRT_INVALID": 2,
    "NRT_INVALID_HANDLE": 3,
    "NRT_RESOURCE": 4,
    "NRT_TIMEOUT": 5,
    "NRT_HW_ERROR": 6,
    "NRT_QUEUE_FULL": 7,
    "NRT_LOAD_NOT_ENOUGH_NC": 9,
    "NRT_UNSUPPORTED_NEFF_VERSION": 10,
    "NRT_FAIL_HOST_MEM_ALLOC": 11,
    "NRT_UNINITIALIZED": 13,
    "NRT_CLOSED": 14,
    "NRT_QUEUE_EMPTY": 15,
    "NRT_EXEC_UNIT_UNRECOVERABLE": 101,
    "NRT_EXEC_BAD_INPUT": 1002,
    "NRT_EXEC_COMPLETED_WITH_NUM_ERR": 1003,
    "NRT_EXEC_COMPLETED_WITH_ERR": 1004,
    "NRT_EXEC_NC_BUSY": 1005,
    "NRT_EXEC_OOB": 1006,
    "NRT_COLL_PENDING": 1100,
    "NRT_EXEC_HW_ERR_COLLECTIVES": 1200,
    "NRT_EXEC_HW_ERR_HBM_UE": 1201,
    "NRT_EXEC_HW_ERR_NC_UE": 1202,
    "NRT_EXEC_HW_ERR_DMA_ABORT": 1203,
    "NRT_EXEC_SW_NQ_OVERFLOW": 1204,
    "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE": 1205,
    "NRT_NETWORK_PROXY_FAILURE": 1206,
}
NAMES = {code: name for name, code in STATUS.items()}
DEFAULT_TEXT = {
    "INIT": "Failed to initialize NRT runtime",
    "LOAD": "Failed to load model",
    "EXEC": "Failed to execute model",
}
CALLS = {"INIT": "nrt_init", "LOAD": "nrt_load", "EXEC": "nrt_execute"}
DEFAULT_DURATIONS_MS = (0.5,)
# The dtypes libnrt reports (nrt_dtype_t as spike's dtype_to_string spells them); fp8 is reported as int8.
NRT_DTYPES = (
    "float32",
    "float16",
    "bfloat16",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
)
_ITEMSIZE = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
    "bool": 1,
    "float8_e4m3fn": 1,
    "float8_e4m3": 1,
    "float8_e5m2": 1,
}
NTFF_MAGIC = b"FAKENTFF"


class FakeConfigError(Exception):
    """A FAKE_* variable the fake cannot use: a mistake in the test, never something the real runtime says."""


def status_message(name: str, code: int, text: str) -> str:
    """``NRT Error NRT_INVALID(2): text``, exactly as the bindings' NrtError formats it."""
    return f"NRT Error {name}({code})" + (f": {text}" if text else "")


def runtime_log(level: str, where: str, message: str) -> None:
    """One line on fd 2 in the runtime's own format (libnrt writes there itself, not through sys.stderr)."""
    now = _dt.datetime.now()
    stamp = now.strftime("%Y-%b-%d %H:%M:%S.") + f"{now.microsecond:06d}"
    line = f"{stamp} {os.getpid()}:{threading.get_native_id()} {level:<7} NRT:{where}  {message}\n"
    try:
        os.write(2, line.encode())
    except OSError:
        pass


# --- the NEFF, read as libnrt would: tensor names, sizes, dtypes and shapes --------------------------------


class NeffUnreadable(Exception):
    pass


@dataclass(frozen=True)
class NeffTensor:
    name: str
    dtype: str  # as libnrt reports it (NRT_DTYPES or "unknown")
    neff_dtype: str | None  # as the NEFF spells it
    shape: tuple[int, ...]
    size: int  # bytes


@dataclass(frozen=True)
class NeffModel:
    path: str
    inputs: tuple[NeffTensor, ...]
    outputs: tuple[NeffTensor, ...]
    lnc: int
    uuid: str


def _reported_dtype(dtype: str | None) -> str:
    if dtype in NRT_DTYPES:
        return dtype
    if dtype and dtype.startswith("float8"):
        return "int8"  # nrtpy tensor.rst: fp8 is reported as int8 by libnrt
    return "unknown"


def read_neff_tensors(path: str | os.PathLike[str]) -> NeffModel:
    """The NEFF's I/O tensors from ``sgNN/def.json`` (sizes) and ``sgNN/tensor_map.json`` (dtype, shape)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise NeffUnreadable(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) < 1024:
        raise NeffUnreadable("shorter than the 1024-byte NEFF header")
    header_size, data_size = struct.unpack_from("<QQ", data, 8)
    if header_size != 1024 or data_size != len(data) - 1024:
        raise NeffUnreadable("the header's sizes do not match the file")
    lnc = struct.unpack_from("<I", data, 552)[0]
    uuid = data[204:220].hex()
    payload = data[1024:]
    try:
        if payload[:2] == b"\x1f\x8b":
            payload = gzip.decompress(payload)
        with tarfile.open(fileobj=io.BytesIO(payload), mode="r:") as tar:
            files = {m.name.lstrip("./"): m for m in tar.getmembers() if m.isfile()}

            def load(name: str) -> Any:
                handle = tar.extractfile(files[name])
                return json.loads(handle.read()) if handle else None

            subgraphs: list[str] = []
            if "kelf-0.json" in files:
                for graph in (load("kelf-0.json") or {}).get("graphs", []):
                    definition = str(graph.get("definition", ""))
                    if definition:
                        subgraphs.append(definition.rsplit("/", 1)[0])
            if not subgraphs:
                subgraphs = sorted({n.split("/", 1)[0] for n in files if re.fullmatch(r"sg\d+/def\.json", n)})
            found: dict[str, dict[str, NeffTensor]] = {"input": {}, "output": {}}
            for sg in subgraphs:
                var = (load(f"{sg}/def.json") or {}).get("var", {}) if f"{sg}/def.json" in files else {}
                tmap = load(f"{sg}/tensor_map.json") if f"{sg}/tensor_map.json" in files else {}
                tmap = tmap or {}
                rows = [(v.get("var_id", 0), n, v) for n, v in var.items() if v.get("type") in ("input", "output")]
                if not rows:  # no def.json table: the tensor map alone says which tensors are I/O
                    rows = [
                        (i, n, {"type": t.get("kind"), "size": None})
                        for i, (n, t) in enumerate(tmap.items())
                        if t.get("kind") in ("input", "output")
                    ]
                for _, name, v in sorted(rows, key=lambda r: r[0]):
                    kind = v["type"]
                    if name in found[kind]:
                        continue
                    t = tmap.get(name, {})
                    neff_dtype = t.get("dtype")
                    shape = tuple(int(d) for d in (t.get("tf_shape") or ()))
                    size = v.get("size")
                    if size is None:
                        size = _ITEMSIZE.get(neff_dtype or "", 0) * math.prod(shape)
                    found[kind][name] = NeffTensor(name, _reported_dtype(neff_dtype), neff_dtype, shape, int(size))
    except (OSError, EOFError, tarfile.TarError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise NeffUnreadable(f"the payload is not a readable NEFF tar ({type(exc).__name__})") from None
    return NeffModel(str(path), tuple(found["input"].values()), tuple(found["output"].values()), lnc, uuid)


# --- numpy dtypes for what libnrt reports ------------------------------------------------------------------


def ml_dtypes_module() -> Any:
    try:
        import ml_dtypes  # noqa: PLC0415 - optional, as in a venv without it
    except ImportError:
        return None
    return ml_dtypes


def void_dtype(t: NeffTensor) -> np.dtype:
    items = math.prod(t.shape) if t.shape else 1
    return np.dtype(f"V{max(1, t.size // items) if items else max(1, t.size)}")


def numpy_dtype(t: NeffTensor) -> np.dtype | None:
    """The numpy dtype of a reported dtype, or None when numpy has none (bfloat16 without ml_dtypes, unknown)."""
    if t.dtype == "bfloat16":
        ml = ml_dtypes_module()
        return np.dtype(ml.bfloat16) if ml else None
    if t.dtype == "unknown":
        return None
    return np.dtype(t.dtype)


# --- environment controls ----------------------------------------------------------------------------------


def _env(name: str) -> str:
    return os.environ.get(name, "").strip()


def durations_ms() -> list[float]:
    raw = _env("FAKE_NRT_DURATIONS_MS")
    if not raw:
        return list(DEFAULT_DURATIONS_MS)
    if raw.lower() == "none":
        return []
    try:
        values = [float(v) for v in raw.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise FakeConfigError(f"FAKE_NRT_DURATIONS_MS={raw!r} is not a comma-separated list of numbers") from None
    if any(v < 0 for v in values):
        raise FakeConfigError(f"FAKE_NRT_DURATIONS_MS={raw!r} has a negative duration")
    return values


def durations_set() -> bool:
    return bool(_env("FAKE_NRT_DURATIONS_MS")) and _env("FAKE_NRT_DURATIONS_MS").lower() != "none"


def extra_events() -> int:
    raw = _env("FAKE_NRT_EXTRA_ITERATIONS") or "0"
    try:
        value = int(raw)
    except ValueError:
        raise FakeConfigError(f"FAKE_NRT_EXTRA_ITERATIONS={raw!r} is not an integer") from None
    if value < 0:
        raise FakeConfigError(f"FAKE_NRT_EXTRA_ITERATIONS={raw!r} is negative")
    return value


_ERROR_RE = re.compile(
    r"^(?P<when>INIT|LOAD|EXEC)\s*:\s*(?P<name>[A-Z][A-Z0-9_]*)?\s*(?:\((?P<code>\d+)\))?"
    r"\s*(?::\s*(?P<text>.*))?$",
    re.S,
)
_CODE_ONLY_RE = re.compile(r"^(?P<when>INIT|LOAD|EXEC)\s*:\s*(?P<code>\d+)\s*(?::\s*(?P<text>.*))?$", re.S)


@dataclass(frozen=True)
class InjectedError:
    when: str
    name: str
    code: int
    text: str


def injected_error(when: str) -> InjectedError | None:
    raw = _env("FAKE_NRT_ERROR")
    if not raw:
        return None
    m = _CODE_ONLY_RE.match(raw) or _ERROR_RE.match(raw)
    if not m or not (m.groupdict().get("name") or m.group("code")):
        raise FakeConfigError(f"FAKE_NRT_ERROR={raw!r}: expected INIT|LOAD|EXEC:NAME(CODE)[: text]")
    if m.group("when") != when:
        return None
    name = m.groupdict().get("name")
    code = m.group("code")
    if name and code is None:
        if name not in STATUS:
            raise FakeConfigError(f"FAKE_NRT_ERROR={raw!r}: {name} is not an NRT status name; give its code too")
        code_i = STATUS[name]
    else:
        code_i = int(code)
        name = name or NAMES.get(code_i, "UNKNOWN STATUS")
    text = (m.group("text") or "").strip() or DEFAULT_TEXT[when]
    return InjectedError(when, name, code_i, text)


def fake_outputs() -> dict[str, np.ndarray]:
    raw = _env("FAKE_NRT_OUTPUTS")
    if not raw:
        return {}
    try:
        with np.load(raw, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as exc:
        raise FakeConfigError(f"FAKE_NRT_OUTPUTS={raw!r} cannot be read as an .npz: {exc}") from None


def output_bytes(t: NeffTensor, given: dict[str, np.ndarray]) -> bytes:
    """The bytes an execution leaves in output ``t``: FAKE_NRT_OUTPUTS' array, else zeros."""
    if t.name not in given:
        return bytes(t.size)
    raw = np.ascontiguousarray(given[t.name]).tobytes()
    if len(raw) != t.size:
        raise FakeConfigError(f"FAKE_NRT_OUTPUTS: {t.name} has {len(raw)} bytes but the NEFF's output has {t.size}")
    return raw


def void_requested() -> bool:
    return _env("FAKE_NRT_VOID") not in ("", "0", "false", "no")


def crash_requested() -> bool:
    return _env("FAKE_NRT_CRASH") not in ("", "0", "false", "no")


def import_error_requested() -> bool:
    return _env("FAKE_NRT_IMPORT_ERROR") not in ("", "0", "false", "no")


IMPORT_ERROR = "libnrt.so.1: cannot open shared object file: No such file or directory"


# --- a fake .ntff ------------------------------------------------------------------------------------------


def write_ntff(
    path: str | os.PathLike[str],
    *,
    neff: str,
    uuid: str,
    execution: int,
    total_time_s: float,
    rank: int | None = None,
    core: int = 0,
) -> Path:
    """A small stand-in for a device trace: magic, then JSON the fake viewer reads back. Not the real format."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "neff": str(neff),
        "neff_uuid": uuid,
        "execution": execution,
        "total_time": total_time_s,
        "rank": rank,
        "nc_idx": core,
        "nd_idx": 0,
    }
    out.write_bytes(NTFF_MAGIC + json.dumps(meta, sort_keys=True).encode() + b"\n")
    return out


def read_ntff(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    data = Path(path).read_bytes()
    if not data.startswith(NTFF_MAGIC):
        return None
    try:
        return json.loads(data[len(NTFF_MAGIC) :])
    except ValueError:
        return None


def profile_id(path: str | os.PathLike[str]) -> str:
    """``n_`` + 40 hex digits, the shape of the profile ids neuron-profile prints."""
    return "n_" + hashlib.sha1(Path(path).read_bytes()).hexdigest()


# --- the runtime: one per process, like the bindings' singleton --------------------------------------------


class Closed(Exception):
    """An object of a runtime that has been closed (reset) was used."""


@dataclass(eq=False)
class DeviceTensor:
    runtime: Runtime
    core_id: int
    size: int
    name: str
    data: bytearray
    freed: bool = False

    @property
    def va(self) -> int:
        return 0x7F0000000000 + (id(self) & 0xFFFFFFFF) * 64

    def alive(self) -> bool:
        return not self.freed and not self.runtime.closed


@dataclass(eq=False)
class LoadedModel:
    runtime: Runtime
    neff: NeffModel
    neff_path: str
    core_id: int
    rank_id: int
    world_size: int
    is_collective: bool
    unloaded: bool = False

    def alive(self) -> bool:
        return not self.unloaded and not self.runtime.closed


@dataclass(eq=False)
class TraceSession:
    """A system trace: collects one ``nc_exec_running`` start/stop pair per device event."""

    runtime: Runtime
    core_id: int | None
    pending: list[int] = field(default_factory=list)  # events since the last drain/fetch (their cores)
    active: bool = True

    def drain(self) -> None:
        self.pending.clear()

    def fetch_events_json(self) -> str:
        durations = durations_ms()
        events: list[dict[str, Any]] = []
        clock = 1_000_000_000
        cycle = itertools.cycle(durations) if durations else iter(())
        for tracking_id, core in enumerate(self.pending, start=1):
            ms = next(cycle, None)
            if ms is None:
                break
            start = clock
            stop = start + int(round(ms * 1_000_000))
            for phase, ts in (("start", start), ("stop", stop)):
                events.append(
                    {
                        "event_type": "nc_exec_running",
                        "phase": phase,
                        "tracking_id": tracking_id,
                        "nc_id": core,
                        "data": {"nc_timestamp_ns": ts},
                    }
                )
            clock = stop + 10_000
        self.pending.clear()
        return json.dumps({"events": events})

    def stop(self) -> None:
        if self.active:
            self.active = False
            if self in self.runtime.traces:
                self.runtime.traces.remove(self)


class Runtime:
    """libnrt as the bindings see it. ``errors`` makes the binding's own exception classes."""

    def __init__(self, nrt_error: type[Exception]):
        self.nrt_error = nrt_error
        self.closed = False
        self.traces: list[TraceSession] = []
        self.executions = 0
        self.fail("INIT")

    # errors ----------------------------------------------------------------------------------------------
    def raise_status(self, name: str, code: int, text: str, when: str, detail: str | None = None) -> None:
        if detail:
            runtime_log("ERROR", CALLS[when], detail)
        runtime_log("ERROR", "nrt_infodump", f"Failure: {name} in {CALLS[when]}()")
        raise self.nrt_error(status_message(name, code, text))

    def fail(self, when: str) -> None:
        err = injected_error(when)
        if err:
            self.raise_status(err.name, err.code, err.text, when)

    # life -------------------------------------------------------------------------------------------------
    def close(self) -> int:
        self.closed = True
        for trace in list(self.traces):
            trace.stop()
        return 0

    @staticmethod
    def visible_core_count() -> int:
        raw = os.environ.get("NEURON_RT_VISIBLE_CORES", "").strip()
        if not raw:
            return 4
        count = 0
        for part in raw.split(","):
            part = part.strip()
            if "-" in part:
                a, b = part.split("-", 1)
                count += int(b) - int(a) + 1
            elif part:
                count += 1
        return count

    # models -----------------------------------------------------------------------------------------------
    def load(
        self,
        neff_path: str,
        core_id: int = 0,
        cc_enabled: bool = False,
        rank_id: int = 0,
        world_size: int = 1,
        *,
        missing_status: str = "NRT_FAILURE",
    ) -> LoadedModel:
        """nrt_load: an unreadable file gives ``missing_status``, a file that is no NEFF NRT_INVALID."""
        if not os.path.isfile(neff_path):
            self.raise_status(
                missing_status,
                STATUS[missing_status],
                DEFAULT_TEXT["LOAD"],
                "LOAD",
                f"Failed to read NEFF file {neff_path}",
            )
        try:
            neff = read_neff_tensors(neff_path)
        except NeffUnreadable as exc:
            self.raise_status("NRT_INVALID", 2, DEFAULT_TEXT["LOAD"], "LOAD", f"Invalid NEFF {neff_path}: {exc}")
        self.fail("LOAD")
        return LoadedModel(self, neff, str(neff_path), int(core_id), int(rank_id), int(world_size), bool(cc_enabled))

    # tensors ----------------------------------------------------------------------------------------------
    def allocate(self, size: int, core_id: int = 0, name: str | None = None) -> DeviceTensor:
        return DeviceTensor(self, int(core_id), int(size), name or "unnamed_tensor", bytearray(int(size)))

    @staticmethod
    def write(tensor: DeviceTensor, buffer: Any, offset: int = 0) -> None:
        raw = memoryview(buffer).cast("B")
        if offset + len(raw) > tensor.size:
            raise ValueError(f"write of {len(raw)} bytes at offset {offset} overruns a {tensor.size}-byte tensor")
        tensor.data[offset : offset + len(raw)] = raw

    @staticmethod
    def read_into(tensor: DeviceTensor, buffer: Any, offset: int = 0, size: int = 0) -> None:
        view = memoryview(buffer).cast("B")
        size = size or min(len(view), tensor.size - offset)
        view[:size] = tensor.data[offset : offset + size]

    # execution --------------------------------------------------------------------------------------------
    def execute(
        self,
        model: LoadedModel,
        inputs: dict[str, DeviceTensor],
        outputs: dict[str, DeviceTensor],
        ntff_name: str | None = None,
        save_trace: bool = False,
    ) -> None:
        """nrt_execute: names and sizes must be the NEFF's (else NRT_INVALID), then the FAKE_NRT_* effects."""
        neff = model.neff
        for kind, given, wanted in (("input", inputs, neff.inputs), ("output", outputs, neff.outputs)):
            by_name = {t.name: t for t in wanted}
            for name in given:
                if name not in by_name:
                    self.raise_status(
                        "NRT_INVALID",
                        2,
                        DEFAULT_TEXT["EXEC"],
                        "EXEC",
                        f"Unknown {kind} tensor name '{name}' for {neff.path}",
                    )
            for t in wanted:
                if t.name not in given:
                    self.raise_status(
                        "NRT_INVALID",
                        2,
                        DEFAULT_TEXT["EXEC"],
                        "EXEC",
                        f"Missing {kind} tensor '{t.name}' for {neff.path}",
                    )
                if given[t.name].size != t.size:
                    self.raise_status(
                        "NRT_INVALID",
                        2,
                        DEFAULT_TEXT["EXEC"],
                        "EXEC",
                        f"Size mismatch for {kind} tensor '{t.name}': got {given[t.name].size} "
                        f"bytes, expected {t.size}",
                    )
        if crash_requested():
            os.kill(os.getpid(), signal.SIGSEGV)
        self.fail("EXEC")
        produced = fake_outputs()
        for t in neff.outputs:
            outputs[t.name].data[:] = output_bytes(t, produced)
        self.executions += 1
        events = 1 + extra_events() if durations_ms() else 0
        for trace in self.traces:
            if trace.core_id is None or trace.core_id == model.core_id:
                trace.pending.extend([model.core_id] * events)
        if save_trace:
            durations = durations_ms() or list(DEFAULT_DURATIONS_MS)
            ms = durations[(self.executions - 1) % len(durations)]
            write_ntff(
                ntff_name or "profile.ntff",
                neff=model.neff_path,
                uuid=neff.uuid,
                execution=1,
                total_time_s=ms / 1000.0,
                core=model.core_id,
            )

    def trace(self, core_id: int | None = None) -> TraceSession:
        session = TraceSession(self, core_id)
        self.traces.append(session)
        return session

    # the names the nanobind singleton uses (spike/_spike.pyi: class Spike) ----------------------------------
    def load_model(
        self, neff_file: str, core_id: int = 0, cc_enabled: bool = False, rank_id: int = 0, world_size: int = 1
    ) -> LoadedModel:
        return self.load(neff_file, core_id, cc_enabled, rank_id, world_size)

    def unload_model(self, model: LoadedModel) -> None:
        model.unloaded = True

    def allocate_tensor(self, size: int, core_id: int = 0, name: str | None = None) -> DeviceTensor:
        return self.allocate(size, core_id, name)

    @staticmethod
    def free_tensor(tensor: DeviceTensor) -> None:
        tensor.freed = True

    def tensor_write_from_pybuffer(self, tensor: DeviceTensor, buffer: Any, offset: int = 0) -> None:
        self.write(tensor, buffer, offset)

    def tensor_read_to_pybuffer(self, tensor: DeviceTensor, buffer: Any, offset: int = 0, size: int = 0) -> None:
        self.read_into(tensor, buffer, offset, size)

    @staticmethod
    def get_tensor_info(model: LoadedModel) -> ModelTensorInfo:
        return ModelTensorInfo(model.neff)

    def get_visible_neuron_core_count(self) -> int:
        return self.visible_core_count()


class TensorMetadata:
    """``size`` (bytes), ``dtype`` (the string libnrt reports) and ``shape`` (a list), read-only."""

    __slots__ = ("_size", "_dtype", "_shape")

    def __init__(self, size: int, dtype: str, shape: list[int]):
        self._size, self._dtype, self._shape = int(size), str(dtype), [int(d) for d in shape]

    @property
    def size(self) -> int:
        return self._size

    @property
    def dtype(self) -> str:
        return self._dtype

    @property
    def shape(self) -> list[int]:
        return list(self._shape)

    def __repr__(self) -> str:
        return f"TensorMetadata(size={self._size}, dtype='{self._dtype}', shape=[{', '.join(map(str, self._shape))}])"


class ModelTensorInfo:
    """``inputs`` and ``outputs``: {name: TensorMetadata} in the NEFF's own order."""

    def __init__(self, neff: NeffModel):
        self.inputs = {t.name: TensorMetadata(t.size, t.dtype, list(t.shape)) for t in neff.inputs}
        self.outputs = {t.name: TensorMetadata(t.size, t.dtype, list(t.shape)) for t in neff.outputs}

    def __repr__(self) -> str:
        return f"ModelTensorInfo(inputs={len(self.inputs)} tensors, outputs={len(self.outputs)} tensors)"


@dataclass
class BenchmarkResult:
    """Result of a model benchmark run (all times in milliseconds)."""

    mean_ms: float
    min_ms: float
    max_ms: float
    std_dev_ms: float
    iterations: int
    warmup_iterations: int
    durations_ms: list[float] = field(default_factory=list)

    def __repr__(self) -> str:
        return (
            f"BenchmarkResult(mean={self.mean_ms:.4f}ms, min={self.min_ms:.4f}ms, max={self.max_ms:.4f}ms, "
            f"std_dev={self.std_dev_ms:.4f}ms, iterations={self.iterations}, "
            f"warmup_iterations={self.warmup_iterations})"
        )


NO_EVENTS = "No nc_exec_running events captured during benchmark. Cannot compute device-side timing."


def run_benchmark(
    runtime: Runtime,
    model: LoadedModel,
    inputs: dict[str, DeviceTensor],
    outputs: dict[str, DeviceTensor],
    warmup_iter: int,
    benchmark_iter: int,
    mode: str,
) -> BenchmarkResult:
    """Warm-up, then timed executions; device mode reads the system trace, host mode the wall clock."""

    if mode == "device":
        trace = runtime.trace(model.core_id)
        try:
            for _ in range(warmup_iter):
                runtime.execute(model, inputs, outputs)
            trace.drain()
            for _ in range(benchmark_iter):
                runtime.execute(model, inputs, outputs)
            durations = parse_trace_durations(trace.fetch_events_json())
        finally:
            trace.stop()
        if not durations:
            raise RuntimeError(NO_EVENTS)
    else:
        for _ in range(warmup_iter):
            runtime.execute(model, inputs, outputs)
        measured = []
        for _ in range(benchmark_iter):
            t0 = time.perf_counter()
            runtime.execute(model, inputs, outputs)
            measured.append((time.perf_counter() - t0) * 1000.0)
        durations = host_durations(measured)
    return BenchmarkResult(
        **stats(durations), iterations=len(durations), warmup_iterations=warmup_iter, durations_ms=list(durations)
    )


def parse_trace_durations(events_json: str) -> list[float]:
    """Milliseconds between each ``nc_exec_running`` start and its stop, in the order they stopped."""
    if not events_json:
        return []
    starts: dict[Any, int] = {}
    out: list[float] = []
    for event in json.loads(events_json).get("events", []):
        if event.get("event_type") != "nc_exec_running":
            continue
        ts = (event.get("data") or {}).get("nc_timestamp_ns")
        key = event.get("tracking_id")
        if ts is None or key is None:
            continue
        if event.get("phase") == "start":
            starts[key] = ts
        elif event.get("phase") == "stop" and key in starts:
            out.append((ts - starts.pop(key)) / 1e6)
    return out


def host_durations(measured: list[float]) -> list[float]:
    """Host-mode durations: FAKE_NRT_DURATIONS_MS cycled when it is set, else what the fake measured."""
    if not durations_set():
        return measured
    values = durations_ms()
    return [values[i % len(values)] for i in range(len(measured))]


def stats(durations: list[float]) -> dict[str, float]:
    n = len(durations)
    mean = sum(durations) / n
    return {
        "mean_ms": mean,
        "min_ms": min(durations),
        "max_ms": max(durations),
        "std_dev_ms": math.sqrt(sum((d - mean) ** 2 for d in durations) / n),
    }

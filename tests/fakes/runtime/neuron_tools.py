"""Fake ``neuron-ls``, ``neuron-explorer`` and ``neuron-profile`` for tests, run through ``runtime/bin/<tool>``.

neuron-ls (aws-neuron-sdk ``tools/neuron-sys-tools/neuron-ls.rst``): ``-j/--json-output`` prints the device
list as JSON (4-space indent, keys as a real trn2.3xlarge prints them: instance_type, instance_id,
neuron_device, bdf, cpu_affinity, numa_node, connected_to, nc_count, logical_neuroncore_config,
memory_size, neuroncore_ids, neuron_processes[{pid, command, neuron_runtime_version}]); without it the
table (``-w/--wide`` and ``-a/--show-all-procs`` add PID, COMMAND, RUNTIME VERSION). ``FAKE_NEURON_LS``:
``trn2`` (default: one device of 8 physical NeuronCores, shown as 4 at LNC 2 or 8 when
``NEURON_LOGICAL_NC_CONFIG=1``), ``busy`` (the same, with ``python`` pid 4242 holding it), ``none`` (no
device: ``[]`` and exit 0 -- the docs do not show this case), or the path of a file printed verbatim.

neuron-explorer (``tools/neuron-explorer/how-to-profile-workload.rst``, "CLI profiling with neuron-explorer
capture"; ``nki/guides/use-neuron-profile.rst``): ``capture -n file.neff -s profile.ntff [NAME FILE ...]``
runs ``max(--num-exec, --profile-nth-exec)`` executions and writes a small fake NTFF for every Nth one:
the ``-s`` path itself for a single profile of the first execution, else ``<stem>_exec_<k>.ntff`` beside it
("--profile-nth-exec=2 ... will save your NTFF profile to profile_exec_2.ntff"), with ``_rank_<id>`` before
it for collectives (-r / --collectives-worker-count, -i). Missing inputs are zero-filled; an input the
NEFF lacks or of the wrong size fails with NRT_INVALID. ``--disable-profile`` or ``--profile-nth-exec 0``
writes no NTFF; ``--save-output-npy`` writes ``<output>.npy`` in the working directory (bfloat16 fails with
the documented "unsupported type for npy output"), ``--save-output`` the raw bytes. FAKE_NRT_ERROR
(LOAD/EXEC), FAKE_NRT_CRASH, FAKE_NRT_OUTPUTS and FAKE_NRT_DURATIONS_MS act as in the runtime fakes; the
profiled time of execution 1 carries 1 ms of start-up. What capture prints is not documented: this fake
prints ``Profile saved to <path>`` per NTFF.

``view`` processes a device profile as a matched NEFF/NTFF pair (``tools/neuron-explorer/get-started.rst``,
``troubleshooting.rst``): ``-n file.neff -s file.ntff``, or ``-d DIR`` holding both (each NTFF with the NEFF of its
UUID). An NTFF whose NEFF is missing, or of another UUID, fails with a sentence saying so and exit 1.
``--output-format summary-json`` prints ``{profile_id: {metric: value}}``, one node per NTFF (``n_`` + 40 hex
digits); ``*_percent`` metrics are fractions of 1, as real captures show. ``total_time`` is seconds.
``FAKE_PROFILE_SUMMARY`` (inline JSON object or a file) overrides metrics; ``FAKE_PROFILE_VIEW_ERROR`` makes ``view``
print it on stderr and exit 1. ``summary-text`` prints ``key value``
lines, ``json`` ``{"summary": [...], "instruction": [...]}`` (each instruction with its ``layer``); ``parquet`` with
``--output-file DIR`` writes the processed profile's tables into DIR (``profile_tables.py``); the default (UI)
prints the profile URL and returns at once instead of serving.

neuron-profile: the same commands after a deprecation notice on stderr (the docs say it is deprecated and
ended support in Neuron 2.29; the notice's wording is the fake's). Its ``view`` without a summary format
needs InfluxDB and, without ``influx`` on PATH, fails with the documented error.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "python"))

# Imported by main for the profiler only: neuron-ls, run at every look at the host, needs neither (numpy is most of a
# fake tool's start).
nrt: Any = None
np: Any = None

EXPLORER_VERSION = "2.33.0.0+fake"
DEPRECATION = (
    "WARNING: neuron-profile is deprecated and reached end of support in Neuron 2.29; use "
    "neuron-explorer, which takes the same flags (neuron-explorer capture / neuron-explorer view)."
)
INFLUX_ERROR = (
    "ERRO[0001] To install influxdb, go to https://portal.influxdata.com/downloads/ and follow the "
    'instructions there\ninfluxdb not setup correctly: exec: "influx": executable file not found in $PATH'
)


def fail(message: str, code: int = 1) -> int:
    print(message, file=sys.stderr)
    return code


# --- neuron-ls ---------------------------------------------------------------------------------------------


def trn2_device(busy: bool) -> dict[str, Any]:
    lnc = 1 if os.environ.get("NEURON_LOGICAL_NC_CONFIG", "").strip() == "1" else 2
    cores = 8 // lnc
    return {
        "instance_type": "trn2.3xlarge",
        "instance_id": "i-0fa4e0000000fake0",
        "neuron_device": 0,
        "bdf": "0000:33:00.0",
        "cpu_affinity": "0-11",
        "numa_node": "0",
        "connected_to": None,
        "nc_count": cores,
        "logical_neuroncore_config": lnc,
        "memory_size": 103079215104,
        "neuroncore_ids": list(range(cores)),
        "neuron_processes": [{"pid": 4242, "command": "python", "neuron_runtime_version": "2.0.0"}] if busy else [],
    }


def _gb(size: Any) -> str:
    return f"{int(size) // 2**30} GB" if isinstance(size, int) else "?"


def ls_table(devices: list[dict[str, Any]], wide: bool) -> str:
    heads = [("NEURON", "DEVICE"), ("NEURON", "CORES"), ("NEURON", "MEMORY"), ("CONNECTED", "DEVICES"), ("PCI", "BDF")]
    if wide:
        heads += [("PID", ""), ("COMMAND", ""), ("RUNTIME", "VERSION")]
    rows: list[list[str]] = []
    for d in devices:
        connected = ", ".join(str(c) for c in d.get("connected_to") or [])
        base = [
            str(d.get("neuron_device", "")),
            str(d.get("nc_count", "")),
            _gb(d.get("memory_size")),
            connected,
            str(d.get("bdf", "")).removeprefix("0000:"),
        ]
        procs = (d.get("neuron_processes") or []) if wide else []
        if not wide:
            rows.append(base)
            continue
        if not procs:
            rows.append(base + ["", "", ""])
        for i, p in enumerate(procs):
            rows.append(
                (base if i == 0 else [""] * 5)
                + [str(p.get("pid", "")), str(p.get("command", "")), str(p.get("neuron_runtime_version", ""))]
            )
    widths = [max([len(h[0]), len(h[1])] + [len(r[i]) for r in rows]) + 2 for i, h in enumerate(heads)]
    rule = "+" + "+".join("-" * w for w in widths) + "+"
    lines = [rule]
    for part in (0, 1):
        lines.append("|" + "|".join(h[part].center(w) for h, w in zip(heads, widths)) + "|")
    lines.append(rule)
    for r in rows:
        lines.append("|" + "|".join(f" {c}".ljust(w) for c, w in zip(r, widths)) + "|")
    lines.append(rule)
    return "\n".join(lines)


def neuron_ls(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="neuron-ls", add_help=True)
    parser.add_argument("-j", "--json-output", action="store_true")
    parser.add_argument("-w", "--wide", action="store_true")
    parser.add_argument("-a", "--show-all-procs", action="store_true")
    parser.add_argument("-t", "--topology", action="store_true")
    args = parser.parse_args(argv)
    scenario = os.environ.get("FAKE_NEURON_LS", "").strip() or "trn2"
    if scenario in ("trn2", "busy"):
        devices: Any = [trn2_device(scenario == "busy")]
    elif scenario == "none":
        devices = []
    elif Path(scenario).is_file():
        text = Path(scenario).read_text(encoding="utf-8")
        if args.json_output:
            sys.stdout.write(text)
            return 0
        try:
            devices = json.loads(text)
        except ValueError:
            sys.stdout.write(text)
            return 0
    else:
        return fail(f"fake neuron-ls: FAKE_NEURON_LS={scenario!r} is neither trn2, busy, none nor a file", 2)
    if args.show_all_procs and isinstance(devices, list):
        me = {"pid": os.getpid(), "command": "neuron-ls " + " ".join(argv), "neuron_runtime_version": "NA"}
        devices = [dict(d, neuron_processes=[*(d.get("neuron_processes") or []), me]) for d in devices]
    if args.json_output:
        print(json.dumps(devices, indent=4))
        return 0
    if not isinstance(devices, list):
        print(json.dumps(devices, indent=4))
        return 0
    first = devices[0] if devices and isinstance(devices[0], dict) else {}
    if first:
        print(f"instance-type: {first.get('instance_type', '')}")
        print(f"instance-id: {first.get('instance_id', '')}")
        print(f"logical-neuroncore-config: {first.get('logical_neuroncore_config', '')}")
    print(ls_table([d for d in devices if isinstance(d, dict)], args.wide or args.show_all_procs))
    return 0


# --- neuron-explorer / neuron-profile capture --------------------------------------------------------------


def capture_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{prog} capture", allow_abbrev=False)
    p.add_argument("-n", "--neff", default="file.neff")
    p.add_argument("-s", "--session-file", default="profile.ntff")
    p.add_argument("--num-exec", type=int, default=1)
    p.add_argument("--profile-nth-exec", type=int, default=1)
    p.add_argument("-t", "--capture-type", default="profile", choices=("profile", "systrace"))
    p.add_argument("--exec-mode", default="sync", choices=("sync", "async", "async-wait"))
    for flag in (
        "--ignore-exec-errors",
        "--disable-profile",
        "--enable-dge-notifs",
        "--single-io",
        "--save-output",
        "--save-output-npy",
        "--check-output-determinism",
    ):
        p.add_argument(flag, action="store_true")
    p.add_argument("--single-io-threshold", type=int, default=0)
    p.add_argument("-r", "--collectives-workers-per-node", type=int)
    p.add_argument("--collectives-worker-count", type=int)
    p.add_argument("--collectives-worker-start-id", type=int, default=0)
    p.add_argument("-i", "--collectives-profile-id", default="all")
    p.add_argument("-m", "--multi-input")
    p.add_argument("inputs", nargs="*")
    return p


def _status_exit(name: str, code: int, text: str, when: str, detail: str | None = None) -> int:
    if detail:
        nrt.runtime_log("ERROR", nrt.CALLS[when], detail)
    nrt.runtime_log("ERROR", "nrt_infodump", f"Failure: {name} in {nrt.CALLS[when]}()")
    return fail(nrt.status_message(name, code, text))


def capture(prog: str, argv: list[str]) -> int:
    args = capture_parser(prog).parse_intermixed_args(argv)
    if args.capture_type == "systrace":
        return fail(f"fake {prog}: --capture-type systrace is not simulated", 2)
    if len(args.inputs) % 2:
        return fail(f"{prog} capture: inputs must be <NAME> <FILE_PATH> pairs, got {args.inputs}", 2)
    try:
        neff = nrt.read_neff_tensors(args.neff)
    except nrt.NeffUnreadable as exc:
        missing = not Path(args.neff).is_file()
        return _status_exit(
            "NRT_FAILURE" if missing else "NRT_INVALID", 1 if missing else 2, nrt.DEFAULT_TEXT["LOAD"], "LOAD", str(exc)
        )
    err = nrt.injected_error("LOAD")
    if err:
        return _status_exit(err.name, err.code, err.text, "LOAD")
    wanted = {t.name: t for t in neff.inputs}
    for name, path in zip(args.inputs[::2], args.inputs[1::2]):
        if name not in wanted:
            return _status_exit(
                "NRT_INVALID",
                2,
                nrt.DEFAULT_TEXT["EXEC"],
                "EXEC",
                f"Unknown input tensor name '{name}' for {args.neff}",
            )
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            return fail(f"{prog} capture: cannot read input {name} from {path}: {exc}")
        if array.nbytes != wanted[name].size:
            return _status_exit(
                "NRT_INVALID",
                2,
                nrt.DEFAULT_TEXT["EXEC"],
                "EXEC",
                f"Size mismatch for input tensor '{name}': got {array.nbytes} bytes, expected {wanted[name].size}",
            )
    nth = args.profile_nth_exec
    executions = max(args.num_exec, nth, 1)
    durations = nrt.durations_ms() or list(nrt.DEFAULT_DURATIONS_MS)
    failed = False
    for _ in range(executions):
        if nrt.crash_requested():
            os.kill(os.getpid(), signal.SIGSEGV)
        err = nrt.injected_error("EXEC")
        if err:
            nrt.runtime_log("ERROR", "nrt_infodump", f"Failure: {err.name} in nrt_execute()")
            print(nrt.status_message(err.name, err.code, err.text), file=sys.stderr)
            failed = True
            if not args.ignore_exec_errors:
                return 1
    profiled = [] if args.disable_profile or nth <= 0 else [k for k in range(1, executions + 1) if k % nth == 0]
    session = Path(args.session_file)
    collectives = args.collectives_workers_per_node is not None or args.collectives_worker_count is not None
    if collectives:
        per_node = args.collectives_workers_per_node or args.collectives_worker_count or 1
        ranks: list[int | None] = list(
            range(args.collectives_worker_start_id, args.collectives_worker_start_id + per_node)
        )
        if args.collectives_profile_id != "all":
            ranks = [int(args.collectives_profile_id)]
    else:
        ranks = [None]
    exec_suffix = nth != 1 or len(profiled) > 1
    for rank in ranks:
        for k in profiled:
            stem = session.stem + (f"_rank_{rank}" if rank is not None else "") + (f"_exec_{k}" if exec_suffix else "")
            path = session.with_name(stem + (session.suffix or ".ntff"))
            ms = durations[(k - 1) % len(durations)] + (1.0 if k == 1 else 0.0)
            nrt.write_ntff(
                path,
                neff=str(Path(args.neff).resolve()),
                uuid=neff.uuid,
                execution=k,
                total_time_s=ms / 1000.0,
                rank=rank,
                core=rank or 0,
            )
            print(f"Profile saved to {path}")
    if args.save_output_npy or args.save_output:
        produced = nrt.fake_outputs()
        for t in neff.outputs:
            raw = nrt.output_bytes(t, produced)
            if args.save_output:
                Path(t.name).write_bytes(raw)
            if args.save_output_npy:
                dtype = nrt.numpy_dtype(t) if t.dtype not in ("bfloat16", "unknown") else None
                if dtype is None:
                    return fail(
                        f"failed to save output {t.name} to file: unsupported type for npy output: "
                        f"{t.neff_dtype or t.dtype}"
                    )
                np.save(f"{t.name}.npy", np.frombuffer(raw, dtype=dtype).reshape(t.shape))
    return 1 if failed and not args.ignore_exec_errors else 0


# --- view --------------------------------------------------------------------------------------------------


def view_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{prog} view", allow_abbrev=False)
    p.add_argument("-n", "--neff-path")
    p.add_argument("-s", "--session-file")
    p.add_argument("-d", "--session-dir")
    p.add_argument("--output-format", default="db")
    p.add_argument("--output-file")
    p.add_argument("--port", type=int, default=3001)
    p.add_argument("--data-path")
    p.add_argument("-F", action="append", default=[])
    for flag in (
        "--disable-ui",
        "--ingest-only",
        "--force",
        "--terminology",
        "--enable-memory-tracker",
        "--ignore-nc-buf-usage",
        "--show-perfetto-flows",
    ):
        p.add_argument(flag, action="store_true")
    for opt in ("--db-endpoint", "--db-org", "--db-bucket", "--framework-source-root", "--ui-mode"):
        p.add_argument(opt)
    return p


def summary_overrides() -> dict[str, Any]:
    raw = os.environ.get("FAKE_PROFILE_SUMMARY", "").strip()
    if not raw:
        return {}
    text = raw if raw.startswith("{") else Path(raw).read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise nrt.FakeConfigError("FAKE_PROFILE_SUMMARY must be a JSON object of metrics")
    return data


def metrics(ntff: Path, neff_path: str | None) -> dict[str, Any]:
    meta = nrt.read_ntff(ntff) or {}
    total = float(meta.get("total_time", nrt.DEFAULT_DURATIONS_MS[0] / 1000.0))
    neff_file = neff_path
    read = written = 0
    if neff_file and Path(neff_file).is_file():
        try:
            model = nrt.read_neff_tensors(neff_file)
            read, written = sum(t.size for t in model.inputs), sum(t.size for t in model.outputs)
        except nrt.NeffUnreadable:
            pass
    out: dict[str, Any] = {
        "total_time": total,
        "total_active_time": round(total * 0.92, 9),
        "mfu_estimated_percent": 0.21,
        "hfu_estimated_percent": 0.27,
        "mbu_estimated_percent": 0.12,
        "mm_arithmetic_intensity": 42.0,
        "tensor_engine_active_time_percent": 0.35,
        "vector_engine_active_time_percent": 0.22,
        "scalar_engine_active_time_percent": 0.18,
        "gpsimd_engine_active_time_percent": 0.05,
        "dma_active_time_percent": 0.48,
        "hbm_read_bytes": read,
        "hbm_write_bytes": written,
        "event_count": 1200,
        "nc_idx": int(meta.get("nc_idx") or 0),
        "nd_idx": int(meta.get("nd_idx") or 0),
    }
    out.update(summary_overrides())
    return out


def _neff_of(ntff: Path, neff_path: str | None, session_dir: str | None) -> tuple[str, str | None]:
    """The NEFF an NTFF is processed with: the one named, else the one of its UUID in the folder; or why none."""
    meta = nrt.read_ntff(ntff) or {}
    uuid = meta.get("neff_uuid")
    if neff_path:
        if not Path(neff_path).is_file():
            return "", f"ERRO[0000] NEFF file {neff_path} does not exist"
        try:
            found = nrt.read_neff_tensors(neff_path).uuid
        except nrt.NeffUnreadable as exc:
            return "", f"ERRO[0000] cannot read NEFF {neff_path}: {exc}"
        if uuid and found != uuid:
            return "", (
                f"ERRO[0000] ERROR_PROCESS_INCOMPLETE: NEFF/NTFF UUID mismatch: {Path(neff_path).name} is {found}, "
                f"{ntff.name} was captured from {uuid}"
            )
        return neff_path, None
    folder = Path(session_dir) if session_dir else ntff.parent
    for candidate in sorted(folder.rglob("*.neff")):
        try:
            if nrt.read_neff_tensors(candidate).uuid == uuid:
                return str(candidate), None
        except nrt.NeffUnreadable:
            continue
    return "", (
        f"ERRO[0000] no NEFF found for {ntff.name} under {folder}: a device profile is processed with the NEFF it "
        "was captured from (neuron-explorer view -n file.neff -s profile.ntff, or both in the folder given to -d)"
    )


def view(prog: str, argv: list[str]) -> int:
    args = view_parser(prog).parse_args(argv)
    if os.environ.get("FAKE_PROFILE_VIEW_ERROR", "").strip():
        return fail(os.environ["FAKE_PROFILE_VIEW_ERROR"].strip())
    fmt = args.output_format.lower()
    if args.session_file:
        ntffs = [Path(args.session_file)]
        if not ntffs[0].is_file():
            return fail(f"{prog} view: session file {args.session_file} does not exist")
    elif args.session_dir:
        root = Path(args.session_dir)
        if not root.is_dir():
            return fail(f"{prog} view: session directory {args.session_dir} does not exist")
        ntffs = sorted(root.rglob("*.ntff"))
        if not ntffs:
            return fail(f"{prog} view: no .ntff profile found under {args.session_dir}")
    else:
        ntffs = []
    if prog == "neuron-profile" and fmt == "db" and not shutil.which("influx"):
        return fail(INFLUX_ERROR)
    if not ntffs:
        if fmt in ("summary-json", "summary-text", "json", "perfetto", "parquet"):
            return fail(f"{prog} view: --output-format {fmt} needs -s <ntff> or -d <dir>")
        print(f"View a list of profiles at http://localhost:{args.port}/")
        return 0
    pairs: dict[Path, str] = {}
    for ntff in ntffs:
        neff, problem = _neff_of(ntff, args.neff_path, args.session_dir)
        if problem:
            return fail(problem)
        pairs[ntff] = neff
    if fmt == "parquet":
        if not args.output_file:
            for ntff in ntffs:
                print(f"View profile at http://localhost:{args.port}/profile/{nrt.profile_id(ntff)}")
            return 0
        import profile_tables  # noqa: PLC0415 - pyarrow only when Parquet is asked for

        ntff = ntffs[0]
        written = profile_tables.write(
            args.output_file,
            profile_tables.tables(pairs[ntff], nrt.read_ntff(ntff) or {}, explorer_version=EXPLORER_VERSION),
        )
        print(f"Profile written to {args.output_file} ({len(written)} tables)")
        return 0
    nodes = {nrt.profile_id(p): metrics(p, pairs[p]) for p in ntffs}
    if fmt == "summary-json":
        text = json.dumps(nodes, indent=2)
    elif fmt == "summary-text":
        lines = []
        for pid, values in nodes.items():
            if len(nodes) > 1:
                lines.append(pid)
            width = max(len(k) for k in values)
            lines += [f"{k:<{width}}  {v}" for k, v in values.items()]
        text = "\n".join(lines)
    elif fmt == "json":
        import profile_tables  # noqa: PLC0415

        instructions = []
        for ntff in ntffs:
            for row in profile_tables.tables(pairs[ntff], nrt.read_ntff(ntff) or {}, explorer_version=EXPLORER_VERSION)[
                "Instruction"
            ]:
                instructions.append(
                    {k: row[k] for k in ("opcode", "engine", "start_ts", "end_ts", "duration_ns", "hlo_name", "layer")}
                )
        text = json.dumps({"summary": list(nodes.values()), "instruction": instructions}, indent=4)
    elif fmt == "perfetto":
        target = Path(args.output_file or "ntff.pftrace")
        target.write_bytes(b"fake perfetto trace\n")
        print(f"Perfetto trace written to {target}")
        return 0
    else:  # db / parquet / the UI
        for pid in nodes:
            print(
                f'Profile "{pid}" is ready to view'
                if args.ingest_only or args.disable_ui
                else f"View profile at http://localhost:{args.port}/profile/{pid}"
            )
        return 0
    if args.output_file:
        Path(args.output_file).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


def profiler(prog: str, argv: list[str]) -> int:
    if prog == "neuron-profile":
        print(DEPRECATION, file=sys.stderr)
    if argv[:1] in (["-v"], ["--version"]):
        print(f"{prog} {EXPLORER_VERSION}")
        return 0
    if not argv or argv[0] not in ("capture", "view"):
        return fail(f"usage: {prog} capture|view [options] (the fake implements only these)", 2)
    return capture(prog, argv[1:]) if argv[0] == "capture" else view(prog, argv[1:])


def main(argv: list[str]) -> int:
    global nrt, np
    tool, rest = argv[0], argv[1:]
    if tool == "neuron-ls":
        return neuron_ls(rest)
    import fake_libnrt as nrt
    import numpy as np

    try:
        return profiler(tool, rest)
    except nrt.FakeConfigError as exc:
        return fail(f"fake {tool}: {exc}", 2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

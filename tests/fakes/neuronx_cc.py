"""Fake neuronx-cc for tests: the real command line, log format, log file, exit codes and a NEFF from tests.neff_factory.

Run through ``bin/neuronx-cc``. Records are ``<ISO8601>Z <LEVEL> <pid> [<logger>]: <message>``; every
record goes to ``--logfile`` (default ``./log-neuron-cc.txt``), and those at or above ``--verbose``
(default warning) to stdout, where the default shows only progress dots and ``Compiler status``.
The scenario comes from ``FAKE_NEURONX_CC_SCENARIO`` (see tests/fakes/__init__.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.neff_factory import build_neff  # noqa: E402

VERSION = "2.21.33363.0+fake"
LEVELS = {"DEBUG": 10, "INFO": 20, "USER": 25, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}
PIPELINE = ("Frontend", "WalrusDriver", "BIRLinker", "Kelper", "SaveTemps")
CODENAMES = {"inf2": "sunda", "trn1": "sunda", "trn1n": "sunda", "trn2": "cayman", "trn3": "mariana"}


def parse(argv: list[str]) -> tuple[str, dict[str, str]]:
    """The model path and options; the right-most of competing options wins, as in the real compiler."""
    model, opts = "", {}
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok.startswith("-O") and len(tok) == 3:
            opts["--optlevel"] = tok[2]
        elif tok.startswith("--") and "=" in tok:
            key, value = tok.split("=", 1)
            opts[key] = value
        elif tok.startswith("-"):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if nxt is not None and not nxt.startswith("-"):
                opts[tok] = nxt
                i += 1
            else:
                opts[tok] = ""
        elif not model:
            model = tok
        i += 1
    return model, opts


class Log:
    def __init__(self, logfile: Path, verbosity: str):
        self.fh = logfile.open("a", encoding="utf-8")
        self.threshold = LEVELS.get(verbosity.upper(), LEVELS["WARNING"])
        self.pid = os.getpid()

    def __call__(self, level: str, logger: str, message: str, *, to_log: bool = True) -> None:
        ts = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        line = f"{ts} {level} {self.pid} [{logger}]: {message}"
        if to_log:
            self.fh.write(line + "\n")
            self.fh.flush()
        if LEVELS[level] >= self.threshold:
            print(line, flush=True)

    def dot(self) -> None:
        if self.threshold > LEVELS["INFO"]:
            print(".", end="", flush=True)


def run_passes(log: Log, passes: tuple[str, ...]) -> None:
    for name in passes:
        log("INFO", f"root/{name}", f"Running {name}")
        log("DEBUG", f"root/{name}", f"{name}: internal detail ✓ (only in the log file)")
        log.dot()
        log("USER", f"root/{name}/{name}", f"{name} finished after 0.0{len(name)} seconds")


def write_neff(model_dir: Path, output: Path, opts: dict[str, str], *, hashed: bool) -> Path:
    # torch_neuronx.trace hands over a folder (model/); TorchNeuron a file (module.mlir) with the
    # fake's metadata.json beside it.
    folder = model_dir if model_dir.is_dir() else model_dir.parent
    meta = json.loads((folder / "metadata.json").read_text())

    def specs(entries: list[dict]) -> dict:
        # The compiler downcasts int64 to int32.
        return {e["name"]: ("int32" if e["dtype"] == "int64" else e["dtype"], tuple(e["shape"])) for e in entries}

    target = opts.get("--target", "trn1")
    # The lowered graph's framework names (torch_neuronx with XLA_IR_DEBUG/XLA_HLO_DEBUG) go into debug_info/.
    extra = (
        {"debug_info/framework_ops.json": json.dumps(meta["framework_ops"]).encode()}
        if meta.get("framework_ops")
        else {}
    )
    if hashed:
        digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()[:16]
        output = output.with_name(f"{output.stem}.{digest}{output.suffix}")
    return build_neff(
        output,
        inputs=specs(meta["inputs"]),
        outputs=specs(meta["outputs"]),
        name=output.name,
        compiler_version=VERSION,
        target=CODENAMES.get(target, "sunda"),
        lnc_size=int(opts.get("--lnc", opts.get("--logical-nc-config", "1")) or 1),
        gzip="--enable-fast-loading-neuron-binaries" not in opts,
        extra_members=extra,
    )


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print(f"NeuronX Compiler version {VERSION}\n\nPython version {sys.version.split()[0]}")
        return 0
    if not argv or argv[0] != "compile":
        print("usage: neuronx-cc compile <model> --framework XLA --target T --output FILE [options]", file=sys.stderr)
        return 2
    model, opts = parse(argv[1:])
    scenario = os.environ.get("FAKE_NEURONX_CC_SCENARIO", "success")
    gate = os.environ.get("FAKE_NEURONX_CC_WAIT_FOR")
    deadline = time.monotonic() + 300
    while gate and not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.02)
    logfile = Path(opts.get("--logfile", "log-neuron-cc.txt"))
    logfile.parent.mkdir(parents=True, exist_ok=True)
    log = Log(logfile, opts.get("--verbose", "warning"))
    log("INFO", "root", f"NeuronX Compiler version {VERSION}")
    log("DEBUG", "root", "Command line: neuronx-cc " + " ".join(argv))
    log("INFO", "root", "Pipeline: " + " ".join(PIPELINE))
    model_dir = Path(model)
    output = Path(opts.get("--output", "file.neff"))

    if scenario == "compile-error":
        run_passes(log, PIPELINE[:1])
        log("INFO", "root/WalrusDriver", "Running WalrusDriver")
        log(
            "USER",
            "root/WalrusDriver",
            "[NLA001] Unhandled exception with message: tensor size must be more than 0, input1_set",
        )
        log(
            "USER",
            "root/WalrusDriver",
            "[NLA001] Please open a support ticket at https://github.com/aws-neuron/aws-neuron-sdk/issues/new",
        )
        log("ERROR", "neuronx-cc", "***************************************************************")
        log("ERROR", "neuronx-cc", " An Internal Compiler Error has occurred")
        # Some root causes reach stdout only, never the log file.
        print("Root cause (stdout only): operator 'aten::index_select' with an empty index", flush=True)
        print("\nCompiler status FAIL", flush=True)
        return 1
    if scenario == "unsupported-op":
        run_passes(log, PIPELINE[:1])
        # Only on stderr: TorchNeuron captures it and puts it in its exception, the log file never has it.
        print("[ERROR] [NCC_EVRF001] Operator sort is not supported by neuronx-cc on trn2", file=sys.stderr, flush=True)
        return 70
    if scenario == "oom":
        run_passes(log, PIPELINE[:2])
        log("INFO", "root/BIRLinker", "Running BIRLinker")
        os.kill(os.getpid(), signal.SIGKILL)
    if scenario == "slow":
        sleeper = "import time; time.sleep(300)"
        if os.environ.get("FAKE_NEURONX_CC_IGNORE_TERM"):
            # A compiler that ignores SIGTERM: only the SIGKILL after the grace period stops it.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            sleeper = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"
        child = subprocess.Popen([sys.executable, "-c", sleeper])
        pidfile = os.environ.get("FAKE_NEURONX_CC_PIDFILE")
        if pidfile:
            with open(pidfile, "a", encoding="utf-8") as fh:
                fh.write(f"compiler {os.getpid()}\ngrandchild {child.pid}\n")
        log("INFO", "root/Frontend", "Running Frontend")
        for _ in range(3000):
            log.dot()
            time.sleep(0.1)
        return 3
    if scenario == "split-output":
        print("stdout only: λ → ✓ naïve", flush=True)
        print("stderr only: warning from a helper ü", file=sys.stderr, flush=True)
        log("DEBUG", "root", "log file only: ∑ détail")
        log("WARNING", "root", "on stdout and in the log file")
    run_passes(log, PIPELINE)
    neff = write_neff(model_dir, output, opts, hashed=scenario == "hashed-name")
    log("INFO", "root", f"Wrote {neff}")
    if scenario == "split-output":
        # A last log line without a newline must still reach the job log.
        log.fh.write("2026-01-01T00:00:00Z INFO 1 [root]: unterminated last line")
        log.fh.flush()
    print("\nCompiler status PASS", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

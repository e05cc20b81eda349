"""Synthetic compiler output for the parser's property tests and benchmark (written here, not copied).

Every record form the parser knows, built from parts, plus the junk real files hold: progress dots,
Python prints, half lines, very long lines, bytes that are not UTF-8.
"""

from __future__ import annotations

import random

LEVELS = ("DEBUG", "INFO", "USER", "WARNING", "WARN", "ERROR", "CRITICAL")
PASSES = ("Frontend", "HLOToTensorizer", "Tensorizer", "BirCodeGenLoop", "WalrusDriver", "BIRLinker", "Kelper")
CODES = ("[NLA001]", "[XTP002]", "[TEN404]", "[F134]", "NCC_EOOM001", "NCC_EVRF007", "[ZZZ999]")
# Shapes that make a careless regular expression backtrack: long runs of what a record's parts look like.
PATHOLOGICAL_LINES = (
    "2024-01-01T00:00:00Z " + "1 " * 40_000,
    "2024-01-01T00:00:00Z ERROR 1 [" + "a" * 80_000,
    "[" * 80_000,
    "." * 50_000 + "2024-01-01T00:00:00Z ERROR 1 [x]: y",
    "NCC_" * 30_000,
    "03/04/2021 05:06:07 AM " + "[1] " * 20_000,
    "Running " + "x" * 80_000,
    "03/04/2021 05:06:07 AM ERROR 1 " + "2 " * 40_000,
    "F0000 00:00:1.5 " + "1 " * 40_000,
    "thread 'main' panicked at " + "x" * 80_000,
    "neuronx-cc " * 8_000 + "exited with status 1",
    "`neuronx-cc " * 8_000,
    "Finished pass " + "x" * 80_000,
)


def iso(rng: random.Random) -> str:
    return (
        f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d}Z"
    )


def message(rng: random.Random) -> str:
    kind = rng.randrange(9)
    name = rng.choice(PASSES)
    if kind == 0:
        return f"Running {name}"
    if kind == 1:
        return f"{name} finished after {rng.uniform(0, 300):.3f} seconds"
    if kind == 2:
        return f"{rng.choice(CODES)} the tensor of {rng.randint(1, 10**9)} bytes does not fit"
    if kind == 3:
        return "Compiler status " + rng.choice(("PASS", "FAIL", "ERROR"))
    if kind == 4:
        return "neuronx-cc failed with " + str(rng.choice((1, -9, -11, 70)))
    if kind == 5:
        return "*" * rng.randint(1, 70)
    if kind == 6:
        return f"Subcommand returned with exitcode={rng.choice((0, 1, 70))}"
    if kind == 7:
        return "Pipeline: " + " ".join(rng.sample(PASSES, 3))
    return "".join(rng.choice("abc xyz[]:|/.-_0123456789") for _ in range(rng.randint(0, 60)))


def record(rng: random.Random) -> str:
    form = rng.randrange(9)
    level, pid, msg = rng.choice(LEVELS), rng.randint(1, 99999), message(rng)
    if form == 0:
        return f"{iso(rng)} {level} {pid} [root/{rng.choice(PASSES)}]: {msg}"
    if form == 1:
        return f"{iso(rng)} {level} {pid} {rng.randint(1, 2**31)} [{rng.choice(PASSES)}]: {msg}"
    if form == 2:
        return f"2025-03-04 05:06:07.{rng.randint(0, 999999):06d}:  {pid}  {level} ||NEURON_CC_WRAPPER||: {msg}"
    if form == 3:
        return f"03/04/2021 05:06:07 {rng.choice(('AM', 'PM'))} {level} [{pid}] [job.{rng.choice(PASSES)}.0]: {msg}"
    if form == 4:
        return f"{iso(rng)} {msg}"
    if form == 5:  # milliseconds, a thread id and a module context
        return (
            f"{iso(rng)[:-1]}.{rng.randint(0, 999):03d}Z {level} {pid} {rng.randint(1, 2**47)} (nc0{rng.randint(0, 3)}/sg00) "
            f"[sg0000/{rng.choice(PASSES)}]: {msg}"
        )
    if form == 6:
        return f"03/04/2021 05:06:07 PM {level} {pid} {rng.randint(1, 2**31)} [{rng.choice(PASSES)}]: {msg}"
    if form == 7:  # glog/absl as XLA prints it
        return f"{rng.choice('IWEF')}0000 00:00:1741083072.{rng.randint(0, 999999):06d} {pid} debug_macros.h:20] {msg}"
    return f"{level}:Neuron:{msg}"


def junk(rng: random.Random) -> str:
    kind = rng.randrange(10)
    if kind == 0:
        return "." * rng.randint(1, 200)
    if kind == 1:
        return "Traceback (most recent call last):"
    if kind == 2:
        return f'  File "/home/user/x.py", line {rng.randint(1, 999)}, in f'
    if kind == 3:
        return "RuntimeError: " + message(rng)
    if kind == 4:
        return "x" * rng.randint(1000, 50_000)  # a very long line
    if kind == 5:
        return "." * rng.randint(1, 5) + record(rng)  # glued onto progress dots
    if kind == 6:  # a harness's Rust panic; its payload is whatever line comes next
        return f"thread 'main' panicked at src/compile.rs:{rng.randint(1, 999)}:{rng.randint(1, 80)}:"
    if kind == 7:
        return rng.choice(
            (
                "*** Begin stack trace ***",
                "\ttsl::CurrentStackTrace()",
                "*** End stack trace ***",
                "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
            )
        )
    if kind == 8:  # a pass named for errors, in the timestamp-only form
        return f"{iso(rng)} " + rng.choice(("Running error_injector", "error_injector finished after 0.001 seconds"))
    return "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(0, 40)))


def soup(rng: random.Random, n: int) -> bytes:
    """``n`` lines of records and junk, with some bytes that are not UTF-8."""
    out = []
    for _ in range(n):
        line = (record(rng) if rng.random() < 0.7 else junk(rng)).encode("utf-8")
        if rng.random() < 0.05:
            cut = rng.randint(0, len(line))
            line = line[:cut] + bytes([rng.choice((0x80, 0xC3, 0xFF, 0xFE, 0xED))]) + line[cut:]
        out.append(line)
    return b"\n".join(out) + b"\n"


def big_compile_log(lines: int, seed: int = 7) -> bytes:
    """A compile at debug verbosity: mostly DEBUG records, a pass every few hundred lines, a failure at the end."""
    rng = random.Random(seed)
    out = [
        "2025-06-01T10:00:00Z INFO 4242 [root]: NeuronX Compiler version 2.21.1.0+abc",
        "2025-06-01T10:00:00Z INFO 4242 [root]: Pipeline: " + " ".join(PASSES),
    ]
    current = PASSES[0]
    while len(out) < lines - 6:
        r = rng.random()
        if r < 0.003:
            out.append(
                f"2025-06-01T10:{rng.randint(0, 59):02d}:00Z INFO 4242 [root/{current}]: "
                f"{current} finished after {rng.uniform(0, 30):.3f} seconds"
            )
            current = rng.choice(PASSES)
            out.append(f"2025-06-01T10:{rng.randint(0, 59):02d}:00Z INFO 4242 [root/{current}]: Running {current}")
        elif r < 0.01:
            out.append(
                f"2025-06-01T10:{rng.randint(0, 59):02d}:01Z WARNING 4242 [root/{current}]: "
                f"instruction {rng.randint(0, 10**6)} spills {rng.randint(1, 4096)} bytes to HBM"
            )
        else:
            out.append(
                f"2025-06-01T10:{rng.randint(0, 59):02d}:02Z DEBUG 4242 [sg0000/{current}/Sched]: "
                f"scheduled instruction {rng.randint(0, 10**7)} on queue {rng.randint(0, 15)} "
                f"with {rng.randint(1, 512)} partitions of bf16[{rng.randint(1, 4096)}]"
            )
    out += [
        "2025-06-01T11:00:00Z ERROR 4242 [root/Tensorizer]: [NCC_EOOM001] the activations need 31.2 GiB of "
        "HBM; the core has 24 GiB",
        "2025-06-01T11:00:00Z ERROR 4242 [neuronx-cc]: ****************************************",
        "2025-06-01T11:00:00Z ERROR 4242 [neuronx-cc]:  An Internal Compiler Error has occurred",
        ".",
        "Compiler status FAIL",
    ]
    return ("\n".join(out[:lines]) + "\n").encode()

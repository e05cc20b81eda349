"""How a compile ended, as the output says it, and what the number means.

The compiler's docs only promise 0 for success and non-zero for an error; the rest comes from how
the callers report it: torch_neuronx raises ``RuntimeError("neuronx-cc failed with N")`` (negative N
is the signal that killed it), the XLA wrapper logs ``Subcommand returned with exitcode=N``,
``subprocess`` says ``returned non-zero exit status N`` or ``died with <Signals.SIGKILL: 9>``, newer
torch_neuronx names a crash (``The neuronx-cc (neuron compiler) crashed (SEGFAULT)``) and a shell
prints ``Killed`` or ``Segmentation fault (core dumped)``. TorchNeuron (torch.compile) raises ``StableHLO to
NEFF compilation failed ...: Command failed (neuronx-cc compilation) with exit code N: <stderr>``. A harness
of another language quotes the command it ran and how it ended: a Rust panic's ``neuronx-cc compile ...
exited with status 70``, or Rust's own ``exit status: 70`` / ``signal: 9 (SIGKILL)``; those count only on a
line naming the compiler (``exit status: 1`` alone could be any program's).
"""

from __future__ import annotations

import re

MEANINGS = {
    0: "success",
    1: "the compiler reported an error",
    2: "the compiler rejected its command line (a usage error)",
    70: "an internal compiler step failed (EX_SOFTWARE; the Neuron SDK reports it from the HLO verifier): "
    "look for unsupported operations in the model",
    124: "timed out (killed by `timeout`)",
    -2: "interrupted (SIGINT, Ctrl-C)",
    -4: "illegal instruction (SIGILL): a crash, often a binary built for another CPU",
    -6: "aborted (SIGABRT), usually a failed internal assertion",
    -7: "bus error (SIGBUS): a crash, sometimes a full /dev/shm or disk",
    -8: "floating-point exception (SIGFPE): a crash",
    -9: "killed by SIGKILL, most often by the out-of-memory killer (the host ran out of memory)",
    -11: "segmentation fault (SIGSEGV): a crash",
    -15: "terminated (SIGTERM)",
}
SIGNALS = {"SIGINT": 2, "SIGILL": 4, "SIGABRT": 6, "SIGBUS": 7, "SIGFPE": 8, "SIGKILL": 9, "SIGSEGV": 11, "SIGTERM": 15}
_CRASH_WORDS = {
    "SEGFAULT": -11,
    "SEGMENTATION FAULT": -11,
    "SIGSEGV": -11,
    "SIG_SEGV": -11,
    "ABORT": -6,
    "ABORTED": -6,
    "SIGABRT": -6,
    "SIG_ABORT": -6,
    "SIG_ABRT": -6,
    "KILLED": -9,
    "SIGKILL": -9,
    "SIG_KILL": -9,
    "OOM": -9,
    "BUS ERROR": -7,
    "SIGBUS": -7,
    "FATAL PYTHON ERROR: SEGMENTATION FAULT": -11,
}

_NUMBERED_RE = re.compile(
    r"neuronx?-cc failed with (?P<a>-?\d+)|returned with exitcode=(?P<b>-?\d+)"
    r"|returned non-zero exit status (?P<c>-?\d+)|died with <Signals\.(?P<sig>SIG[A-Z]+): \d+>"
    r"|neuronx?-cc (?:exited|terminated) with (?:exit )?(?:code|status) (?P<d>-?\d+)"
    r"|Compile command returned: (?P<e>-?\d+)"
    r"|Command failed \(neuronx-cc compilation\) with exit code (?P<f>-?\d+)"
)
_CRASH_RE = re.compile(
    r"neuronx?-cc(?: \([^)]*\))?(?: process)? (?:crashed|was killed|aborted|terminated) "
    r"\((?P<word>[A-Za-z_ ]+)\)",
    re.IGNORECASE,
)
_FORCIBLY_RE = re.compile(r"neuronx?-cc was forcibly killed")  # [F137]: the out-of-memory killer's work
_NAMES_COMPILER_RE = re.compile(r"neuronx?-cc\b")
_NAMED_RE = re.compile(
    r"exited with (?:exit )?(?:status|code):? (?P<a>-?\d+)|\bexit (?:status|code): (?P<b>-?\d+)"
    r"|\bsignal: (?P<sig>\d+)"
)
_SHELL_RE = re.compile(
    r"^(?:Killed|Segmentation fault|Aborted|Bus error|Fatal Python error: Segmentation fault)"
    r"(?: \(core dumped\))?\s*$"
)


def meaning(code: int | None) -> str | None:
    """What an exit status means, in words."""
    if code is None:
        return None
    if code in MEANINGS:
        return MEANINGS[code]
    if code > 128 and -(code - 128) in MEANINGS:
        # A shell reports a process killed by signal N as 128+N.
        return f"{MEANINGS[-(code - 128)]} (the shell's {code} = 128 + signal {code - 128})"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exited with {code}"


def exit_status_in(text: str) -> int | None:
    """The exit status ``text`` states, or None."""
    # Cheap test before the regexes (this runs on every line): every form above holds one of these.
    low = text.lower()
    if not (
        "with" in low
        or "exit" in low
        or "crash" in low
        or "kill" in low
        or "terminat" in low
        or "segmentation" in low
        or "abort" in low
        or "bus error" in low
        or "returned:" in low
        or "signal:" in low
    ):
        return None
    m = _NUMBERED_RE.search(text)
    if m:
        if m.group("sig"):
            return -SIGNALS.get(m.group("sig"), 0) or None
        return int(
            next(
                g
                for g in (m.group("a"), m.group("b"), m.group("c"), m.group("d"), m.group("e"), m.group("f"))
                if g is not None
            )
        )
    m = _CRASH_RE.search(text)
    if m:
        return _CRASH_WORDS.get(m.group("word").strip().upper())
    if _FORCIBLY_RE.search(text):
        return -9
    m = _SHELL_RE.match(text.strip())
    if m:
        return _CRASH_WORDS.get(text.strip().split(" (")[0].upper())
    m = _NAMED_RE.search(text)
    if m and _NAMES_COMPILER_RE.search(text):
        return -int(m.group("sig")) if m.group("sig") else int(m.group("a") or m.group("b"))
    return None


def reported_by_caller(text: str) -> bool:
    """True when ``text`` is a caller stating how a process ended (its exit status, the signal or crash
    that ended it, a shell's ``Killed``: the shell reports on the program the user ran, the harness when
    there is one), not the compiler's own words (``[F137] ... was forcibly killed``, Python's fatal-error
    handler in the compiler's process)."""
    if exit_status_in(text) is None:
        return False
    return (
        _NUMBERED_RE.search(text) is not None
        or _CRASH_RE.search(text) is not None
        or (_SHELL_RE.match(text.strip()) is not None and not text.lstrip().startswith("Fatal Python"))
        or (_NAMED_RE.search(text) is not None and _NAMES_COMPILER_RE.search(text) is not None)
    )

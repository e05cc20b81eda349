"""Neuron runtime errors by their number: ``NRT Error NAME(code): text`` explained with the usual causes.

Codes and names from the runtime's ``nrt_status`` documentation; trust the number, not the name
(one page of the docs contradicts the header). The causes are the ones users hit most.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RE = re.compile(r"NRT(?: Error)?[ :]*\s*(?P<name>NRT_[A-Z_]+|[A-Z_]+)\s*\((?P<code>\d+)\)\s*:?\s*(?P<text>.*)", re.S)
# Runtime stderr lines: "2024-Jul-30 14:22:31.244396 65191:69012 ERROR NRT:nrt_infodump Failure: NRT_RESOURCE in nrt_load()"
_LOG_RE = re.compile(r"ERROR\s+NRT:\S+\s+(?P<text>.*?(?P<name>NRT_[A-Z_]+).*)$", re.M)

CODES: dict[int, tuple[str, str]] = {
    1: ("NRT_FAILURE", "The runtime failed without a more precise reason; its stderr lines before this say more."),
    2: (
        "NRT_INVALID",
        "The NEFF or what was fed to it is invalid: an input name or size that does not match the "
        "NEFF, a damaged NEFF, or a NEFF compiled for another target.",
    ),
    3: ("NRT_INVALID_HANDLE", "A model or tensor handle the runtime no longer knows (already unloaded or freed)."),
    4: (
        "NRT_RESOURCE",
        "Not enough NeuronCores or device memory: another process may hold the cores "
        "(neuron-ls names it), or the NEFF's LNC does not match NEURON_LOGICAL_NC_CONFIG.",
    ),
    5: ("NRT_TIMEOUT", "The execution did not finish in time: a hung collective or an overloaded device."),
    6: ("NRT_HW_ERROR", "The device reported a hardware error; the instance may need a reboot or replacement."),
    7: ("NRT_QUEUE_FULL", "Too many executions queued at once on the NeuronCore."),
    9: (
        "NRT_LOAD_NOT_ENOUGH_NC",
        "The NEFF needs more NeuronCores than are visible: check NEURON_RT_VISIBLE_CORES "
        "and the NEFF's LNC against NEURON_LOGICAL_NC_CONFIG.",
    ),
    10: (
        "NRT_UNSUPPORTED_NEFF_VERSION",
        "The runtime is older than the compiler that made the NEFF: update "
        "aws-neuronx-runtime-lib (a trn1 NEFF on trn2 also needs "
        "NEURON_RT_ALLOW_LEGACY_NEFF=1).",
    ),
    11: ("NRT_FAIL_HOST_MEM_ALLOC", "The host ran out of memory allocating the runtime's buffers."),
    1002: ("NRT_EXEC_BAD_INPUT", "An input is not what the NEFF expects (name, size or dtype)."),
    1003: ("NRT_EXEC_COMPLETED_WITH_NUM_ERR", "The execution finished but produced NaN or Inf values."),
    1004: ("NRT_EXEC_COMPLETED_WITH_ERR", "The execution finished with an error; the outputs cannot be trusted."),
    1005: (
        "NRT_EXEC_NC_BUSY",
        "Another process holds the NeuronCore: neuron-ls names it; stop it or pick another core (--core).",
    ),
    1006: ("NRT_EXEC_OOB", "An out-of-bounds access during execution (often an index input beyond its table)."),
}


@dataclass(frozen=True)
class NrtError:
    code: int | None
    name: str | None
    text: str
    explanation: str

    def sentence(self) -> str:
        where = f"{self.name}({self.code})" if self.code is not None else (self.name or "runtime error")
        return f"NRT Error {where}: {self.text}".rstrip(": ") + f" — {self.explanation}"


def explain(message: str) -> NrtError | None:
    """The runtime error a message carries, explained; None when it carries none."""
    m = _RE.search(message)
    if m:
        code = int(m.group("code"))
        known = CODES.get(code)
        explanation = known[1] if known else f"Runtime status {code} is not in the documented table."
        text = m.group("text").strip().splitlines()[0] if m.group("text").strip() else ""
        return NrtError(code, m.group("name"), text, explanation)
    m = _LOG_RE.search(message)
    if m:
        by_name = {name: (code, why) for code, (name, why) in CODES.items()}
        named, why = by_name.get(m.group("name"), (None, "See the runtime's log lines around it."))
        return NrtError(named, m.group("name"), m.group("text").strip(), why)
    return None

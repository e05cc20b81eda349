"""Before a NEFF is loaded: does what will be fed match it, and does this host match what it was compiled for?

Every problem is one sentence naming the input, the field or the setting. Nothing here runs the
NEFF: it reads the NEFF with the workbench's own reader and the host with ``neuron-ls -j``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

from neffbench import targets
from neffbench.runs.arrays import Arrays
from neffbench.toolchain.instance import instance_family

LNC_ENV = "NEURON_LOGICAL_NC_CONFIG"


@dataclass
class HostFacts:
    family: str | None = None  # "trn2", from the instance type
    devices: list[dict[str, Any]] = field(default_factory=list)  # neuron-ls -j
    neuron_ls: str | None = None  # why there is no device list, when there is none

    @property
    def lnc(self) -> int | None:
        """The logical NeuronCore config the runtime will use."""
        if os.environ.get(LNC_ENV, "").isdigit():
            return int(os.environ[LNC_ENV])
        for device in self.devices:
            if isinstance(device.get("logical_neuroncore_config"), int):
                return device["logical_neuroncore_config"]
        return None

    def holders(self) -> list[dict[str, Any]]:
        """Processes neuron-ls says hold NeuronCores (pid, command)."""
        return [p for d in self.devices for p in d.get("neuron_processes") or []]


def host_facts(timeout: float = 10.0) -> HostFacts:
    facts = HostFacts(family=instance_family())
    tool = shutil.which("neuron-ls")
    if tool is None:
        facts.neuron_ls = "neuron-ls is not on PATH"
        return facts
    try:
        # A short query in the run child's own process group (Cancel and the lifeline reach it there).
        proc = subprocess.run([tool, "-j"], capture_output=True, text=True, timeout=timeout, check=False)
        data = json.loads(proc.stdout) if proc.stdout.strip().startswith("[") else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        facts.neuron_ls = f"neuron-ls -j failed: {exc}"
        return facts
    if not isinstance(data, list):
        first = (proc.stdout or proc.stderr).strip().splitlines()[:1]
        facts.neuron_ls = f"neuron-ls -j listed no devices ({first[0] if first else f'exit {proc.returncode}'})"
        return facts
    facts.devices = [d for d in data if isinstance(d, dict)]
    if facts.family is None:  # neuron-ls names the instance type too ("trn2.3xlarge")
        for device in facts.devices:
            family = str(device.get("instance_type") or "").split(".")[0].lower()
            if family in targets.FAMILIES:
                facts.family = family
                break
    return facts


def check_io(neff: Any, feeds: Arrays) -> list[str]:
    """One sentence per mismatch between the NEFF's inputs and the arrays that will be fed."""
    problems = []
    wanted = {t.name: t for t in neff.inputs}
    names = feeds.neff_names
    for name in names:
        if name not in wanted:
            problems.append(f"'{name}' is not an input of the NEFF (its inputs: {', '.join(wanted) or 'none'}).")
    for name, t in wanted.items():
        if name not in names:
            shown = "?" if t.shape is None else list(t.shape)
            problems.append(f"the NEFF takes {name} ({t.dtype} {shown}), but no array is given for it.")
            continue
        dtype, shape = feeds.dtypes[name], feeds.shape(name)
        if t.dtype is not None and dtype != t.dtype:
            problems.append(f"input {name} is {t.dtype} in the NEFF, but the array given is {dtype}.")
        if t.shape is not None and tuple(t.shape) != shape:
            problems.append(
                f"input {name} has shape {list(t.shape)} in the NEFF, but the array given has {list(shape)}."
            )
    return problems


def downcast_int64(neff: Any, feeds: Arrays) -> tuple[list[str], list[str]]:
    """int64 arrays where the NEFF takes int32 (neuronx-cc downcasts int64 inputs), converted when every
    value fits. Returns (notes, problems): what was converted, and what could not be."""
    import numpy as np

    wanted = {t.name: t.dtype for t in neff.inputs}
    notes, problems = [], []
    for name in feeds.neff_names:
        if feeds.dtypes.get(name) != "int64" or wanted.get(name) != "int32":
            continue
        array = feeds.arrays[name]
        info = np.iinfo(np.int32)
        if array.size and (array.min() < info.min or array.max() > info.max):
            problems.append(
                f"input {name} is int64 with values beyond int32 ({array.min()}..{array.max()}), but the "
                "NEFF takes int32 (neuronx-cc downcast it)."
            )
            continue
        feeds.arrays[name] = array.astype(np.int32)
        feeds.dtypes[name] = "int32"
        notes.append(f"input {name}: int64 values fed as int32, which the NEFF takes (neuronx-cc downcasts int64).")
    return notes, problems


def check_host(neff: Any, host: HostFacts) -> list[str]:
    """The NEFF's target and LNC against this host; empty when they fit or cannot be told."""
    problems = []
    target = neff.target
    if host.family and target:
        # Only a codename a real NEFF has shown refuses a NEFF: a guessed one must not block a run.
        expected = targets.confirmed_codename(host.family)
        if expected and target != expected:
            hint = (
                f" A {targets.codename_label(target)} NEFF on trn2 needs NEURON_RT_ALLOW_LEGACY_NEFF=1."
                if target == "sunda" and host.family == "trn2"
                else " Compile it again with --target " + host.family + "."
            )
            problems.append(
                f"the NEFF was compiled for '{target}' but this host is {host.family} ('{expected}').{hint}"
            )
    lnc = getattr(neff.header, "lnc_size", None)
    if lnc and host.lnc and lnc != host.lnc:
        # Inf2 and Trn1 alike take no --lnc (neuronx-cc documents it for Trn2 and later): there, compile without it.
        again = f"--lnc {host.lnc}" if not host.family or targets.supports_lnc(host.family) else "no --lnc"
        problems.append(
            f"the NEFF was compiled for LNC {lnc} but the runtime will use LNC {host.lnc} "
            f"({LNC_ENV} or neuron-ls); set {LNC_ENV}={lnc} or compile with {again}."
        )
    return problems

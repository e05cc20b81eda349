"""How the worker's events change a job's record; the runner applies them and rewrites ``job.json``."""

from __future__ import annotations

from typing import Any

from neffbench.backends import registry as backends


def apply_event(rec: dict[str, Any], ev: dict[str, Any]) -> bool:
    """Apply one event (other than ``stage`` and ``outcome``, which the runner handles); True when
    the change is worth writing ``job.json`` at once."""
    kind = ev["type"]
    if kind == "backend":
        rec["backend"] = ev.get("backend")
        rec["backend_reason"] = ev.get("reason")
        rec["makes_neff"] = bool(ev.get("makes_neff"))
        rec["cpu_backend"] = ev.get("cpu_backend")
        rec["cpu_backend_reason"] = ev.get("cpu_backend_reason")
        backend = backends.recorded(rec["backend"])
        if backend is not None and backend.neff_note:
            rec["neff_note"] = backend.neff_note
        if backend is not None and backend.compiler_note:
            rec["compiler_command"]["note"] = backend.compiler_note
        return True
    if kind == "versions":
        rec["versions"].update({k: v for k, v in ev.items() if k != "type"})
    elif kind == "compiler_command":
        rec["compiler_command"]["requested"] = ev.get("requested")
        rec["compiler_command"]["requested_args"] = ev.get("requested_args")
        for key in ("env", "added"):  # torchneuron: the variables it was given, the flags it adds itself
            if key in ev:
                rec["compiler_command"][key] = ev[key]
    elif kind == "torchneuron":
        rec["torchneuron"] = {k: v for k, v in ev.items() if k != "type"}
        return True
    elif kind == "metric":
        rec["metrics"][ev.get("name", "?")] = ev.get("value")
    elif kind == "warning":
        rec["warnings"].append(ev.get("message"))
    elif kind == "numerics":
        rec["numerics"] = {k: v for k, v in ev.items() if k != "type"}
    elif kind == "weights":
        rec["weights"] = {k: v for k, v in ev.items() if k != "type"}
        return True
    elif kind == "taps":  # a compare's tapped job: what it taps, in execution order
        rec["taps"] = {k: v for k, v in ev.items() if k != "type"}
        return True
    elif kind == "kernel_info":
        rec["kernel_info"] = ev.get("info")
        return True
    elif kind == "state":  # a module with state: which tensors, and how the backend kept them
        rec["state"] = {k: v for k, v in ev.items() if k != "type"}
        return True
    elif kind == "analyze":
        rec["analyze"] = {k: v for k, v in ev.items() if k != "type"}
        return True
    elif kind == "preflight":
        rec["preflight"] = {k: v for k, v in ev.items() if k != "type"}
        return True
    return False

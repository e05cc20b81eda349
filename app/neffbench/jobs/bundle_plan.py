"""What a bug-report bundle takes from a job directory, and what it leaves out (too big, a link out) and why."""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from neffbench.jobs.summary import human_bytes
from neffbench.views.job import JobView

MIB = 1 << 20
DEFAULT_LIMIT = 50 * MIB
CORE_FILES = ("spec.toml", "job.json", "job.log", "events.jsonl", "reproduce.py")
WEIGHTS = ("model.pt", "inputs.npz", "reference.npz")
COMPILER, MODEL = "compiler", "compiler/model"
COMPILER_FILES = ("compiler/command.txt", "compiler/log-neuron-cc.txt")
# A torchneuron job: TorchNeuron's own log, and the compiler's input it kept (FX graph, StableHLO) in debug/.
TORCHNEURON_LOG, DEBUG = "torchneuron.log", "debug"


def limit_text(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit % MIB == 0 else human_bytes(limit)


def suggest_mib(size: int) -> int:
    """A round --max-size (MiB) that takes ``size``: 2.1 GiB suggests 3000."""
    mib = max(1, math.ceil(size / MIB))
    step = 10 ** (len(str(mib)) - 1)
    return math.ceil(mib / step) * step


Picked = tuple[str, Path, os.stat_result]  # path in the job, real path, its stat when checked


@dataclass
class Plan:
    files: list[Picked] = field(default_factory=list)
    left_out: list[tuple[str, int, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)  # sizes of compiler files that are not picked


def _kind(rel: str, neffs: set[str]) -> str | None:
    if rel in CORE_FILES or rel in WEIGHTS:
        return rel
    if rel.startswith(MODEL + "/"):
        return "model"
    if rel.endswith(".neff") and (rel.startswith(COMPILER + "/") or rel in neffs):
        return "neff"
    if (rel.startswith(COMPILER + "/") and rel.endswith((".txt", ".log"))) or rel == TORCHNEURON_LOG:
        return "log"
    if rel.startswith(DEBUG + "/") and rel.endswith((".fx.txt", ".mlir")):
        return "model"
    return None


def _check(root: Path, path: Path) -> tuple[Path | None, os.stat_result | None, str | None]:
    """The file's real path and stat when it is a regular file inside the job, else why it is left out."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None, None, "a broken link" if path.is_symlink() else "it vanished while bundling"
    if not real.is_relative_to(root):
        return None, None, "a link to a file outside the job directory (not followed)"
    try:
        st = real.stat()
    except OSError as exc:
        return None, None, f"cannot be read: {exc.strerror or exc}"
    return (real, st, None) if stat.S_ISREG(st.st_mode) else (None, None, "not a regular file")


def _walk(root: Path, plan: Plan, neffs: set[str]) -> tuple[dict[str, list[Picked]], set[str]]:
    """The candidate files by kind, and every path looked at (for what is missing)."""
    picked: dict[str, list[Picked]] = {}
    seen: set[str] = set()
    tops = {COMPILER, DEBUG} | {n.split("/")[0] for n in neffs}
    for dirpath, dirnames, filenames in os.walk(root):  # os.walk never descends a link to a folder
        base = Path(dirpath)
        if base == root:
            dirnames[:] = [d for d in dirnames if d in tops]  # runs/, reproduce-out/ ... hold nothing we bundle
        dirnames.sort()
        for d in dirnames:
            if (base / d).is_symlink():
                rel = (base / d).relative_to(root).as_posix()
                plan.left_out.append((rel + "/", 0, "a link to a folder (not followed)"))
                seen.add(rel)
        for name in sorted(filenames):
            path = base / name
            rel = path.relative_to(root).as_posix()
            kind = _kind(rel, neffs)
            if kind is None:
                if rel.startswith(COMPILER + "/"):
                    try:
                        plan.skipped.append(path.lstat().st_size)
                    except OSError:
                        pass
                continue
            seen.add(rel)
            real, st, problem = _check(root, path)
            if real is None or st is None:
                plan.left_out.append((rel, 0, problem or "cannot be read"))
            else:
                picked.setdefault(kind, []).append((rel, real, st))
    return picked, seen


def make_plan(root: Path, job: JobView, limit: int, hint: Callable[[int], str]) -> Plan:
    """What to bundle from the (resolved) job directory ``root``; ``hint(mib)`` tells how to include a file
    left out for its size."""
    plan = Plan()
    neffs = {n["path"] for n in job.neffs if isinstance(n.get("path"), str)}
    picked, seen = _walk(root, plan, neffs)
    over = f"over the {limit_text(limit)} limit"
    order = {name: i for i, name in enumerate(COMPILER_FILES)}
    logs = sorted(picked.get("log", []), key=lambda f: (order.get(f[0], len(order)), f[0]))
    plan.files += [f for name in CORE_FILES for f in picked.get(name, [])] + logs
    model = sorted(picked.get("model", []), key=lambda f: (f[2].st_size, f[0]))
    total, used = sum(f[2].st_size for f in model), 0
    for f in model:  # the whole input when it fits; else the small files (metadata) that fit
        if total <= limit or used + f[2].st_size <= limit:
            plan.files.append(f)
            used += f[2].st_size
        else:
            why = over if f[2].st_size > limit else f"{MODEL}/ totals {human_bytes(total)}, {over}"
            plan.left_out.append((f[0], f[2].st_size, f"{why}; {hint(suggest_mib(total))}"))
    alone = [f for name in WEIGHTS for f in picked.get(name, [])] + sorted(picked.get("neff", []), key=lambda f: f[0])
    for f in alone:
        if f[2].st_size <= limit:
            plan.files.append(f)
        else:
            plan.left_out.append((f[0], f[2].st_size, f"{over}; {hint(suggest_mib(f[2].st_size))}"))
    expected = list(CORE_FILES)
    backend = job.backend_class
    if (
        backend is not None and not backend.keeps_model_pt
    ):  # no command.txt, model/ or model.pt: TorchNeuron keeps neither
        plan.missing = [e for e in (*expected, COMPILER_FILES[1], TORCHNEURON_LOG, *WEIGHTS[1:]) if e not in seen]
        return plan
    if backend is None or backend.runs_compiler:  # a cpu-check job runs no compiler and has no compiler/
        if not os.path.lexists(root / COMPILER):
            expected.append(COMPILER + "/")
        elif COMPILER not in seen:  # a real folder (a link to one is already reported as left out)
            expected += COMPILER_FILES
            if not any(p.startswith(MODEL + "/") for p in seen):
                expected.append(MODEL + "/")
    plan.missing = [e for e in expected + list(WEIGHTS) if e not in seen]
    return plan

"""The generated members of a bug-report bundle: README.txt, versions.json and compiler-command.txt."""

from __future__ import annotations

import json
import platform
import shlex
from pathlib import Path
from typing import Any

from neffbench.jobs import bundle_sources
from neffbench.jobs.summary import first_error_lines, human_bytes
from neffbench.views.job import JobView

TEXT_SUFFIXES = (".toml", ".json", ".jsonl", ".log", ".txt", ".py")
COMMAND_NAME = "compiler-command.txt"
VERSIONS_NAME = "versions.json"
README_NAME = "README.txt"

_ABOUT = {
    "spec.toml": "the spec the job compiled (`neffbench compile spec.toml` runs it again)",
    "job.json": "the job record: outcome, stages, compiler command, first error, versions",
    "job.log": "the merged log of the job as it streamed",
    "events.jsonl": "every event the worker reported, one JSON object a line",
    "reproduce.py": "rebuilds the module and the NEFF with torch and torch-neuronx only: python reproduce.py OUT_DIR",
    "model.pt": "the traced module",
    "inputs.npz": "the inputs the job fed the module",
    "reference.npz": "the module's eager (CPU) outputs for those inputs",
    "compiler/command.txt": "the neuronx-cc command line as the compiler wrote it",
    "compiler/log-neuron-cc.txt": "the compiler's own log",
    "torchneuron.log": "TorchNeuron's own log (NEFF cache misses and stores, executions)",
    COMMAND_NAME: "the compiler command from job.json: what ran and what neffbench asked for",
    VERSIONS_NAME: "versions of the machine that ran the job and of the one that made this bundle",
}


def versions_doc(job: JobView) -> dict[str, Any]:
    """What the job recorded about its machine, beside what this machine is; the two are kept apart."""
    from neffbench import __version__

    recorded: dict[str, Any] = {
        "versions": job.versions,
        "host": job.host,
        "backend": job.backend,
        "backend_reason": job.backend_reason,
    }
    if job.compiler.get("version_from_log"):
        recorded["neuronx_cc_from_log"] = job.compiler["version_from_log"]
    return {
        "job": {"about": "the machine that ran the compile, as job.json recorded it", **recorded},
        "bundle": {
            "about": "the machine that made this bundle (neffbench bundle)",
            "neffbench": __version__,
            "python": platform.python_version(),
            "python_implementation": platform.python_implementation(),
            "platform": platform.platform(),
            "machine": platform.machine(),
            "host": platform.node(),
        },
    }


def versions_text(job: JobView) -> str:
    return json.dumps(versions_doc(job), indent=2, default=str) + "\n"


def command_text(job: JobView) -> str | None:
    """Shell lines of job.json's ``compiler_command``, or None when the job recorded none (cpu-check, old jobs)."""
    cmd = job.compiler_command
    if not (cmd.get("actual") or cmd.get("requested")):
        return None
    lines = [
        f"# The neuronx-cc command of job {job.job_id}, from job.json's compiler_command.",
        "# Paths name the job directory where it ran; in this bundle compiler/model/ is the compiler's input.",
    ]
    source = cmd.get("actual_source") or "unknown"
    for key, what in (
        ("actual", f"what the compiler ran (read from {source})"),
        ("requested", "what neffbench asked torch_neuronx.trace to run"),
    ):
        argv = cmd.get(key)
        if isinstance(argv, list) and argv:
            lines += [f"# {key}: {what}", shlex.join(str(a) for a in argv)]
    if cmd.get("dropped"):
        lines.append(f"# dropped (requested but not in the actual command): {shlex.join(map(str, cmd['dropped']))}")
    return "\n".join(lines) + "\n"


def _error_lines(job: JobView) -> list[str]:
    error = job.compiler.get("first_error") or job.error or job.error_text
    if isinstance(error, dict):
        return first_error_lines(error)
    return [f"first error: {error}"] if error else []


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _rows(rows: list[tuple[str, str, str]]) -> list[str]:
    width = max((len(r[0]) for r in rows), default=0)
    swidth = max((len(r[1]) for r in rows), default=0)
    return [f"  {name:<{width}}  {size:>{swidth}}  {about}".rstrip() for name, size, about in rows]


def readme_text(
    *,
    job: JobView,
    record_problem: str | None,
    job_dir: Path,
    root: str,
    included: list[tuple[str, int]],
    left_out: list[tuple[str, int, str]],
    missing: list[str],
    skipped: tuple[int, int],
    made: str,
) -> str:
    """The README of one bundle. ``included`` names members under ``root``; ``skipped`` is (count, bytes) of
    compiler files that are neither inputs, logs nor NEFFs."""
    out = _job_lines(job, record_problem, job_dir, root, made)
    out += _contents_lines(root, included, left_out, missing, skipped)
    out += [
        "",
        "Paths under the home directory of the user who made this bundle were shortened to ~ in the text",
        f"files ({', '.join(TEXT_SUFFIXES)}); other files (HLO, weights, NEFFs) and the user's own files under",
        f"{bundle_sources.FOLDER}/ (the source closure job.json records) are copied unchanged.",
        "",
    ]
    return "\n".join(out)


def _job_lines(job: JobView, record_problem: str | None, job_dir: Path, root: str, made: str) -> list[str]:
    """The title, where the bundle came from, and the job: its record's main keys, versions and first error."""
    from neffbench import __version__

    job_id = job.job_id or job_dir.name
    title = f"neffbench bug report: job {job_id}"
    out = [
        title,
        "=" * len(title),
        "",
        f"Made by neffbench {__version__} at {made} from the job directory {job_dir}.",
        f"Everything is in the folder {root}/; paths below are relative to it.",
        "",
        "The job",
    ]
    for key, value in (
        ("job_id", job.job_id),
        ("name", job.name),
        ("kernel", job.kernel),
        ("backend", job.backend),
        ("outcome", job.outcome),
        ("reason", job.reason),
        ("created", job.created),
        ("finished", job.finished),
    ):
        if value is not None:
            out.append(f"  {key + ':':<10}{value}")
    if job.versions:
        out.append(
            f"  {'versions:':<10}"
            + ", ".join(f"{k} {v}" for k, v in job.versions.items() if v)
            + f" (on host {job.host}; see {VERSIONS_NAME})"
        )
    if job.outcome == "running":
        out.append("  The job was still running when this bundle was made: its files may stop mid-way.")
    if record_problem:
        out.append(f"  job.json could not be read: {record_problem}")
    out += [f"  {line}" for line in _error_lines(job)]
    return out


def _about(rel: str) -> str:
    """What a member is, by its name under the bundle's folder."""
    return (
        _ABOUT.get(rel)
        or bundle_sources.about(rel)
        or (
            "the compiler's input (HLO and metadata)"
            if rel.startswith("compiler/model/")
            else "TorchNeuron's FX graph"
            if rel.endswith(".fx.txt")
            else "the StableHLO TorchNeuron handed the compiler"
            if rel.endswith(".mlir")
            else "a NEFF the compiler wrote"
            if rel.endswith(".neff")
            else ""
        )
    )


def _contents_lines(
    root: str,
    included: list[tuple[str, int]],
    left_out: list[tuple[str, int, str]],
    missing: list[str],
    skipped: tuple[int, int],
) -> list[str]:
    """What is inside (each member with its size and what it is), what was left out or missing, what was skipped."""
    prefix = f"{root}/"
    rows = [(README_NAME, "", "this file")]
    for name, size in included:
        rel = name[len(prefix) :] if name.startswith(prefix) else name
        rows.append((rel, human_bytes(size), _about(rel)))
    total = human_bytes(sum(s for _, s in included))
    out = ["", f"What is inside ({_files(len(included))}, {total}, and this README)", *_rows(rows)]
    if left_out:
        out += ["", f"Left out ({_files(len(left_out))}, {human_bytes(sum(s for _, s, _ in left_out))})"]
        out += [
            f"  {rel}" + (f" ({human_bytes(size)})" if size else "") + f": {reason}" for rel, size, reason in left_out
        ]
    if missing:
        out += ["", "Not in the job directory (an older neffbench, or the job stopped before writing them)"]
        out += [f"  {rel}" for rel in missing]
    if skipped[0]:
        n, verb = skipped[0], "is" if skipped[0] == 1 else "are"
        out += [
            "",
            f"{n} other {'file' if n == 1 else 'files'} in compiler/ ({human_bytes(skipped[1])} of "
            f"intermediate compiler output) {verb} not included.",
        ]
    return out

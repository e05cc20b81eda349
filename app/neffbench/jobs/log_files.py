"""The text files of a job a user reads to see what happened: its log, its events, the compiler's own logs, the
runs' logs; the window shows any of them whole (on a remote box there is no desktop application to open them)."""

from __future__ import annotations

from pathlib import Path

# The job's own first, in the order a user looks at them; then every other text log below the job folder.
FIRST = ("job.log", "events.jsonl", "compiler/log-neuron-cc.txt", "compiler/command.txt", "torchneuron.log")
SUFFIXES = (".log", ".jsonl", ".txt")
DEPTH = 3  # job/runs/<run>/run.log; the model's traced files sit deeper and are not logs


def log_files(job_dir: Path) -> list[Path]:
    """The job's log files, paths relative to ``job_dir``: the known ones first, then the rest sorted."""
    found = [Path(name) for name in FIRST if (job_dir / name).is_file()]
    rest = sorted(
        p.relative_to(job_dir)
        for p in job_dir.rglob("*")
        if p.suffix in SUFFIXES and p.is_file() and len(p.relative_to(job_dir).parts) <= DEPTH
    )
    return found + [p for p in rest if p not in found]

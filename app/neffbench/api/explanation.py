"""A job explained as the Python API returns it: ``neffbench explain JOB``'s document and text."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.api import html


@dataclass(frozen=True)
class Explanation:
    """``explained`` is ``neffbench.jobs.explained.JobExplanation``: the job's outcome and cause from its record, its
    compiler log's explanation when a compiler ran."""

    explained: Any

    @classmethod
    def of(cls, job_dir: str | Path) -> Explanation:
        from neffbench.jobs.explained import explain_job

        return cls(explain_job(job_dir))

    @property
    def headline(self) -> str:
        return str(self.explained.headline)

    @property
    def outcome(self) -> str:
        """``passed``, ``failed`` or ``unknown``."""
        return str(self.explained.outcome)

    @property
    def first_error(self) -> dict[str, Any] | None:
        """The first error (the cause) with its line and code, when the log has one."""
        return self.to_json().get("first_error")

    def to_json(self) -> dict[str, Any]:
        """What ``neffbench explain JOB --json`` prints."""
        return dict(self.explained.to_json())

    def lines(self, *, all_errors: bool = False) -> list[str]:
        """What ``neffbench explain JOB`` prints."""
        from neffbench.compilerlog.render import explanation_lines
        from neffbench.words import plural

        job = self.explained
        out = [f"job {job.job_dir.name}: {job.headline}"]
        out += [f"  {label}: {text}" for label, text in job.facts()]
        if job.log is not None and job.runs_compiler:
            out += [
                "",
                *explanation_lines(
                    job.log,
                    recorded_version=job.recorded_version,
                    recorded_command=job.recorded_command,
                    all_errors=all_errors,
                ),
            ]
        elif job.log is not None:
            out.append(f"  Log: {job.log.source}, {plural(job.log.line_count, 'line', grouped=True)}")
        return out

    def sentence(self) -> str:
        """The explanation in a few lines: the headline, the first error with its code's meaning and advice, and
        the job directory (what an exception for a failed compile says)."""
        data = self.to_json()
        out = [self.headline]
        first = data.get("first_error") or {}
        message = first.get("message")
        if self.explained.runs_compiler and isinstance(message, str) and message not in self.headline:
            out.append(f"first error: {message}")
        code = first.get("code") or next(iter(data.get("codes") or []), None)
        help_ = (data.get("code_help") or {}).get(code) or {}
        if code and help_:
            out.append(f"[{code}] {help_.get('title')}. What to do: {help_.get('advice')} ({help_.get('url')})")
        out.append(f"job: {self.explained.job_dir} (neffbench explain {self.explained.job_dir})")
        return "\n".join(out)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return f"<Explanation of {self.explained.job_dir.name}: {self.headline}>"

    def _repr_html_(self) -> str:
        ok = {"passed": True, "failed": False}.get(self.outcome)
        pre = f'<pre style="font-size:12px">{html.escape(chr(10).join(self.lines()[1:]))}</pre>'
        return html.block(html.heading(f"job {self.explained.job_dir.name}", self.headline, ok), pre)

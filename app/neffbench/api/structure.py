"""A job's model as the Python API returns it: ``neffbench structure JOB``'s tree, with each layer's error and device
time laid on it (``to_json()`` is what ``--json`` prints, ``str()`` what the command prints)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.api import html
from neffbench.structure import table
from neffbench.structure.layers import Laid


@dataclass(frozen=True)
class Structure:
    """The job's modules in call order (``laid.structure``) with the latest compare's and profile's figures."""

    directory: Path
    laid: Laid
    depth: int | None = None

    @classmethod
    def of(cls, job_dir: str | Path, depth: int | None = None, say: Callable[[str], None] | None = None) -> Structure:
        """The structure kept with the job, computed first (in a probe child) for a job compiled before they were."""
        from neffbench.structure.rebuild import laid

        folder = Path(job_dir).expanduser().resolve()
        return cls(folder, laid(folder, say), depth)

    def to_json(self) -> dict[str, Any]:
        """What ``neffbench structure JOB --json`` prints."""
        return table.document(self.laid, self.directory.name, self.depth)

    def rows(self) -> list[dict[str, Any]]:
        """One row per module shown: its path, class, parameters, FLOPs and the error and time figures."""
        return [
            {
                "path": n["path"],
                "class": n["class"],
                "params": n["params"],
                "flops": n["flops"],
                "max_abs_error_vs_eager": (n["vs_eager"] or {}).get("max_abs"),
                "device_time_s": (n["time"] or {}).get("seconds"),
            }
            for n in self.to_json()["nodes"]
        ]

    def to_pandas(self) -> Any:
        """:meth:`rows` as a DataFrame (pandas must be installed)."""
        from neffbench.api.frames import frame

        return frame(self.rows())

    def __str__(self) -> str:
        return "\n".join(table.lines(self.laid, self.directory.name, str(self.directory), self.depth))

    def __repr__(self) -> str:
        return f"<Structure of {self.directory.name}: {len(self.laid.structure.nodes)} modules>"

    def _repr_html_(self) -> str:
        columns, shown = table.rows(self.laid, self.depth, indent="\u2003")
        return html.block(
            html.heading(f"Structure of {self.directory.name}", table.headline(self.laid, self.directory.name), None),
            html.table([c.heading for c in columns], shown),
        )

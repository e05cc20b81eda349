"""A sweep as the Python API returns it: ``neffbench sweep show``'s document and table, and ``neffbench.sweep``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neffbench.api import html


@dataclass(frozen=True)
class Sweep:
    """``record``: sweep.json as loaded (with ``path``). ``to_json()`` is what ``neffbench sweep show --json`` prints;
    ``rows()`` the comparison table's rows as numbers, ``lines()`` as text."""

    record: dict[str, Any]

    @classmethod
    def load(cls, workdir: str | Path, sweep_id: str) -> Sweep:
        """A sweep of ``workdir`` by its id (or a unique start of it, its folder or its sweep.json)."""
        from neffbench.sweeps import load

        return cls(load(workdir, sweep_id))

    @property
    def sweep_id(self) -> str:
        return str(self.record.get("sweep_id"))

    @property
    def state(self) -> str | None:
        """``succeeded`` (every point did), ``failed``, ``cancelled`` or ``running``."""
        return self.record.get("state")

    def rows(self) -> list[dict[str, Any]]:
        from neffbench.sweeps import rows

        return rows(self.record)

    def lines(self) -> list[str]:
        from neffbench.sweeps import table_lines

        return table_lines(self.record)

    def to_json(self) -> dict[str, Any]:
        from neffbench.sweeps import as_json

        return as_json(self.record)

    def to_pandas(self) -> Any:
        from neffbench.api.frames import frame

        return frame(self.rows())

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return f"<Sweep {self.sweep_id}: {self.state}, {len(self.record.get('points') or [])} points>"

    def _repr_html_(self) -> str:
        from neffbench.sweeps.show import table_cells

        head, body, _ = table_cells(self.record)
        ok = {"succeeded": True, "failed": False}.get(str(self.state))
        return html.block(html.heading(f"sweep {self.sweep_id}", str(self.state), ok), html.table(head, body))


def sweep(
    spec: Any,
    over: Sequence[str] | Mapping[str, Sequence[Any]],
    *,
    zip: bool = False,  # noqa: A002 - the command's --zip
    backend: str = "auto",
    jobs: int | None = None,
    workdir: str | Path | None = None,
    cache: bool = True,
    executor: str = "local",
    on_line: Callable[[Any, str], None] | None = None,
) -> Sweep:
    """Compile a grid of ``spec`` (a spec, file, preset or module entry) as ``neffbench sweep`` does: ``over`` is
    ``["compiler.optlevel=1,2"]`` or ``{"inputs.num_tokens": [1, 8]}``. Raises ``neffbench.spec.SpecError`` for a grid
    that cannot be planned (nothing started). Ctrl-C cancels every point, then raises KeyboardInterrupt."""
    from neffbench.api.waiting import waited
    from neffbench.presets import resolve_spec_source
    from neffbench.spec import SpecError
    from neffbench.sweeps import plan, run_sweep

    base = resolve_spec_source(str(spec)) if isinstance(spec, (str, Path)) else spec
    planned = plan(base, over, zip=zip, backend=backend)
    if planned.problems:
        raise SpecError(planned.problems)
    say = on_line or (lambda point, line: print(line if point is None else f"[{point}] {line}", flush=True))
    cancel = threading.Event()

    def work() -> Any:
        return run_sweep(
            planned,
            executor=executor,
            jobs=jobs,
            backend=backend,
            workdir=workdir,
            use_cache=cache,
            on_line=say,
            cancel_event=cancel,
        )

    result = waited(work, cancel.set, name="neffbench-sweep", say=lambda line: say(None, line))
    from neffbench.sweeps import load

    return Sweep(load(None, result.path))

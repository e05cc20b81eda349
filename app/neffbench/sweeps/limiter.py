"""Starting a compile only when memory allows: what is available now against what the running jobs may still take."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from neffbench.jobs.memory_estimate import GiB
from neffbench.machine_memory import available_bytes, total_bytes  # noqa: F401 - used by callers too

POLL_S = 0.25
MiB = 2**20


@dataclass(eq=False)
class Reservation:
    """One admitted job: its estimate and, once its worker runs, the process group whose memory is measured."""

    need: int
    pgid: int | None = None


class MemoryLimiter:
    """Admits jobs while the estimates of the running ones, less what they already hold, fit in what is available.

    ``available`` is read afresh at every decision (other programs count too); ``usage(pgid)`` is what a
    running job holds now, so a job that has reached its peak is not counted twice. With nothing running
    a job is always admitted, even beyond the estimate: waiting could never help it.
    """

    def __init__(
        self,
        *,
        available: Callable[[], int | None] = available_bytes,
        usage: Callable[[int], int] | None = None,
        margin_bytes: int | None = None,
    ):
        self._available = available
        self.usage = usage
        total = total_bytes() or 8 * GiB
        # Kept free for everything else; MemAvailable already counts the page cache as reclaimable.
        self.margin = margin_bytes if margin_bytes is not None else int(min(max(0.05 * total, 256 * MiB), 2 * GiB))
        self._cond = threading.Condition()
        self._running: list[Reservation] = []

    def _outstanding(self) -> int:
        usage = self.usage
        return sum(max(0, r.need - (usage(r.pgid) if usage is not None and r.pgid else 0)) for r in self._running)

    def acquire(
        self, need: int, *, cancel_event: threading.Event | None = None, on_note: Callable[[str], None] | None = None
    ) -> Reservation | None:
        """Wait until a job of ``need`` bytes may start and reserve it; None when ``cancel_event`` is set first.

        ``on_note`` hears once why it waits (and again when it starts), or that it starts alone beyond what is
        available.
        """
        waited = False
        while True:
            with self._cond:
                if cancel_event is not None and cancel_event.is_set():
                    return None
                avail = self._available()
                outstanding = self._outstanding()
                fits = avail is None or need + outstanding <= avail - self.margin
                if fits or not self._running:
                    reservation = Reservation(need)
                    self._running.append(reservation)
                    break
                running = len(self._running)
            if not waited:
                waited = True
                if on_note is not None:
                    on_note(
                        f"waiting for memory: needs {need / GiB:.1f} GiB; {max(avail or 0, 0) / GiB:.1f} GiB is "
                        f"available, of which {outstanding / GiB:.1f} GiB may still go to the {running} running "
                        "job(s)"
                    )
            with self._cond:
                # Woken early by a release; the poll catches memory that others freed.
                self._cond.wait(POLL_S)
        if on_note is not None:
            if not fits:
                on_note(
                    f"estimated {need / GiB:.1f} GiB, more than the {max(avail or 0, 0) / GiB:.1f} GiB available; "
                    "starting it alone (set --memory-per-job if the estimate is wrong)"
                )
            elif waited:
                on_note("memory is available now; starting")
        return reservation

    def release(self, reservation: Reservation | None) -> None:
        if reservation is None:
            return
        with self._cond:
            if reservation in self._running:
                self._running.remove(reservation)
            self._cond.notify_all()

    @property
    def running(self) -> int:
        with self._cond:
            return len(self._running)

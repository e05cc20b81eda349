"""Child processes for everybody: spawn in a process group, lifeline, line protocol, timeouts, TERM then KILL, reaping, atomic writes.

Every child the workbench starts (the compile worker and its standby, the run child, the probe) goes
through :func:`spawn`, and is stopped and reaped through its :class:`Child`:

- it leads a new process group, so one signal reaches whatever it started (the compiler, a runtime);
- it is handed a lifeline (:mod:`._lifeline`): when this process dies, however, a child that called
  :func:`watch` kills its own group; on Linux ``PR_SET_PDEATHSIG`` backs that up;
- :meth:`Child.terminate` sends SIGTERM and SIGKILL after a grace period, from a timer that belongs to
  that child and is cancelled when it is reaped; no signal is sent once it is reaped (its pid may be
  someone else's by then);
- :meth:`Child.reap` kills what is left of its group and waits for it before reaping the leader, so
  that when it returns nothing of the child is left;
- a worker that imports torch (``spawn(..., warm=True)``) is forked by a warm-start server when one is named in
  its environment (:func:`start_warm_server`, :func:`warm_workers`): it starts with torch imported;
- :func:`exit_now` ends a worker or a command without the interpreter's teardown of torch;
- :func:`pump`, :class:`LineReader` and :func:`collect` read its output; :class:`Emitter`,
  :func:`parse_event` and :class:`LineSplitter` are the two ends of the line protocol.

A leaf: it imports nothing else of neffbench and no Qt.
"""

from neffbench.procs._atomic import TMP_SUFFIX, remove_stale_temporaries, replacing, write_bytes, write_json, write_text
from neffbench.procs._child import GROUP_GONE_S, Child, spawn
from neffbench.procs._exit import exit_now
from neffbench.procs._lifeline import ENV as LIFELINE_ENV
from neffbench.procs._lifeline import Lifeline, watch
from neffbench.procs._lines import (
    EVENT_PREFIX,
    Emitter,
    LineSplitter,
    encode_event,
    parse_event,
    serve_lines,
    stage_event,
)
from neffbench.procs._pids import group_alive, process_alive, process_start_time
from neffbench.procs._stream import EOF_WAIT_S, POLL_S, LineReader, collect, pump
from neffbench.procs._warm import ENV as WARM_ENV
from neffbench.procs._warm import forked_by, forked_note
from neffbench.procs._warm_owner import PRELOAD, WarmServer, start_warm_server, warm_workers

__all__ = [
    "EOF_WAIT_S",
    "EVENT_PREFIX",
    "GROUP_GONE_S",
    "LIFELINE_ENV",
    "POLL_S",
    "PRELOAD",
    "TMP_SUFFIX",
    "WARM_ENV",
    "Child",
    "Emitter",
    "Lifeline",
    "LineReader",
    "LineSplitter",
    "WarmServer",
    "collect",
    "encode_event",
    "exit_now",
    "forked_by",
    "forked_note",
    "group_alive",
    "parse_event",
    "process_alive",
    "process_start_time",
    "pump",
    "remove_stale_temporaries",
    "replacing",
    "spawn",
    "stage_event",
    "serve_lines",
    "start_warm_server",
    "warm_workers",
    "watch",
    "write_bytes",
    "write_json",
    "write_text",
]

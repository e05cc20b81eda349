"""The child processes' entry points, each started by its parent through :mod:`neffbench.procs`.

- ``python -m neffbench.workers.compile JOB_DIR`` (or ``--standby``): one compile job (:mod:`.compile`).
- ``python -m neffbench.workers.run``: one run of a NEFF, its request on stdin (:mod:`.run`).
- ``python -m neffbench.workers.probe resolve|check|prepare|serve``: the user's code resolved, built and
  traced on the CPU, reported as JSON (:mod:`.probe`).

Each watches its lifeline first, so that it and everything it started go when its parent dies. They
write no records: the parent is every record's only writer.
"""

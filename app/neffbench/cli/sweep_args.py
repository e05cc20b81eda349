"""The options of ``neffbench sweep``: what to sweep and where (the sweep group), and what to measure of each point
once it compiled (accuracy against speed)."""

from __future__ import annotations

import argparse


def add_sweep_options(p: argparse.ArgumentParser) -> None:
    from neffbench.backends.registry import CHOICES as BACKENDS
    from neffbench.sweeps.sweep import EXECUTORS

    g = p.add_argument_group("sweep")
    g.add_argument(
        "--over",
        action="append",
        default=[],
        metavar="FIELD=V1,V2,...",
        help="a field by its dotted name, as `neffbench kernel show KERNEL` lists them (compiler.optlevel, "
        "SECTION.FIELD, buckets.AXIS, SECTION.TABLE.KEY), and its values; commas inside [..] or quotes do not split",
    )
    g.add_argument("--zip", action="store_true", help="pair the lists (all of one length) instead of crossing them")
    g.add_argument("--strict", action="store_true", help="start nothing when any point is invalid")
    g.add_argument("--dry-run", action="store_true", help="list the points, their problems and memory; start nothing")
    g.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local (default): jobs on this machine; ray: each point a Ray task (install neffbench[ray])",
    )
    g.add_argument(
        "--address",
        metavar="ADDR",
        help="ray: what ray.init takes (auto, ray://head:10001); default: a cluster started here with "
        "'ray start', else a new local one",
    )
    g.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="local: jobs at once (default 1); ray: tasks in flight at most (default: as resources allow)",
    )
    g.add_argument(
        "--memory-per-job",
        type=float,
        metavar="GiB",
        help="what one compile takes at its peak, instead of the kernel's estimate (the local limiter "
        "waits for it; Ray reserves it)",
    )
    from neffbench.cli.memory_gate import add_memory_option

    add_memory_option(g)
    g.add_argument(
        "--cpus-per-job", type=float, default=1, metavar="N", help="ray: CPUs each task reserves (default 1)"
    )
    g.add_argument(
        "--shared-workdir",
        action="store_true",
        help="ray: the workdir is on a filesystem every node mounts at the same path; jobs write there "
        "directly instead of being copied back",
    )
    g.add_argument("--backend", choices=BACKENDS, default="auto", help="as for compile (auto resolves on each node)")
    g.add_argument(
        "--no-cache",
        action="store_true",
        help="compile every point even when an identical compile already succeeded in the workdir",
    )
    g.add_argument("--json", action="store_true", help="print the sweep and its rows as JSON; the log goes to stderr")


def add_accuracy_options(p: argparse.ArgumentParser) -> None:
    from neffbench.runs.runtimes import RUNTIMES

    a = p.add_argument_group("accuracy against speed")
    a.add_argument(
        "--run",
        action="store_true",
        help="run each point that compiled (one at a time, on this host), so its row has its latency and its "
        "outputs' error against the eager reference",
    )
    a.add_argument(
        "--compare",
        action="store_true",
        help="also compare each point tap by tap (neffbench compare): its error against float64 and where it "
        "first diverges (implies --run)",
    )
    a.add_argument("--runtime", choices=RUNTIMES, default="auto", help="for --run and --compare (default auto)")
    a.add_argument("--iterations", type=int, default=50, metavar="N", help="timed iterations of each run (default 50)")
    a.add_argument("--compare-depth", type=int, default=None, metavar="N", help="tap depth of --compare")
    a.add_argument(
        "--layer",
        default=None,
        metavar="PATH",
        help="with 'show': each point's device time and error at this module of its model (a path as "
        "'neffbench structure' shows it, such as model.layers.3; '.' for the whole model)",
    )

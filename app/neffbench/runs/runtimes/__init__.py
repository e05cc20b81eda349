"""The runtimes a run can use: one class per runtime in an explicit table, and the sessions they load.

``nrtpy`` (Neuron SDK 2.32+) and ``spike`` (nkipy) load the NEFF itself onto a NeuronCore; ``torchscript`` loads
the job's ``model.pt`` after ``import torch_neuronx`` (which places it on a NeuronCore); ``cpu`` runs the job's
module on the CPU (the TorchScript of a cpu-check job, else the eager module) and is labelled CPU everywhere: it
is never a device figure. A new runtime is a module here with its class, and a line in registry.py's table.
"""

from neffbench.runs.runtimes.base import Host, Package, RunFailure, Runtime, RuntimeUnavailable, Target, Verdict
from neffbench.runs.runtimes.hosts import FactsHost, ImportingHost
from neffbench.runs.runtimes.registry import (
    AUTO,
    REGISTRY,
    RUNTIMES,
    Choice,
    choose,
    get,
    offered,
    verdicts,
    versions,
)
from neffbench.runs.runtimes.sessions import Progress, Session, Timing, reinterpret

__all__ = [
    "AUTO",
    "REGISTRY",
    "RUNTIMES",
    "Choice",
    "FactsHost",
    "Host",
    "ImportingHost",
    "Package",
    "Progress",
    "RunFailure",
    "Runtime",
    "RuntimeUnavailable",
    "Session",
    "Target",
    "Timing",
    "Verdict",
    "choose",
    "get",
    "offered",
    "reinterpret",
    "verdicts",
    "versions",
]

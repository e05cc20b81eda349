"""The versions a machine compiles with (torch, torch-neuronx, neuronx-cc, neffbench), and how a node's differ from the client's."""

from __future__ import annotations

import platform
from typing import Any

# What can change a NEFF or the job itself; Python is recorded but may differ between nodes harmlessly.
COMPARED = ("torch", "torch_neuronx", "neuronx_cc", "neffbench")


def tool_versions() -> dict[str, Any]:
    from neffbench import __version__
    from neffbench.versions import neuronx_cc_version, torch_neuronx_version, torch_version

    # As job records take them (neffbench.versions), so a node's and the client's compare like with like.
    return {
        "python": platform.python_version(),
        "torch": torch_version(),
        "torch_neuronx": torch_neuronx_version(),
        "neuronx_cc": neuronx_cc_version(),
        "neffbench": __version__,
    }


def differences(client: dict[str, Any], node: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{"torch": {"client": "2.9.1", "node": "2.8.0"}}`` for each compared version that is not the same."""
    return {k: {"client": client.get(k), "node": node.get(k)} for k in COMPARED if client.get(k) != node.get(k)}


def describe(host: str, diff: dict[str, dict[str, Any]]) -> str:
    listed = ", ".join(
        f"{k} {v['node'] or 'not installed'} (here {v['client'] or 'not installed'})" for k, v in diff.items()
    )
    return (
        f"node {host} has other versions than this machine: {listed}; its jobs record the versions they "
        "used, and their cache keys differ"
    )

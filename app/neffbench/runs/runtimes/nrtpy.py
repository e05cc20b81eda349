"""nrtpy (Neuron SDK 2.32+): the NEFF itself loaded onto a NeuronCore, timed on the device or with the host."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from neffbench.runs.runtimes.base import Host, RunChild, Runtime, Target
from neffbench.runs.runtimes.sessions import NrtSession, Session

if TYPE_CHECKING:
    from neffbench.runs.arrays import Arrays


class Nrtpy(Runtime):
    name = "nrtpy"
    label = "NeuronCore (nrtpy)"
    modes = ("device", "host")
    on_device = True
    packages = (("nrtpy", "nrtpy"),)
    feeds_neff_by_name = True

    @classmethod
    def lacks(cls, target: Target | None, host: Host) -> str | None:
        return no_neff(target)

    @classmethod
    def load(cls, run: RunChild, neff_info: Any, feeds: Arrays) -> Session:
        nrtpy = importlib.import_module("nrtpy")
        core = int(run.req.get("core", 0))
        if hasattr(nrtpy, "configure"):  # the core is made the only one visible: it is core 0 from then on
            nrtpy.configure(visible_cores=[core])
        return NrtSession(
            cls.name, nrtpy.NrtpyModel, nrtpy.NrtpyTensor, run.req["neff"], neff_feeds(feeds), 0, out_dtypes(neff_info)
        )


def no_neff(target: Target | None) -> str | None:
    """Why a runtime that loads the NEFF cannot run the target: it has none."""
    return f"there is no NEFF to load ({target.no_neff})" if target is not None and not target.neff else None


def neff_feeds(feeds: Arrays) -> dict[str, Any]:
    """The feeds by the names the NEFF was compiled with."""
    return {n: feeds.arrays[n] for n in feeds.neff_names}


def out_dtypes(neff_info: Any) -> dict[str, str]:
    """Each output's dtype as the NEFF says it (a void output is read as it)."""
    return {t.name: t.dtype for t in neff_info.outputs}

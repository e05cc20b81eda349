"""spike (nkipy): the NEFF itself loaded onto a NeuronCore, as nrtpy does, with bfloat16 inputs as its own type."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from neffbench.runs.runtimes.base import Host, RunChild, Runtime, Target
from neffbench.runs.runtimes.nrtpy import neff_feeds, no_neff, out_dtypes
from neffbench.runs.runtimes.sessions import NrtSession, Session

if TYPE_CHECKING:
    import numpy as np

    from neffbench.runs.arrays import Arrays


class Spike(Runtime):
    name = "spike"
    label = "NeuronCore (spike)"
    modes = ("device", "host")
    on_device = True
    packages = (("spike", "spike"),)
    feeds_neff_by_name = True

    @classmethod
    def lacks(cls, target: Target | None, host: Host) -> str | None:
        return no_neff(target)

    @classmethod
    def load(cls, run: RunChild, neff_info: Any, feeds: Arrays) -> Session:
        spike = importlib.import_module("spike")
        return NrtSession(
            cls.name,
            spike.SpikeModel,
            spike.SpikeTensor,
            run.req["neff"],
            _spike_feeds(neff_feeds(feeds), feeds.dtypes),
            int(run.req.get("core", 0)),
            out_dtypes(neff_info),
        )


def _spike_feeds(feeds: dict[str, np.ndarray], dtypes: dict[str, str]) -> dict[str, np.ndarray]:
    """spike checks dtypes itself and knows bfloat16 only as ml_dtypes.bfloat16 (which it depends on):
    the stored bits are viewed as that. nrtpy checks sizes only and takes the bits as they are."""
    if "bfloat16" not in dtypes.values():
        return feeds
    try:
        import ml_dtypes
    except ImportError:
        return feeds
    return {k: v.view(ml_dtypes.bfloat16) if dtypes.get(k) == "bfloat16" else v for k, v in feeds.items()}

"""Which Neuron devices this host has: one pattern for the device files, and one sentence for none."""

from __future__ import annotations

import glob

DEVICE_GLOB = "/dev/neuron[0-9]*"
NO_DEVICE = "no Neuron device under /dev/neuron*"


def neuron_devices() -> list[str]:
    """The Neuron device files of this host (``/dev/neuron0``, ...), sorted; empty without a device."""
    return sorted(glob.glob(DEVICE_GLOB))

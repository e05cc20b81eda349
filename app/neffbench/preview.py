"""The RoPE preview under its original name: ``neffbench.preview`` is ``neffbench.kernels.rope.preview``."""

import sys

from neffbench.kernels.rope import preview as _preview

sys.modules[__name__] = _preview

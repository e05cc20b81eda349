"""pyqtgraph views of a :class:`neffbench.kernels.rope.preview.Preview`, shared by the window and ``neffbench preview``."""

from neffbench.gui.preview.panel import PreviewPanel

__all__ = ["PreviewPanel"]

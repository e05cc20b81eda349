"""RoPE's preview panel: pyqtgraph views of a :class:`neffbench.kernels.rope.preview.Preview`, shared by the
window and ``neffbench preview``, imported only by them."""

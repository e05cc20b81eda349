"""The Preview tab: the preview's controller and host, and the panel for kernels without one of their own."""

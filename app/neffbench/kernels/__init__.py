"""Kernels: what the workbench can compile. Each folder here is one kernel; ``registry`` lists them and plugins."""

"""NEFF Workbench: compile PyTorch functions into AWS Neuron NEFF executables."""

__version__ = "0.1.0"

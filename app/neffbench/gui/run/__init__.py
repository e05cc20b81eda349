"""The Run tab: running and benchmarking a NEFF, its history, plots and status."""

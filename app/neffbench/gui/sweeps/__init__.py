"""The Sweeps tab and dialog: a grid of jobs, its progress and its table."""

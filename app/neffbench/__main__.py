"""``python -m neffbench`` is the ``neffbench`` command."""

from neffbench.cli.main import run

run()

"""What a kernel adds to the ``neffbench`` command: one optional contribution, every hook declared here with its default.

A kernel that adds nothing keeps ``Kernel.cli`` as it is; one that does sets it to an instance of its own
subclass of ``CliContribution`` (the module kernel's ``kernels/module/cli.py``). Its public names are checked
when the kernel loads, as the kernel's own are (``neffbench.kernels.hook_checks``). Only the command line asks it:
the window and the workers never do. Imports neither torch nor Qt.
"""

from __future__ import annotations

import argparse
from typing import Any


class CliContribution:
    """The default: SPEC is a file or a preset, no options, commands or preview choices of the kernel's own."""

    # What ``neffbench compile SPEC`` accepts as SPEC besides files and presets (``spec_from_source``), in
    # the words of ``--help``; empty for a kernel that takes only files.
    source_help: str = ""
    # Subcommands of ``neffbench`` this kernel brings, by name: a module whose ``register(subparsers)`` adds it,
    # as the CLI's own command modules do.
    commands: dict[str, str] = {}

    # ---- SPEC and the spec options ----------------------------------------------------------

    def spec_from_source(self, source: str) -> Any | None:
        """The spec SPEC names when it is neither a file nor a preset (``FILE.py:NAME``); None: not this kernel's."""
        return None

    def add_options(self, group: argparse._ArgumentGroup) -> None:
        """Options of the kernel's own beyond one per spec field (repeatable ones that set its tables)."""

    def apply_options(self, spec: Any, args: argparse.Namespace) -> Any:
        """The spec with this kernel's own options applied; ``spec`` may be another kernel's, which those
        options must then refuse if given. Default: ``spec`` as it is."""
        return spec

    # ---- neffbench preview --------------------------------------------------------------------

    def add_preview_options(self, group: argparse._ArgumentGroup) -> None:
        """Options of ``neffbench preview`` that choose what this kernel's panel draws (RoPE: the token and head
        whose lanes are plotted). Every kernel's are offered, as for ``add_options``."""

    def preview_options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The keyword arguments those options give the panel's ``save_images``. Default: none."""
        return {}

    def preview_numbers(self, preview: Any) -> dict[str, Any]:
        """What ``neffbench preview`` writes to preview.json for this kernel's preview data."""
        return preview.to_json()

    def preview_summary(self, preview: Any) -> list[str]:
        """Lines ``neffbench preview`` prints after the files it wrote (RoPE: its pair-norm check). Default: none."""
        return []

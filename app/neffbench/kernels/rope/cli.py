"""What RoPE adds to the ``neffbench`` command: ``neffbench preview``'s token and head, its figures and pair-norm check."""

from __future__ import annotations

import argparse
from typing import Any

from neffbench.kernels.cli_contribution import CliContribution


class RopeCli(CliContribution):
    def add_preview_options(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--token", type=int, default=0, help="example token whose lanes are plotted (default 0)")
        group.add_argument("--head", type=int, default=0, help="query head whose lanes are plotted (default 0)")

    def preview_options(self, args: argparse.Namespace) -> dict[str, Any]:
        return {"token": args.token, "head": args.head}

    def preview_numbers(self, preview: Any) -> dict[str, Any]:
        return preview.numbers()

    def preview_summary(self, preview: Any) -> list[str]:
        return [f"pair-norm check {preview.pair_check.summary()}"]

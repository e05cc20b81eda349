"""Shared test set-up: headless Qt, the shared NEFF sample, and where the toolchain fakes live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Before any Qt import: tests never need a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parents[1]
SHARED_SAMPLES = REPO.parent / "shared" / "neff-samples"
SAMPLE_NEFF = SHARED_SAMPLES / "nkipy_matmul_small.neff"


@pytest.fixture
def sample_neff() -> Path:
    """The real NEFF from the shared folder beside the checkout (never copied into the repo)."""
    if not SAMPLE_NEFF.is_file():
        pytest.skip(f"shared NEFF sample not found at {SAMPLE_NEFF} (the shared/ folder sits beside the checkout)")
    return SAMPLE_NEFF

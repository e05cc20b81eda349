"""ARCHITECTURE.md and CONTRIBUTING.md stay true to the tree: every file or folder they name exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("ARCHITECTURE.md", "CONTRIBUTING.md")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`([^`\s]+)`")
# A path as the documents write one: folders with a slash, or a file by its extension; no placeholders or globs.
_PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)*/?$")
_FILE = re.compile(r"\.(?:py|toml|md)$")
# JOB/compares/, NAME.log: a placeholder for what the user or a test names; .venv-legacy/ and the like: what make makes.
_PLACEHOLDER = re.compile(r"(?:^|/)[A-Z]+(?:/|\.(?!md$))")


def named_paths(text: str) -> list[str]:
    """The paths named in ``text``'s inline code (the folder sketches in code blocks are shapes, not paths)."""
    found = (m.group(1) for m in _CODE.finditer(_FENCE.sub("", text)))
    return [
        p
        for p in found
        if _PATH.match(p) and ("/" in p or _FILE.search(p)) and not _PLACEHOLDER.search(p) and not p.startswith(".")
    ]


def _exists(path: str) -> bool:
    """From the top of the tree, or (a file or folder named beside its package) anywhere under ``app`` or ``tests``."""
    name = path.rstrip("/")
    found = [ROOT / name, *ROOT.glob(f"app/**/{name}"), *ROOT.glob(f"tests/**/{name}")]
    return any(p.is_dir() if path.endswith("/") else p.exists() for p in found)


def test_the_paths_are_found_in_the_documents():
    text = "`app/neffbench/kernels/api.py`, `kernels/<name>/`, `JOB/x/`, `NAME.log`, `x.y:z`, `log.py`, `a.json`"
    assert named_paths(text + "\n```\nshape/only.py\n```\n`README.md`") == [
        "app/neffbench/kernels/api.py",
        "log.py",
        "README.md",
    ]


def test_a_path_that_is_not_there_is_found_missing():
    assert not _exists("app/neffbench/kernels/gone.py") and not _exists("gone/") and _exists("kernels/rope/")


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_a_document_names_exists(doc):
    paths = named_paths((ROOT / doc).read_text(encoding="utf-8"))
    assert paths and [p for p in paths if not _exists(p)] == []

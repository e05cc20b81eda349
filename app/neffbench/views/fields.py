"""What every view's constructor reads a field with: a value of the wrong type is None (or empty), never an error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class RecordError(ValueError):
    """A record that cannot be read as one; the message says why in a sentence."""


class NewerRecordError(RecordError):
    """A record from a newer schema than this code reads: well formed, but not to be read as if it were ours."""


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def maybe_dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def schema_version_of(record: Mapping[str, Any], where: str, newest: int, what: str) -> int:
    """The record's schema_version (1 before the field existed); RecordError for one newer than ``newest``."""
    version = integer(record.get("schema_version")) or 1
    if version > newest:
        raise NewerRecordError(
            f"{where} has schema_version {version}, newer than this neffbench reads (up to {newest}): "
            f"it was written by a newer neffbench, which is needed to read this {what}"
        )
    return version


def mapping_of(record: Any, where: str, what: str) -> Mapping[str, Any]:
    """``record`` itself when it is a JSON object; RecordError naming what it is instead."""
    if not isinstance(record, Mapping):
        raise RecordError(f"{where} holds a JSON {type(record).__name__}, not a {what} object")
    return record

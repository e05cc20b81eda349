"""``.to_pandas()`` of the tabular records: pandas when it is installed, never a dependency."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def frame(rows: Sequence[dict[str, Any]]) -> Any:
    """A DataFrame of ``rows`` (one dict each); ImportError saying how to get pandas when it is missing."""
    try:
        import pandas
    except ImportError:
        raise ImportError("to_pandas() needs pandas, which neffbench does not install: pip install pandas") from None
    return pandas.DataFrame(list(rows))

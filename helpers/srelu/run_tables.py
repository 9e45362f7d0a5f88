"""S-ReLU's run tables: the core's per-run rows (:func:`helpers.core.tables.accuracy_rows`) with
S-ReLU's δ as a column, and one table's committed runs loaded once for its claims and pages."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from helpers.core import tables as T

__all__ = ["StoredRuns", "accuracy_rows", "delta_of", "load_runs"]


def delta_of(result: Mapping[str, Any]) -> float:
    """S-ReLU's δ of a run (its ``activation_kwargs["delta"]``), NaN for a run without one
    (another activation: the row then belongs to no δ group)."""
    if not isinstance(result, Mapping) or not isinstance(result.get("config"), Mapping):
        raise TypeError(f"expected a run_or_load result dict with a 'config' mapping, got {type(result).__name__}")
    kwargs = result["config"].get("activation_kwargs") or {}
    return float(kwargs["delta"]) if "delta" in kwargs else math.nan


def accuracy_rows(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """:func:`helpers.core.tables.accuracy_rows` plus a ``delta`` column (:func:`delta_of`), the
    column Table 4's runs are grouped by."""
    return T.accuracy_rows(results, extra={"delta": delta_of})


@dataclass(frozen=True)
class StoredRuns:
    """One table's committed runs at one profile: a row per run (:func:`accuracy_rows`) and their
    mean ± std per group (:func:`helpers.core.tables.summarize`); both ``None`` when any run of the
    table is not stored, so a claim on it reads "not run here"."""

    profile: str
    rows: pd.DataFrame | None
    summary: pd.DataFrame | None


def load_runs(configs: Sequence[Any], by: str, profile: str) -> StoredRuns:
    """The stored results of ``configs`` (loaded, never trained), summarised per group of the
    column ``by`` (``"delta"`` or ``"activation"``); ``profile`` is the one they were built for."""
    loaded = T.load_all(configs)
    if not loaded:
        return StoredRuns(profile, None, None)
    rows = accuracy_rows(loaded)
    return StoredRuns(profile, rows, T.summarize(rows, by))

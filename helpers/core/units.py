"""The unit of analysis of a run-based comparison: the seed, not the cells a seed contributes.

Where one seed gives several values (the cells of a (t, c) grid, the init modes of a cell), they
share that seed's data order, initial weights and, for a ΔBVS, the very GELU run they subtract:
they are correlated, not replicates. :func:`seed_means` averages them per seed before a test;
:func:`by_level` splits them per level for "at every level" claims, which are then tested level
by level, each on its seeds (intersection-union: every level must pass).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

from helpers.core.statistics import _as_mapping

__all__ = ["by_level", "seed_means"]


def _split_seed(key: Hashable, seed_index: int) -> tuple[Hashable, Hashable]:
    if not isinstance(key, tuple) or len(key) < 2:
        raise ValueError(f"cell keys must be tuples (level..., seed), got {key!r}")
    parts = list(key)
    seed = parts.pop(seed_index)
    return (parts[0] if len(parts) == 1 else tuple(parts)), seed


def seed_means(cells: Mapping[Hashable, float], *, seed_index: int = -1) -> dict[Hashable, float]:
    """``{seed: mean of that seed's cells}`` from ``{(level..., seed): value}`` (see the module
    docstring: pooling cells would make df and interval too optimistic); a seed with fewer cells
    still counts once."""
    groups: dict[Hashable, list[float]] = {}
    for key, value in _as_mapping(cells, "cells").items():
        _, seed = _split_seed(key, seed_index)
        groups.setdefault(seed, []).append(value)
    return {seed: float(np.mean(v)) for seed, v in sorted(groups.items(), key=lambda kv: str(kv[0]))}


def by_level(cells: Mapping[Hashable, float], *, seed_index: int = -1) -> dict[Hashable, dict[Hashable, float]]:
    """``{level: {seed: value}}`` from ``{(level..., seed): value}``: the per-level samples of an
    "at every level" claim, each tested on its own seeds (intersection-union)."""
    out: dict[Hashable, dict[Hashable, float]] = {}
    for key, value in _as_mapping(cells, "cells").items():
        level, seed = _split_seed(key, seed_index)
        out.setdefault(level, {})[seed] = value
    return dict(sorted(out.items(), key=lambda kv: str(kv[0])))


# --------------------------------------------------------------------------------------------
# Input checking
# --------------------------------------------------------------------------------------------

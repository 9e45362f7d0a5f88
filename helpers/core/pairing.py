"""Pairing two arms by seed, under one stated policy.

Which seeds take part is a choice each caller names:

* ``"require_equal"``: both arms must have the same seeds; anything else is an error (a paired
  test on mismatched seeds would silently pair different runs).
* ``"intersection"``: both arms restricted to the seeds they share.
* ``"subset"``: ``b`` restricted to ``a``'s seeds, an error when ``b`` lacks one of them (a
  reading run on the first 3 seeds pairs with the baseline's first 3).
* ``"shared_or_unpaired"``: both arms on the seeds they share when they share at least
  :data:`MIN_SHARED`, otherwise both arms whole (to be compared unpaired): arms from separate
  sweeps may have seeds in common or none.

Arms are ``{seed: value}`` (any hashable key); results list the kept seeds in ``a``'s order, so
``zip(a.values(), b.values())`` pairs them. :func:`common_seeds`: the seeds several arms all have.

The unit of analysis is the seed, not the cells a seed contributes. Where one seed gives several
values (the cells of a (t, c) grid, the init modes of a cell), they share that seed's data order,
initial weights and, for a ΔBVS, the very GELU run they subtract: they are correlated, not
replicates. :func:`seed_means` averages them per seed before a test; :func:`by_level` splits them
per level for "at every level" claims, which are then tested level by level, each on its seeds
(intersection-union: every level must pass).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Literal, TypeVar

import numpy as np

from helpers.core.comparison import _as_mapping

V = TypeVar("V")
Policy = Literal["require_equal", "intersection", "subset", "shared_or_unpaired"]
POLICIES: tuple[str, ...] = ("require_equal", "intersection", "subset", "shared_or_unpaired")
#: The fewest shared seeds that ``"shared_or_unpaired"`` pairs on (one seed gives no paired interval).
MIN_SHARED = 2


def pair_by_seed(
    a: Mapping[Hashable, V], b: Mapping[Hashable, V], policy: Policy
) -> tuple[dict[Hashable, V], dict[Hashable, V]]:
    """``a`` and ``b`` on the seeds ``policy`` pairs (see the module docstring), in one order.

    ``"intersection"`` may return two empty arms (the caller decides what too few shared seeds mean)."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    only_a, only_b = [s for s in a if s not in b], [s for s in b if s not in a]
    if policy == "require_equal" and (only_a or only_b):
        raise ValueError(
            f"a paired comparison needs the same seeds in both arms; only in a: {only_a}, only in b: {only_b}"
        )
    if policy == "subset" and only_a:
        raise ValueError(f"the comparison arm has no run for seeds {only_a}")
    seeds = [s for s in a if s in b]
    if policy == "shared_or_unpaired" and len(seeds) < MIN_SHARED:
        return dict(a), dict(b)
    return {s: a[s] for s in seeds}, {s: b[s] for s in seeds}


def common_seeds(first: Mapping[Hashable, object], *others: Mapping[Hashable, object]) -> list[Hashable]:
    """The seeds every arm has, in ``first``'s order (``first`` alone: all its seeds)."""
    return [s for s in first if all(s in other for other in others)]


def _split_seed(key: Hashable, seed_index: int) -> tuple[Hashable, Hashable]:
    if not isinstance(key, tuple) or len(key) < 2:
        raise ValueError(f"cell keys must be tuples (level..., seed), got {key!r}")
    parts = list(key)
    seed = parts.pop(seed_index)
    return (parts[0] if len(parts) == 1 else tuple(parts)), seed


def seed_means(cells: Mapping[Hashable, float], *, seed_index: int = -1) -> dict[Hashable, float]:
    """``{seed: mean of that seed's cells}`` from ``{(level..., seed): value}`` (pooling cells would
    make df and interval too optimistic); a seed with fewer cells still counts once."""
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

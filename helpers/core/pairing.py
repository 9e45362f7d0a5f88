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
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Literal, TypeVar

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

"""What more seeds of a run-based part (:class:`~helpers.core.claim.RunDesign`) would show, with
its observed spread carried to another number of seeds:

* what the part must detect (:func:`target`): the margin of an equivalence or non-inferiority claim
  (compared with the margin those tests show with 80 % power, not with the two-sided MDE), the
  claimed effect of a size claim or of a direction claim that states one, else the observed effect
  (a bare "a beats b" is decided once an effect of its observed size is detectable);
* the power figure at ``n`` seeds (:func:`mde_at`: the two-sided MDE of
  :func:`~helpers.core.comparison.minimal_detectable_effect` for a difference, the margin of
  :func:`~helpers.core.comparison.detectable_margin` for TOST or non-inferiority): paired t or
  one-sample t with ``se = sd/√n``, ``df = n − 1``; Welch with ``n`` runs per arm,
  ``se = √((s_a² + s_b²)/n)`` and Welch-Satterthwaite ``df``;
* ``n needed`` (:func:`seeds_needed`): the smallest ``n`` whose MDE is below the target;
* the outcome at that ``n`` if the observed effect and spread stay (:func:`outcome_at`): the
  report's own rule (:func:`~helpers.core.verdicts.run_verdict`) on data of that mean and SD;
* every test at the level of the look the added seeds make (:func:`next_look`): seeds added after
  looking are one more look, and the report spends α over a scale's looks (``Scale.looks``), so a
  row decided at ``k`` looks is planned at ``0.05/(k + 1)``.

:mod:`tools.seed_plan` turns these into a plan with costs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from helpers.core.claim import RunClaim, RunDesign
from helpers.core.comparison import detectable_margin, minimal_detectable_effect
from helpers.core.statistics import (
    ALPHA,
    Comparison,
    one_sample,
    paired_comparison,
    welch_comparison,
)
from helpers.core.verdicts import run_verdict, spent

#: Where the search for ``n`` stops (an MDE that never falls below the target: none found).
SEARCH_LIMIT: int = 4096


def arm_sds(comp: Comparison) -> tuple[float, float]:
    """The SDs of the two arms of a Welch design (ddof = 1)."""
    return float(np.std(comp.values_a, ddof=1)), float(np.std(comp.values_b, ddof=1))


#: The designs the plan can carry to another n with the observed spread; others (the jackknife
#: over replicas of a U-statistic, bootstrap medians, counts) are not seed questions here.
PLANNED_TESTS: tuple[str, ...] = ("paired t", "one-sample t", "Welch t")


def next_look(comp: Comparison) -> int:
    """The look that adding seeds to ``comp``'s row makes: one more than the looks its interval was
    spent over (a 95 % interval: one look, so more seeds are the second)."""
    return round(ALPHA / (1 - comp.confidence)) + 1


def mde_at(comp: Comparison, n: int, claim: RunClaim = "direction") -> float:
    """The power figure of ``comp``'s design at ``n`` seeds (pairs, values, or runs per arm for
    Welch), with its observed spread, for the test ``claim`` uses: the two-sided MDE of a
    difference, or the margin TOST or non-inferiority shows with 80 % power
    (:func:`~helpers.core.comparison.detectable_margin`), as the report's rows state it."""
    if n < 2:
        raise ValueError(f"n must be at least 2 (one seed gives no spread), got {n!r}")
    if comp.test == "Welch t":
        va, vb = (s * s for s in arm_sds(comp))
        se = math.sqrt((va + vb) / n)
        df = (va + vb) ** 2 * (n - 1) / (va * va + vb * vb) if va + vb > 0 else 2.0 * (n - 1)
    elif comp.test in ("paired t", "one-sample t"):
        se, df = comp.sd / math.sqrt(n), n - 1
    else:
        raise ValueError(f"no seed plan for a {comp.test!r} comparison (not a t design)")
    alpha = ALPHA / next_look(comp)
    if claim in ("equivalence", "non-inferiority"):
        return detectable_margin(se, df, claim, alpha=alpha)
    return minimal_detectable_effect(se, df, alpha=alpha)


def current_n(comp: Comparison) -> int:
    """Seeds of the design now (runs per arm for Welch: the smaller arm)."""
    return min(comp.n_a, comp.n_b) if comp.test == "Welch t" else comp.n


def target(design: RunDesign) -> tuple[float, str]:
    """``(effect the part must detect, what it is)``: the margin, the claimed effect, or the
    observed effect of a bare direction claim."""
    if design.claim in ("equivalence", "non-inferiority"):
        return float(design.margin), "margin"  # type: ignore[arg-type]
    if design.claimed_effect is not None:
        return abs(float(design.claimed_effect)), "claimed effect"
    return abs(design.comparison.effect), "observed effect"  # type: ignore[union-attr]


def seeds_needed(design: RunDesign, *, limit: int = SEARCH_LIMIT) -> int | None:
    """The smallest ``n`` at which the part's MDE is below its :func:`target` (the current ``n``
    when it already is); ``None`` when no ``n`` up to ``limit`` reaches it."""
    comp = design.comparison
    if comp is None:
        raise ValueError("a part with too few runs has no spread to plan from")
    goal, _ = target(design)
    lo = current_n(comp)
    if mde_at(comp, lo, design.claim) < goal:
        return lo
    if goal <= 0 or mde_at(comp, limit, design.claim) >= goal:
        return None
    hi = limit
    while hi - lo > 1:  # the MDE falls as n grows: bisect for the first n below the goal
        mid = (lo + hi) // 2
        if mde_at(comp, mid, design.claim) < goal:
            hi = mid
        else:
            lo = mid
    return hi


def _standard(n: int) -> np.ndarray:
    """``n`` values with mean exactly 0 and SD exactly 1 (ddof = 1)."""
    z = np.linspace(-1.0, 1.0, n)
    return (z - z.mean()) / z.std(ddof=1)


def outcome_at(design: RunDesign, n: int) -> str:
    """The report's verdict (:func:`run_verdict`) at ``n`` seeds if the observed effect and spread
    stay: the rule applied to data of exactly that mean and SD."""
    comp = design.comparison
    if comp is None:
        raise ValueError("a part with too few runs has no effect to carry forward")
    z = _standard(n)
    if comp.test == "paired t":
        future = paired_comparison(comp.effect + comp.sd * z, np.zeros(n))
    elif comp.test == "one-sample t":
        future = one_sample(comp.effect + comp.sd * z, 0.0)
    elif comp.test == "Welch t":
        sa, sb = arm_sds(comp)
        future = welch_comparison(comp.effect + sa * z, sb * z)
    else:
        raise ValueError(f"no seed plan for a {comp.test!r} comparison (not a t design)")
    look = next_look(comp)
    return run_verdict(
        spent(future, look),
        design.claimed_effect,
        claim=design.claim,
        margin=design.margin,
        direction=design.direction,
        negligible=design.negligible,
        alpha=ALPHA / look,
    )


def combine_verdicts(verdicts: Sequence[str]) -> str:
    """A claim made of several run-based parts: confirmed when all are (confirmed but negligible when
    all are confirmed and some only negligibly); contradicted when any is; inconclusive otherwise."""
    if verdicts and set(verdicts) <= {"confirmed", "confirmed but negligible"}:
        return "confirmed" if set(verdicts) == {"confirmed"} else "confirmed but negligible"
    return "contradicted" if "contradicted" in verdicts else "inconclusive"

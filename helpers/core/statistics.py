"""Statistics behind every run-based verdict: paired or Welch differences, 95 % CIs, TOST, MDE,
each computed by :mod:`scipy.stats` (no distribution code is written here).

Paired: the arms share seeds (same data order and, mostly, same initial weights), so a difference is
taken *per seed*; Welch only for arms that do not share seeds or a source's printed mean ± sd. With
3 seeds a difference has 2 degrees of freedom and the two-sided 95 % t critical value is 4.30, not 2.
A margin (TOST, non-inferiority) is part of a claim: an argument, never a default.

When every paired difference is the same number, the standard error is 0: the CI collapses to it, p
is 0 (nonzero) or 1 (zero), the MDE 0; scipy returns NaN, we state the exact result
(:attr:`Comparison.exact`, :func:`~helpers.core.comparison.exact_text`).

The unit is the seed: a seed's correlated values are averaged first
(:func:`helpers.core.pairing.seed_means`) or split per level (:func:`helpers.core.pairing.by_level`).
TOST at 5 % per side rests on the 90 % interval (:meth:`Comparison.interval`)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from helpers.core.comparison import (
    ALPHA,
    CONFIDENCE,
    Comparison,
    InsufficientData,
    Values,
    _as_mapping,
    _check_level,
    _need,
    _negligible,
    _p_text,
    bootstrap_ci,
    interval_text,
    t_comparison,
)
from helpers.core.pairing import pair_by_seed


def seed_values(rows: Any, value: str, *, where: Mapping[str, Any], seed: str = "seed") -> dict[Hashable, float]:
    """``{seed: rows[value]}`` for the rows matching ``where`` (column -> value), as :func:`compare`
    takes it; a seed twice is an error (ambiguous pairing)."""
    mask = np.ones(len(rows), dtype=bool)
    for column, wanted in where.items():
        if column not in rows.columns:
            raise KeyError(f"no column {column!r} (have {list(rows.columns)})")
        col = rows[column]
        if isinstance(wanted, float) and math.isnan(wanted):
            mask &= col.isna().to_numpy()
        else:
            mask &= (col == wanted).to_numpy()
    sel = rows[mask]
    if sel.empty:
        raise ValueError(f"no rows match {dict(where)}")
    dupes = sel[seed][sel[seed].duplicated()].tolist()
    if dupes:
        raise ValueError(f"seeds {dupes} appear more than once for {dict(where)}")
    return {k: float(v) for k, v in zip(sel[seed], sel[value])}


def paired_comparison(a: Values, b: Values, *, confidence: float = CONFIDENCE) -> Comparison:
    """``a − b`` matched on seed (seed -> value; a sequence keyed by position): the mean per-seed
    difference and its t interval (``scipy.stats.ttest_rel``; df = n − 1). The seed sets must be equal."""
    _check_level(confidence)
    ma, mb = pair_by_seed(_as_mapping(a, "a"), _as_mapping(b, "b"), policy="require_equal")
    seeds = sorted(ma, key=str)
    _need(len(seeds), "each arm")
    va = np.array([ma[s] for s in seeds])
    vb = np.array([mb[s] for s in seeds])
    d = va - vb
    n = len(d)
    sd = float(np.std(d, ddof=1))
    if _negligible(sd, va, vb):
        sd = 0.0
    se = sd / math.sqrt(n)
    p = float(stats.ttest_rel(va, vb).pvalue) if se > 0 else math.nan
    return t_comparison(float(d.mean()), se, n - 1, n, p, "paired t", sd, n, n, confidence, va, vb)


def welch_comparison(a: Values, b: Values, *, confidence: float = CONFIDENCE) -> Comparison:
    """``mean(a) − mean(b)`` of arms that share no seeds: Welch's t (``scipy.stats.ttest_ind``,
    ``equal_var=False``; Welch-Satterthwaite df)."""
    _check_level(confidence)
    va = np.array(list(_as_mapping(a, "a").values()))
    vb = np.array(list(_as_mapping(b, "b").values()))
    _need(len(va), "a")
    _need(len(vb), "b")
    s2a, s2b = float(np.var(va, ddof=1)), float(np.var(vb, ddof=1))
    if _negligible(math.sqrt(max(s2a, s2b)), va, vb):
        s2a = s2b = 0.0
    se = math.sqrt(s2a / len(va) + s2b / len(vb))
    if se == 0:
        df, p = float(len(va) + len(vb) - 2), math.nan
    else:
        res = stats.ttest_ind(va, vb, equal_var=False)
        df, p = float(res.df), float(res.pvalue)
    effect, sd = float(va.mean() - vb.mean()), math.sqrt(max(s2a, s2b))
    return t_comparison(effect, se, df, len(va) + len(vb), p, "Welch t", sd, len(va), len(vb), confidence, va, vb)


def welch_from_stats(
    mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int, *, confidence: float = CONFIDENCE
) -> Comparison:
    """``mean_a − mean_b`` from a source's printed ``mean ± sd`` over ``n`` runs, by Welch's t
    (``scipy.stats.ttest_ind_from_stats``, ``equal_var=False``); test ``"Welch t from printed mean ±
    sd"``. No per-run values, so no :func:`tost` or :func:`non_inferiority`."""
    _check_level(confidence)
    _check_ints(n_a=n_a, n_b=n_b)
    for name, v in (("mean_a", mean_a), ("mean_b", mean_b)):
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {v!r}")
    for name, v in (("sd_a", sd_a), ("sd_b", sd_b)):
        if not math.isfinite(v):
            raise InsufficientData(f"{name} is {v}: the source prints no spread, so no interval")
        if v < 0:
            raise ValueError(f"{name} must be >= 0, got {v!r}")
    _need(int(n_a), "a")
    _need(int(n_b), "b")
    va, vb = sd_a**2 / n_a, sd_b**2 / n_b
    se = math.sqrt(va + vb)
    if se == 0:
        df, p = float(n_a + n_b - 2), math.nan
    else:
        df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
        p = float(stats.ttest_ind_from_stats(mean_a, sd_a, n_a, mean_b, sd_b, n_b, equal_var=False).pvalue)
    test, sd = "Welch t from printed mean ± sd", max(sd_a, sd_b)
    return t_comparison(float(mean_a - mean_b), se, df, int(n_a + n_b), p, test, sd, int(n_a), int(n_b), confidence)


def compare(a: Values, b: Values, *, paired: bool | None = None, confidence: float = CONFIDENCE) -> Comparison:
    """``a − b``: paired by seed when both arms have the same seeds (or ``paired=True``, which
    raises if they do not), Welch otherwise (or ``paired=False``)."""
    if paired is None:
        ma, mb = _as_mapping(a, "a"), _as_mapping(b, "b")
        paired = isinstance(a, Mapping) and isinstance(b, Mapping) and set(ma) == set(mb)
    if paired:
        return paired_comparison(a, b, confidence=confidence)
    return welch_comparison(a, b, confidence=confidence)


def one_sample(values: Values, null: float = 0.0, *, confidence: float = CONFIDENCE) -> Comparison:
    """``mean(values) − null`` with its t interval (``scipy.stats.ttest_1samp``; df = n − 1), for
    effects measured within each run (one network's drop when its activation is swapped)."""
    _check_level(confidence)
    if not math.isfinite(null):
        raise ValueError(f"null must be finite, got {null!r}")
    v = np.array(list(_as_mapping(values, "values").values()))
    _need(len(v), "values")
    sd = float(np.std(v, ddof=1))
    if _negligible(sd, v):
        sd = 0.0
    se = sd / math.sqrt(len(v))
    p = float(stats.ttest_1samp(v, null).pvalue) if se > 0 else math.nan
    return t_comparison(float(v.mean() - null), se, len(v) - 1, len(v), p, "one-sample t", sd, len(v), 0, confidence, v)


def median_comparison(
    values: Values, null: float = 0.0, *, confidence: float = CONFIDENCE, seed: int = 0
) -> Comparison:
    """``median(values) − null`` with its seeded BCa bootstrap interval (:func:`bootstrap_ci`), which
    decides, and the two-sided Wilcoxon signed-rank p (``scipy.stats.wilcoxon``), for heavy-tailed
    differences (timings) whose tables show medians. ``se`` and MDE are NaN; ``values_a`` holds
    ``values − null`` so :meth:`Comparison.interval` can redo the bootstrap."""
    _check_level(confidence)
    if not math.isfinite(null):
        raise ValueError(f"null must be finite, got {null!r}")
    v = np.array(list(_as_mapping(values, "values").values())) - null
    _need(len(v), "values")
    med, lo, hi = bootstrap_ci(v, np.median, seed=seed, confidence=confidence)
    if np.ptp(v) == 0:
        se, p = 0.0, (0.0 if med != 0 else 1.0)
    else:
        se = math.nan
        p = float(stats.wilcoxon(v).pvalue) if np.any(v != 0) else 1.0
    mde, sd = 0.0 if se == 0 else math.nan, float(np.std(v, ddof=1))
    test = "bootstrap median (BCa)"
    return Comparison(
        med, lo, hi, se, float(len(v) - 1), len(v), p, mde, test, sd, len(v), 0, confidence, tuple(v.tolist())
    )


@dataclass(frozen=True)
class Equivalence:
    """Result of :func:`tost` (or :func:`non_inferiority`: ``p_upper`` NaN). ``p``: the larger
    one-sided p; ``equivalent``: ``p < alpha``, i.e. the ``1 − 2·alpha`` CI inside ``(−margin, +margin)``."""

    margin: float
    p_lower: float
    p_upper: float
    p: float
    alpha: float
    equivalent: bool
    test: str
    #: The ``1 − 2·alpha`` two-sided interval the decision rests on (TOST at ``alpha`` per side is
    #: "this interval inside ``(−margin, +margin)``"; non-inferiority reads its lower end).
    interval: tuple[float, float] = (math.nan, math.nan)

    @property
    def level(self) -> float:
        return 1 - 2 * self.alpha

    def describe(self) -> str:
        word = "equivalent" if self.equivalent else "not shown equivalent"
        if not math.isfinite(self.p):  # decided by the interval alone (a bootstrap): show it
            return f"{self.test} {interval_text(*self.interval)}, margin ±{self.margin:.3g}: {word}"
        return f"{self.test}, margin ±{self.margin:.3g}: {_p_text(self.p)} ({word})"


def _check_ints(**values: Any) -> None:
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {v!r}")


def _check_margin(margin: float, alpha: float) -> None:
    if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be a finite number > 0 (state it in the claim), got {margin!r}")
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}")


def one_sided_p(comparison: Comparison, shift: float, alternative: str) -> float:
    """p of ``effect − shift`` > 0 (``greater``) or < 0 (``less``), with scipy's own tests."""
    va, vb = np.asarray(comparison.values_a), np.asarray(comparison.values_b)
    if comparison.se == 0:
        d = comparison.effect - shift
        return 0.0 if (d > 0 if alternative == "greater" else d < 0) else 1.0
    if comparison.test == "paired t":
        return float(stats.ttest_rel(va - shift, vb, alternative=alternative).pvalue)
    if comparison.test == "Welch t":
        return float(stats.ttest_ind(va - shift, vb, equal_var=False, alternative=alternative).pvalue)
    if comparison.test == "one-sample t":
        return float(stats.ttest_1samp(va, _null(comparison) + shift, alternative=alternative).pvalue)
    if " t " in f" {comparison.test} " and math.isfinite(comparison.df) and comparison.df > 0:
        # any other t statistic recorded with its standard error and degrees of freedom (e.g. the
        # jackknife over replicas of a U-statistic): the shifted effect over its se, on t(df)
        t = (comparison.effect - shift) / comparison.se
        return float(stats.t.sf(t, comparison.df) if alternative == "greater" else stats.t.cdf(t, comparison.df))
    raise ValueError(f"no one-sided test for a {comparison.test!r} comparison")


def _null(comparison: Comparison) -> float:
    """The null value a one-sample comparison was taken against (``mean − effect``)."""
    return float(np.mean(comparison.values_a)) - comparison.effect


def tost(comparison: Comparison, margin: float, *, alpha: float = ALPHA) -> Equivalence:
    """Two one-sided tests of ``|true effect| < margin``: rejecting both ``effect ≤ −margin`` and
    ``effect ≥ +margin`` at ``alpha``, each a scipy one-sided t test on data shifted by the margin,
    with the comparison's own pairing."""
    return _one_sided_tests(comparison, margin, alpha, both=True)


def non_inferiority(comparison: Comparison, margin: float, *, alpha: float = ALPHA) -> Equivalence:
    """One-sided test that ``effect > −margin`` ("not worse by more than ``margin``"), the half of
    :func:`tost` that a "matches or improves" claim needs."""
    return _one_sided_tests(comparison, margin, alpha, both=False)


def _one_sided_tests(comparison: Comparison, margin: float, alpha: float, *, both: bool) -> Equivalence:
    """TOST (``both``) or its lower half; a bootstrap interval has no one-sided test, so the
    ``1 − 2·alpha`` interval decides alone."""
    _check_margin(margin, alpha)
    interval = comparison.interval(1 - 2 * alpha)
    if comparison.bootstrap and not comparison.exact:
        inside = -margin < interval[0] and (not both or interval[1] < margin)
        test = f"{'equivalence' if both else 'non-inferiority'} by the {1 - 2 * alpha:.0%} {comparison.test} interval"
        return Equivalence(float(margin), math.nan, math.nan, math.nan, alpha, inside, test, interval)
    p_lo = one_sided_p(comparison, -margin, "greater")
    p_hi = one_sided_p(comparison, +margin, "less") if both else math.nan
    p = max(p_lo, p_hi) if both else p_lo
    test = f"{'TOST' if both else 'non-inferiority'} ({comparison.test})"
    return Equivalence(float(margin), p_lo, p_hi, p, alpha, p < alpha, test, interval)


@dataclass(frozen=True)
class Proportion:
    """``k`` successes of ``n`` trials with the exact (Clopper-Pearson) interval of the rate."""

    k: int
    n: int
    ci_low: float
    ci_high: float
    confidence: float = CONFIDENCE

    @property
    def rate(self) -> float:
        return self.k / self.n

    def ci_text(self) -> str:
        """The interval in percent, with enough decimals that its ends differ."""
        return interval_text(self.ci_low, self.ci_high, 0, spec=".{d}%")

    def describe(self) -> str:
        return f"{self.k}/{self.n} = {self.rate:.0%}, {self.confidence:.0%} CI {self.ci_text()} (exact binomial)"


def proportion(k: int, n: int, *, confidence: float = CONFIDENCE) -> Proportion:
    """``k`` of ``n`` with its Clopper-Pearson interval (``scipy.stats.binomtest``)."""
    _check_level(confidence)
    _check_ints(k=k, n=n)
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="exact")
    return Proportion(int(k), int(n), float(ci.low), float(ci.high), confidence)

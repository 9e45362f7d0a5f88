"""What a comparison is: :class:`Comparison` (effect, t interval, df, p, MDE), the level and
power the book uses, the input checks every test shares, and how the book prints a statistic
(intervals whose two ends never print the same, small values with the significant digits they
need, exact results in words). :mod:`helpers.core.statistics` computes the comparisons and
re-exports every name here."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate, optimize, stats

#: The most decimals :func:`interval_text` and :func:`number_text` add to tell values apart.
MAX_DECIMALS: int = 12


def interval_text(
    low: float, high: float, digits: int = 2, *, spec: str = "+.{d}f", scale: float = 1.0, suffix: str = ""
) -> str:
    """``"[low, high]"`` with at least ``digits`` decimals, more (up to :data:`MAX_DECIMALS`) until
    different ends print differently and a nonzero end not as zero (``[-0.10, -0.10]`` would look
    exact). ``spec``: the format with ``{d}`` (``".{d}%"`` for a rate); ``scale`` multiplies both
    ends before comparing (leave 1 for a ``%`` spec). Equal ends print unchanged."""

    def fmt(v: float, d: int) -> str:
        return format(v * scale, spec.format(d=d)) + suffix

    def value(text: str) -> float:  # "-0.000" and "+0.000" are the same printed number
        return float(text[: -len(suffix)] if suffix else text.rstrip("%"))

    def unclear(d: int) -> bool:
        lo, hi = fmt(low, d), fmt(high, d)
        zero_end = any(v != 0 and value(t) == 0 for v, t in ((low, lo), (high, hi)))
        return value(lo) == value(hi) or zero_end

    d = digits
    while d < MAX_DECIMALS and low != high and unclear(d):
        d += 1
    return f"[{fmt(low, d)}, {fmt(high, d)}]"


def number_text(value: float, digits: int = 2, *, spec: str = ".{d}f") -> str:
    """``value`` with ``digits`` decimals, or more (up to :data:`MAX_DECIMALS`) until a nonzero
    value shows a significant digit: an MDE of 4e-5 must not read "0.00"."""
    if not math.isfinite(value):
        return "n/a"
    if abs(value) < 0.5 * 10.0**-MAX_DECIMALS:
        # zero up to floating-point rounding (the mean of paired differences that cancel in
        # decimal but not in binary, ~1e-17): "+0.00", not "-0.000000000000"
        value = 0.0
    d = digits
    if value != 0:
        needed = -math.floor(math.log10(abs(value)))  # decimals for one significant digit
        d = min(MAX_DECIMALS, max(digits, needed))
    return format(value, spec.format(d=d))


def exact_text(n: int, unit: str = "seeds") -> str:
    """The words of an exact result, a count: ``"identical on all 3 seeds"``."""
    return f"identical on all {n} {unit}"


#: Two-sided confidence level of the intervals the book shows (TOST's 90 % interval is labelled).
CONFIDENCE: float = 0.95


#: Significance level (two-sided) of the difference tests and of each one-sided TOST test.
ALPHA: float = 0.05


#: Power at which :func:`minimal_detectable_effect` is computed.
POWER: float = 0.8


Values = Mapping[Hashable, float] | Sequence[float] | np.ndarray


def _as_mapping(values: Values, name: str) -> dict[Hashable, float]:
    """``{seed: value}``; a plain sequence is keyed by position. Rejects empty input and NaN/inf."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a mapping seed -> value or a sequence of numbers, got a string")
    if isinstance(values, Mapping):
        items = dict(values)
    else:
        try:
            items = dict(enumerate(np.asarray(values, dtype=float).ravel().tolist()))
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be numbers: {err}") from None
    if not items:
        raise ValueError(f"{name} is empty: a comparison needs at least 2 values per arm")
    out: dict[Hashable, float] = {}
    for key, value in items.items():
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"{name}[{key!r}] is not a number: {value!r}") from None
        if not math.isfinite(v):
            raise ValueError(f"{name}[{key!r}] is {v}: a failed or NaN run cannot enter a comparison")
        out[key] = v
    return out


class InsufficientData(ValueError):
    """Too few values for an interval (one seed per arm: the smoke profile); :func:`helpers.core.verdicts.judge`
    makes it "inconclusive"."""


def _need(n: int, name: str, minimum: int = 2) -> None:
    if n < minimum:
        raise InsufficientData(
            f"{name} has {n} value(s); a t interval needs at least {minimum} (one seed gives no spread)"
        )


def _negligible(sd: float, *arrays: np.ndarray) -> bool:
    """True when ``sd`` is float rounding of identical values (relative to their magnitude): such
    differences are exact, and scipy's moment calculation loses all precision on them."""
    scale = max([1.0] + [float(np.abs(a).max()) for a in arrays if len(a)])
    return sd <= 1e-12 * scale


def _check_level(confidence: float) -> None:
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


@dataclass(frozen=True)
class Comparison:
    """One estimated effect with its 95 % Student-t interval and what it could have detected.

    ``effect``: ``mean(a − b)`` (paired), ``mean(a) − mean(b)`` (Welch) or ``mean(a) − null`` (one
    sample); ``n``: pairs, or ``n_a + n_b`` (Welch); ``df`` fractional for Welch; ``p``: two-sided, of
    ``effect = 0``; ``mde`` at this ``se`` and ``df``; ``sd``: of the per-seed differences or values,
    for Welch the larger arm SD (the scale a fixed tolerance must beat).
    """

    effect: float
    ci_low: float
    ci_high: float
    se: float
    df: float
    n: int
    p: float
    mde: float
    test: str
    sd: float
    n_a: int
    n_b: int
    confidence: float = CONFIDENCE
    values_a: tuple[float, ...] = field(default=(), repr=False)
    values_b: tuple[float, ...] = field(default=(), repr=False)

    @property
    def paired(self) -> bool:
        return self.test.startswith("paired")

    def contains(self, value: float) -> bool:
        """True when ``value`` lies in the confidence interval (bounds included)."""
        return self.ci_low <= value <= self.ci_high

    def excludes_zero(self) -> bool:
        return not self.contains(0.0)

    @property
    def exact(self) -> bool:
        """Every difference (or value) is the same number: no sampling spread, an exact result."""
        return self.se == 0

    @property
    def bootstrap(self) -> bool:
        return self.test.startswith("bootstrap")

    def interval(self, confidence: float) -> tuple[float, float]:
        """The two-sided interval at ``confidence`` (the 90 % one that TOST at 5 % per side rests
        on, for instance), from the same t distribution, or the same seeded bootstrap."""
        _check_level(confidence)
        if confidence == self.confidence:
            return self.ci_low, self.ci_high
        if self.exact:
            return self.effect, self.effect
        if self.bootstrap:
            _, lo, hi = bootstrap_ci(self.values_a, np.median, seed=0, confidence=confidence)
            return lo, hi
        if not math.isfinite(self.se):
            raise ValueError(f"a {self.test!r} comparison has no interval at another level")
        half = float(stats.t.ppf(0.5 + confidence / 2, self.df)) * self.se
        return self.effect - half, self.effect + half

    def ci_text(self, digits: int = 2, confidence: float | None = None) -> str:
        """The interval at ``confidence`` (default: its own), with enough decimals that its two
        ends differ (:func:`interval_text`)."""
        lo, hi = self.interval(confidence) if confidence is not None else (self.ci_low, self.ci_high)
        return interval_text(lo, hi, digits)

    def n_text(self) -> str:
        if self.test.startswith("Welch"):
            return f"{self.n_a} vs {self.n_b} runs"
        return f"{self.n} {'pairs of runs' if self.paired else 'runs'}"

    def test_text(self) -> str:
        if self.bootstrap:
            return f"{self.test} ({self.n} values; Wilcoxon signed-rank {_p_text(self.p)})"
        df = f"{self.df:.0f}" if float(self.df).is_integer() else f"{self.df:.1f}"
        return f"{self.test} (df = {df}, {_p_text(self.p)})"

    def describe(self, digits: int = 2, unit: str = "") -> str:
        """``"+0.47 points, 95% CI [-1.2, +2.1] (paired t, df = 2, p = 0.41; 3 pairs of runs; MDE 3.1)"``."""
        u = f" {unit}" if unit else ""
        return (
            f"{self.effect:+.{digits}f}{u}, {self.confidence:.0%} CI {self.ci_text(digits)} "
            f"({self.test_text()}; {self.n_text()}; MDE {number_text(self.mde, digits)})"
        )


def _p_text(p: float) -> str:
    """``"p = 0.23"``, ``"p = 0.012"``, ``"p < 0.001"``."""
    if not math.isfinite(p):
        return "p n/a"
    return "p < 0.001" if p < 1e-3 else f"p = {p:.3f}" if p < 0.1 else f"p = {p:.2f}"


def t_comparison(
    effect: float,
    se: float,
    df: float,
    n: int,
    p: float,
    test: str,
    sd: float,
    n_a: int,
    n_b: int,
    confidence: float,
    values_a: Sequence[float] = (),
    values_b: Sequence[float] = (),
) -> Comparison:
    """The :class:`Comparison` of a t statistic (fields in its order): its interval at
    ``confidence`` on t(df) and its MDE; with ``se = 0`` the exact value (:mod:`helpers.core.statistics`)."""
    if se == 0:  # every difference identical: no sampling spread
        lo = hi = effect
        p = 0.0 if effect != 0 else 1.0
    else:
        half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
        lo, hi = effect - half, effect + half
    mde = minimal_detectable_effect(se, df)
    return Comparison(
        effect, lo, hi, se, df, n, float(p), mde, test, sd, n_a, n_b, confidence, tuple(values_a), tuple(values_b)
    )


def _check_se_df(se: float, df: float) -> None:
    if not (math.isfinite(se) and se >= 0):
        raise ValueError(f"se must be finite and >= 0, got {se!r}")
    if not (math.isfinite(df) and df > 0):
        raise ValueError(f"df must be > 0, got {df!r}")


def minimal_detectable_effect(se: float, df: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """Smallest true effect a two-sided t test at level ``alpha`` detects with probability ``power``.

    Exact, from the noncentral t distribution: the noncentrality ``λ`` solves
    ``P(|T| > t_{1−α/2, df}) = power`` for ``T ~ nct(df, λ)`` (``scipy.stats.nct``, root by
    ``scipy.optimize.brentq``), and the MDE is ``λ · se``. (The usual approximation
    ``(t_{1−α/2} + t_{power}) · se`` is close for large df and too small for df = 2.) ``se`` is the
    *observed* standard error, so the MDE says what this design could have seen at this spread.
    """
    _check_se_df(se, df)
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must be in (0, 1), got {alpha!r}, {power!r}")
    if se == 0:
        return 0.0
    crit = float(stats.t.ppf(1 - alpha / 2, df))

    def gap(nc: float) -> float:
        # the far lower tail can underflow to NaN in scipy's nct.cdf; it is negligible there
        lower = float(np.nan_to_num(stats.nct.cdf(-crit, df, nc), nan=0.0))
        return float(stats.nct.sf(crit, df, nc)) + lower - power

    hi = crit + 3.0
    while gap(hi) < 0:
        hi *= 2
    return float(optimize.brentq(gap, 0.0, hi, xtol=1e-10)) * se


@functools.lru_cache(maxsize=256)
def _margin_in_se(df: float, test: str, alpha: float, power: float) -> float:
    crit = float(stats.t.ppf(1 - alpha, df))
    if test == "non-inferiority":  # (effect + margin)/se ~ noncentral t at a true effect of 0
        return float(optimize.brentq(lambda nc: stats.nct.sf(crit, df, nc) - power, 0.0, 1e3, xtol=1e-10))

    # at a true effect of 0 with d = effect/σ ~ N(0, 1) and s = se/σ ~ √(χ²_df/df), both one-sided
    # tests reject when |d| < m − crit·s: integrate P(|d| < m − crit·s) = erf((m − crit·s)/√2)
    # against the density of s (a chi density, scaled; in closed form, so each point is cheap)
    log_norm = math.log(df) / 2 - (df / 2 - 1) * math.log(2) - math.lgamma(df / 2)

    def density(s: float) -> float:
        return math.exp(log_norm + (df - 1) * math.log(s * math.sqrt(df)) - df * s * s / 2) if s > 0 else 0.0

    def tost_power(m: float) -> float:
        upper = m / crit
        return integrate.quad(lambda s: math.erf((m - crit * s) / math.sqrt(2)) * density(s), 0.0, upper, limit=200)[0]

    hi = 2 * crit + 3.0
    while tost_power(hi) < power:
        hi *= 2
    return float(optimize.brentq(lambda m: tost_power(m) - power, crit * 1e-9, hi, xtol=1e-10))


def detectable_margin(
    se: float, df: float, test: str = "equivalence", *, alpha: float = ALPHA, power: float = POWER
) -> float:
    """The smallest margin that ``test`` shows with probability ``power`` when the true effect is 0,
    at this ``se`` and ``df``: the power figure of an equivalence (TOST, each side at ``alpha``) or
    a non-inferiority row, as :func:`minimal_detectable_effect` is that of a difference row.

    The two-sided MDE misstates it: at df = 2 the MDE is 5.65 se, while TOST reaches 80 % power at
    a margin of 4.61 se and non-inferiority at 3.98 se. Non-inferiority is the noncentral t
    (``scipy.stats.nct``) of ``(effect + margin)/se``; TOST integrates over the estimated standard
    error (``scipy.integrate.quad``), since both one-sided tests share it."""
    if test not in ("equivalence", "non-inferiority"):
        raise ValueError(f"test must be 'equivalence' or 'non-inferiority', got {test!r}")
    _check_se_df(se, df)
    if not 0 < alpha < 0.5 or not 0 < power < 1:
        raise ValueError(f"alpha must be in (0, 0.5) and power in (0, 1), got {alpha!r}, {power!r}")
    return 0.0 if se == 0 else _margin_in_se(float(df), test, alpha, power) * se


def bootstrap_ci(
    values: Values,
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    n_resamples: int = 9999,
) -> tuple[float, float, float]:
    """``(statistic, low, high)``: a seeded BCa bootstrap interval (``scipy.stats.bootstrap``) for
    statistics with no t interval (a median, a ratio); too narrow with a handful of seeds."""
    _check_level(confidence)
    v = np.array(list(_as_mapping(values, "values").values()))
    _need(len(v), "values")
    if np.ptp(v) == 0:
        s = float(statistic(v))
        return s, s, s
    if statistic in (np.mean, np.median):  # numpy's own axis: the same values, all resamples at once

        def vectorized(x: np.ndarray, axis: int = -1) -> np.ndarray:
            return statistic(x, axis=axis)
    else:

        def vectorized(x: np.ndarray, axis: int = -1) -> np.ndarray:
            return np.apply_along_axis(statistic, axis, x)

    res = stats.bootstrap(
        (v,),
        vectorized,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="BCa",
        rng=np.random.default_rng(seed),
    )
    return float(statistic(v)), float(res.confidence_interval.low), float(res.confidence_interval.high)

"""helpers.core.statistics against scipy.stats on hand-made data."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helpers.core import statistics as S

# ConvNeXt-tiny, CIFAR-10, cpu profile: S-ReLU (δ = 0.001) and ReLU score the same on every seed.
CONVNEXT = {0: 27.8, 1: 29.4, 2: 27.7}


def test_paired_matches_scipy_ttest_rel():
    a = {0: 71.2, 1: 70.1, 2: 72.5, 3: 70.9}
    b = {3: 70.0, 0: 70.5, 2: 71.0, 1: 70.2}  # order differs: pairing is by seed, not position
    c = S.paired_comparison(a, b)
    va, vb = np.array([a[k] for k in range(4)]), np.array([b[k] for k in range(4)])
    d = va - vb
    ref = stats.ttest_rel(va, vb)
    ci = ref.confidence_interval(0.95)
    assert c.effect == pytest.approx(d.mean())
    assert c.p == pytest.approx(ref.pvalue)
    assert (c.ci_low, c.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert c.df == 3 and c.n == 4 and c.test == "paired t" and c.paired
    assert c.sd == pytest.approx(d.std(ddof=1))


def test_welch_matches_scipy_ttest_ind():
    a, b = [1.0, 2.0, 3.5], [0.5, 0.7, 1.9, 1.1, 0.2]
    c = S.welch_comparison(a, b)
    ref = stats.ttest_ind(a, b, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert c.effect == pytest.approx(np.mean(a) - np.mean(b))
    assert c.df == pytest.approx(ref.df) and c.p == pytest.approx(ref.pvalue)
    assert (c.ci_low, c.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert c.n_a == 3 and c.n_b == 5 and not c.paired


def test_one_sample_matches_scipy():
    v = [0.02, -0.01, 0.03]
    c = S.one_sample(v, 0.01)
    ref = stats.ttest_1samp(v, 0.01)
    ci = stats.ttest_1samp(v, 0.0).confidence_interval(0.95)
    assert c.p == pytest.approx(ref.pvalue) and c.df == 2
    assert c.ci_low == pytest.approx(ci.low - 0.01) and c.ci_high == pytest.approx(ci.high - 0.01)


def test_paired_and_unpaired_differ_when_seeds_agree():
    """Identical per-seed scores: paired CI is the point 0, Welch's is ±2 points wide."""
    paired = S.compare(CONVNEXT, dict(CONVNEXT))
    welch = S.compare(CONVNEXT, dict(CONVNEXT), paired=False)
    assert paired.test == "paired t" and welch.test == "Welch t"
    assert (paired.ci_low, paired.ci_high, paired.mde) == (0.0, 0.0, 0.0)
    assert paired.p == 1.0
    ci = stats.ttest_ind(list(CONVNEXT.values()), list(CONVNEXT.values()), equal_var=False).confidence_interval()
    assert welch.ci_low == pytest.approx(ci.low) and welch.ci_high == pytest.approx(ci.high)
    assert welch.ci_high > 2.0
    # a shared seed effect: paired test sees a consistent +0.5, Welch does not
    shifted = {k: v + 0.5 + 0.01 * k for k, v in CONVNEXT.items()}
    assert S.compare(shifted, CONVNEXT).excludes_zero()
    assert not S.compare(shifted, CONVNEXT, paired=False).excludes_zero()


def test_paired_rejects_mismatched_seeds_and_bad_input():
    with pytest.raises(ValueError, match="same seeds"):
        S.paired_comparison({0: 1.0, 1: 2.0}, {0: 1.0, 2: 2.0})
    with pytest.raises(ValueError, match="same seeds"):
        S.compare({0: 1.0, 1: 2.0}, {0: 1.0, 2: 2.0}, paired=True)
    assert S.compare({0: 1.0, 1: 2.0}, {0: 1.0, 2: 2.5}).test == "Welch t"  # auto: seeds differ
    with pytest.raises(ValueError, match="empty"):
        S.one_sample([])
    with pytest.raises(ValueError, match="at least 2"):
        S.welch_comparison([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="NaN|nan"):
        S.paired_comparison([1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(TypeError):
        S.one_sample("abc")
    with pytest.raises(ValueError, match="confidence"):
        S.one_sample([1.0, 2.0], confidence=95)


def test_tost_matches_two_one_sided_scipy_tests():
    a = {0: 0.861, 1: 0.858, 2: 0.864}
    b = {0: 0.860, 1: 0.859, 2: 0.861}
    c = S.paired_comparison(a, b)
    res = S.tost(c, 0.01)
    d = np.array([a[k] - b[k] for k in range(3)])
    lo = stats.ttest_1samp(d, -0.01, alternative="greater").pvalue
    hi = stats.ttest_1samp(d, 0.01, alternative="less").pvalue
    assert res.p_lower == pytest.approx(lo) and res.p_upper == pytest.approx(hi)
    assert res.p == pytest.approx(max(lo, hi)) and res.equivalent == (max(lo, hi) < 0.05)
    # equivalence <=> the 90 % CI lies inside the margin
    ci90 = stats.ttest_1samp(d, 0).confidence_interval(0.90)
    assert res.equivalent == (-0.01 < ci90.low and ci90.high < 0.01)
    # too small a margin for the spread: not equivalent, though the CI contains 0
    assert not S.tost(c, 0.001).equivalent and c.contains(0.0)
    # Welch TOST uses ttest_ind on shifted data
    w = S.welch_comparison(a, b)
    lo_w = stats.ttest_ind(np.array(list(a.values())) + 0.01, list(b.values()), equal_var=False,
                           alternative="greater").pvalue
    assert S.tost(w, 0.01).p_lower == pytest.approx(lo_w)
    with pytest.raises(ValueError, match="margin"):
        S.tost(c, 0.0)


def test_non_inferiority_is_the_lower_half_of_tost():
    c = S.paired_comparison([70.0, 71.0, 69.5], [70.5, 70.8, 70.1])
    assert S.non_inferiority(c, 2.0).p == pytest.approx(S.tost(c, 2.0).p_lower)


def test_mde_gives_power_080_and_beats_the_normal_approximation():
    se, df = 0.7, 2
    mde = S.minimal_detectable_effect(se, df)
    crit = stats.t.ppf(0.975, df)
    nc = mde / se
    power = stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc)
    assert power == pytest.approx(0.8, abs=1e-6)
    # the t-quantile approximation undershoots at 2 df; both agree for large df
    approx = (stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) * se
    assert mde > approx
    big = S.minimal_detectable_effect(1.0, 10_000)
    assert big == pytest.approx(stats.norm.ppf(0.975) + stats.norm.ppf(0.8), rel=1e-3)
    assert S.minimal_detectable_effect(0.0, 3) == 0.0
    c = S.paired_comparison([1.0, 2.0, 4.0], [0.0, 0.5, 1.0])
    assert c.mde == pytest.approx(S.minimal_detectable_effect(c.se, 2))
    with pytest.raises(ValueError):
        S.minimal_detectable_effect(float("nan"), 2)


def test_describe_names_effect_ci_test_n_and_mde():
    text = S.paired_comparison([1.0, 2.0, 4.0], [0.0, 0.5, 1.0]).describe(unit="points")
    for part in ("points", "95% CI", "paired t", "df = 2", "3 pairs of runs", "MDE"):
        assert part in text, text


def test_seed_values_from_rows():
    rows = pd.DataFrame({"activation": ["a", "a", "b", "b"], "seed": [0, 1, 0, 1], "best": [1.0, 2.0, 3.0, 4.0]})
    assert S.seed_values(rows, "best", where={"activation": "b"}) == {0: 3.0, 1: 4.0}
    with pytest.raises(ValueError, match="no rows"):
        S.seed_values(rows, "best", where={"activation": "c"})
    dup = pd.concat([rows, rows.iloc[[0]]])
    with pytest.raises(ValueError, match="more than once"):
        S.seed_values(dup, "best", where={"activation": "a"})


def test_bootstrap_and_proportion():
    est, lo, hi = S.bootstrap_ci([1.0, 2.0, 3.0, 4.0, 5.5], seed=1)
    assert lo < est < hi
    assert S.bootstrap_ci([1.0, 2.0, 3.0, 4.0, 5.5], seed=1) == (est, lo, hi)  # seeded
    p = S.proportion(20, 25)
    ref = stats.binomtest(20, 25).proportion_ci(method="exact")
    assert (p.ci_low, p.ci_high) == (pytest.approx(ref.low), pytest.approx(ref.high))
    with pytest.raises(ValueError):
        S.proportion(3, 2)
    assert math.isclose(p.rate, 0.8)


def test_welch_from_stats_matches_welch_on_the_values():
    a, b = [1.0, 2.0, 3.5], [0.0, 0.3, 1.1]
    ref = S.welch_comparison(a, b)
    got = S.welch_from_stats(float(np.mean(a)), float(np.std(a, ddof=1)), 3, float(np.mean(b)),
                             float(np.std(b, ddof=1)), 3)
    for field in ("effect", "ci_low", "ci_high", "se", "df", "p", "mde"):
        assert getattr(got, field) == pytest.approx(getattr(ref, field)), field
    assert got.test == "Welch t from printed mean ± sd" and got.n_text() == "3 vs 3 runs"
    with pytest.raises(S.InsufficientData, match="no spread"):
        S.welch_from_stats(95.4, float("nan"), 1, 95.4, float("nan"), 1)
    with pytest.raises(S.InsufficientData):
        S.welch_from_stats(1.0, 0.1, 1, 0.0, 0.1, 3)
    with pytest.raises(TypeError):
        S.welch_from_stats(1.0, 0.1, 3.0, 0.0, 0.1, 3)
    with pytest.raises(ValueError):
        S.tost(got, 1.0)  # no per-run values: no one-sided test

"""helpers.core.statistics against scipy.stats on hand-made data."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helpers.core import comparison as K
from helpers.core import statistics as S

# Hand-made per-seed accuracies (%), compared with themselves where two arms score alike on every seed.
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
    lo_w = stats.ttest_ind(
        np.array(list(a.values())) + 0.01, list(b.values()), equal_var=False, alternative="greater"
    ).pvalue
    assert S.tost(w, 0.01).p_lower == pytest.approx(lo_w)
    with pytest.raises(ValueError, match="margin"):
        S.tost(c, 0.0)


def test_non_inferiority_is_the_lower_half_of_tost():
    c = S.paired_comparison([70.0, 71.0, 69.5], [70.5, 70.8, 70.1])
    assert S.non_inferiority(c, 2.0).p == pytest.approx(S.tost(c, 2.0).p_lower)


def test_mde_gives_power_080_and_beats_the_normal_approximation():
    se, df = 0.7, 2
    mde = K.minimal_detectable_effect(se, df)
    crit = stats.t.ppf(0.975, df)
    nc = mde / se
    power = stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc)
    assert power == pytest.approx(0.8, abs=1e-6)
    # the t-quantile approximation undershoots at 2 df; both agree for large df
    approx = (stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) * se
    assert mde > approx
    big = K.minimal_detectable_effect(1.0, 10_000)
    assert big == pytest.approx(stats.norm.ppf(0.975) + stats.norm.ppf(0.8), rel=1e-3)
    assert K.minimal_detectable_effect(0.0, 3) == 0.0
    c = S.paired_comparison([1.0, 2.0, 4.0], [0.0, 0.5, 1.0])
    assert c.mde == pytest.approx(K.minimal_detectable_effect(c.se, 2))
    with pytest.raises(ValueError):
        K.minimal_detectable_effect(float("nan"), 2)


@pytest.mark.parametrize("df", [2, 5])
def test_the_margin_tost_and_non_inferiority_detect_has_power_080_by_simulation(df):
    """At the margin :func:`detectable_margin` gives, TOST (and the one-sided non-inferiority test)
    at 5 % per side shows equivalence in 80 % of simulated designs with a true difference of 0; the
    two-sided MDE is another number (5.65 se at df = 2, against 4.61 and 3.98)."""
    n = df + 1
    d = np.random.default_rng(df).standard_normal((200_000, n))
    mean, se = d.mean(1), d.std(1, ddof=1) / math.sqrt(n)
    crit = stats.t.ppf(0.95, df)
    sigma = 1 / math.sqrt(n)  # the true standard error, on which the margin is computed
    tost = K.detectable_margin(sigma, df, "equivalence")
    ni = K.detectable_margin(sigma, df, "non-inferiority")
    assert np.mean((mean - crit * se > -tost) & (mean + crit * se < tost)) == pytest.approx(0.8, abs=0.005)
    assert np.mean(mean - crit * se > -ni) == pytest.approx(0.8, abs=0.005)
    if df == 2:
        assert (tost / sigma, ni / sigma) == pytest.approx((4.61, 3.98), abs=0.01)
        assert K.minimal_detectable_effect(sigma, df) / sigma == pytest.approx(5.65, abs=0.01)
    assert K.detectable_margin(0.0, df) == 0.0
    with pytest.raises(ValueError, match="test must be 'equivalence' or 'non-inferiority', got 'size'"):
        K.detectable_margin(1.0, df, "size")
    with pytest.raises(ValueError, match="df must be > 0"):
        K.detectable_margin(1.0, float("nan"))


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
    got = S.welch_from_stats(
        float(np.mean(a)), float(np.std(a, ddof=1)), 3, float(np.mean(b)), float(np.std(b, ddof=1)), 3
    )
    for field in ("effect", "ci_low", "ci_high", "se", "df", "p", "mde"):
        assert getattr(got, field) == pytest.approx(getattr(ref, field)), field
    assert got.test == "Welch t from printed mean ± sd" and got.n_text() == "3 vs 3 runs"
    with pytest.raises(S.InsufficientData, match="no spread"):
        S.welch_from_stats(95.4, float("nan"), 1, 95.4, float("nan"), 1)
    with pytest.raises(S.InsufficientData):
        S.welch_from_stats(1.0, 0.1, 1, 0.0, 0.1, 3)
    with pytest.raises(TypeError):
        S.welch_from_stats(1.0, 0.1, 3.0, 0.0, 0.1, 3)
    # no per-run values, but its se and Welch-Satterthwaite df give the one-sided t tests of TOST,
    # which agree with scipy's on the values
    assert S.tost(got, 1.0).p == pytest.approx(S.tost(ref, 1.0).p)


# ------------------------------------------------------------------ the seed as the unit of analysis
def _correlated_grid(n_seeds: int = 5, levels: tuple[float, ...] = (1.0, 3.0, 6.0, 9.0), *, rng_seed: int = 7):
    """A toy (t, c) grid: every cell of a seed subtracts that seed's one GELU run, so the cells of a
    seed share its (large) GELU noise; each cell adds a little noise of its own."""
    rng = np.random.default_rng(rng_seed)
    gelu_noise = rng.normal(0.0, 1.0, n_seeds)  # one GELU run per seed, shared by all its cells
    return {(c, s): 0.3 - gelu_noise[s] + rng.normal(0.0, 0.05) for c in levels for s in range(n_seeds)}


def test_seed_level_analysis_counts_seeds_not_cells():
    from helpers.core.pairing import by_level, seed_means

    cells = _correlated_grid()
    per_seed = seed_means(cells)
    assert sorted(per_seed) == [0, 1, 2, 3, 4]
    seed_level = S.one_sample(per_seed)
    pooled = S.one_sample(list(cells.values()))  # the pseudo-replicated reading: 20 "runs"
    assert seed_level.df == len(per_seed) - 1 == 4 and pooled.df == 19
    assert seed_level.effect == pytest.approx(pooled.effect)  # a balanced design: the same mean
    # the shared GELU run makes the cells of a seed move together: counting them as independent
    # shrinks the interval; the seed-level interval is the honest, wider one
    assert (seed_level.ci_high - seed_level.ci_low) > 1.5 * (pooled.ci_high - pooled.ci_low)
    levels = by_level(cells)
    assert list(levels) == [1.0, 3.0, 6.0, 9.0] and all(sorted(v) == [0, 1, 2, 3, 4] for v in levels.values())


def test_seed_means_counts_a_seed_once_whatever_its_number_of_cells():
    from helpers.core.pairing import seed_means

    cells = {(1.0, 0): 1.0, (3.0, 0): 3.0, (9.0, 0): 5.0, (9.0, 1): 10.0}
    assert seed_means(cells) == {0: 3.0, 1: 10.0}
    with pytest.raises(ValueError, match="tuples"):
        seed_means({0: 1.0, 1: 2.0})


def test_grid_close_to_gelu_is_tested_per_c_on_seeds():
    from helpers.lambda_gelu.grid import close_to_gelu_stats

    cells = {(c, s): 0.001 * ((-1) ** s) for c in (1.0, 3.0) for s in range(4)}
    verdict, fields = close_to_gelu_stats(cells, 0.01)
    assert verdict == "confirmed" and "4 seeds per c" in fields["n"] and "df = 3" in fields["test"]
    one_seed = {**cells, (6.0, 0): 0.0}  # a c run on one seed gives no interval: the claim cannot pass
    verdict, fields = close_to_gelu_stats(one_seed, 0.01)
    assert verdict == "inconclusive" and "c = 6 inconclusive" in fields["test"]


# ------------------------------------------------------------------ intervals as they are shown
def test_interval_text_never_prints_two_different_ends_the_same():
    rng = np.random.default_rng(0)
    for _ in range(500):
        lo = float(rng.normal(0, 10) * 10.0 ** rng.integers(-6, 2))
        hi = lo + float(abs(rng.normal()) * 10.0 ** rng.integers(-9, 1)) + 1e-12
        text = K.interval_text(lo, hi, 2)
        a, b = text.strip("[]").split(", ")
        assert float(a) != float(b), text
    assert K.interval_text(-0.1000204, -0.1000014) == "[-0.10002, -0.10000]"
    assert K.interval_text(-2e-5, 3e-5, 3) == "[-0.00002, +0.00003]"  # no "[-0.000, +0.000]"
    assert K.interval_text(0.5, 0.5) == "[+0.50, +0.50]"  # equal ends are an exact result, printed as such


def test_number_text_shows_a_significant_digit():
    assert K.number_text(4e-5) == "0.00004" and K.number_text(0.27, 1) == "0.3" and K.number_text(0.0) == "0.00"
    # rounding noise of a zero difference prints as zero, with its sign spec, not as 12 decimals
    assert K.number_text(-1.1e-17, spec="+.{d}f") == "+0.00" and K.number_text(4e-12) == "0.000000000004"


def test_tost_rests_on_the_90_percent_interval():
    rng = np.random.default_rng(3)
    for _ in range(200):
        a = {k: float(v) for k, v in enumerate(rng.normal(0.2, 0.3, 4))}
        b = {k: float(v) for k, v in enumerate(rng.normal(0.0, 0.3, 4))}
        comp = S.paired_comparison(a, b)
        lo, hi = comp.interval(0.90)
        assert comp.ci_low < lo < hi < comp.ci_high
        eq = S.tost(comp, 0.5)
        assert eq.interval == (pytest.approx(lo), pytest.approx(hi))
        assert eq.equivalent == (-0.5 < lo and hi < 0.5)


def test_median_comparison_bootstraps_the_median_and_reports_a_signed_rank_p():
    rounds = [1.0, 2.0, -1.0, 0.5, 1.5, 30.0, 0.8, 1.2, -27.0, 0.9, 1.1]  # heavy tails
    comp = S.median_comparison(rounds)
    assert comp.effect == pytest.approx(np.median(rounds)) and comp.bootstrap
    assert comp.ci_low <= comp.effect <= comp.ci_high
    assert comp.p == pytest.approx(stats.wilcoxon(rounds).pvalue)
    assert math.isnan(comp.mde) and "Wilcoxon signed-rank" in comp.test_text()
    eq = S.tost(comp, 5.0)
    lo, hi = comp.interval(0.90)
    assert eq.equivalent == (-5.0 < lo and hi < 5.0) and math.isnan(eq.p)
    assert "90%" in eq.describe()

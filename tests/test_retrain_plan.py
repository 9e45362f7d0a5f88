"""The seed plan (``python -m tools.retrain --plan``): seeds that would bring a row's MDE
below what it must detect, their cost, and rows out of reach."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from helpers.core.claim import Claim, RunDesign
from helpers.core.report import claims_frame
from helpers.core.statistics import paired_comparison, welch_comparison
from helpers.core.verdicts import intersection_union, judge, run_verdict
from tools import retrain
from tools import seed_design as D
from tools import seed_plan as S

ROOT = Path(__file__).resolve().parents[1]


def _power(noncentrality: float, df: float, alpha: float = 0.05) -> float:
    """Power of a two-sided t test, straight from the noncentral t (independent of the MDE code)."""
    crit = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(crit, df, noncentrality) + stats.nct.cdf(-crit, df, noncentrality))


def _paired_design(mean: float = 0.2, sd: float = 1.0, margin: float = 1.0) -> RunDesign:
    d = np.array([mean - sd, mean, mean + sd])  # three pairs, differences of SD exactly ``sd``
    comp = paired_comparison(d, np.zeros(3))
    verdict = run_verdict(comp, claim="equivalence", margin=margin)
    return RunDesign(comp, "equivalence", margin=margin, verdict=verdict)


def _claim(*designs: RunDesign, notebook: str = "notebooks/99_toy") -> Claim:
    return Claim(
        claim="toy: a matches b",
        source="toy",
        paper_value="p",
        our_value="o",
        profile="cpu",
        scale="",
        verdict="inconclusive",
        notebook=notebook,
        design=designs,
        key="plan-claim-1",
    )


def _tost_power(n: int, margin: float, alpha: float = 0.05, draws: int = 200_000) -> float:
    """TOST's power at a true difference of 0 with n pairs of unit SD, by simulation (independent
    of the planning code)."""
    d = np.random.default_rng(1).standard_normal((draws, n))
    mean, se = d.mean(1), d.std(1, ddof=1) / math.sqrt(n)
    crit = stats.t.ppf(1 - alpha, n - 1)
    return float(np.mean((mean - crit * se > -margin) & (mean + crit * se < margin)))


def test_paired_equivalence_needs_the_seeds_tost_needs_not_a_difference_tests():
    design = _paired_design()
    assert design.verdict == "inconclusive" and design.comparison.mde > 1.0
    # margin = 1 SD of the differences. At one look a two-sided difference test would reach 80 % power
    # at n = 10 (the classic table value for d = 1) and TOST at a true difference of 0 at n = 11; the
    # seeds the plan adds are the row's second look, so each test runs at α = 0.025: n = 13 for both
    assert _power(1.0 * math.sqrt(9), 8) < 0.8 < _power(1.0 * math.sqrt(10), 9)
    assert _tost_power(10, 1.0) < 0.8 < _tost_power(11, 1.0)
    assert _tost_power(12, 1.0, 0.025) < 0.8 < _tost_power(13, 1.0, 0.025)
    assert D.next_look(design.comparison) == 2 and D.seeds_needed(design) == 13
    assert D.target(design) == (1.0, "margin")
    assert D.mde_at(design.comparison, 13, "equivalence") < 1.0 <= D.mde_at(design.comparison, 12, "equivalence")
    assert D.mde_at(design.comparison, 13) < 1.0 <= D.mde_at(design.comparison, 12)  # the difference test's


def test_welch_design_plans_equal_runs_per_arm():
    a, b = np.array([1.5 - 1.0, 1.5, 1.5 + 1.0]), np.array([-2.0, 0.0, 2.0, 0.0])  # SDs 1 and √(8/3)
    comp = welch_comparison(a, b)
    design = RunDesign(comp, "direction", claimed_effect=1.5, verdict=run_verdict(comp, 1.5))
    assert design.verdict == "inconclusive"
    n = D.seeds_needed(design)
    va, vb = 1.0, 8 / 3
    for k, below in ((n, True), (n - 1, False)):  # Welch-Satterthwaite df with k runs per arm, by hand
        se, df = math.sqrt((va + vb) / k), (va + vb) ** 2 * (k - 1) / (va**2 + vb**2)
        assert (_power(1.5 / se, df, alpha=0.025) > 0.8) is below  # the second look's level
    assert D.current_n(comp) == 3


def test_plan_row_costs_extra_seeds_of_the_compared_arms():
    cost = S.RunCost(seconds_per_run=1800.0, runs_per_seed=5, bf16=False, basis="toy set")
    row = S.plan_row(_claim(_paired_design()), None, cost, max_seeds=30, budget_core_hours=40.0)
    assert (row["n"], row["n needed"], row["extra seeds"], row["arms"]) == (3, 13, 10, 2)
    assert row["core-hours"] == pytest.approx(10 * 2 * 0.5)
    assert row["core-hours (every arm of the set)"] == pytest.approx(10 * 5 * 0.5)
    assert row["status"] == "reachable" and row["CPU"] == S.ANY_CPU


def test_rows_beyond_the_seed_cap_or_the_budget_are_out_of_reach():
    cheap = S.RunCost(seconds_per_run=60.0, runs_per_seed=2, bf16=False, basis="toy")
    many = S.plan_row(_claim(_paired_design(margin=0.3)), None, cheap, max_seeds=30, budget_core_hours=40.0)
    assert many["n needed"] > 30 and many["status"].startswith("out of reach")
    dear = S.RunCost(seconds_per_run=36000.0, runs_per_seed=2, bf16=False, basis="toy")
    costly = S.plan_row(_claim(_paired_design()), None, dear, max_seeds=30, budget_core_hours=40.0)
    assert costly["n needed"] == 13 and costly["status"].startswith("out of reach")
    assert "core-hours > the 40 budget" in costly["status"]


def test_bf16_run_sets_say_they_need_native_bf16(monkeypatch):
    configs = [SimpleNamespace(seed=s, precision=p) for s in (0, 1) for p in ("bf16", "float32")]
    monkeypatch.setattr(S, "load_result", lambda cfg: {"train_seconds": 3600.0, "provenance": {"cpu_model": "Toy"}})
    cost = S.run_cost(configs, "toy set")
    assert cost.bf16 and cost.runs_per_seed == 2 and cost.seconds_per_run == 3600.0 and cost.cpus == ("Toy",)
    row = S.plan_row(_claim(_paired_design()), None, cost, max_seeds=30, budget_core_hours=40.0)
    assert row["CPU"] == S.BF16_CPU == "native bf16 (AMX or AVX512-BF16)"


def test_a_reused_training_is_added_to_its_analysis_time(monkeypatch):
    trained = SimpleNamespace(seed=0)
    arm = SimpleNamespace(seed=0, train_config=lambda: trained)
    results = {
        id(arm): {"train_seconds": 60.0, "reproduces": {"reused_weights": True}},
        id(trained): {"train_seconds": 1000.0},
    }
    monkeypatch.setattr(S, "load_result", lambda cfg: results[id(cfg)])
    assert S.run_cost([arm], "toy").seconds_per_run == 1060.0


def test_rows_without_a_t_design_or_spread_are_said_so():
    one_seed = RunDesign(None, "direction", direction=1)
    assert S.plan_row(_claim(one_seed), None, None, max_seeds=30, budget_core_hours=40.0)["status"].startswith(
        "fewer than 2 seeds"
    )
    count = Claim(
        claim="rate",
        source="toy",
        paper_value="p",
        our_value="o",
        profile="cpu",
        scale="",
        verdict="inconclusive",
        notebook="nb",
        test="exact binomial (Clopper-Pearson) 95% CI",
        key="plan-claim-2",
    )
    assert S.plan_row(count, None, None, max_seeds=30, budget_core_hours=40.0)["status"].startswith(
        "not a seed question"
    )
    units = S.RowRuns("99_toy", "", "pairs", None, why="its units are pairs")
    assert (
        S.plan_row(_claim(_paired_design()), units, None, max_seeds=30, budget_core_hours=40.0)["status"]
        == "not a seed question: its units are pairs"
    )


def test_a_part_already_confirmed_needs_no_seeds_and_shared_arms_count_once():
    shared = np.array([1.0, 2.0, 3.5])
    easy = paired_comparison(shared, shared - np.array([5.0, 5.1, 4.9]))
    hard = paired_comparison(shared, shared - np.array([0.2, -0.8, 1.1]))
    verdict, fields = intersection_union(
        {"vs x": judge(lambda: easy, direction=1, label="vs x"), "vs y": judge(lambda: hard, direction=1, label="vs y")}
    )
    claim = _claim(*fields["design"])
    assert [d.verdict for d in claim.design] == ["confirmed", "inconclusive"]
    row = S.plan_row(claim, None, S.RunCost(60.0, 3, False, "toy"), max_seeds=30, budget_core_hours=40.0)
    assert row["n needed"] == D.seeds_needed(claim.design[1]) and row["parts"] == ""
    assert row["arms"] == 3  # the tested arm and two competitors


def test_the_design_is_kept_but_not_displayed():
    verdict, fields, comp = judge(lambda: _paired_design().comparison, claim="equivalence", margin=1.0)
    claim = _claim(*fields["design"])
    assert claim.design[0].comparison is comp and claim.design[0].margin == 1.0
    assert "design" not in claim.as_row() and "design" not in claims_frame([claim]).columns
    assert claim == _claim()  # the design takes no part in equality


def test_plan_frame_lists_only_inconclusive_run_rows_and_checks_its_limits():
    confirmed = Claim(
        claim="c",
        source="toy",
        paper_value="p",
        our_value="o",
        profile="cpu",
        scale="",
        verdict="confirmed",
        notebook="nb",
        key="plan-claim-3",
    )
    frame = S.plan_frame([confirmed, _claim(_paired_design())], [], budget_core_hours=40.0)
    assert list(frame.columns) == list(S.PLAN_COLUMNS) and len(frame) == 1
    assert frame.loc[0, "n needed"] == 13 and "cost unknown" in frame.loc[0, "status"]
    assert frame["bought by"].dtype == object  # a caller writes claim names into it
    with pytest.raises(ValueError, match="max_seeds"):
        S.plan_frame([], [], budget_core_hours=40.0, max_seeds=1)
    with pytest.raises(ValueError, match="budget_core_hours"):
        S.plan_frame([], [], budget_core_hours=0.0)


def test_the_cli_prints_the_plan_and_exits_0(monkeypatch, capsys):
    # the plan reads the committed results (it trains and writes nothing): not the test's empty folder
    monkeypatch.delenv("REPRO_RESULTS_DIR", raising=False)
    try:
        code = retrain.main(["--plan"])
    except SystemExit as stop:
        code = stop.code
    out = capsys.readouterr().out
    assert code in (None, 0), out
    assert "n needed" in out and "core-hours" in out
    assert "rows reachable" in out.splitlines()[-1]


def test_a_claim_of_several_parts_is_as_strong_as_its_weakest_part():
    assert D.combine_verdicts(["confirmed", "confirmed"]) == "confirmed"
    assert D.combine_verdicts(["confirmed", "confirmed but negligible"]) == "confirmed but negligible"
    assert D.combine_verdicts(["confirmed", "inconclusive"]) == "inconclusive"
    assert D.combine_verdicts(["confirmed", "contradicted"]) == "contradicted"
    assert D.combine_verdicts(["contradicted", "inconclusive"]) == "contradicted"
    assert D.combine_verdicts([]) == "inconclusive"

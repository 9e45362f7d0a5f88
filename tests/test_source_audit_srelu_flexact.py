"""The audits of the S-ReLU and Flex-Act sources against themselves: each finding's computation."""

from __future__ import annotations

import math

import pytest
import sympy as sp

from helpers.core.claim import ANCHOR_PATTERN, Claim
from helpers.flexact import audit as FA
from helpers.flexact.paper import TABLE1
from helpers.srelu import audit as SA


@pytest.fixture(scope="module")
def srelu_rows(committed_claims) -> list[Claim]:
    """The S-ReLU audit's rows of the shared report (computed by ``SA.claims``, not again here)."""
    return [c for c in committed_claims if c.decided_by.startswith(SA.__name__ + ".")]


@pytest.fixture(scope="module")
def flexact_rows(committed_claims) -> list[Claim]:
    return [c for c in committed_claims if c.decided_by.startswith(FA.__name__ + ".")]


def test_every_audit_row_points_to_its_audit_page_with_a_valid_anchor(srelu_rows, flexact_rows) -> None:
    for rows, page, findings in ((srelu_rows, SA.NB_AUDIT, SA.FINDINGS), (flexact_rows, FA.NB_AUDIT, FA.FINDINGS)):
        assert rows
        for c in rows:
            assert c.notebook == page
            anchor, where = findings[c.key.split("-audit-", 1)[1]]
            assert ANCHOR_PATTERN.fullmatch(c.anchor) and c.anchor == anchor and c.source.endswith(f", {where}")
            assert c.our_value and c.paper_value


def test_elu_and_celu_at_their_default_alpha_are_the_same_function() -> None:
    gap, dgap, a_e, a_c = SA.elu_celu_gap(n=2001)
    assert (gap, dgap, a_e, a_c) == (0.0, 0.0, 1.0, 1.0)


def test_the_printed_elu_celu_cells_disagree_only_on_table1_cifar100(srelu_rows) -> None:
    row = next(c for c in srelu_rows if c.claim.startswith("The printed ELU and CELU"))
    assert row.verdict == "contradicted" and row.basis == "source"
    assert "1 of 6 cells" in row.our_value and "CIFAR-100" in row.our_value


def test_lipschitz_constants_of_the_baselines() -> None:
    table = SA.lipschitz_table(step=1e-3)
    assert table["srelu"] == pytest.approx(1.0, abs=1e-9)
    for name in ("elu", "celu", "prelu", "relu"):
        assert table[name] == pytest.approx(1.0, abs=1e-9)
    assert table["gelu"] == pytest.approx(1.1289, abs=1e-4)
    assert table["silu"] == pytest.approx(1.0998, abs=1e-4)
    assert table["mish"] == pytest.approx(1.0885, abs=1e-4)


def test_srelu_gradient_vanishes_on_almost_all_negative_gaussian_inputs() -> None:
    table = SA.negative_axis_table(delta=0.001, step=1e-4)
    assert table["srelu"]["zero_gradient_share"] == pytest.approx(1 - math.erf(0.001 / math.sqrt(2)), abs=1e-4)
    assert table["srelu"]["min_value"] == 0.0
    for name in SA.BASELINES:
        assert table[name]["zero_gradient_share"] < 1e-3
        assert table[name]["min_value"] < 0


def test_negative_axis_table_uses_the_delta_it_is_given() -> None:
    # S-ReLU is exactly 0 below −δ, so the share is P(h < −δ) / P(h < 0) = 1 − erf(δ/√2)
    share = SA.negative_axis_table(delta=0.5, step=1e-3)["srelu"]["zero_gradient_share"]
    assert share == pytest.approx(1 - math.erf(0.5 / math.sqrt(2)), abs=1e-3)


def test_kernel_smoothing_of_relu_degrees_smoothness_and_errors() -> None:
    rows = {r.name: r for r in SA.relu_kernel_smoothing()}
    epa, tri, box = rows["Epanechnikov (S-ReLU)"], rows["triangle"], rows["box (SmeLU)"]
    assert (epa.kernel_degree, epa.result_degree, epa.smoothness) == (2, 4, 2)
    assert (tri.kernel_degree, tri.result_degree, tri.smoothness) == (1, 3, 2)
    assert (box.kernel_degree, box.result_degree, box.smoothness) == (0, 2, 1)
    assert (epa.sup_error, tri.sup_error, box.sup_error) == (sp.Rational(3, 16), sp.Rational(1, 6), sp.Rational(1, 4))
    assert (epa.variance, tri.variance, box.variance) == (sp.Rational(1, 5), sp.Rational(1, 6), sp.Rational(1, 3))
    # the kernel-density AMISE factor sd(K)·∫K²: the Epanechnikov kernel's is the least
    assert (epa.roughness, tri.roughness, box.roughness) == (sp.Rational(3, 5), sp.Rational(2, 3), sp.Rational(1, 2))
    assert epa.amise_factor == pytest.approx(3 / (5 * math.sqrt(5)))
    assert epa.amise_factor < tri.amise_factor < box.amise_factor


def test_relu_correlation_gap_tends_to_nine_pi_squared_over_two() -> None:
    rescaled, crossing = SA.relu_correlation_depths(0.01, max_depth=3000, checkpoints=(100, 3000))
    assert rescaled[3000] == pytest.approx(9 * math.pi**2 / 2, rel=0.02)
    assert rescaled[100] < rescaled[3000]
    # 1 - c ~ 9π²/(2l²) reaches δ²/2 near l = 3π/δ
    assert crossing == pytest.approx(3 * math.pi / 0.01, rel=0.05)


def test_relu_correlation_depths_rejects_a_delta_outside_the_unit_interval() -> None:
    with pytest.raises(ValueError, match="delta"):
        SA.relu_correlation_depths(2.0)


def test_newest_arxiv_reference_of_the_srelu_source() -> None:
    assert SA.newest_arxiv_reference() == ("2405.04434", "May 2024")


def test_table1_damage_counts() -> None:
    lost = SA.lost_table_cells()
    assert sum(len(v["cells"]) for v in lost.values()) == 48
    assert sum(len(v["label lost"]) for v in lost.values()) == 12


def test_one_seed_on_another_candidate_would_exceed_the_printed_alpha0_tanh_mean() -> None:
    bounds = FA.selection_bounds("Flex-Act (α=0)", "tanh")
    printed = bounds.pop("printed_max")
    assert printed == pytest.approx(0.00215)
    assert min(bounds.values()) > printed
    # on the Sigmoid target the α = 0 mean is the ReLU model's: a ReLU pick is not ruled out
    sig = FA.selection_bounds("Flex-Act (α=0)", "sigmoid")
    assert sig["relu"] < sig["printed_max"]


def test_selection_bounds_rejects_an_unknown_row() -> None:
    with pytest.raises(KeyError, match="Table 1 row"):
        FA.selection_bounds("Flex-Act (α=1)", "tanh")


def test_flexact_alpha_is_better_than_every_mismatched_fixed_model_in_every_column() -> None:
    assert min(FA.mismatched_leads().values()) > FA.PRINT_UNIT


def test_column_gaps_find_the_sigmoid_column_worse_beyond_rounding() -> None:
    gaps = FA.column_gaps()
    assert gaps["sigmoid"] == pytest.approx(TABLE1["Flex-Act (α=0.3)"]["sigmoid"][0])
    assert [gt for gt, g in gaps.items() if g > FA.PRINT_UNIT + 1e-12] == ["sigmoid"]


def test_no_baseline_of_the_flexact_tables_has_learnable_activation_parameters() -> None:
    assert set(FA.fixed_baseline_parameters().values()) == {0}


def test_gumbel_max_is_exact_and_softmax_sharpens_as_tau_falls() -> None:
    assert FA.gumbel_max_error() < 1e-8
    sharp = FA.gumbel_softmax_sharpness(taus=(1.0, 0.1, 0.01), n=20_000)
    assert sharp[1.0] < sharp[0.1] < sharp[0.01] and sharp[0.01] > 0.99


def test_gumbel_max_error_rejects_probabilities_that_do_not_sum_to_one() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        FA.gumbel_max_error((0.5, 0.6))


def test_swish_limits() -> None:
    lim = FA.swish_limits()
    x = sp.Symbol("x", real=True)
    assert sp.simplify(lim["beta->0"] - x / 2) == 0
    assert lim["beta->oo, x<0"] == 0


def _by_key(rows: list[Claim]) -> dict[str, Claim]:
    return {c.key: c for c in rows}


def test_srelu_audit_verdicts_under_the_authors_best_reading(srelu_rows) -> None:
    rows = _by_key(srelu_rows)
    caveat = "confirmed with a caveat"
    drawbacks = rows["srelu-audit-relu-drawbacks"]
    assert drawbacks.verdict == caveat and "Sec. 3" in drawbacks.claim and "C^2" in drawbacks.our_value
    assert "srelu-audit-propagation-at-delta" in drawbacks.our_value and "not tested" in drawbacks.our_value
    lipschitz = rows["srelu-audit-lipschitz-advantage"]
    assert lipschitz.verdict == caveat and "GELU 1.129" in lipschitz.our_value and "no advantage" in lipschitz.our_value
    optimal = rows["srelu-audit-epanechnikov-optimal"]
    assert optimal.verdict == caveat and "MISE" in optimal.claim and "1/6·δ" in optimal.our_value
    negative = rows["srelu-audit-negative-gradient"]
    assert negative.verdict_label == "contradicted" and "(−δ, 0)" in negative.claim
    for key in ("srelu-audit-elu-celu-distinct", "srelu-audit-elu-celu-same-function"):
        assert rows[key].verdict_label == "contradicted under our reading" and "α = 1" in rows[key].reading
    polynomial = rows["srelu-audit-epanechnikov-polynomial"]
    assert polynomial.verdict_label == "contradicted under our reading" and "piecewise" in polynomial.reading
    assert "the claim holds" in polynomial.note
    propagation = rows["srelu-audit-propagation-at-delta"]
    assert propagation.verdict_label == "contradicted under our reading" and "3π/δ" in propagation.reading


def test_flexact_audit_verdicts_under_the_authors_best_reading(flexact_rows) -> None:
    rows = _by_key(flexact_rows)
    tanh = rows["flexact-audit-alpha0-tanh-bias"]
    assert tanh.verdict_label == "contradicted under our reading" and "argmax" in tanh.reading
    assert tanh.our_value.startswith("under our argmax reading") and "mixture evaluation" in tanh.our_value
    matching = rows["flexact-audit-matches-baselines"]
    assert matching.verdict == "confirmed with a caveat" and "sigmoid +0.0011" in matching.our_value
    assert "5 of 5 columns" in matching.our_value
    tuning = rows["flexact-audit-no-tuning"]
    assert tuning.verdict == "confirmed with a caveat" and "λ is never stated" in tuning.our_value

"""The audits of the GELU primer and of the λ-GELU paper against themselves: each finding's
computation, the rows they give, and the transcribed tables against the extracted source text."""

from __future__ import annotations

import math

import pytest
import sympy as sp
import torch

from helpers.core.claim import Claim
from helpers.core.runtime import repo_root
from helpers.gelu_primer import audit as blog_audit
from helpers.lambda_gelu import audit as lgelu_audit

PAPERS = repo_root().parent / "shared" / "papers"


def _source(name: str) -> str:
    path = PAPERS / name
    if not path.is_file():
        pytest.skip(f"the source texts are not at {PAPERS}; the extraction checks run where they are (CI)")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("module", [blog_audit, lgelu_audit], ids=["gelu_primer", "lambda_gelu"])
def test_every_audit_row_points_to_its_section_on_the_audit_page(module) -> None:
    rows = module.claims()
    assert rows and all(isinstance(c, Claim) for c in rows)
    assert {c.notebook for c in rows} == {module.NOTEBOOK}
    assert {c.anchor for c in rows} == {anchor for anchor, _ in module.FINDINGS.values()}
    assert all(c.paper_kind in ("quoted", "derived") for c in rows)


def _rows_of(module, committed_claims) -> dict[str, Claim]:
    """The rows ``module`` builds, from the shared report (computed once by their own code)."""
    return {c.key: c for c in committed_claims if c.decided_by.startswith(module.__name__ + ".")}


def test_the_blog_audit_verdicts_follow_the_posts_best_reading(committed_claims) -> None:
    rows = _rows_of(blog_audit, committed_claims)
    for key in ("gelu-audit-elu", "gelu-audit-damping", "gelu-audit-float"):
        assert rows[key].verdict == "confirmed with a caveat", key
    assert rows["gelu-audit-sign"].verdict == "confirmed"  # Q5's premise is false; the post does not assert it
    centring = rows["gelu-audit-centring"]
    assert centring.verdict_label == "contradicted under our reading" and "same-sign" in centring.reading


def test_the_lambda_gelu_audit_verdicts_follow_the_papers_best_reading(committed_claims) -> None:
    rows = _rows_of(lgelu_audit, committed_claims)
    for key in ("lambda-gelu-audit-range", "lambda-gelu-audit-drift", "lambda-gelu-audit-retrain"):
        assert rows[key].verdict == "confirmed with a caveat", key
    assert "approached, never reached" in rows["lambda-gelu-audit-range"].note
    # the route and its aim are what the paper states; the from-scratch comparison is the book's caveat
    assert "claims no comparison" in rows["lambda-gelu-audit-retrain"].note
    for key, words in (("lambda-gelu-audit-init", "[1, 2]"), ("lambda-gelu-audit-tolerance", "E∞ ≤ ε")):
        assert rows[key].verdict_label == "contradicted under our reading" and words in rows[key].reading, key


def test_table_one_drift_reads_as_a_sum_over_epochs() -> None:
    table = lgelu_audit.drift_against_net_change()
    assert len(table) == 18 and table["drift ≥ net"].all()
    moved = table[table["net change"] > 0.005]
    assert (moved["path if an average"] / moved["net change"]).min() > 5  # an average would travel far


def test_elu_is_bounded_below_by_minus_alpha_so_the_unbounded_reading_fails() -> None:
    bounds = blog_audit.elu_bounds()
    assert bounds["elu_inf"] == -1
    assert -0.18 < float(bounds["gelu_min"]) < -0.16


def test_the_gate_at_minus_a_tenth_is_below_half_open() -> None:
    assert float(blog_audit.gate_at("-0.1")) == pytest.approx(0.460172, abs=1e-6)
    assert float(blog_audit.gate_at("0")) == 0.5


def test_float32_tanh_gelu_has_an_exact_zero_interval() -> None:
    tanh32 = blog_audit.float_zero_threshold("tanh", torch.float32, "gradient", lo=-20.0, points=200_001)
    assert -5.5 < tanh32.below < -4.8
    exact64 = blog_audit.float_zero_threshold("none", torch.float64, "output", lo=-20.0, points=200_001)
    assert exact64.below < -8.0  # float64 keeps GELU non-zero much further out
    assert -7.5 < blog_audit.post_code_zero_threshold() < -6.9


def test_float_zero_threshold_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="approximate"):
        blog_audit.float_zero_threshold("erf", torch.float32, "output")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lo < 0"):
        blog_audit.float_zero_threshold("tanh", torch.float32, "output", lo=1.0)


def test_elu_gradient_exceeds_gelus_everywhere_on_the_negative_side() -> None:
    z_star, ratio = blog_audit.gradient_ratio_sup()
    assert 0.6 < ratio < 0.7 and -2.0 < z_star < -1.7
    with pytest.raises(ValueError, match="negative"):
        blog_audit.negative_side_gradients(("1",))


def test_output_means_under_a_standard_normal_input() -> None:
    m = blog_audit.output_moments()
    assert sp.simplify(m["GELU"]["mean"] - 1 / (2 * sp.sqrt(sp.pi))) == 0
    assert sp.simplify(m["ReLU"]["mean"] - 1 / sp.sqrt(2 * sp.pi)) == 0
    assert float(m["ELU"]["mean"]) == pytest.approx(0.16048, abs=1e-4)


def test_the_blog_tables_as_transcribed_rejoin_to_the_extracted_rows() -> None:
    text = _source("gelu-blog.txt")
    lines = set(text.splitlines())
    for key, rows in blog_audit.printed_rows_joined().items():
        missing = [joined for joined in rows.values() if joined not in lines]
        assert not missing, f"table {key}: rows not in the extraction: {missing}"


def test_the_softplus_map_never_reaches_lambda_one() -> None:
    img = lgelu_audit.lambda_image()
    assert img["at -oo"] == 1 and img["at +oo"] == sp.oo
    assert img["solutions of λ(s) = 1"] == sp.S.EmptySet


def test_the_learning_signal_of_s_vanishes_at_one_and_peaks_inside_the_init_range() -> None:
    expr = lgelu_audit.s_signal()
    lam = next(v for v in expr.free_symbols if v.name == "lambda")
    assert sp.simplify(expr.subs(lam, 1)) == 0
    peak, _ = lgelu_audit.s_signal_peak(1.0)
    assert 1.4 < peak < 1.7
    r = lgelu_audit.s_signal_ratio_limits(1.01, 2.0)
    assert r["sigma->oo"] < r["sigma=1"] < r["sigma->0"] and r["sigma->oo"] > 8
    with pytest.raises(ValueError, match="sigma_value"):
        lgelu_audit.s_signal_peak(0.0)
    with pytest.raises(ValueError, match="lam_low"):
        lgelu_audit.s_signal_ratio_limits(2.0, 1.5)


def test_expected_gate_error_depends_on_the_scale() -> None:
    assert lgelu_audit.expected_gate_error(160, 1.0) == pytest.approx(math.atan(1 / 160) / math.pi)
    assert lgelu_audit.expected_gate_error(160, 0.1) > 5e-3 > lgelu_audit.expected_gate_error(160, 1.0)
    sig = lgelu_audit.scale_meeting_tolerance(160, 5e-3)
    assert lgelu_audit.expected_gate_error(160, sig) == pytest.approx(5e-3)
    with pytest.raises(ValueError, match="sigma must be a finite number > 0"):
        lgelu_audit.expected_gate_error(160, -1.0)


def test_the_annealed_relu_network_against_relu_from_scratch() -> None:
    d = lgelu_audit.relu_baseline_against_annealed()
    assert d.loc["Adult", "difference"] == pytest.approx(-0.05)
    assert not d["above beyond rounding"].any()


def test_wikitext_uniform_lambda_gelu_is_gelu_to_a_thousandth() -> None:
    assert lgelu_audit.gelu_gap_sup(1.005) < 2e-3
    assert lgelu_audit.gelu_gap_sup(1.0) == 0
    with pytest.raises(ValueError, match="lam_value"):
        lgelu_audit.gelu_gap_sup(0.5)


def test_swish_is_gelu_up_to_a_hardness_rescaling() -> None:
    ratio, gap = lgelu_audit.swish_gap(1.0)
    assert 1.6 < ratio < 1.9 and gap < 0.02
    _, gap160 = lgelu_audit.swish_gap(160.0)
    assert gap160 == pytest.approx(gap / 160, rel=1e-2)
    beta = next(iter(lgelu_audit.sigmoid_gate_l1().free_symbols))
    assert sp.simplify(lgelu_audit.sigmoid_gate_l1() - 2 * sp.log(2) / beta) == 0


def test_table_one_relu_rows_lost_their_activation_cell_in_the_extraction() -> None:
    text = _source("lambda-gelu.txt")
    relu_rows = [line.split("\t") for line in text.splitlines() if line.startswith("\t\tReLU\t")]
    assert len(relu_rows) == 6  # one per benchmark, Act. empty, "ReLU" in the Mode column
    assert all(len(cells) == 7 and cells[0] == cells[1] == "" for cells in relu_rows)

"""Tests for the GELU primer: closed forms, extrema, the tanh-form error, and the post's tables."""

from __future__ import annotations

import math
from decimal import Decimal

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch
from refusals import refusal_fault
from scipy.optimize import minimize_scalar
from scipy.special import erf

from helpers.core.claim import VERDICTS, Claim
from helpers.core.runtime import repo_root
from helpers.gelu_primer import claims as gelu_primer_claims
from helpers.gelu_primer import paper as gelu_blog
from helpers.gelu_primer import theory as g
from helpers.gelu_primer.claims import mismatches, run_post_code


def _gelu_np(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def test_derivative_closed_form_is_what_sympy_differentiates() -> None:
    assert g.verify_gelu_prime()


def test_second_derivative_is_phi_times_two_minus_z_squared() -> None:
    diff = g.gelu_second_derivative_expr() - g.phi(g.z) * (2 - g.z**2)
    assert sp.simplify(diff) == 0


def test_derivative_matches_torch_autograd_in_float64() -> None:
    x = torch.linspace(-8, 8, 2001, dtype=torch.float64, requires_grad=True)
    y = x * torch.special.ndtr(x)
    (auto,) = torch.autograd.grad(y.sum(), x)
    closed = sp.lambdify(g.z, g.gelu_prime_closed_form(), modules=["scipy", "numpy"])(x.detach().numpy())
    np.testing.assert_allclose(auto.numpy(), closed, rtol=0, atol=1e-14)


def test_gelu_function_passes_gradcheck() -> None:
    """The float64 GELU we compare with (x·ndtr(x)) has a correct autograd derivative."""
    x = torch.linspace(-4, 4, 17, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: t * torch.special.ndtr(t), (x,))


def test_derivative_root_is_a_sign_change_near_minus_three_quarters() -> None:
    root = g.gelu_prime_root()
    prime = g.gelu_prime_closed_form()
    assert abs(g.evaluate(prime, root)) < sp.Float("1e-35")
    assert g.evaluate(prime, root - sp.Rational(1, 10**6)) < 0 < g.evaluate(prime, root + sp.Rational(1, 10**6))
    assert -0.7519 < float(root) < -0.7517


def test_gelu_minimum_agrees_with_a_dense_grid_and_a_local_optimiser() -> None:
    z_min, value = g.gelu_minimum()
    grid = np.linspace(-10, 10, 200_001)
    assert float(value) <= _gelu_np(grid).min() + 1e-15
    result = minimize_scalar(
        lambda t: float(_gelu_np(np.array(t))), bounds=(-2, 0), method="bounded", options={"xatol": 1e-10}
    )
    assert result.x == pytest.approx(float(z_min), abs=1e-6)
    assert float(value) == pytest.approx(-0.1699712, abs=1e-7)


def test_gelu_prime_extrema_are_at_plus_minus_sqrt2() -> None:
    ext = g.gelu_prime_extrema()
    grid = np.linspace(-10, 10, 200_001)
    curves = g.curves(grid)
    assert float(ext["max"][1]) == pytest.approx(curves["gelu_prime"].max(), abs=1e-9)
    assert float(ext["min"][1]) == pytest.approx(curves["gelu_prime"].min(), abs=1e-9)
    assert float(ext["max"][0]) == pytest.approx(math.sqrt(2), abs=1e-30)


def test_tanh_error_max_is_the_true_maximum() -> None:
    worst = g.tanh_error_max(-10.0, 10.0)
    grid = np.linspace(-10, 10, 400_001)
    assert worst.abs_error >= np.abs(g.tanh_error_numpy(grid)).max() - 1e-15
    # A bounded local optimiser started independently finds the same point.
    result = minimize_scalar(
        lambda t: -abs(float(g.tanh_error_numpy(np.array(t)))),
        bounds=(2, 3.5),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert result.x == pytest.approx(worst.z, abs=1e-5)
    # The error is even, so the argmax is reported as the non-negative one of ±z.
    assert worst.z > 0
    assert worst.abs_error == pytest.approx(4.7324e-4, abs=1e-7)
    # ... and it is a stationary point of the error to high precision.
    derivative = sp.lambdify(g.z, sp.diff(g.tanh_error_expr(), g.z), modules="mpmath")
    with mpmath.workdps(40):
        assert abs(derivative(mpmath.mpf(worst.z))) < 1e-12


def test_tanh_error_is_even_and_quartic_near_zero() -> None:
    grid = np.linspace(0, 6, 601)
    np.testing.assert_allclose(g.tanh_error_numpy(grid), g.tanh_error_numpy(-grid), atol=1e-16)
    c4 = float(g.tanh_error_quartic_coefficient())
    err = sp.lambdify(g.z, g.tanh_error_expr(), modules="mpmath")
    with mpmath.workdps(50):
        for at in ("0.01", "0.001"):
            assert float(err(mpmath.mpf(at)) / mpmath.mpf(at) ** 4) == pytest.approx(c4, rel=1e-3)
    assert 3.0e-4 < c4 < 3.5e-4


def test_library_cross_check_torch_default_is_exact_not_tanh() -> None:
    cross = g.library_cross_check()
    for key in ("scipy_exact", "torch_exact", "torch_tanh", "scipy_prime", "torch_autograd_prime"):
        assert cross[key] < 1e-14, key
    assert cross["torch_default_vs_tanh"] > 1e-4


def test_round_half_even_uses_the_decimal_expansion() -> None:
    assert g.round_half_even(g.evaluate(g.gelu_expr(g.z), "0.5"), 4) == Decimal("0.3457")
    assert str(g.round_half_even(sp.Float("-0.00001"), 4)) == "0.0000"
    assert g.round_half_even(sp.Rational(1, 8), 2) == Decimal("0.12")


#: One invalid call per row: how it reads, the call, and the error it must raise.
INVALID_CALLS = [
    ("tanh_error_max(1.0, 1.0)", lambda: g.tanh_error_max(1.0, 1.0), ValueError),
    ("tanh_error_max(0.0, 1.0, grid_points=2)", lambda: g.tanh_error_max(0.0, 1.0, grid_points=2), ValueError),
    ("tanh_error_max('a', 1.0)", lambda: g.tanh_error_max("a", 1.0), TypeError),
    ("tanh_error_max(0.0, inf)", lambda: g.tanh_error_max(0.0, math.inf), ValueError),
    ("evaluate(z + y, 1)", lambda: g.evaluate(g.z + sp.Symbol("y"), 1), ValueError),
    ("evaluate('z', 1)", lambda: g.evaluate("z", 1), TypeError),
    ("evaluate(z, 1, digits=2)", lambda: g.evaluate(g.z, 1, digits=2), ValueError),
    ("evaluate(z, 'one')", lambda: g.evaluate(g.z, "one"), ValueError),
    ("elu_expr(z, alpha=0)", lambda: g.elu_expr(g.z, alpha=0), ValueError),
    ("curves(np.array([]))", lambda: g.curves(np.array([])), ValueError),
    ("round_half_even(1.0, -1)", lambda: g.round_half_even(1.0, -1), ValueError),
    ("gelu_blog.table('nope')", lambda: gelu_blog.table("nope"), ValueError),
]


def test_invalid_arguments_raise_clear_errors() -> None:
    problems = [fault for label, call, error in INVALID_CALLS if (fault := refusal_fault(label, call, error))]
    assert not problems, "\n".join(problems)


def test_limits_at_minus_infinity() -> None:
    assert g.limit_at_minus_infinity(g.elu_expr(g.z)) == -1
    assert g.limit_at_minus_infinity(g.gelu_expr(g.z)) == 0


def test_the_posts_wrong_table_values_are_exactly_these() -> None:
    """The finding the notebook reports: GELU' at -3, -1, 0.5, 3 and the tanh form at ±3."""
    bad = mismatches()
    found = {(row.table, row.z, row.quantity) for row in bad.itertuples()}
    expected = set()
    for key in ("gradient", "code"):
        title = gelu_blog.table(key).title
        expected |= {(title, z, "GELU'(z)") for z in ("-3", "-1", "0.5", "3")}
    for key in ("forms", "gradient", "code"):
        title = gelu_blog.table(key).title
        expected |= {(title, z, "GELU approx (tanh)") for z in ("-3", "3")}
    assert found == expected


def test_running_the_posts_code_does_not_print_its_shown_output() -> None:
    printed = run_post_code()
    assert printed != gelu_blog.POST_CODE_PRINTED
    grads = [line.split("|")[-1].strip() for line in printed.splitlines()[1:]]
    ours = [str(g.round_half_even(g.evaluate(g.gelu_prime_closed_form(), z), 4)) for z in gelu_blog.ANCHORS]
    assert grads == ours


def test_claims_are_well_formed_and_point_to_an_existing_notebook() -> None:
    claims = gelu_primer_claims.claims()
    assert claims and all(isinstance(c, Claim) for c in claims)
    assert all(c.verdict in VERDICTS for c in claims)
    assert all(c.paper_value and c.our_value for c in claims)
    notebook = repo_root() / f"{gelu_blog.NOTEBOOK}.ipynb"
    assert notebook.exists(), notebook
    verdicts = {c.claim: c.verdict for c in claims}
    assert verdicts["GELU outputs are never less than about -0.17"] == "confirmed"
    assert verdicts["GELU'(z) is non-zero for all z (no dead zone)"] == "confirmed with a caveat"
    by_key = {c.key: c.verdict for c in claims}
    assert by_key["gelu-primer-phi-minus-1"] == "confirmed with a caveat"  # truncated, within one unit
    assert by_key["gelu-primer-tanh-four-decimals"] == "contradicted"  # even within 1e-4


def test_tanh_error_crossings_are_where_the_error_equals_the_threshold() -> None:
    band = g.tanh_error_crossings(5e-5)
    assert len(band) == 4 and band == sorted(band)
    err = sp.lambdify(g.z, g.tanh_error_expr(), modules="mpmath")
    with mpmath.workdps(40):
        for b in band:
            assert abs(abs(err(mpmath.mpf(b))) - mpmath.mpf(5e-5)) < 1e-18  # b is rounded to float64
    inside = np.linspace(band[0], band[1], 50)[1:-1]
    assert np.all(np.abs(g.tanh_error_numpy(inside)) > 5e-5)
    with pytest.raises(ValueError):
        g.tanh_error_crossings(0.0)

"""Sympy derivations of S-ReLU and the mollification framework, and the paper claims built on them."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
import torch

from helpers.srelu import paper
from helpers.srelu import theory as M
from helpers.srelu.activation import srelu
from helpers.srelu.theory_claims import paper_expr, theory_claims

x, d, t = M.X, M.DELTA, M.T


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
def test_bump_normaliser_and_mass():
    a = M.bump_normaliser(30)
    # independent check with scipy's adaptive quadrature
    from scipy.integrate import quad

    raw, _ = quad(lambda u: math.exp(1 / (u * u - 1)), -1, 1, epsabs=1e-15, epsrel=1e-15)
    assert float(a) == pytest.approx(1 / raw, rel=1e-12)
    assert float(M.bump_mass(30)) == pytest.approx(1.0, abs=1e-20)
    assert float(M.bump_derivative_l1()) == pytest.approx(float(2 * a / mpmath.e), rel=1e-20)
    with pytest.raises(ValueError, match="dps"):
        M.bump_integral(5)


def test_epanechnikov_moments():
    assert M.epanechnikov_mass() == 1
    assert M.expressions_equal(M.epanechnikov_variance(), d**2 / 5)
    assert M.epanechnikov_derivative_l1() == sp.Rational(3, 2)


def test_convolution_pieces_match_paper_and_direct_integral():
    p = M.srelu_by_convolution()
    assert p.left == 0 and p.right == x
    assert M.expressions_equal(p.middle, paper_expr(paper.SRELU_MIDDLE))
    direct = M.srelu_direct_convolution()
    for region, piece in zip(("left", "middle", "right"), p.as_tuple()):
        assert M.expressions_equal(M.clamp_form_piece(direct, region), piece)
    with pytest.raises(ValueError, match="region"):
        M.clamp_form_piece(direct, "centre")


def test_branch_free_form_matches_pieces():
    bf = M.srelu_branch_free()
    assert M.expressions_equal(bf["g"], (1 + t) ** 3 * (3 - t) / 16)
    assert M.expressions_equal(bf["dg"], (1 + t) ** 2 * (2 - t) / 4)
    assert M.expressions_equal(bf["d_delta"], 3 * (1 - t**2) ** 2 / 16)
    p = M.srelu_by_convolution()
    assert bf["left"] == 0 and M.expressions_equal(bf["right"], x)
    assert M.expressions_equal(bf["middle_x_negative"], p.middle)
    assert M.expressions_equal(bf["middle_x_positive"], p.middle)


def test_piecewise_agrees_with_torch_implementation():
    f = sp.lambdify((x, d), M.srelu_piecewise(), "mpmath")
    xs = np.linspace(-0.4, 0.4, 81)
    got = srelu(torch.tensor(xs), 0.25).numpy()
    want = np.array([float(f(mpmath.mpf(v), mpmath.mpf(0.25))) for v in xs])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-16)


def test_smoothness_is_c2_not_c3():
    jumps = M.one_sided_jumps(max_order=4)
    for k in (0, 1, 2):
        assert jumps[k] == (0, 0)
    assert all(M.expressions_equal(j, sp.Rational(3, 2) / d**2) for j in jumps[3])
    assert M.smoothness_order(jumps) == 2
    assert M.smoothness_order({0: (1, 0)}) == -1
    with pytest.raises(ValueError):
        M.one_sided_jumps(max_order=-1)


def test_uniform_error():
    err = M.srelu_uniform_error()
    assert err.coefficient == sp.Rational(3, 16) and err.argmax == 0
    assert M.expressions_equal(err.value, paper_expr(paper.UNIFORM_ERROR))


@pytest.mark.parametrize(
    ("name", "constant", "argmax", "min_slope"),
    [
        ("gelu", 1.1289041451851547, math.sqrt(2), -0.12890414518515478),
        ("silu", 1.099839320128867, 2.3993572805154675, -0.09983932012886691),
        ("mish", 1.088498161251728, 1.4905711794854284, -0.11252612238946255),
    ],
)
def test_lipschitz_constants(name, constant, argmax, min_slope):
    r = M.lipschitz_constant(name)
    assert r.constant == pytest.approx(constant, rel=1e-14)
    assert r.argmax == pytest.approx(argmax, rel=1e-13)
    assert r.min_slope == pytest.approx(min_slope, rel=1e-12)
    assert r.limits == (0.0, 1.0)
    # the constant is the sup over a dense grid too (no root missed)
    f1 = sp.lambdify(x, sp.diff(M.activation_expr(name), x), ["scipy", "numpy"])
    grid = np.linspace(-40, 40, 400001)
    assert np.abs(f1(grid)).max() <= constant + 1e-12


def test_gelu_critical_points_are_sqrt2_exactly():
    roots = sp.solve(sp.diff(M.activation_expr("gelu"), x, 2), x)
    assert set(roots) == {-sp.sqrt(2), sp.sqrt(2)}
    value = sp.diff(M.activation_expr("gelu"), x).subs(x, sp.sqrt(2))
    assert float(value) == pytest.approx(1.1289041451851547, rel=1e-15)


def test_srelu_lipschitz_is_one():
    r = M.lipschitz_constant("srelu")
    assert r.constant == 1.0 and r.max_slope == 1.0 and r.min_slope == 0.0
    assert r.critical_points == (-1.0, 1.0)


def test_mish_second_derivative_in_paper_has_wrong_sign():
    mish = paper_expr(paper.MISH)
    assert M.expressions_equal(mish, M.activation_expr("mish"))
    ratio = sp.simplify(paper_expr(paper.MISH_D2) / sp.diff(mish, x, 2))
    assert ratio == -1


def test_leaky_relu_identity():
    out = M.leaky_relu_by_convolution()
    for region in ("left", "middle", "right"):
        assert M.expressions_equal(out[region], out[f"identity_{region}"])


def test_gaussian_mollified_relu_and_gelu():
    g = M.relu_gaussian_convolution()
    assert M.expressions_equal(g["computed"], g["closed_form"])
    assert M.expressions_equal(g["derivative"], M.std_normal_cdf(x / M.SIGMA))
    assert M.expressions_equal(g["sup_error"], M.SIGMA / sp.sqrt(2 * sp.pi))
    lg = M.gaussian_vs_lambda_gelu()
    assert M.expressions_equal(lg["difference"], M.std_normal_pdf(M.LAM * x) / M.LAM)
    assert lg["critical_points"] == [0] and lg["limit_at_infinity"] == 0
    sv = M.same_variance_gaussian_sup_error()
    assert float(sv["gaussian"].subs(d, 1)) == pytest.approx(1 / math.sqrt(10 * math.pi))
    assert sv["epanechnikov"] == 3 * d / 16


def test_activation_expr_rejects_unknown():
    with pytest.raises(ValueError, match="unknown activation"):
        M.activation_expr("relu6")


def test_paper_claims(committed_claims):
    # the shared report's rows of the S-ReLU paper (computed once, by srelu_claims.claims)
    theory = [c for c in committed_claims if c.decided_by.startswith(theory_claims.__module__ + ".theory_claims")]
    experiment = [
        c
        for c in committed_claims
        if c.decided_by.startswith("helpers.srelu.")
        and not c.decided_by.startswith((theory_claims.__module__, "helpers.srelu.audit"))
    ]
    assert len(theory) >= 20 and experiment
    by_claim = {c.claim: c for c in theory}
    assert by_claim["Lipschitz constant of GELU"].verdict == "contradicted"
    assert by_claim["Lipschitz constant of SiLU"].verdict == "confirmed"
    assert by_claim["Lipschitz constant of Mish"].verdict == "confirmed"
    assert "rounds to 1.088" in by_claim["Lipschitz constant of Mish"].note
    assert by_claim["Lipschitz constant of S-ReLU"].verdict == "confirmed"
    assert by_claim["Mish''"].verdict == "contradicted"
    assert by_claim["S-ReLU is C² (second derivative continuous)"].verdict == "confirmed"
    assert by_claim["Uniform error sup|S-ReLU - ReLU|"].verdict == "confirmed"
    assert all(c.notebook.startswith("notebooks/0") for c in theory)
    assert all(c.notebook.startswith("notebooks/2") for c in experiment)
    with pytest.raises(TypeError):
        paper_expr(3)


def test_paper_tables_are_consistent_data():
    for table in (paper.TABLE1_AVERAGE, paper.TABLE2):
        for row in table.values():
            assert tuple(row) == paper.ACTIVATIONS
    assert tuple(paper.TABLE4["CIFAR-10"]) == paper.TABLE4_DELTAS
    # the CELU per-model values average to the printed CELU averages
    for data, per_model in paper.TABLE1_CELU_PER_MODEL.items():
        mean = sum(m for m, _ in per_model.values()) / len(per_model)
        assert mean == pytest.approx(paper.TABLE1_AVERAGE[data]["CELU"][0], abs=0.05 + 1e-9)

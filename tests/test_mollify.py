"""Numeric mollifier: kernels, quadrature against closed forms, module, invalid input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch
from scipy.integrate import quad
from scipy.special import ndtr

from helpers.activations import get_activation, register_activation
from helpers.srelu.activation import srelu, srelu_derivative, srelu_second_derivative
from helpers.srelu.mollify import (
    BoxKernel,
    BumpKernel,
    EpanechnikovKernel,
    GaussianKernel,
    MollifiedActivation,
    MollifierKernel,
    make_kernel,
    mollify,
)

KERNELS = (EpanechnikovKernel(0.3), BumpKernel(0.3), GaussianKernel(0.3), BoxKernel(0.3))


def relu_np(z):
    return np.maximum(z, 0.0)


def relu_gauss(x, s):
    return x * ndtr(x / s) + s * np.exp(-(x**2) / (2 * s * s)) / math.sqrt(2 * math.pi)


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_kernels_integrate_to_one_and_are_even(kernel):
    lo, hi = max(kernel.support[0], -20.0), min(kernel.support[1], 20.0)
    mass, _ = quad(kernel.density, lo, hi, points=[0.0], epsabs=1e-14, epsrel=1e-14, limit=200)
    assert mass == pytest.approx(1.0, abs=1e-12)
    y = np.linspace(-1, 1, 101) * 0.5
    np.testing.assert_array_equal(kernel.density(y), kernel.density(-y))
    assert np.all(kernel.density(y) >= 0)


@pytest.mark.parametrize("kernel", KERNELS[:3], ids=lambda k: k.name)
def test_kernel_derivatives_match_sympy(kernel):
    v = sp.Symbol("v", real=True)
    exprs = {
        "epanechnikov": sp.Rational(3, 4) * (1 - v**2),
        "bump": sp.Float(float(kernel.pdf(np.array(0.0)) * math.e), 17) * sp.exp(1 / (v**2 - 1)),
        "gaussian": sp.exp(-(v**2) / 2) / sp.sqrt(2 * sp.pi),
    }
    e = exprs[kernel.name]
    pts = np.linspace(-0.95, 0.95, 39)
    np.testing.assert_array_equal(kernel.pdf(pts), kernel.derivative(pts, 0))
    for order in (0, 1, 2):
        f = sp.lambdify(v, sp.diff(e, v, order), "numpy")
        np.testing.assert_allclose(kernel.derivative(pts, order), f(pts) * np.ones_like(pts), rtol=1e-13, atol=1e-13)


def test_compact_kernels_vanish_outside_support():
    for k in (EpanechnikovKernel(0.1), BumpKernel(0.1), BoxKernel(0.1)):
        y = np.array([-0.5, -0.1000001, 0.1000001, 3.0])
        assert np.all(k.density(y) == 0)


@pytest.mark.parametrize("delta", (1e-3, 0.01, 1.0))
def test_relu_epanechnikov_equals_srelu(delta):
    x = np.linspace(-2 * delta, 2 * delta, 1001)
    xt = torch.tensor(x)
    k = EpanechnikovKernel(delta)
    for deriv, closed in ((0, srelu), (1, srelu_derivative), (2, srelu_second_derivative)):
        got = mollify(relu_np, k, x, breakpoints=(0.0,), derivative=deriv)
        want = closed(xt, delta).numpy()
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * max(1.0, delta**-deriv))


def test_relu_epanechnikov_torch_path_and_gradient():
    x = torch.linspace(-0.03, 0.03, 301, dtype=torch.float64, requires_grad=True)
    y = mollify(torch.relu, EpanechnikovKernel(0.01), x, breakpoints=(0.0,))
    torch.testing.assert_close(y, srelu(x.detach(), 0.01), rtol=0, atol=1e-15)
    (g,) = torch.autograd.grad(y.sum(), x)
    torch.testing.assert_close(g, srelu_derivative(x.detach(), 0.01), rtol=0, atol=1e-13)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_infinite_inputs_give_the_limits_not_nan(kernel):
    # with a breakpoint, every cut at x = ±∞ clips to one end: a piece of zero width times f = ∞
    x = torch.tensor([-math.inf, -1.0, 1.0, math.inf], dtype=torch.float64, requires_grad=True)
    y = MollifiedActivation(torch.relu, kernel, breakpoints=(0.0,))(x)
    assert y[0] == 0 and y[3] == math.inf and torch.isfinite(y[1:3]).all()
    (g,) = torch.autograd.grad(y.sum(), x)
    assert not g.isnan().any()
    z = mollify(relu_np, kernel, np.array([-math.inf, math.inf]), breakpoints=(0.0,))
    assert z[0] == 0 and z[1] == math.inf


def test_breakpoints_matter_for_kinked_functions():
    x = np.linspace(-0.02, 0.02, 401)
    want = srelu(torch.tensor(x), 0.01).numpy()
    without = np.abs(mollify(relu_np, EpanechnikovKernel(0.01), x, order=16) - want).max()
    with_bp = np.abs(mollify(relu_np, EpanechnikovKernel(0.01), x, order=16, breakpoints=(0.0,)) - want).max()
    assert with_bp < 1e-15 and without > 1e-7


@pytest.mark.parametrize("sigma", (0.1, 1.0, 3.0))
def test_relu_gaussian_closed_form(sigma):
    x = np.linspace(-5 * sigma, 5 * sigma, 801)
    k = GaussianKernel(sigma)
    np.testing.assert_allclose(
        mollify(relu_np, k, x, breakpoints=(0.0,)), relu_gauss(x, sigma), rtol=1e-12, atol=1e-13 * sigma
    )
    np.testing.assert_allclose(
        mollify(relu_np, k, x, breakpoints=(0.0,), derivative=1), ndtr(x / sigma), rtol=1e-12, atol=1e-13
    )
    dens = np.exp(-(x**2) / (2 * sigma**2)) / (sigma * math.sqrt(2 * math.pi))
    np.testing.assert_allclose(
        mollify(relu_np, k, x, breakpoints=(0.0,), derivative=2), dens, rtol=1e-10, atol=1e-12 / sigma
    )


def test_gauss_hermite_exact_for_polynomials_and_smooth_functions():
    x = np.linspace(-2, 2, 21)
    k = GaussianKernel(0.5)
    # E[(x - 0.5 Z)^3] = x^3 + 3x·0.25
    np.testing.assert_allclose(mollify(lambda z: z**3, k, x, order=8), x**3 + 0.75 * x, rtol=1e-13, atol=1e-13)
    # cos * N(0, s²) = exp(-s²/2) cos
    np.testing.assert_allclose(mollify(np.cos, k, x, order=40), np.exp(-0.125) * np.cos(x), atol=1e-14)


def test_box_kernel_is_moving_average_and_its_derivative():
    x = np.linspace(-1, 1, 41)
    k = BoxKernel(0.2)
    # ReLU averaged over [x-0.2, x+0.2]
    want = np.where(x <= -0.2, 0.0, np.where(x >= 0.2, x, (x + 0.2) ** 2 / 0.8))
    np.testing.assert_allclose(mollify(relu_np, k, x, breakpoints=(0.0,)), want, atol=1e-15)
    d1 = mollify(relu_np, k, x, breakpoints=(0.0,), derivative=1)
    np.testing.assert_allclose(d1, (relu_np(x + 0.2) - relu_np(x - 0.2)) / 0.4, atol=1e-14)
    with pytest.raises(ValueError, match="continuous kernel"):
        mollify(relu_np, k, x, derivative=2)


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
def test_bump_kernel_converges_to_quadpack():
    k = BumpKernel(0.2)
    x = np.linspace(-0.3, 0.3, 7)
    ref = [
        quad(
            lambda y, xi=xi: max(xi - y, 0.0) * k.density(y),
            -0.2,
            0.2,
            points=[xi] if abs(xi) < 0.2 else None,
            epsabs=1e-15,
            epsrel=1e-14,
        )[0]
        for xi in x
    ]
    np.testing.assert_allclose(mollify(relu_np, k, x, breakpoints=(0.0,), order=128), ref, atol=1e-13)


def test_smoothing_preserves_lipschitz_bound():
    # Lip(f * φ) ≤ Lip(f): LeakyReLU has Lipschitz constant 1
    x = np.linspace(-3, 3, 601)
    for k in KERNELS[:3]:
        d1 = mollify(lambda z: np.where(z > 0, z, 0.1 * z), k, x, breakpoints=(0.0,), derivative=1, order=128)
        assert d1.max() <= 1 + 1e-12 and d1.min() >= 0.1 - 1e-12


def test_module_and_registry(monkeypatch):
    from helpers import methods

    # a copy of the table, so "relu_gauss_test" does not outlive this test
    monkeypatch.setattr(methods, "ACTIVATIONS", dict(methods.ACTIVATIONS))
    m = MollifiedActivation(torch.relu, GaussianKernel(0.5), breakpoints=(0.0,), name="relu*gauss")
    assert isinstance(m, MollifiedActivation) and "relu*gauss" in repr(m)
    x = torch.linspace(-2, 2, 9, dtype=torch.float64).reshape(3, 3)
    torch.testing.assert_close(m(x), torch.tensor(relu_gauss(x.numpy(), 0.5)), rtol=1e-12, atol=1e-14)
    register_activation(
        "relu_gauss_test", lambda: MollifiedActivation(torch.relu, GaussianKernel(0.5), breakpoints=(0.0,))
    )
    act = get_activation("relu_gauss_test")
    y = act(torch.randn(70000, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))  # several chunks
    assert y.shape == (70000,) and torch.isfinite(y).all()
    assert m(torch.empty(0, 3)).shape == (0, 3)


def test_make_kernel():
    assert isinstance(make_kernel("Epanechnikov", 0.1), EpanechnikovKernel)
    assert isinstance(make_kernel("uniform", 0.1), BoxKernel)
    with pytest.raises(ValueError, match="unknown kernel"):
        make_kernel("triangle", 0.1)


@pytest.mark.parametrize("bad", (0, -1.0, math.nan, math.inf))
def test_bad_scale(bad):
    with pytest.raises(ValueError, match="scale"):
        EpanechnikovKernel(bad)


def test_bad_arguments():
    k = EpanechnikovKernel(0.1)
    x = np.zeros(3)
    with pytest.raises(TypeError, match="scale"):
        GaussianKernel("1")
    with pytest.raises(TypeError, match="(?i)callable"):
        mollify(3.0, k, x)
    with pytest.raises(TypeError, match="MollifierKernel"):
        mollify(relu_np, "epanechnikov", x)
    with pytest.raises(ValueError, match="derivative"):
        mollify(relu_np, k, x, derivative=3)
    with pytest.raises(ValueError, match="order"):
        mollify(relu_np, k, x, order=1)
    with pytest.raises(ValueError, match="breakpoints"):
        mollify(relu_np, k, x, breakpoints=(math.nan,))
    with pytest.raises(TypeError, match="breakpoints"):
        mollify(relu_np, k, x, breakpoints=0.0)
    with pytest.raises(TypeError, match="floating"):
        mollify(torch.relu, k, torch.zeros(3, dtype=torch.int64))
    with pytest.raises(TypeError, match="Tensor"):
        MollifiedActivation(torch.relu, k)([1.0])
    with pytest.raises(TypeError):
        MollifierKernel(1.0)  # abstract

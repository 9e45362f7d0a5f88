"""SmeLU (Shamir, Lin & Coviello 2020) is the book's box-kernel mollified ReLU: closed form against the
numeric mollification, its derivative, its smoothness class, its limits and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch
from refusals import refusal_fault

from helpers.activations import get_activation
from helpers.srelu.mollify import BoxKernel, mollify
from helpers.srelu.smelu import SmeLU, smelu, smelu_grad


@pytest.mark.parametrize("beta", [0.05, 0.5, 2.0])
def test_box_mollified_relu_is_smelu(beta):
    x = np.linspace(-3 * beta, 3 * beta, 241)
    numeric = mollify(lambda t: np.maximum(t, 0.0), BoxKernel(beta), x, breakpoints=[0.0])
    closed = smelu(torch.tensor(x, dtype=torch.float64), beta).numpy()
    np.testing.assert_allclose(numeric, closed, rtol=1e-12, atol=1e-14)
    numeric_grad = mollify(lambda t: np.maximum(t, 0.0), BoxKernel(beta), x, breakpoints=[0.0], derivative=1)
    np.testing.assert_allclose(
        numeric_grad, smelu_grad(torch.tensor(x, dtype=torch.float64), beta).numpy(), rtol=1e-12, atol=1e-14
    )


def test_closed_form_is_the_symbolic_convolution():
    x, y, b = sp.symbols("x y beta", real=True)
    bp = sp.Symbol("beta", positive=True)
    inside = sp.integrate((x - y) / (2 * bp), (y, -bp, x))  # ReLU(x − y) > 0 for y < x, |x| ≤ β
    assert sp.simplify(inside - (x + bp) ** 2 / (4 * bp)) == 0
    assert b.is_real  # the symbols are used only to state the convolution


def test_autograd_matches_the_derivative_and_finite_differences():
    x = torch.linspace(-2.0, 2.0, 81, dtype=torch.float64, requires_grad=True)
    beta = 0.7
    (grad,) = torch.autograd.grad(smelu(x, beta).sum(), x)
    torch.testing.assert_close(grad, smelu_grad(x.detach(), beta))
    assert torch.autograd.gradcheck(
        lambda t: smelu(t, beta), (torch.randn(20, dtype=torch.float64, requires_grad=True),)
    )


def test_smelu_is_c1_with_a_second_derivative_jump_of_one_over_two_beta():
    beta, h = 0.5, 1e-7
    for edge in (-beta, beta):
        left = smelu_grad(torch.tensor([edge - h], dtype=torch.float64), beta).item()
        right = smelu_grad(torch.tensor([edge + h], dtype=torch.float64), beta).item()
        assert abs(left - right) < 1e-6  # the first derivative is continuous
    # second derivative: 1/(2β) inside, 0 outside, so it jumps at ±β
    inside = (
        smelu_grad(torch.tensor([h], dtype=torch.float64), beta)
        - smelu_grad(torch.tensor([-h], dtype=torch.float64), beta)
    ).item() / (2 * h)
    assert inside == pytest.approx(1 / (2 * beta), rel=1e-6)


@pytest.mark.parametrize("beta", [1e-3, 0.1, 1.0])
def test_largest_distance_from_relu_is_beta_over_four_at_zero(beta):
    x = torch.linspace(-2 * beta, 2 * beta, 4001, dtype=torch.float64)
    gap = smelu(x, beta) - torch.relu(x)
    assert gap.max().item() == pytest.approx(beta / 4, rel=1e-9)
    assert x[gap.argmax()].abs().item() < 1e-3 * beta
    assert gap.min().item() >= 0


def test_registered_module_and_repr():
    module = get_activation("smelu", beta=0.25)
    assert isinstance(module, SmeLU) and "beta=0.25" in repr(module)
    torch.testing.assert_close(module(torch.tensor([0.0, 1.0, -1.0])), torch.tensor([0.0625, 1.0, 0.0]))


def test_bad_beta_is_refused_with_its_value():
    bad_betas = [
        (0, ValueError),
        (-1.0, ValueError),
        (math.nan, ValueError),
        (math.inf, ValueError),
        (True, TypeError),
        ("0.5", TypeError),
    ]
    problems = [
        fault
        for beta, error in bad_betas
        if (fault := refusal_fault(f"SmeLU({beta!r})", lambda: SmeLU(beta), error, "beta"))
    ]
    assert not problems, "\n".join(problems)


def test_non_float_input_is_refused():
    with pytest.raises(TypeError, match="floating-point"):
        smelu(torch.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match="torch.Tensor"):
        smelu([1.0, 2.0])

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
from helpers.core.runs import TrainConfig
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


@pytest.mark.parametrize("beta", [1e300, 1e38, 1e18, 1e-18, 1e-46, 1e-320])
def test_beta_outside_the_float32_range_is_refused_everywhere(beta):
    # 4β overflows (1e38, 1e300) or underflows (1e-46, 1e-320) in float32: NaN, or a gradient of 0 for 1/2
    x = torch.tensor([-1.0, 0.0, 1.0])
    calls = {
        "smelu": lambda: smelu(x, beta),
        "smelu_grad": lambda: smelu_grad(x, beta),
        "SmeLU": lambda: SmeLU(beta),
        "TrainConfig": lambda: TrainConfig(
            "probe", "fashion_mnist", "mlp", activation="smelu", activation_kwargs={"beta": beta}
        ),
    }
    problems = [fault for name, call in calls.items() if (fault := refusal_fault(name, call, ValueError, "beta"))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0, 1.01e-18, 0.99e18])
def test_every_accepted_beta_gives_finite_values_and_gradients(beta):
    # the committed β (churn arms 0.5 and 2, the default 1) and the ends of the accepted range
    assert TrainConfig("probe", "fashion_mnist", "mlp", activation="smelu", activation_kwargs={"beta": beta})
    x = torch.tensor([-2 * beta, -beta, 0.0, beta, 2 * beta], requires_grad=True)
    y = SmeLU(beta)(x)
    (grad,) = torch.autograd.grad(y.sum(), x)
    torch.testing.assert_close(y.detach(), torch.tensor([0.0, 0.0, beta / 4, beta, 2 * beta]))
    torch.testing.assert_close(grad, torch.tensor([0.0, 0.0, 0.5, 1.0, 1.0]))
    torch.testing.assert_close(smelu_grad(x.detach(), beta), torch.tensor([0.0, 0.0, 0.5, 1.0, 1.0]))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_does_not_overflow_where_the_result_fits(dtype):
    # β = 7e4: (x + β)² and 4β overflow float16, SmeLU(0) = 17500 and SmeLU(6e4) ≈ 60357 do not
    beta = 7e4
    x = torch.tensor([-8e4, 0.0, 6e4], dtype=dtype, requires_grad=True)
    y = smelu(x, beta)
    assert y.dtype == dtype
    exact = smelu(x.detach().double(), beta)
    torch.testing.assert_close(y.detach().double(), exact, rtol=1e-2, atol=0.0)
    (grad,) = torch.autograd.grad(y.sum(), x)
    assert grad.dtype == dtype and torch.isfinite(grad).all()
    exact_grad = smelu_grad(x.detach().double(), beta)  # 0, 1/2, 13/14
    torch.testing.assert_close(grad.double(), exact_grad, rtol=1e-2, atol=0.0)
    torch.testing.assert_close(smelu_grad(x.detach(), beta).double(), exact_grad, rtol=1e-2, atol=0.0)
    assert SmeLU(beta)(x.detach()).dtype == dtype

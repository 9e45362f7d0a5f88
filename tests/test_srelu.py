"""S-ReLU: values against the closed form and the paper's pseudocode, gradients, limits, inputs."""

from __future__ import annotations

import math

import pytest
import torch
from refusals import refusal_fault

import helpers.srelu.activation as S
from helpers.activations import get_activation
from helpers.core import kernels
from helpers.srelu.activation import (
    SReLU,
    SReLUPaperReference,
    srelu,
    srelu_derivative,
    srelu_paper_reference,
    srelu_second_derivative,
)

DELTAS = (1e-6, 1e-3, 0.01, 0.5, 3.0)
BACKENDS = ("compiled", "eager")


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Run a test with each kernel backend (``compiled``: TorchInductor even for small tensors;
    float64 inputs always run the torch formulas)."""
    kernels.set_kernel_backend(request.param)
    yield request.param
    kernels.set_kernel_backend("auto")


def _grid(delta: float, dtype=torch.float64, n: int = 4001) -> torch.Tensor:
    """Points across the band, its ends exactly, and far outside."""
    inner = torch.linspace(-1.5 * delta, 1.5 * delta, n, dtype=dtype)
    ends = torch.tensor([-delta, delta, 0.0, -10.0, 10.0, -1e4, 1e4], dtype=dtype)
    return torch.cat([inner, ends])


def _closed_form(x: torch.Tensor, delta: float) -> torch.Tensor:
    """The paper's piecewise closed form (confirmed by sympy in test_symbolic_mollification)."""
    mid = x / 2 + 3 * x**2 / (8 * delta) + 3 * delta / 16 - x**4 / (16 * delta**3)
    return torch.where(x <= -delta, torch.zeros_like(x), torch.where(x < delta, mid, x))


# ---------------------------------------------------------------------------- values
@pytest.mark.parametrize("delta", DELTAS)
def test_matches_closed_form_float64(backend, delta):
    x = _grid(delta)
    got, want = srelu(x, delta), _closed_form(x, delta)
    tol = 4 * torch.finfo(torch.float64).eps * torch.clamp(x.abs(), min=delta)
    bad = (got - want).abs() > tol
    assert not bad.any(), f"max error {(got - want).abs().max().item():.3g} at {x[bad][:3].tolist()}"


@pytest.mark.parametrize("delta", DELTAS)
def test_matches_paper_pseudocode_to_float32_rounding(backend, delta):
    x = _grid(delta, torch.float32)
    got, ref = srelu(x, delta), srelu_paper_reference(x, delta)
    scale = torch.maximum(x.abs(), torch.tensor(delta, dtype=torch.float32))
    assert torch.all((got - ref).abs() <= 8 * torch.finfo(torch.float32).eps * scale)


@pytest.mark.parametrize("delta", DELTAS)
def test_is_relu_bit_for_bit_outside_band(backend, delta):
    for dtype in (torch.float32, torch.float64):
        x = torch.cat(
            [
                torch.linspace(delta, 50 * delta, 999, dtype=dtype),
                torch.tensor([1e30, -1e30, delta * 1.0001], dtype=dtype),
            ]
        )
        x = torch.cat([x, -x])
        assert torch.equal(srelu(x, delta), torch.relu(x))


def test_uniform_error_is_3delta_over_16_at_zero(backend):
    delta = 0.02
    x = torch.linspace(-0.05, 0.05, 100001, dtype=torch.float64)
    err = (srelu(x, delta) - torch.relu(x)).abs()
    assert err.max().item() == pytest.approx(3 * delta / 16, rel=1e-12)
    assert abs(x[err.argmax()].item()) < 1e-12
    assert srelu(torch.zeros(1, dtype=torch.float64), delta).item() == pytest.approx(3 * delta / 16, rel=1e-15)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64))
def test_tiny_delta_is_stable(backend, dtype):
    delta = 1e-6
    x = torch.cat(
        [
            torch.linspace(-3e-6, 3e-6, 6001, dtype=dtype),
            torch.randn(10000, generator=torch.Generator().manual_seed(0)).to(dtype),
            torch.tensor([1e30, -1e30], dtype=dtype),
        ]
    ).requires_grad_()
    y = srelu(x, delta)
    y.backward(torch.ones_like(y))
    assert torch.isfinite(y).all() and torch.isfinite(x.grad).all()
    err = (y - torch.relu(x)).detach()
    tol = 3 * delta / 16 * (1 + 1e-5) + 4 * torch.finfo(dtype).eps * x.detach().abs()
    assert torch.all(err >= -tol) and torch.all(err <= tol)
    assert torch.all((x.grad >= 0) & (x.grad <= 1))


def test_non_finite_inputs(backend):
    x = torch.tensor([math.inf, -math.inf, math.nan], dtype=torch.float32)
    y = srelu(x, 0.01)
    assert y[0] == math.inf and y[1] == 0 and math.isnan(y[2])


def test_paper_pseudocode_backward_nan_for_huge_inputs_ours_is_not():
    # Verbatim, the torch.where form differentiates its discarded quartic too: 0 * inf = nan in
    # float32. The reference evaluates the quartic inside (−a, a) only, and so has the gradient.
    def verbatim(x, a):
        p2 = x / 2.0 + 3.0 * x**2 / (8.0 * a) + 3.0 * a / 16.0 - x**4 / (16.0 * a**3)
        return torch.where(x <= -a, torch.zeros_like(x), torch.where((x > -a) & (x < a), p2, x))

    x = torch.tensor([1e13, -1e13], requires_grad=True)
    verbatim(x, 0.01).sum().backward()
    assert torch.isnan(x.grad).all()
    for fn in (srelu_paper_reference, srelu):
        x2 = x.detach().clone().requires_grad_()
        fn(x2, 0.01).sum().backward()
        assert x2.grad.tolist() == [1.0, 0.0], fn.__name__
    grid = torch.linspace(-0.02, 0.02, 4001, dtype=torch.float64)
    assert torch.equal(srelu_paper_reference(grid, 0.01), verbatim(grid, 0.01))  # the same values


def test_backends_agree():
    x = torch.randn(70000, generator=torch.Generator().manual_seed(1)) * 0.02
    out = {}
    for b in BACKENDS:
        kernels.set_kernel_backend(b)
        xx = x.clone().requires_grad_()
        y = srelu(xx, 0.01)
        y.backward(torch.cos(x))
        out[b] = (y.detach(), xx.grad)
    kernels.set_kernel_backend("auto")
    for a, b in zip(out["compiled"], out["eager"]):
        # float32; Inductor may form x·(1/δ) where eager forms x/δ: one rounding apart in t
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


def test_deterministic_and_thread_count_independent():
    """Elementwise, so the forward does not depend on how the loop is split over threads."""
    kernels.set_kernel_backend("compiled")
    x = torch.randn(1 << 18, generator=torch.Generator().manual_seed(2)) * 0.01
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = srelu(x, 0.01)
        torch.set_num_threads(max(2, threads))
        many = srelu(x, 0.01)
    finally:
        torch.set_num_threads(threads)
        kernels.set_kernel_backend("auto")
    assert torch.equal(one, many) and torch.equal(srelu(x, 0.01), srelu(x, 0.01))


def test_layouts_and_broadcast_grads(backend):
    g = torch.Generator().manual_seed(3)
    base = torch.randn(4, 3, 5, 6, generator=g, dtype=torch.float64) * 0.02
    for x in (base.transpose(1, 3), base.to(memory_format=torch.channels_last), base[:, :, ::2]):
        xx = x.clone() if not x.is_contiguous() else x
        x1 = xx.detach().requires_grad_()
        x2 = xx.detach().contiguous().requires_grad_()
        y1, y2 = srelu(x1, 0.01), srelu(x2, 0.01)
        assert y1.shape == x.shape
        torch.testing.assert_close(y1, y2, rtol=0, atol=0)
        y1.sum().backward()  # expanded (stride-0) incoming gradient
        y2.sum().backward()
        torch.testing.assert_close(x1.grad, x2.grad, rtol=0, atol=0)


# ---------------------------------------------------------------------------- derivatives
@pytest.mark.parametrize("delta", (1e-3, 0.5))
def test_derivatives_match_autograd_and_closed_forms(backend, delta):
    x = _grid(delta, n=801).requires_grad_()
    y = srelu(x, delta)
    (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), x)
    xd = x.detach()
    t = xd / delta
    want1 = torch.where(xd <= -delta, 0.0, torch.where(xd < delta, 0.5 + 0.75 * t - 0.25 * t**3, 1.0))
    want2 = torch.where(xd.abs() < delta, 0.75 * (1 - t**2) / delta, 0.0)
    torch.testing.assert_close(d1.detach(), want1.double(), rtol=0, atol=1e-14)
    torch.testing.assert_close(srelu_derivative(xd, delta), want1.double(), rtol=0, atol=1e-14)
    torch.testing.assert_close(d2, want2.double(), rtol=0, atol=1e-12 / delta)
    torch.testing.assert_close(srelu_second_derivative(xd, delta), want2.double(), rtol=0, atol=1e-12 / delta)


def test_derivative_in_unit_interval_and_monotone():
    x = torch.linspace(-2, 2, 40001, dtype=torch.float64)
    d = srelu_derivative(x, 0.7)
    assert d.min() == 0 and d.max() == 1 and torch.all(d[1:] >= d[:-1])


def test_gradcheck_x(backend):
    # Points avoid ±δ: S-ReLU is only C², so a finite difference of f' there (inside
    # gradgradcheck) sees the jump of the third derivative and is off by O(h/δ²).
    x = (torch.linspace(-1.3, 1.3, 52, dtype=torch.float64) * 0.1).requires_grad_()
    assert not torch.isclose(x.abs(), torch.tensor(0.1, dtype=torch.float64)).any()
    assert torch.autograd.gradcheck(lambda z: srelu(z, 0.1), (x,))
    assert torch.autograd.gradgradcheck(lambda z: srelu(z, 0.1), (x,))


def test_gradcheck_x_and_delta(backend):
    x = (torch.linspace(-1.3, 1.3, 41, dtype=torch.float64) * 0.2).requires_grad_()
    for delta in (
        torch.tensor(0.2, dtype=torch.float64, requires_grad=True),
        torch.full((41,), 0.2, dtype=torch.float64, requires_grad=True),
    ):
        assert torch.autograd.gradcheck(srelu, (x, delta))
        assert torch.autograd.gradgradcheck(srelu, (x, delta))


def test_delta_gradient_closed_form(backend):
    x = torch.linspace(-0.5, 0.5, 1001, dtype=torch.float64)
    delta = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    srelu(x, delta).sum().backward()
    t = (x / 0.3).clamp(-1, 1)
    assert delta.grad.item() == pytest.approx(float((3 * (1 - t**2) ** 2 / 16).sum()), rel=1e-12)


# ---------------------------------------------------------------------------- module
def test_module_fixed_delta():
    m = SReLU(0.01)
    x = torch.linspace(-0.02, 0.02, 101)
    assert torch.equal(m(x), srelu(x, 0.01))
    assert m.delta == 0.01 and list(m.parameters()) == []
    assert "delta=0.01" in repr(m)
    assert SReLU().delta == 0.001


def test_module_learnable_delta_trains_through_log_delta():
    torch.manual_seed(0)
    m = SReLU(0.1, learnable=True)
    assert isinstance(m.log_delta, torch.nn.Parameter)
    assert m.delta == pytest.approx(0.1, rel=1e-6)
    x = torch.linspace(-0.2, 0.2, 401, dtype=torch.float32)
    m(x).sum().backward()
    t = (x / 0.1).clamp(-1, 1)
    want = 0.1 * float((3 * (1 - t**2) ** 2 / 16).sum())  # chain rule: dδ/dlogδ = δ
    assert m.log_delta.grad.item() == pytest.approx(want, rel=1e-4)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    before = m.delta
    opt.step()
    assert m.delta < before  # the gradient of sum(S-ReLU) wrt δ is positive


def test_module_learnable_float64_gradcheck():
    m = SReLU(0.2, learnable=True).double()
    x = (torch.linspace(-1.2, 1.2, 31, dtype=torch.float64) * 0.2).requires_grad_()
    assert torch.autograd.gradcheck(lambda z, ld: srelu(z, ld.exp()), (x, m.log_delta))


def test_registry_builds_srelu():
    m = get_activation("srelu", delta=0.05, learnable=True)
    assert isinstance(m, SReLU) and m.learnable and m.delta == pytest.approx(0.05)
    ref = SReLUPaperReference(0.05)
    x = torch.linspace(-0.1, 0.1, 11)
    torch.testing.assert_close(ref(x), srelu(x, 0.05))


# ---------------------------------------------------------------------------- invalid input
def test_bad_delta_values():
    x = torch.zeros(3)
    faults = []
    for bad in (0, 0.0, -0.1, math.nan, math.inf, -math.inf):
        for fn in (srelu, srelu_paper_reference, srelu_derivative, srelu_second_derivative):
            faults.append(refusal_fault(f"{fn.__name__}(x, {bad!r})", lambda: fn(x, bad), ValueError, "delta"))
        faults.append(refusal_fault(f"SReLU({bad!r})", lambda: SReLU(bad), ValueError, "delta"))
    problems = [fault for fault in faults if fault]
    assert not problems, "\n".join(problems)


def test_bad_delta_types():
    problems = [
        fault
        for bad in ("0.1", None, True, 1j, [0.1], torch.tensor(1))
        if (fault := refusal_fault(f"srelu(x, {bad!r})", lambda: srelu(torch.zeros(3), bad), TypeError, "delta"))
    ]
    assert not problems, "\n".join(problems)


def test_bad_delta_tensors():
    x = torch.zeros(3)
    with pytest.raises(ValueError, match="delta"):
        srelu(x, torch.tensor([0.1, -0.1, 0.1]))
    with pytest.raises(ValueError, match="broadcast"):
        srelu(x, torch.full((4,), 0.1))
    with pytest.raises(ValueError, match="enlarge"):
        srelu(x, torch.full((2, 3), 0.1))
    with pytest.raises(TypeError):
        SReLU(torch.tensor(0.1))


def test_bad_x():
    faults = []
    for bad in ([0.1, 0.2], 0.5, torch.tensor([1, 2])):
        faults.append(refusal_fault(f"srelu({bad!r}, 0.1)", lambda: srelu(bad, 0.1), TypeError, "x must"))
        faults.append(refusal_fault(f"SReLU(0.1)({bad!r})", lambda: SReLU(0.1)(bad), TypeError, "x must"))
    problems = [fault for fault in faults if fault]
    assert not problems, "\n".join(problems)


def test_bad_flags_and_backend_names():
    with pytest.raises(TypeError, match="learnable"):
        SReLU(0.1, learnable="yes")
    with pytest.raises(ValueError, match="backend"):
        kernels.set_kernel_backend("fast")


def test_compile_failure_falls_back_to_eager(monkeypatch):
    """A failed compile: one warning naming it, then the torch formulas; ``compiled`` forced: an error."""

    def broken(*args, **kwargs):
        raise RuntimeError("no C++ compiler (simulated)")

    monkeypatch.setattr(kernels, "_compile_errors", {})
    monkeypatch.setattr(S.FORWARD, "_compiled", broken)
    x = torch.linspace(-0.02, 0.02, 1 << 17)
    with pytest.warns(RuntimeWarning, match="simulated"):
        y = srelu(x, 0.01)
    assert "simulated" in kernels.compile_unavailable_reason()
    torch.testing.assert_close(y.double(), _closed_form(x.double(), 0.01), rtol=0, atol=1e-8)
    kernels.set_kernel_backend("compiled")
    try:
        with pytest.raises(RuntimeError, match="compiled kernels unavailable"):
            srelu(x, 0.01)
    finally:
        kernels.set_kernel_backend("auto")

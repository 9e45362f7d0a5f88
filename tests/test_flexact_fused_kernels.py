"""Flex-Act's fused mixture kernels (helpers.flexact.kernels, TorchInductor) against float64 and eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers.core import kernels
from helpers.flexact import activation as fx
from helpers.flexact import kernels as fk
from helpers.flexact import mixture
from helpers.flexact.activation import FlexAct
from helpers.flexact.regulariser import mean_gradient_norms

INF, NAN = float("inf"), float("nan")
ULP = 2.0**-23


@pytest.fixture
def backend():
    """Set the kernel backend in a test (``compiled`` forces the fused kernels even for small
    tensors); restored afterwards."""
    yield kernels.set_kernel_backend
    kernels.set_kernel_backend("auto")


@pytest.fixture
def fused():
    """The fused kernels even for small tensors. These accuracy tests hold for them only: the
    eager path uses ATen's σ(1 − σ), which is not relative-accurate in the tails."""
    kernels.set_kernel_backend("compiled")
    yield
    kernels.set_kernel_backend("auto")


def _inputs(n: int = 50_000, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    edge = torch.tensor(
        [
            0.0,
            -0.0,
            1e-38,
            -1e-38,
            1e-30,
            -1e-30,
            1e-6,
            -1e-6,
            0.49,
            0.51,
            -0.5,
            5.0,
            -5.0,
            17.0,
            -17.0,
            30.0,
            -30.0,
            60.0,
            -60.0,
            200.0,
            -200.0,
            1e4,
            -1e4,
            1e30,
            -1e30,
        ]
    )
    return torch.cat([edge, torch.randn(n, generator=gen) * 4, torch.randn(n // 10, generator=gen) * 40])


def _reference(module: FlexAct, h: torch.Tensor, w: torch.Tensor, g: torch.Tensor):
    """Float64 ``y``, ``∂L/∂h``, ``∂L/∂w`` and the scales of their terms, candidate by candidate
    (zero weights skipped, as the exact mixture has no such term)."""
    hd, gd = h.double(), g.double()
    y = torch.zeros_like(hd)
    dy = torch.zeros_like(hd)
    y_scale = torch.zeros_like(hd)
    dy_scale = torch.zeros_like(hd)
    grad_w = []
    for wj, cand in zip(w.double().tolist(), module.candidates):
        x = hd.clone().requires_grad_(True)
        phi = cand.double()(x)
        (d,) = torch.autograd.grad(phi, x, torch.ones_like(x))
        e = torch.exp(-hd.abs())
        if isinstance(cand, nn.Sigmoid):  # exact in the tails (autograd's σ(1-σ) is not)
            d = e / (1 + e) ** 2
        elif isinstance(cand, nn.Tanh):
            d = (2 * e / (1 + e * e)) ** 2
        phi = phi.detach()
        grad_w.append(float((gd * phi).sum()))
        if wj != 0.0:
            y, dy = y + wj * phi, dy + wj * d
            y_scale, dy_scale = y_scale + abs(wj) * phi.abs(), dy_scale + abs(wj) * d.abs()
    return y, dy * gd, torch.tensor(grad_w, dtype=torch.float64), y_scale, dy_scale * gd.abs()


def _run(module: FlexAct, h: torch.Tensor, w: torch.Tensor, g: torch.Tensor):
    x = h.clone().requires_grad_(True)
    wt = w.clone().requires_grad_(True)
    y = module.mix(x, wt)
    y.backward(g)
    return y.detach(), x.grad, wt.grad


CANDIDATE_SETS = {
    "default": fx.DEFAULT_CANDIDATES,
    "leaky_slope_2": ("relu", "sigmoid", "tanh", nn.LeakyReLU(2.0), "identity"),  # negative c_relu
}


def _weight_cases(k: int) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    soft = torch.softmax(torch.randn(k, generator=gen) * 2, 0)
    return [soft, *torch.eye(k)]  # soft, and every hard one-hot sample (zero coefficients)


@pytest.mark.parametrize("name", list(CANDIDATE_SETS))
def test_matches_float64_reference(name, fused):
    m = FlexAct(CANDIDATE_SETS[name])
    h = _inputs()
    g = torch.randn(h.shape, generator=torch.Generator().manual_seed(2))
    for w in _weight_cases(len(m.names)):
        y, gh, gw = _run(m, h, w, g)
        y_ref, gh_ref, gw_ref, y_scale, gh_scale = _reference(m, h, w, g)
        assert torch.all((y.double() - y_ref).abs() <= 8 * ULP * y_scale + 1e-37), w
        assert torch.all((gh.double() - gh_ref).abs() <= 8 * ULP * gh_scale + 1e-37), w
        abs_sums = torch.tensor([float((g.double() * c.double()(h.double())).abs().sum()) for c in m.candidates])
        assert torch.all((gw.double() - gw_ref).abs() <= 1e-5 * abs_sums + 1e-6), w


def test_tanh_relative_accuracy_near_zero_and_saturation(fused):
    m = FlexAct(("tanh", "sigmoid"))
    h = torch.cat([torch.logspace(-38, 0.3, 2000), -torch.logspace(-38, 0.3, 2000), torch.linspace(-100, 100, 4001)])
    for w, fn in ((torch.tensor([1.0, 0.0]), torch.tanh), (torch.tensor([0.0, 1.0]), torch.sigmoid)):
        y, _, _ = _run(m, h, w, torch.ones_like(h))
        ref = fn(h.double())
        # relative accuracy down to float32's subnormals (whose spacing is 2^-149)
        assert torch.all((y.double() - ref).abs() <= 4 * ULP * ref.abs() + 4 * 2.0**-149), fn
    y, _, _ = _run(m, torch.tensor([-0.0, 0.0, 1e-30, -1e-30]), torch.tensor([1.0, 0.0]), torch.ones(4))
    assert y.tolist() == [0.0, 0.0, torch.tensor(1e-30).item(), torch.tensor(-1e-30).item()]


@pytest.mark.parametrize("name", list(CANDIDATE_SETS))
def test_infinities_give_limits_and_nan_propagates(name, fused):
    m = FlexAct(CANDIDATE_SETS[name])
    h = torch.tensor([INF, -INF, NAN, 1.0])
    g = torch.tensor([1.5, -2.0, 1.0, 0.5])
    for w in _weight_cases(len(m.names)):
        y, gh, _ = _run(m, h, w, g)
        y_ref, gh_ref, _, _, _ = _reference(m, h, w, g)
        torch.testing.assert_close(y.double(), y_ref, equal_nan=True, rtol=1e-6, atol=0)
        keep = [0, 1, 3]  # autograd's relu'(NaN) is 0, so the reference has no NaN to compare with
        torch.testing.assert_close(gh.double()[keep], gh_ref[keep], rtol=1e-6, atol=0)
        assert y[2].isnan() and gh[2].isnan()
    # weight gradients at ±inf: Σ g·φ_j(h) per candidate (no 0·∞ from unused basis functions)
    m = FlexAct()
    for hv in (INF, -INF):
        h = torch.tensor([hv, 0.5])
        g = torch.tensor([1.0, 2.0])
        _, _, gw = _run(m, h, _weight_cases(5)[0], g)
        _, _, gw_ref, _, _ = _reference(m, h, _weight_cases(5)[0], g)
        torch.testing.assert_close(gw.double(), gw_ref, rtol=1e-6, atol=1e-7)


def test_compiled_close_to_eager(backend):
    m = FlexAct()
    h = torch.randn(3, 40_000) * 3
    g = torch.randn(3, 40_000)
    for w in _weight_cases(5):
        backend("compiled")
        y_n, gh_n, gw_n = _run(m, h, w, g)
        backend("eager")
        y_e, gh_e, gw_e = _run(m, h, w, g)
        torch.testing.assert_close(y_n, y_e, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(gh_n, gh_e, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(gw_n, gw_e, rtol=1e-4, atol=1e-3)


def test_sampled_training_forward_matches_gumbel_softmax_mix():
    """FlexAct's fused sample-and-mix node equals mix(h, F.gumbel_softmax(...)) with the same noise."""
    for hard in (False, True):
        m = FlexAct(hard=hard, tau=0.7, init_logits=[0.3, -0.2, 0.1, 0.0, 0.5])
        h = torch.randn(64, 300)
        g = torch.randn(64, 300)
        torch.manual_seed(3)
        x1 = h.clone().requires_grad_(True)
        y1 = m(x1)
        y1.backward(g)
        grad_logits, w_used = m.logits.grad.clone(), m.last_weights
        m.logits.grad = None
        torch.manual_seed(3)
        w = F.gumbel_softmax(m.logits, tau=0.7, hard=hard)
        x2 = h.clone().requires_grad_(True)
        y2 = m.mix(x2, w)
        y2.backward(g)
        torch.testing.assert_close(w_used, w.detach(), rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(y1, y2, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(x1.grad, x2.grad, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(grad_logits, m.logits.grad, rtol=1e-4, atol=1e-4)


def test_bit_identical_run_to_run():
    m = FlexAct()
    h = torch.randn(300_001) * 3
    g = torch.randn(300_001)
    w = _weight_cases(5)[0]
    for a, b in zip(_run(m, h, w, g), _run(m, h, w, g)):
        assert torch.equal(a, b)


def test_backend_switch(backend, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("fused kernel called")

    monkeypatch.setattr(fk.MIX_FORWARD, "_compiled", refuse)
    monkeypatch.setattr(kernels, "_compile_errors", {})
    m = FlexAct()
    h = torch.randn(10, 5)
    backend("eager")
    m(h).sum().backward()  # the eager path never calls the kernel
    backend("compiled")
    with pytest.raises(AssertionError, match="fused kernel called"):
        m(h)
    backend("auto")
    m(h)  # small: eager in auto mode
    # float64 always goes eager, so gradcheck (float64) checks the eager formulas
    m64 = FlexAct().double()
    hd = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    wd = torch.rand(5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(m64.mix, (hd, wd))


def test_sampled_mixture_gradcheck_float64():
    """∂/∂logits of the fused sample-and-mix node (soft samples) against finite differences."""
    m = FlexAct(tau=0.8).double()
    h = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    logits = torch.randn(5, dtype=torch.float64, requires_grad=True)

    def f(x, lg):
        torch.manual_seed(0)  # the same Gumbel noise on every evaluation
        return mixture._SampledMixture.apply(x, lg, 0.8, False, m._basis, m._rows, [])

    assert torch.autograd.gradcheck(f, (h, logits))


def test_environment_variable_selects_backend(monkeypatch):
    """REPRO_KERNELS is read by the one reader the module's backend is initialised from."""
    monkeypatch.setenv("REPRO_KERNELS", " Eager ")
    assert kernels._backend_from_env() == "eager"
    monkeypatch.setenv("REPRO_KERNELS", "bogus")
    with pytest.raises(ValueError, match="REPRO_KERNELS must be one of"):
        kernels._backend_from_env()


@pytest.mark.parametrize("shape", [(128, 256), (16, 4, 9, 9), (1000,), (3, 40_000)])
def test_fused_gradient_norms_match_eager(shape, backend):
    cands = FlexAct(("relu", "sigmoid", "tanh", nn.LeakyReLU(0.2), "identity")).candidates
    h = torch.randn(shape, generator=torch.Generator().manual_seed(4)) * 3
    backend("compiled")
    fused = mean_gradient_norms(h, cands)
    backend("eager")
    eager = mean_gradient_norms(h, cands)
    ref = mean_gradient_norms(h.double(), cands)  # float64, eager
    assert fused.dtype == torch.float32
    torch.testing.assert_close(fused.double(), ref, rtol=2e-6, atol=0)
    torch.testing.assert_close(fused, eager, rtol=1e-5, atol=0)
    backend("compiled")
    assert torch.equal(mean_gradient_norms(h, cands), fused)  # deterministic


def test_gradient_norms_with_other_candidates_or_graph_use_autograd(backend, monkeypatch):
    monkeypatch.setattr(fk.GRAD_NORM_SUMS, "_compiled", lambda *a: (_ for _ in ()).throw(AssertionError("fused")))
    monkeypatch.setattr(kernels, "_compile_errors", {})
    backend("compiled")
    h = torch.randn(8, 5, requires_grad=True)
    mean_gradient_norms(h, FlexAct(("relu", "gelu")).candidates)  # gelu: not a basis candidate
    g = mean_gradient_norms(h * 1.0, FlexAct(("sigmoid",)).candidates, detach=False)  # needs a graph
    assert g.requires_grad
    with pytest.raises(AssertionError, match="fused"):
        mean_gradient_norms(h, FlexAct(("sigmoid",)).candidates)

"""λ-GELU: values, gradients (float64 gradcheck), limits, both kernel backends, invalid input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers.core import kernels
from helpers.lambda_gelu.activation import LambdaGELU, lambda_gelu, lambda_gelu_reference

#: max_u u(1 − Φ(u)); sup_x |ReLU(x) − xΦ(λx)| = SUP_GAP/λ (helpers.lambda_gelu.theory)
SUP_GAP = 0.16997120747990366

GRANULARITIES = [
    ("layer", {}, (5, 3, 4)),
    ("channel", {"num_channels": 3}, (5, 3, 4)),
    ("channel", {"num_channels": 4, "channel_dim": -1}, (5, 3, 4)),
    ("neuron", {"neuron_shape": (3, 4)}, (5, 3, 4)),
]
GRAN_IDS = ["layer", "channel_dim1", "channel_last", "neuron"]


@pytest.fixture(params=["compiled", "eager"])
def backend(request):
    """``compiled`` forces TorchInductor's fused kernels even for small test tensors."""
    kernels.set_kernel_backend(request.param)
    yield request.param
    kernels.set_kernel_backend("auto")


def _reference(x: torch.Tensor, lam: torch.Tensor | float) -> torch.Tensor:
    """float64 ``x Φ(λx)`` from SciPy-grade ndtr."""
    return x.double() * torch.special.ndtr(torch.as_tensor(lam, dtype=torch.float64) * x.double())


def _module(granularity: str, kw: dict, lam_init: float = 1.7, dtype=torch.float64, seed: int = 0) -> LambdaGELU:
    m = LambdaGELU(granularity=granularity, lam_init=lam_init, **kw).to(dtype)
    with torch.no_grad():  # distinct λ per entry, so per-channel mistakes cannot cancel
        m.s.add_(0.05 * torch.randn(m.s.shape, generator=torch.Generator().manual_seed(seed), dtype=dtype))
    return m


# ------------------------------------------------------------------------------------- values
def test_fixed_lambda_one_is_nn_gelu_bit_for_bit():
    x = torch.linspace(-12, 12, 10_001)
    assert (LambdaGELU(fixed_lambda=1.0)(x) - nn.GELU()(x)).abs().max().item() == 0.0
    assert (lambda_gelu(x, 1.0) - nn.GELU()(x)).abs().max().item() == 0.0


def test_lambda_one_through_the_kernels_matches_gelu_to_float32_rounding(backend):
    x = torch.linspace(-12, 12, 10_001)
    y = lambda_gelu(x, torch.tensor(1.0))  # a tensor λ always takes the custom function
    diff = (y - nn.GELU()(x)).abs()
    assert torch.all(diff <= 4 * torch.finfo(torch.float32).eps * x.abs().clamp_min(1.0)), diff.max()


@pytest.mark.parametrize("lam", [1.0001, 1.5, 3.0, 160.0, 1e4])
def test_matches_float64_reference(backend, lam):
    x = torch.cat([torch.linspace(-30, 30, 20_001), torch.randn(50_000, generator=torch.Generator().manual_seed(1))])
    y = lambda_gelu(x, lam)
    err = (y.double() - _reference(x, lam)).abs()
    assert torch.all(err <= 1e-6 * x.abs().double().clamp_min(1.0)), err.max()


def test_float64_is_exact_to_double_rounding():
    x = torch.linspace(-8, 8, 4001, dtype=torch.float64)
    for lam in (1.3, 7.0):
        assert torch.allclose(lambda_gelu(x, lam), _reference(x, lam), rtol=1e-14, atol=1e-15)


def test_reference_form_agrees():
    x = torch.linspace(-5, 5, 1001, dtype=torch.float64)
    assert torch.allclose(lambda_gelu(x, 2.5), lambda_gelu_reference(x, 2.5), rtol=1e-13, atol=1e-15)


def test_large_lambda_approaches_relu_without_nan(backend):
    x = torch.cat([torch.linspace(-1e4, 1e4, 20_001), torch.linspace(-1, 1, 2001), torch.tensor([0.0, -0.0])])
    x = x.requires_grad_()
    for lam_value in (1e2, 1e3, 1e4):
        lam = torch.tensor(lam_value, requires_grad=True)
        y = lambda_gelu(x, lam)
        y.backward(torch.ones_like(y))
        assert torch.isfinite(y).all() and torch.isfinite(x.grad).all() and torch.isfinite(lam.grad)
        gap = (y - F.relu(x)).abs()
        # sup_x |ReLU − xΦ(λx)| = 0.16997/λ, plus float32 rounding of large outputs
        assert torch.all(gap <= SUP_GAP / lam_value * 1.01 + 2e-7 * x.detach().abs()), gap.max()
        x.grad = None


def test_saturated_erf_clamp_leaves_the_float32_gate_unchanged():
    """The fused formulas clamp erf's argument to ±ERF_SATURATED: every float32 |z| in [2, 24), both
    signs and the infinities, gives the same erf bit for bit, eagerly and compiled."""
    from helpers.lambda_gelu.kernels import ERF_SATURATED

    z = torch.arange(0x40000000, 0x41C00000, 7, dtype=torch.int64).to(torch.int32).view(torch.float32)
    z = torch.cat([z, -z, torch.tensor([float("inf"), -float("inf"), 3e38, -3e38])])
    clamp = lambda a: torch.erf(a.clamp(-ERF_SATURATED, ERF_SATURATED))  # noqa: E731
    assert torch.equal(torch.erf(z), clamp(z))
    assert torch.equal(torch.compile(torch.erf)(z), torch.compile(clamp)(z))
    assert torch.erf(torch.tensor(ERF_SATURATED)).item() == 1.0


def test_fused_tail_never_forms_subnormals_and_matches_the_exact_gradient():
    """At λ = 160 (the annealing target) most |λx| are far in the tails; the fused backward takes
    φ(λx) < 3e-38 as 0 instead of forming subnormals (10x slower on x86). The gradients still match
    float64 to float32 rounding, and φ itself is never subnormal."""
    from helpers.lambda_gelu import kernels as lk

    x = torch.cat([torch.linspace(-2, 2, 40_001), torch.randn(60_000, generator=torch.Generator().manual_seed(2))])
    u = x * 160.0
    tail = lk._x_phi(torch.ones_like(u), u)
    tiny = torch.finfo(torch.float32).tiny
    assert not torch.any((tail != 0) & (tail.abs() < tiny))
    assert torch.all(tail[u * u >= lk.PHI_FLUSH_U2] == 0)
    g = torch.randn(x.shape, generator=torch.Generator().manual_seed(4))
    for fn in (lk._fused_grad_x_lam, torch.compile(lk._fused_grad_x_lam)):
        gx, glam = fn(g, x, torch.tensor(160.0))
        x64, g64 = x.double(), g.double()
        u64 = 160.0 * x64
        phi = torch.exp(-0.5 * u64 * u64) / math.sqrt(2 * math.pi)
        gx64 = g64 * (torch.special.ndtr(u64) + u64 * phi)
        glam64 = (g64 * x64 * x64 * phi).sum()
        assert torch.allclose(gx.double(), gx64, atol=1e-6 * g64.abs().max().item())
        assert math.isclose(glam.item(), glam64.item(), rel_tol=1e-4, abs_tol=1e-9)


def test_gate_limit_pointwise():
    x = torch.tensor([-2.0, -0.1, 0.0, 0.1, 2.0], dtype=torch.float64)
    y = lambda_gelu(x, 1e6)
    assert torch.allclose(y, F.relu(x), atol=1e-12)


def test_empty_and_noncontiguous_inputs(backend):
    assert lambda_gelu(torch.empty(0, 3), 2.0).shape == (0, 3)
    base = torch.randn(6, 8, generator=torch.Generator().manual_seed(3))
    xt = base.t()  # non-contiguous: takes the eager path
    assert torch.allclose(lambda_gelu(xt, 2.0), lambda_gelu(xt.contiguous(), 2.0), atol=1e-6)


# ---------------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("granularity,kw,shape", GRANULARITIES, ids=GRAN_IDS)
def test_gradcheck_x_and_s(granularity, kw, shape):
    m = _module(granularity, kw)
    x = torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2), requires_grad=True)
    s = m.s.detach().clone().requires_grad_()

    def f(x_, s_):
        return torch.func.functional_call(m, {"s": s_}, (x_,))

    assert torch.autograd.gradcheck(f, (x, s))
    assert torch.autograd.gradgradcheck(f, (x, s))


def test_gradcheck_functional_lambda_tensor():
    x = torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(4), requires_grad=True)
    lam = torch.tensor([1.2, 2.0, 5.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda_gelu, (x, lam))


def test_da_dlambda_is_x2_phi():
    x = torch.tensor([-2.0, -0.4, 0.0, 0.3, 1.7], dtype=torch.float64)
    for lam_value in (1.0, 2.5, 12.0):
        lam = torch.tensor(lam_value, dtype=torch.float64, requires_grad=True)
        per_element = [torch.autograd.grad(lambda_gelu(xi, lam), lam)[0].item() for xi in x]
        closed = x**2 * torch.exp(-0.5 * (lam_value * x) ** 2) / math.sqrt(2 * math.pi)
        h = 1e-6
        fd = (_reference(x, lam_value + h) - _reference(x, lam_value - h)) / (2 * h)
        assert torch.allclose(torch.tensor(per_element, dtype=torch.float64), closed, atol=1e-14)
        assert torch.allclose(closed, fd, atol=1e-9)


@pytest.mark.parametrize("granularity,kw,shape", GRANULARITIES, ids=GRAN_IDS)
def test_float32_gradients_match_float64(backend, granularity, kw, shape):
    shape = (64,) + shape[1:]
    x64 = 3 * torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    g64 = torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    results = {}
    for dtype in (torch.float32, torch.float64):
        m = _module(granularity, kw, dtype=dtype)
        x = x64.to(dtype).requires_grad_()
        m(x).backward(g64.to(dtype))
        results[dtype] = (x.grad.double(), m.s.grad.double())
    (gx32, gs32), (gx64, gs64) = results[torch.float32], results[torch.float64]
    assert torch.allclose(gx32, gx64, atol=1e-6 * g64.abs().max().item())
    assert torch.allclose(gs32, gs64, rtol=1e-4, atol=1e-5 * gs64.abs().max().item())


def test_compiled_and_eager_agree_and_each_is_deterministic():
    x0 = torch.randn(300_000, generator=torch.Generator().manual_seed(7))
    g = torch.randn(300_000, generator=torch.Generator().manual_seed(8))
    out = {}
    for backend_name in ("compiled", "compiled", "eager", "eager"):
        kernels.set_kernel_backend(backend_name)
        try:
            m = LambdaGELU(lam_init=2.3)
            x = x0.clone().requires_grad_()
            y = m(x)
            y.backward(g)
        finally:
            kernels.set_kernel_backend("auto")
        out.setdefault(backend_name, []).append((y.detach(), x.grad, m.s.grad))
    for runs in out.values():  # bit-identical run to run (same thread count)
        assert all(torch.equal(a, b) for a, b in zip(*runs))
    fused, eager = out["compiled"][0], out["eager"][0]
    assert torch.allclose(fused[0], eager[0], atol=1e-6)
    assert torch.allclose(fused[1], eager[1], atol=1e-6)
    assert torch.allclose(fused[2], eager[2], rtol=1e-4)


def test_fixed_and_learnable_lambda_reject_bad_values():
    m = LambdaGELU(lam_init=2.3)
    with pytest.raises(ValueError, match=">= 1"):
        m.set_fixed_lambda(0.5)
    with pytest.raises(ValueError, match="> 1"):
        m.set_lambda(1.0)


def test_set_kernel_backend_rejects_unknown_name():
    with pytest.raises(ValueError, match="backend"):
        kernels.set_kernel_backend("cuda")
    assert kernels.kernel_backend() == "auto"


# --------------------------------------------------------------------- symbolic derivations
def test_symbolic_identities_hold():
    from helpers.lambda_gelu import theory as S

    for check in (
        S.verify_relu_limit,
        S.verify_da_dlam,
        S.verify_da_dx,
        S.verify_dlam_ds,
        S.verify_dlam_ds_in_lambda,
        S.verify_dL_ds,
        S.verify_delta_lambda,
        S.verify_e_inf,
    ):
        assert check(), check.__name__


def test_symbolic_closed_forms_numerically():
    import sympy as sp
    from scipy.integrate import quad
    from scipy.special import expit, ndtr

    from helpers.lambda_gelu import theory as S

    e_inf = sp.lambdify(S.lam, S.e_inf())
    for lam in (1.0, 3.0, 160.0):
        numeric = quad(lambda u: ndtr(lam * u), -np.inf, 0)[0] + quad(lambda u: 1 - ndtr(lam * u), 0, np.inf)[0]
        assert e_inf(lam) == pytest.approx(numeric, rel=1e-9)
    gap = sp.lambdify(S.lam, S.relu_gap_l1())
    for lam in (1.0, 4.0):
        numeric = 2 * quad(lambda u: u * (1 - ndtr(lam * u)), 0, np.inf)[0]
        assert gap(lam) == pytest.approx(numeric, rel=1e-9)
    u = np.linspace(0, 5, 200_001)
    assert float(S.relu_gap_sup_constant()) == pytest.approx((u * (1 - ndtr(u))).max(), abs=1e-10)
    dlds = sp.lambdify((S.s, S.t), S.dlam_ds())
    in_lam = sp.lambdify((S.lam, S.t), S.dlam_ds_in_lambda())
    for s_val, t_val in ((-0.4, 0.1), (0.3, 0.6)):
        lam_val = 1 + np.log1p(np.exp(s_val / t_val))
        assert dlds(s_val, t_val) == pytest.approx(expit(s_val / t_val) / t_val, rel=1e-12)
        assert in_lam(lam_val, t_val) == pytest.approx(dlds(s_val, t_val), rel=1e-10)
    dadl = sp.lambdify((S.x, S.lam), S.da_dlam())
    h = 1e-6
    for x_val, lam_val in ((0.8, 1.0), (-0.3, 4.0)):
        fd = (x_val * ndtr((lam_val + h) * x_val) - x_val * ndtr((lam_val - h) * x_val)) / (2 * h)
        assert dadl(x_val, lam_val) == pytest.approx(fd, rel=1e-7)
    target = S.lambda_target_exact()
    assert sp.simplify(target - 200 * sp.sqrt(2) / sp.sqrt(sp.pi)) == 0
    assert S.lambda_target_numeric() == pytest.approx(159.5769121605731, rel=1e-14)
    rows = S.numeric_cross_checks()
    assert max(r["abs_error"] for r in rows) < 1e-8


def test_paper_claims_have_our_values_and_verdicts(committed_claims):
    from helpers.lambda_gelu import claims
    from helpers.lambda_gelu import paper as P

    # the shared report's rows of theory_claims (computed once, by it)
    builder = f"{claims.theory_claims.__module__}.theory_claims"
    theory = [c for c in committed_claims if c.decided_by.startswith(builder)]
    assert len(theory) >= 8 and all(c.notebook == P.THEORY_NOTEBOOK for c in theory)
    assert all(c.verdict in ("confirmed", "contradicted") for c in theory)  # exact: never "not run here"
    by_claim = {c.claim: c for c in theory}
    assert by_claim["λ_target ≈ 160 for ε = 5·10⁻³"].verdict == "confirmed"
    assert by_claim["E∞(λ) = ∫|H(x) − Φ(λx)|dx = 2/(λ√(2π))"].verdict == "confirmed"
    assert "159.577" in by_claim["λ_target ≈ 160 for ε = 5·10⁻³"].our_value
    assert P.table_i().shape == (30, 10) and P.table_ii().shape == (10, 5)


@pytest.mark.slow
def test_module_works_without_a_c_compiler(tmp_path):
    """No C++ compiler for TorchInductor: one warning naming the failure, then the eager formulas."""
    import subprocess
    import sys

    code = (
        "import warnings, torch, helpers.lambda_gelu.activation as lg\n"
        "from helpers.core import kernels\n"
        "m = lg.LambdaGELU(lam_init=2.0); x = torch.randn(1 << 17, requires_grad=True)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    m(x).sum().backward()\n"
        "assert x.grad is not None and m.s.grad is not None and torch.isfinite(x.grad).all()\n"
        "assert kernels.compile_unavailable_reason(), 'compiled without a compiler?'\n"
        "assert any('eager' in str(i.message) for i in w), [str(i.message) for i in w]\n"
        "print('ok')\n"
    )
    env = {
        **__import__("os").environ,
        "CXX": str(tmp_path / "no-such-cxx"),
        "CC": str(tmp_path / "no-such-cc"),
        "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
    }  # an empty cache: nothing to reuse
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]


def test_paper_table_ii_consistency():
    from helpers.lambda_gelu import substitution

    effect = substitution.annealing_effect(substitution.paper_table2()).set_index("paper_dataset")
    assert bool(effect["reduced"].all())  # the paper's "consistently reduces the drop"
    consistency = substitution.paper_table_consistency().set_index("paper_dataset")
    assert not consistency.loc["TinyImageNet", "consistent"]  # Table II GELU 0.71 vs Table I GELU BVS 0.72
    assert effect.loc["Adult", "anneal_cost"] == pytest.approx(0.04)  # λ-GELU 0.04 below GELU before the swap


def test_the_override_survives_a_state_dict_round_trip_and_a_clear():
    # forward reads a Python copy of the override buffer (no device read per call): loading a
    # checkpoint and clearing must keep the two in step
    from helpers.lambda_gelu.activation import LambdaGELU

    x = torch.linspace(-3, 3, 101)
    annealed = LambdaGELU()
    annealed.set_fixed_lambda(50.0)
    resumed = LambdaGELU()
    resumed.load_state_dict(annealed.state_dict())
    assert torch.equal(resumed(x), annealed(x)) and float(resumed.lam) == 50.0
    assert "overridden" in repr(resumed)
    resumed.clear_fixed_lambda()
    assert torch.equal(resumed(x), LambdaGELU()(x)) and "learnable" in repr(resumed)
    fresh = LambdaGELU()
    fresh.load_state_dict(resumed.state_dict())
    assert torch.equal(fresh(x), resumed(x))


def test_an_annealed_lambda_gelu_reads_nothing_off_its_device():
    # "meta" tensors have no values: a forward and backward that run there read no λ or x on the
    # host, so on a GPU they never wait for its queue
    from helpers.lambda_gelu.activation import LambdaGELU

    module = LambdaGELU()
    module.set_fixed_lambda(160.0)
    module = module.to("meta")
    x = torch.empty(4, 8, device="meta", requires_grad=True)
    module(x).sum().backward()
    assert x.grad.device.type == "meta"

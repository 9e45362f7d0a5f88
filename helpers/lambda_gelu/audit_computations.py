"""The mathematics the λ-GELU audit (:mod:`helpers.lambda_gelu.audit`) checks the paper's words
against: the range of the softplus map, the learning signal of s at initialisation, the expected
gate error at a pre-activation scale σ, the distance of λ-GELU to GELU and to Swish. Exact (sympy)
where a closed form exists, else numerical on a stated grid."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy.integrate import quad
from scipy.optimize import minimize_scalar
from scipy.special import expit, ndtr

from helpers.lambda_gelu.activation import LAMBDA_NEAR_ONE
from helpers.lambda_gelu.hardness import LAMBDA_INIT_MAX

# ``E|H(x) − Φ(λx)|`` for ``x ~ N(0, σ²)``, ``arctan(1/(λσ))/π``: the fraction of gate error a unit of
# that scale carries on average, the closed form the per-layer targets use too
from helpers.lambda_gelu.layer_targets import normal_gate_error as expected_gate_error
from helpers.lambda_gelu.paper import EPS_PAPER, LAMBDA_TARGET_PAPER

__all__ = ["lambda_image", "s_signal", "s_signal_peak", "s_signal_ratio_limits", "expected_gate_error"]
__all__ += ["scale_meeting_tolerance", "gate_error_closed_form_holds", "gelu_gap_sup", "swish_gap", "sigmoid_gate_l1"]


def lambda_image() -> dict[str, object]:
    """The range of ``λ(s) = 1 + softplus(s/t)``: its limits as s → ±∞ and whether λ = 1 is attained."""
    tt = sp.Symbol("t", positive=True)
    ss = sp.Symbol("s", real=True)
    expr = 1 + sp.log(1 + sp.exp(ss / tt))
    attained = sp.solveset(sp.Eq(expr, 1), ss, domain=sp.S.Reals)
    return {
        "at -oo": sp.limit(expr, ss, -sp.oo),
        "at +oo": sp.limit(expr, ss, sp.oo),
        "solutions of λ(s) = 1": attained,
    }


@lru_cache(maxsize=1)
def s_signal() -> sp.Expr:
    """``E[∂a/∂s]·t√(2π)`` per unit for pre-activations ``x ~ N(0, σ²)``, as a function of λ and σ:
    ``σ²(1 + λ²σ²)^{-3/2}·(1 − e^{1−λ})`` (∂a/∂λ = x²φ(λx) averaged, times ∂λ/∂s = (1 − e^{1−λ})/t)."""
    ll, ss_ = sp.symbols("lambda sigma", positive=True)
    xx = sp.Symbol("x", real=True)
    density = sp.exp(-(xx**2) / (2 * ss_**2)) / (ss_ * sp.sqrt(2 * sp.pi))
    mean_da_dlam = sp.simplify(
        sp.integrate(xx**2 * sp.exp(-((ll * xx) ** 2) / 2) / sp.sqrt(2 * sp.pi) * density, (xx, -sp.oo, sp.oo))
    )
    return sp.simplify(mean_da_dlam * sp.sqrt(2 * sp.pi) * (1 - sp.exp(1 - ll)))


def _signal_fn(sigma_value: float):
    ll, ss_ = sorted(s_signal().free_symbols, key=lambda v: v.name)
    return sp.lambdify(ll, s_signal().subs(ss_, sigma_value), "math")


def s_signal_peak(sigma_value: float = 1.0) -> tuple[float, float]:
    """``(λ*, value)``: where the mean learning signal of s is largest for ``x ~ N(0, σ²)``."""
    if not sigma_value > 0:
        raise ValueError(f"sigma_value must be > 0, got {sigma_value!r}")
    fn = _signal_fn(sigma_value)
    res = minimize_scalar(lambda v: -fn(v), bounds=(1.0 + 1e-9, 50.0), method="bounded", options={"xatol": 1e-10})
    return float(res.x), float(-res.fun)


def s_signal_ratio_limits(lam_low: float = LAMBDA_NEAR_ONE, lam_high: float = LAMBDA_INIT_MAX) -> dict[str, float]:
    """The ratio of the mean s-signal at ``lam_high`` to that at ``lam_low``, at σ = 1 and in the
    limits σ → 0 and σ → ∞ (it decreases in σ, so the σ → ∞ limit is its smallest value), and the
    ratio of ∂λ/∂s alone (what an Adam step on s, roughly scale-free, turns into a change of λ)."""
    if not 1 < lam_low < lam_high:
        raise ValueError(f"need 1 < lam_low < lam_high, got {lam_low!r}, {lam_high!r}")
    ll, ss_ = sorted(s_signal().free_symbols, key=lambda v: v.name)
    ratio = s_signal().subs(ll, lam_high) / s_signal().subs(ll, lam_low)
    return {
        "sigma=1": float(ratio.subs(ss_, 1)),
        "sigma->0": float(sp.limit(ratio, ss_, 0)),
        "sigma->oo": float(sp.limit(ratio, ss_, sp.oo)),
        "dlambda/ds": float((1 - sp.exp(1 - sp.Float(lam_high))) / (1 - sp.exp(1 - sp.Float(lam_low)))),
    }


def scale_meeting_tolerance(lam_value: float = LAMBDA_TARGET_PAPER, eps_value: float = EPS_PAPER) -> float:
    """The smallest pre-activation scale σ for which the expected gate error at ``lam_value`` is at
    most ``eps_value``: ``1/(λ tan(π ε))``."""
    return 1.0 / (lam_value * math.tan(math.pi * eps_value))


def gate_error_closed_form_holds() -> bool:
    """Quadrature: ∫ 2(1 − Φ(λx))φ_σ(x) over x > 0 equals arctan(1/(λσ))/π (at λ = 160, σ = 0.1)."""
    lam_v, sig_v = 160.0, 0.1
    val, _ = quad(
        lambda v: 2 * (1 - ndtr(lam_v * v)) * math.exp(-v * v / (2 * sig_v**2)) / (sig_v * math.sqrt(2 * math.pi)),
        0,
        10 * sig_v,
        points=[1 / lam_v],
        limit=200,
    )
    return math.isclose(val, expected_gate_error(lam_v, sig_v), rel_tol=1e-7)


def gelu_gap_sup(lam_value: float) -> float:
    """``sup_x |xΦ(λx) − xΦ(x)|`` (numeric: a fine grid on [−8, 8], where the supremum lies)."""
    if not lam_value >= 1:
        raise ValueError(f"lam_value must be ≥ 1, got {lam_value!r}")
    xs = np.linspace(-8, 8, 160_001)
    return float(np.max(np.abs(xs * (ndtr(lam_value * xs) - ndtr(xs)))))


def swish_gap(lam_value: float = 1.0) -> tuple[float, float]:
    """``(β*/λ, sup gap)``: the β minimising ``sup_x |xΦ(λx) − xσ(βx)|`` (reported as β/λ) and the
    smallest sup gap, which scales as 1/λ."""
    if not lam_value > 0:
        raise ValueError(f"lam_value must be > 0, got {lam_value!r}")
    xs = np.linspace(-12, 12, 48_001) / lam_value

    def gap(b: float) -> float:
        return float(np.max(np.abs(xs * ndtr(lam_value * xs) - xs * expit(b * lam_value * xs))))

    res = minimize_scalar(gap, bounds=(1.0, 2.5), method="bounded", options={"xatol": 1e-8})
    return float(res.x), float(res.fun)


@lru_cache(maxsize=1)
def sigmoid_gate_l1() -> sp.Expr:
    """``∫ |H(x) − σ(βx)| dx = 2 ln 2 / β``, the sigmoid gate's counterpart of E∞ (sympy)."""
    beta = sp.Symbol("beta", positive=True)
    xx = sp.Symbol("x", positive=True)
    return sp.simplify(2 * sp.integrate(1 / (1 + sp.exp(beta * xx)), (xx, 0, sp.oo)))

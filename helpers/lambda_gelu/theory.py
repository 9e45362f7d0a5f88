"""λ-GELU in closed form (λ-GELU paper, Section III and IV-C), derived with sympy.

Every function returns a sympy expression (or a small dict of them); the ``verify_*`` functions
return ``True`` when sympy proves an identity, and :func:`numeric_cross_checks` compares each
closed form with an independent numeric computation (SciPy quadrature, finite differences).

Notation: ``a(x; λ) = x Φ(λx)``, ``λ(s) = 1 + softplus(s/t)``, ``σ`` the logistic sigmoid,
``H`` the Heaviside step with ``H(0) = 1/2``, ``E∞(λ) = ∫|H(x) − Φ(λx)| dx``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from helpers.core.symbolic import Phi, phi

x: sp.Symbol = sp.Symbol("x", real=True)
lam: sp.Symbol = sp.Symbol("lambda", positive=True)
s: sp.Symbol = sp.Symbol("s", real=True)
t: sp.Symbol = sp.Symbol("t", positive=True)
eps: sp.Symbol = sp.Symbol("epsilon", positive=True)
eta_s: sp.Symbol = sp.Symbol("eta_s", positive=True)
delta: sp.Symbol = sp.Symbol("delta", real=True)  # ∂L/∂a, the signal arriving at the activation
dL_dlam: sp.Symbol = sp.Symbol("G", real=True)  # ∂L/∂λ (summed over every unit sharing λ)

#: The tolerance for which the paper quotes λ_target ≈ 160.
EPS_PAPER = sp.Rational(5, 1000)


def sigmoid(z: sp.Expr) -> sp.Expr:
    """``σ(z) = 1/(1 + e^{−z})``."""
    return 1 / (1 + sp.exp(-z))


def lambda_gelu_expr(xv: sp.Expr = x, lv: sp.Expr = lam) -> sp.Expr:
    """``a(x; λ) = x Φ(λx)``."""
    return xv * Phi(lv * xv)


def gate_expr(xv: sp.Expr = x, lv: sp.Expr = lam) -> sp.Expr:
    """The gate ``Φ(λx)``."""
    return Phi(lv * xv)


# ------------------------------------------------------------------------------- the λ→∞ limit
def relu_limit() -> dict[str, dict[str, sp.Expr]]:
    """Pointwise limits as λ → ∞ of the gate and of ``a``, for x > 0, x < 0 and x = 0.

    For x < 0 we write x = −y with y > 0: sympy 1.14 returns the wrong limit (1 instead of 0)
    for ``(1 + erf(λx/√2))/2`` with a symbol declared negative, while ``erf`` alone is right.
    """
    xp = sp.Symbol("x", positive=True)
    y = sp.Symbol("y", positive=True)
    out = {}
    for label, xv, back in (("x>0", xp, xp), ("x<0", -y, -y), ("x=0", sp.Integer(0), sp.Integer(0))):
        gate = sp.limit(gate_expr(xv, lam), lam, sp.oo)
        act = sp.limit(lambda_gelu_expr(xv, lam), lam, sp.oo)
        out[label] = {"gate": gate, "activation": sp.simplify(act), "x": back}
    return out


def verify_relu_limit() -> bool:
    """Gate → H(x) with H(0) = 1/2 and a → ReLU(x) = max(x, 0) pointwise."""
    lim = relu_limit()
    return (
        lim["x>0"]["gate"] == 1
        and lim["x<0"]["gate"] == 0
        and lim["x=0"]["gate"] == sp.Rational(1, 2)
        and sp.simplify(lim["x>0"]["activation"] - lim["x>0"]["x"]) == 0
        and lim["x<0"]["activation"] == 0
        and lim["x=0"]["activation"] == 0
    )


# --------------------------------------------------------------------------------- derivatives
def da_dlam() -> sp.Expr:
    """``∂a/∂λ`` as sympy differentiates it (simplified)."""
    return sp.simplify(sp.diff(lambda_gelu_expr(), lam))


def da_dlam_closed_form() -> sp.Expr:
    """The paper's ``∂a/∂λ = x² φ(λx)``."""
    return x**2 * phi(lam * x)


def da_dx() -> sp.Expr:
    """``∂a/∂x = Φ(λx) + λx φ(λx)`` (= GELU'(λx))."""
    return sp.simplify(sp.diff(lambda_gelu_expr(), x))


def verify_da_dlam() -> bool:
    return sp.simplify(da_dlam() - da_dlam_closed_form()) == 0


def verify_da_dx() -> bool:
    return sp.simplify(da_dx() - (Phi(lam * x) + lam * x * phi(lam * x))) == 0


sigma: sp.Symbol = sp.Symbol("sigma", positive=True)  # scale of Gaussian pre-activations


@lru_cache(maxsize=1)
def da_dlam_total() -> sp.Expr:
    """``∫ x² φ(λx) dx = 1/λ³``: the total λ-sensitivity over a flat pre-activation density."""
    return sp.simplify(sp.integrate(da_dlam_closed_form(), (x, -sp.oo, sp.oo)))


@lru_cache(maxsize=1)
def da_dlam_gaussian_mean() -> sp.Expr:
    """``E[x² φ(λx)]`` for pre-activations ``x ~ N(0, σ²)``: ``σ²/(√(2π)(1 + λ²σ²)^{3/2})``.

    Quantifies the attenuation of the learning signal for λ that Section IV-A describes in words
    ("∂a/∂λ concentrates around x = 0 as λ grows"): for λσ ≫ 1 it decays like 1/(λ³σ).
    """
    density = phi(x / sigma) / sigma
    return sp.simplify(sp.integrate(da_dlam_closed_form() * density, (x, -sp.oo, sp.oo)))


def lambda_of_s(sv: sp.Expr = s, tv: sp.Expr = t) -> sp.Expr:
    """``λ(s) = 1 + log(1 + e^{s/t})``."""
    return 1 + sp.log(1 + sp.exp(sv / tv))


def dlam_ds() -> sp.Expr:
    """``∂λ/∂s`` as sympy differentiates it."""
    return sp.simplify(sp.diff(lambda_of_s(), s))


def verify_dlam_ds() -> bool:
    """``∂λ/∂s = σ(s/t)/t`` (the paper's factor)."""
    return sp.simplify(dlam_ds() - sigmoid(s / t) / t) == 0


def dlam_ds_in_lambda() -> sp.Expr:
    """``∂λ/∂s`` written in λ: ``σ(softplus⁻¹(λ − 1))/t = (1 − e^{1−λ})/t`` (no other t)."""
    s_of_lam = t * sp.log(sp.exp(lam - 1) - 1)
    derived = sp.simplify(dlam_ds().subs(s, s_of_lam))
    # expand, then merge e·e^{-λ} into e^{1-λ}: sympy's own form is (e^λ − e)e^{−λ}/t
    return sp.collect(sp.powsimp(sp.expand(derived), combine="exp"), t)


def verify_dlam_ds_in_lambda() -> bool:
    return sp.simplify(dlam_ds_in_lambda() - (1 - sp.exp(1 - lam)) / t) == 0


def dL_ds() -> sp.Expr:
    """``∂L/∂s = δ · x² φ(λx) · σ(s/t)/t`` for one unit, with λ = λ(s) (chain rule through softplus)."""
    a_of_s = lambda_gelu_expr(x, lambda_of_s())
    return sp.simplify(delta * sp.diff(a_of_s, s))


def verify_dL_ds() -> bool:
    paper = delta * x**2 * phi(lambda_of_s() * x) * sigmoid(s / t) / t
    return sp.simplify(dL_ds() - paper) == 0


# --------------------------------------------------------------------- Eq. (3): first-order Δλ
def delta_lambda_exact() -> sp.Expr:
    """``λ(s − η_s ∂L/∂s) − λ(s)`` with ``∂L/∂s = G ∂λ/∂s`` (G = ∂L/∂λ)."""
    grad_s = dL_dlam * sp.diff(lambda_of_s(), s)
    return lambda_of_s(s - eta_s * grad_s) - lambda_of_s()


def delta_lambda_first_order() -> sp.Expr:
    """The η_s-linear term of :func:`delta_lambda_exact`, from a sympy series in η_s."""
    series = sp.series(delta_lambda_exact(), eta_s, 0, 2).removeO()
    return sp.simplify(series)


def delta_lambda_paper() -> sp.Expr:
    """Eq. (3): ``Δλ ≈ −η_s σ(s/t)²/t² · ∂L/∂λ``."""
    return -eta_s * sigmoid(s / t) ** 2 / t**2 * dL_dlam


def verify_delta_lambda() -> bool:
    """Eq. (3) is the first-order term: ``(∂λ/∂s)²`` with ``∂λ/∂s = σ(s/t)/t``."""
    return sp.simplify(delta_lambda_first_order() - delta_lambda_paper()) == 0


def delta_lambda_in_lambda() -> sp.Expr:
    """Eq. (3) in terms of the current λ: ``−η_s (1 − e^{1−λ})²/t² · ∂L/∂λ``.

    At a given hardness λ, t enters only through 1/t²: to first order under SGD, changing t is
    a constant rescaling of η_s. (Under Adam, whose step on s is roughly scale-free, the step on
    λ is ``∂λ/∂s · Δs`` ∝ (1 − e^{1−λ})/t: 1/t, not 1/t².)
    """
    return -eta_s * (1 - sp.exp(1 - lam)) ** 2 / t**2 * dL_dlam


# --------------------------------------------------------------------------- E∞ and λ_target
@lru_cache(maxsize=1)
def e_inf() -> sp.Expr:
    """``E∞(λ) = ∫_{−∞}^{0} Φ(λx) dx + ∫_{0}^{∞} (1 − Φ(λx)) dx``, integrated by sympy.

    Splitting at 0 removes the absolute value: H − Φ(λx) is −Φ(λx) < 0 left of 0 and
    1 − Φ(λx) > 0 right of it.
    """
    left = sp.integrate(gate_expr(x, lam), (x, -sp.oo, 0))
    right = sp.integrate(1 - gate_expr(x, lam), (x, 0, sp.oo))
    return sp.simplify(left + right)


def e_inf_paper() -> sp.Expr:
    """The paper's ``2/(λ√(2π))``."""
    return 2 / (lam * sp.sqrt(2 * sp.pi))


def verify_e_inf() -> bool:
    return sp.simplify(e_inf() - e_inf_paper()) == 0


def lambda_target_expr() -> sp.Expr:
    """The λ solving ``E∞(λ) = ε`` (E∞ decreases in λ, so it is the smallest λ with E∞ ≤ ε)."""
    (solution,) = sp.solve(sp.Eq(e_inf(), eps), lam)
    return sp.simplify(solution)


def lambda_target_exact(eps_value: sp.Expr = EPS_PAPER) -> sp.Expr:
    """λ_target for a given ε as an exact expression (ε = 5·10⁻³: ``200·√2/√π``)."""
    eps_value = sp.nsimplify(eps_value)
    if not eps_value > 0:
        raise ValueError(f"eps must be > 0, got {eps_value}")
    return sp.simplify(lambda_target_expr().subs(eps, eps_value))


def lambda_target_numeric(eps_value: float = 5e-3, digits: int = 15) -> float:
    """λ_target as a float, evaluated from the exact expression."""
    return float(sp.N(lambda_target_exact(sp.nsimplify(eps_value)), digits))


# ------------------------------------------------------ what E∞ says about the activation itself
@lru_cache(maxsize=1)
def relu_gap_l1() -> sp.Expr:
    """``∫|ReLU(x) − xΦ(λx)| dx = 2∫_0^∞ x(1 − Φ(λx)) dx`` (the two halves are equal by symmetry)."""
    return sp.simplify(2 * sp.integrate(x * (1 - gate_expr(x, lam)), (x, 0, sp.oo)))


@lru_cache(maxsize=1)
def relu_gap_sup_constant() -> sp.Float:
    """``m = max_{u>0} u(1 − Φ(u))``, so that ``sup_x |ReLU(x) − xΦ(λx)| = m/λ``.

    The maximiser solves ``1 − Φ(u) − uφ(u) = 0`` (a root found at 30 digits).
    """
    u = sp.Symbol("u", positive=True)
    f = u * (1 - Phi(u))
    root = sp.nsolve(sp.diff(f, u), u, 0.75, prec=30)
    return sp.N(f.subs(u, root), 30)


# --------------------------------------------------------------------------- numeric checks
def numeric_cross_checks(lams: tuple[float, ...] = (1.0, 2.0, 5.0, 20.0, 160.0)) -> list[dict[str, float | str]]:
    """Each closed form against an independent numeric computation.

    * E∞(λ): adaptive quadrature of |H(x) − Φ(λx)| on (−∞, 0) and (0, ∞) (SciPy);
    * ∂a/∂λ: central finite difference of ``x Φ(λx)`` at a few (x, λ) points;
    * E[x²φ(λx)] under x ~ N(0, σ²): quadrature;
    * ∂λ/∂s: central finite difference of ``1 + softplus(s/t)``;
    * Eq. (3): the exact change ``λ(s − η ∂L/∂s) − λ(s)`` for a small η vs the first-order term.

    Returns rows ``{"quantity", "point", "closed_form", "numeric", "abs_error"}``.
    """
    from scipy.integrate import quad  # lazy: scipy is only needed for the numeric cross-checks
    from scipy.special import expit, ndtr  # lazy: scipy is only needed for the numeric cross-checks

    rows: list[dict[str, float | str]] = []

    def add(quantity: str, point: str, closed: float, numeric: float) -> None:
        rows.append(
            {
                "quantity": quantity,
                "point": point,
                "closed_form": closed,
                "numeric": numeric,
                "abs_error": abs(closed - numeric),
            }
        )

    e_inf_f = sp.lambdify(lam, e_inf(), "math")
    for lv in lams:
        left = quad(lambda u: ndtr(lv * u), -np.inf, 0, epsabs=1e-14, epsrel=1e-12)[0]
        right = quad(lambda u: 1 - ndtr(lv * u), 0, np.inf, epsabs=1e-14, epsrel=1e-12)[0]
        add("E∞(λ)", f"λ={lv:g}", e_inf_f(lv), left + right)
    a = lambda xv, lv: xv * ndtr(lv * xv)  # noqa: E731
    dadl = sp.lambdify((x, lam), da_dlam_closed_form(), "math")
    h = 1e-5
    for xv, lv in ((0.7, 1.0), (-1.3, 2.5), (0.05, 20.0)):
        add("∂a/∂λ", f"x={xv:g}, λ={lv:g}", dadl(xv, lv), (a(xv, lv + h) - a(xv, lv - h)) / (2 * h))
    gauss = sp.lambdify((lam, sigma), da_dlam_gaussian_mean(), "math")
    for lv, sv in ((1.0, 1.0), (5.0, 0.5), (160.0, 1.0)):
        integrand = lambda u: u * u * math.exp(-0.5 * (lv * u) ** 2 - 0.5 * (u / sv) ** 2) / (2 * math.pi * sv)  # noqa: E731
        numeric = quad(integrand, -np.inf, np.inf, epsabs=1e-15, epsrel=1e-12, points=None)[0]
        add("E[x²φ(λx)], x~N(0,σ²)", f"λ={lv:g}, σ={sv:g}", gauss(lv, sv), numeric)
    lam_s = lambda sv, tv: 1 + math.log1p(math.exp(sv / tv))  # noqa: E731
    for sv, tv in ((-0.3, 0.1), (0.2, 0.1), (0.5, 0.9)):
        fd = (lam_s(sv + h, tv) - lam_s(sv - h, tv)) / (2 * h)
        add("∂λ/∂s", f"s={sv:g}, t={tv:g}", expit(sv / tv) / tv, fd)
    for sv, tv, g in ((-0.3, 0.1, 0.8), (0.2, 0.3, -1.5)):
        eta = 1e-6
        slope = expit(sv / tv) / tv
        exact = lam_s(sv - eta * g * slope, tv) - lam_s(sv, tv)
        add("Δλ, Eq. (3)", f"s={sv:g}, t={tv:g}, η={eta:g}", -eta * slope**2 * g, exact)
    return rows

"""Sympy derivations of the mollification framework and of S-ReLU (paper ``s-relu``): everything the
theory notebooks (03, 04) and :mod:`helpers.srelu.paper` state about the paper's Secs. 4-5 and Apps. B-F.

* kernels: the bump of Definition 1 (normaliser ``A`` by high-precision quadrature: ``∫exp(1/(u²-1))``
  has no closed form) and the Epanechnikov kernel (mass, variance, ``∫|φ'|``);
* S-ReLU as an actual convolution ``∫ ReLU(x - y) φ_δ(y) dy``, piece by piece (the paper's route,
  App. C) and in one go (sympy returns a clamp form); its derivatives, one-sided jumps at ``±δ``
  (C² but not C³) and uniform error;
* Lipschitz constants ``sup|f'|`` of GELU, SiLU, Mish and S-ReLU from the roots of ``f''``;
* beyond the paper: LeakyReLU mollified by Epanechnikov, ReLU by a Gaussian and its relation to GELU / λ-GELU.

``X`` is the activation input, ``Y`` the integration variable, ``DELTA`` the Epanechnikov radius (> 0),
``SIGMA`` a Gaussian standard deviation (> 0).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import mpmath
import sympy as sp

X = sp.Symbol("x", real=True)
Y = sp.Symbol("y", real=True)
DELTA = sp.Symbol("delta", positive=True)
SIGMA = sp.Symbol("sigma", positive=True)
ALPHA = sp.Symbol("alpha", positive=True)  # LeakyReLU negative slope
LAM = sp.Symbol("lambda", positive=True)  # λ-GELU hardness
T = sp.Symbol("t", real=True)  # scaled, clamped input x/δ ∈ [-1, 1]

__all__ = (
    "X Y DELTA SIGMA ALPHA LAM T std_normal_pdf std_normal_cdf bump_integral bump_normaliser bump_mass "
    "bump_derivative_l1 epanechnikov_density epanechnikov_mass epanechnikov_variance epanechnikov_derivative_l1 "
    "SReLUPieces srelu_by_convolution srelu_direct_convolution srelu_piecewise clamp_form_piece srelu_branch_free "
    "one_sided_jumps smoothness_order UniformError srelu_uniform_error activation_expr LipschitzResult "
    "lipschitz_constant srelu_lipschitz leaky_relu_by_convolution relu_gaussian_convolution gaussian_vs_lambda_gelu "
    "same_variance_gaussian_sup_error expressions_equal gate_l1_gap"
).split()


def std_normal_pdf(z: sp.Expr) -> sp.Expr:
    """φ(z) = exp(-z²/2)/√(2π)."""
    return sp.exp(-(z**2) / 2) / sp.sqrt(2 * sp.pi)


def std_normal_cdf(z: sp.Expr) -> sp.Expr:
    """Φ(z) = (1 + erf(z/√2))/2."""
    return (1 + sp.erf(z / sp.sqrt(2))) / 2


def expressions_equal(a: sp.Expr, b: sp.Expr) -> bool:
    """True when ``a - b`` simplifies to 0 (exact, symbolic), trying the difference as it is,
    rewritten in exponentials (tanh, cosh, log-of-exp forms) and in erf (erfc forms). A value of
    the difference that is clearly not 0 at a sample point already proves them different, so the
    costly simplifications run only for a difference that vanishes wherever it is sampled."""
    diff = sp.expand(a - b)
    symbols = sorted(diff.free_symbols, key=str)
    for point in ("0.7", "1.3", "2.1"):  # positive: symbols such as δ are declared positive
        value = diff.subs({s: sp.Rational(point) for s in symbols}).evalf(30)
        if value.is_number and value.is_finite and abs(value) > 1e-20:
            return False
    for form in (diff, diff.rewrite(sp.exp), diff.rewrite(sp.erf)):
        if sp.simplify(form) == 0:
            return True
    return False


# Kernels (Definition 1 / Proposition 1; the Epanechnikov kernel of Sec. 4.6)
def _bump_integrand(u: mpmath.mpf) -> mpmath.mpf:
    return mpmath.exp(1 / (u * u - 1)) if abs(u) < 1 else mpmath.mpf(0)


@functools.lru_cache(maxsize=8)
def bump_integral(dps: int = 30) -> mpmath.mpf:
    """``∫_{-1}^{1} exp(1/(u²-1)) du`` (no closed form) by tanh-sinh quadrature at ``dps`` digits:
    the right rule for an integrand that is flat (all derivatives zero) at both ends."""
    if not isinstance(dps, int) or dps < 15:
        raise ValueError(f"dps must be an int >= 15, got {dps!r}")
    with mpmath.workdps(dps + 10):
        value = mpmath.quad(_bump_integrand, [-1, 0, 1])
    return +value


def bump_normaliser(dps: int = 30) -> mpmath.mpf:
    """The constant ``A = (∫_{-1}^{1} exp(1/(u²-1)) du)^{-1}`` of Definition 1."""
    with mpmath.workdps(dps + 10):
        return 1 / bump_integral(dps)


def bump_mass(dps: int = 30) -> mpmath.mpf:
    """``∫ φ`` for the bump kernel, integrated *independently* of how ``A`` was obtained
    (Gauss-Legendre, not tanh-sinh), so Proposition 1 is a check, not a tautology."""
    with mpmath.workdps(dps + 10):
        raw = mpmath.quad(lambda u: _bump_integrand(u), mpmath.linspace(-1, 1, 9), method="gauss-legendre")
        return bump_normaliser(dps) * raw


def bump_derivative_l1(dps: int = 30) -> mpmath.mpf:
    """``C_φ = ∫|φ'|`` of Sec. 4.5 for the bump kernel. φ is even and unimodal, so
    ``C_φ = 2φ(0) = 2A/e``; computed here by integrating ``|φ'|`` numerically."""
    with mpmath.workdps(dps + 10):
        a = bump_normaliser(dps)
        dphi = lambda u: a * _bump_integrand(u) * (-2 * u / (u * u - 1) ** 2) if abs(u) < 1 else mpmath.mpf(0)  # noqa: E731
        return mpmath.quad(lambda u: abs(dphi(u)), [-1, 0, 1])


def epanechnikov_density(delta: sp.Expr = DELTA, var: sp.Symbol = Y) -> sp.Expr:
    """``φ_δ(y) = 3/(4δ)·(1 - y²/δ²)`` on ``|y| ≤ δ`` (zero outside; the expression is the
    on-support polynomial)."""
    return sp.Rational(3, 4) / delta * (1 - var**2 / delta**2)


def epanechnikov_mass() -> sp.Expr:
    """``∫_{-δ}^{δ} φ_δ`` (symbolic): 1."""
    return sp.simplify(sp.integrate(epanechnikov_density(), (Y, -DELTA, DELTA)))


def epanechnikov_variance() -> sp.Expr:
    """``∫ y² φ_δ(y) dy`` (symbolic): δ²/5."""
    return sp.simplify(sp.integrate(Y**2 * epanechnikov_density(), (Y, -DELTA, DELTA)))


def epanechnikov_derivative_l1() -> sp.Expr:
    """``C_φ = ∫_{-1}^{1} |φ'(v)| dv`` for the unit Epanechnikov kernel: 3/2."""
    v = sp.Symbol("v", real=True)
    dphi = sp.diff(epanechnikov_density(sp.Integer(1), v), v)  # -3v/2: + on (-1,0), - on (0,1)
    return sp.integrate(dphi, (v, -1, 0)) - sp.integrate(dphi, (v, 0, 1))


# S-ReLU as a convolution (Sec. 4.6, Appendix C)
@dataclass(frozen=True)
class SReLUPieces:
    """The three pieces of ``(ReLU * φ_δ)(x)``: x ≤ -δ, |x| < δ, x ≥ δ."""

    left: sp.Expr
    middle: sp.Expr
    right: sp.Expr

    def as_tuple(self) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
        return (self.left, self.middle, self.right)


@functools.lru_cache(maxsize=1)
def srelu_by_convolution() -> SReLUPieces:
    """``∫ ReLU(x - y) φ_δ(y) dy`` region by region with ``sympy.integrate``: the integrand is
    ``(x - y)·φ_δ(y)`` on ``[-δ, min(x, δ)]`` and 0 elsewhere, an interval that is empty for
    ``x ≤ -δ``, ``[-δ, x]`` for ``|x| < δ`` and the whole support for ``x ≥ δ``.
    """
    integrand = (X - Y) * epanechnikov_density()
    left = sp.integrate(integrand, (Y, -DELTA, -DELTA))  # empty window: 0
    middle = sp.expand(sp.integrate(integrand, (Y, -DELTA, X)))
    right = sp.simplify(sp.integrate(integrand, (Y, -DELTA, DELTA)))
    return SReLUPieces(sp.simplify(left), middle, right)


@functools.lru_cache(maxsize=1)
def srelu_direct_convolution() -> sp.Expr:
    """``∫_{-δ}^{δ} max(0, x - y) φ_δ(y) dy`` in one call, with no case split by hand: sympy answers
    in terms of ``Min(δ, Max(-δ, x)) = clamp(x, -δ, δ)``, a branch-free form."""
    return sp.integrate(sp.Max(0, X - Y) * epanechnikov_density(), (Y, -DELTA, DELTA))


def clamp_form_piece(expr: sp.Expr, region: str) -> sp.Expr:
    """Substitute the clamp ``Min(δ, Max(-δ, x))`` by its value on ``region`` (left/middle/right)."""
    clamp = sp.Min(DELTA, sp.Max(-DELTA, X))
    value = {"left": -DELTA, "middle": X, "right": DELTA}
    if region not in value:
        raise ValueError(f"region must be one of {sorted(value)}, got {region!r}")
    return sp.expand(expr.subs(clamp, value[region]))


def srelu_piecewise(pieces: SReLUPieces | None = None) -> sp.Piecewise:
    """S-ReLU as a ``sympy.Piecewise`` (from :func:`srelu_by_convolution` by default)."""
    p = pieces or srelu_by_convolution()
    return sp.Piecewise((p.left, X <= -DELTA), (p.middle, X < DELTA), (p.right, True))


def srelu_branch_free() -> dict[str, sp.Expr]:
    """The implementation's form in ``t = clamp(x/δ, -1, 1)`` (:mod:`helpers.srelu.activation`), all
    derived, not typed: ``g(t)`` (the middle piece divided by δ, factorised), the value
    ``ReLU(x) - δ(ReLU(t) - g(t))`` on each region, ``g'(t)`` and ``∂f/∂δ = g(t) - t g'(t)``."""
    middle = srelu_by_convolution().middle
    g = sp.factor(sp.expand(middle.subs(X, T * DELTA) / DELTA))
    dg = sp.factor(sp.diff(g, T))
    ddelta = sp.factor(sp.expand(g - T * dg))  # ∂/∂δ [δ g(x/δ)] = g - t g'
    values = {
        "left": sp.simplify(0 - DELTA * (0 - g.subs(T, -1))),
        "middle_x_negative": sp.expand(0 - DELTA * (0 - g.subs(T, X / DELTA))),
        "middle_x_positive": sp.expand(X - DELTA * (X / DELTA - g.subs(T, X / DELTA))),
        "right": sp.simplify(X - DELTA * (1 - g.subs(T, 1))),
    }
    return {"g": g, "dg": dg, "d_delta": ddelta, **values}


def one_sided_jumps(pieces: SReLUPieces | None = None, max_order: int = 3) -> dict[int, tuple[sp.Expr, sp.Expr]]:
    """Jumps ``f^(k)(a⁺) - f^(k)(a⁻)`` at ``a = -δ`` and ``a = +δ`` for ``k = 0..max_order``,
    from one-sided limits of the pieces (``sympy.limit``)."""
    if not isinstance(max_order, int) or max_order < 0:
        raise ValueError(f"max_order must be a non-negative int, got {max_order!r}")
    p = pieces or srelu_by_convolution()
    jumps: dict[int, tuple[sp.Expr, sp.Expr]] = {}
    for k in range(max_order + 1):
        dl, dm, dr = (sp.diff(e, X, k) for e in p.as_tuple())
        at_minus = sp.limit(dm, X, -DELTA, "+") - sp.limit(dl, X, -DELTA, "-")
        at_plus = sp.limit(dr, X, DELTA, "+") - sp.limit(dm, X, DELTA, "-")
        jumps[k] = (sp.simplify(at_minus), sp.simplify(at_plus))
    return jumps


def smoothness_order(jumps: dict[int, tuple[sp.Expr, sp.Expr]]) -> int:
    """Largest ``k`` with every derivative up to order ``k`` continuous (the pieces are smooth
    inside their regions, so only the joins matter); -1 if the function itself jumps."""
    return max(itertools.takewhile(lambda k: all(j == 0 for j in jumps[k]), sorted(jumps)), default=-1)


@dataclass(frozen=True)
class UniformError:
    """``sup_x |S-ReLU(x) - ReLU(x)|`` and where it is attained."""

    value: sp.Expr  # c·δ
    coefficient: sp.Expr  # c
    argmax: sp.Expr
    candidates: tuple[tuple[sp.Expr, sp.Expr], ...]  # (x, |E(x)|) examined


def srelu_uniform_error(pieces: SReLUPieces | None = None) -> UniformError:
    """Maximise ``|E| = |S-ReLU - ReLU|``. Outside ``(-δ, δ)`` E = 0. Inside, ReLU has its kink
    at 0, so E is a polynomial on ``(-δ, 0]`` and on ``[0, δ)``; candidates are the roots of E'
    in each interval and the interval ends."""
    p = pieces or srelu_by_convolution()
    parts = [(p.middle, -DELTA, sp.Integer(0)), (p.middle - X, sp.Integer(0), DELTA)]
    candidates: list[tuple[sp.Expr, sp.Expr]] = []
    for err, lo, hi in parts:
        ts = sp.solve(sp.diff(err.subs(X, T * DELTA), T), T)  # roots in units of δ
        points = [lo, hi] + [r * DELTA for r in ts if r.is_real and lo / DELTA <= r <= hi / DELTA]
        candidates += [(sp.simplify(pt), sp.simplify(sp.Abs(err.subs(X, pt)))) for pt in points]
    best = max(candidates, key=lambda c: float(c[1].subs(DELTA, 1)))
    return UniformError(best[1], sp.simplify(best[1] / DELTA), best[0], tuple(candidates))


# Lipschitz constants (Fact 1, Appendix F)
def activation_expr(name: str) -> sp.Expr:
    """Sympy expression in ``X`` of ``gelu`` (x·Φ(x)), ``silu`` (x·σ(x)), ``mish``
    (x·tanh(softplus x)) or ``srelu`` (piecewise, radius ``DELTA``)."""
    exprs = {
        "gelu": lambda: X * std_normal_cdf(X),
        "silu": lambda: X / (1 + sp.exp(-X)),
        "mish": lambda: X * sp.tanh(sp.log(1 + sp.exp(X))),
        "srelu": srelu_piecewise,
    }
    if name not in exprs:
        raise ValueError(f"unknown activation {name!r}; choose one of {sorted(exprs)}")
    return exprs[name]()


@dataclass(frozen=True)
class LipschitzResult:
    """``L = sup_x |f'(x)|`` with where f' peaks (``argmax``) and bottoms out (``argmin``);
    ``critical_points``: the roots of ``f''``; ``limits``: ``f'(-∞)`` and ``f'(+∞)``. For S-ReLU the
    positions are in units of δ (``argmax = 1``: ``x = δ``, and the maximum holds on all of ``[δ, ∞)``)."""

    name: str
    constant: float
    argmax: float
    max_slope: float
    min_slope: float
    argmin: float
    critical_points: tuple[float, ...]
    limits: tuple[float, float]


@functools.lru_cache(maxsize=16)
def lipschitz_constant(
    name: str, *, lo: float = -30.0, hi: float = 30.0, step: float = 0.05, dps: int = 30
) -> LipschitzResult:
    """Lipschitz constant of a smooth activation (``gelu``, ``silu``, ``mish``).

    Roots of ``f''`` are bracketed by sign changes on a grid over ``[lo, hi]`` (outside it ``f''``
    tends to 0 monotonically) and polished by ``mpmath.findroot`` (Anderson) at ``dps`` digits;
    ``f'`` there is compared with its limits at ±∞.
    """
    if name == "srelu":
        return srelu_lipschitz()
    f = activation_expr(name)
    d1, d2 = sp.diff(f, X), sp.diff(f, X, 2)
    limits = (float(sp.limit(d1, X, -sp.oo)), float(sp.limit(d1, X, sp.oo)))
    with mpmath.workdps(dps):
        g1, g2 = sp.lambdify(X, d1, "mpmath"), sp.lambdify(X, d2, "mpmath")
        n = int(round((hi - lo) / step))
        grid = [mpmath.mpf(lo) + i * mpmath.mpf(step) for i in range(n + 1)]
        values = [g2(v) for v in grid]
        roots = []
        for a, b, fa, fb in zip(grid[:-1], grid[1:], values[:-1], values[1:]):
            if fa == 0:
                roots.append(a)
            elif mpmath.sign(fa) != mpmath.sign(fb):
                roots.append(mpmath.findroot(g2, (a, b), solver="anderson"))
        slopes = [(r, g1(r)) for r in roots]
    candidates = [(float(r), float(s)) for r, s in slopes] + [(float("inf"), limits[1]), (float("-inf"), limits[0])]
    return _lipschitz_result(name, candidates, tuple(float(r) for r, _ in slopes), limits)


def _lipschitz_result(
    name: str, candidates: list[tuple[float, float]], critical: tuple[float, ...], limits: tuple[float, float]
) -> LipschitzResult:
    """The result from the (position, slope) pairs where ``f'`` can peak or bottom out."""
    top, bottom = max(candidates, key=lambda c: c[1]), min(candidates, key=lambda c: c[1])
    constant = max(abs(top[1]), abs(bottom[1]))
    return LipschitzResult(name, constant, top[0], top[1], bottom[1], bottom[0], critical, limits)


@functools.lru_cache(maxsize=1)
def srelu_lipschitz() -> LipschitzResult:
    """S-ReLU's Lipschitz constant, exactly: roots of f'' on the middle piece (``±δ``, the band's
    ends), f' there and on the outer pieces. Independent of δ; positions in units of δ."""
    p = srelu_by_convolution()
    d1 = [sp.diff(e, X) for e in p.as_tuple()]
    roots = sp.solve(sp.Eq(sp.diff(p.middle, X, 2), 0), X)  # ±δ
    slopes = [(r, d1[1].subs(X, r)) for r in roots] + [(-DELTA, d1[0]), (DELTA, d1[2])]
    candidates = [(float(sp.simplify(r / DELTA)), float(sp.simplify(s))) for r, s in slopes]
    critical = tuple(sorted(float(r / DELTA) for r in roots))
    return _lipschitz_result("srelu", candidates, critical, (float(d1[0]), float(d1[2])))


# Beyond the paper: other activations and kernels
def leaky_relu_by_convolution() -> dict[str, sp.Expr]:
    """``(LeakyReLU_α * φ_δ)(x)`` computed directly by sympy (``direct`` and its three region pieces)
    and the identity it satisfies, ``αx + (1 - α)·S-ReLU(x)`` (LeakyReLU = αx + (1-α)ReLU and
    ``∫(x - y)φ_δ = x``), piece by piece."""
    leaky = sp.Piecewise((X - Y, X - Y > 0), (ALPHA * (X - Y), True))
    direct = sp.integrate(leaky * epanechnikov_density(), (Y, -DELTA, DELTA))
    s = srelu_by_convolution()
    out: dict[str, sp.Expr] = {"direct": direct}
    for region, piece in zip(("left", "middle", "right"), s.as_tuple()):
        out[f"{region}"] = sp.factor(clamp_form_piece(direct, region))
        out[f"identity_{region}"] = sp.expand(ALPHA * X + (1 - ALPHA) * piece)
    return out


def relu_gaussian_convolution() -> dict[str, sp.Expr]:
    """``(ReLU * N(0, σ²))(x) = ∫ max(0, x - y) φ_σ(y) dy`` by sympy, its closed form
    ``x·Φ(x/σ) + σ·φ(x/σ)`` and its derivative (``Φ(x/σ)``: slope in (0, 1), Lipschitz 1)."""
    kernel = std_normal_pdf(Y / SIGMA) / SIGMA
    computed = sp.integrate((X - Y) * kernel, (Y, -sp.oo, X))
    closed = X * std_normal_cdf(X / SIGMA) + SIGMA * std_normal_pdf(X / SIGMA)
    derivative = sp.simplify(sp.diff(closed, X))
    # E = closed - ReLU: E' = Φ(x/σ) > 0 for x < 0 and Φ(x/σ) - 1 < 0 for x > 0, so the
    # sup of |E| (E > 0 by Jensen, ReLU being convex) is at x = 0.
    return {
        "computed": sp.simplify(computed),
        "closed_form": closed,
        "derivative": derivative,
        "error_slope_left": derivative,
        "error_slope_right": sp.simplify(derivative - 1),
        "sup_error": sp.simplify(closed.subs(X, 0)),
    }


def gaussian_vs_lambda_gelu() -> dict[str, sp.Expr]:
    """``(ReLU * N(0, 1/λ²))(x) - x·Φ(λx)``: with σ = 1/λ the Gaussian-mollified ReLU is
    λ-GELU plus ``φ(λx)/λ``; the gap is largest at x = 0, ``1/(λ√(2π))`` (GELU: λ = 1)."""
    smooth = relu_gaussian_convolution()["closed_form"].subs(SIGMA, 1 / LAM)
    lam_gelu = X * std_normal_cdf(LAM * X)
    diff = sp.simplify(smooth - lam_gelu)
    crit = sp.solve(sp.Eq(sp.diff(diff, X), 0), X)
    return {
        "difference": diff,
        "critical_points": crit,
        "sup_difference": sp.simplify(diff.subs(X, 0)),
        "limit_at_infinity": sp.limit(diff, X, sp.oo),
    }


def same_variance_gaussian_sup_error() -> dict[str, sp.Expr]:
    """Sup error of ReLU mollified by a Gaussian with the Epanechnikov kernel's variance
    (σ² = δ²/5), next to S-ReLU's: both attained at x = 0."""
    sigma = sp.sqrt(epanechnikov_variance())
    gauss = relu_gaussian_convolution()["sup_error"].subs(SIGMA, sigma)
    return {"sigma": sigma, "gaussian": sp.simplify(gauss), "epanechnikov": srelu_uniform_error().value}


# Beyond the paper: S-ReLU's gate gap, the counterpart of λ-GELU's E∞ (notebooks 40-41)
@functools.lru_cache(maxsize=1)
def gate_l1_gap() -> sp.Expr:
    """``∫|H(x) − S-ReLU'(x)| dx`` over ℝ, S-ReLU's counterpart of λ-GELU's ``E∞(λ) = ∫|H(x) − Φ(λx)| dx``
    (S-ReLU' plays the gate's part in a ReLU swap): the integrand is ``S-ReLU'`` on ``(−δ, 0)`` and
    ``1 − S-ReLU'`` on ``(0, δ)``, 0 elsewhere. The answer, ``3δ/8``, gives ``δ = 8ε/3`` for λ-GELU's
    tolerance ε.
    """
    slope = sp.diff(srelu_by_convolution().middle, X)
    return sp.simplify(sp.integrate(slope, (X, -DELTA, 0)) + sp.integrate(1 - slope, (X, 0, DELTA)))

"""GELU in closed form: exact and tanh forms, derivatives, extrema and the tanh-form error.

Derived with sympy and evaluated with mpmath at high precision, so the primer's four-decimal values
can be checked without floating-point doubt; :func:`library_cross_check` compares SciPy and PyTorch.

Notation: ``Φ`` is the standard normal CDF, ``φ`` its density,
``GELU(z) = z Φ(z)`` and the tanh form is
``GELU_tanh(z) = z/2 · (1 + tanh(√(2/π) (z + 0.044715 z³)))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from functools import lru_cache
from numbers import Real

import mpmath
import numpy as np
import sympy as sp

from helpers.core.symbolic import Phi, phi, z  # re-exported: the primer defines them

#: The cubic coefficient of the tanh form, exactly as published (Hendrycks & Gimpel, 2016).
TANH_CUBIC = sp.Rational(44715, 1_000_000)

#: Digits carried by every high-precision evaluation (far more than the 4 printed decimals).
DIGITS = 40


def _check_real(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (Real, sp.Rational, sp.Float, sp.Integer)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{name} must be finite, got {value!r}")


def _check_int(name: str, value: object, low: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


def gelu_expr(x: sp.Expr = z) -> sp.Expr:
    """Exact GELU ``x Φ(x)``."""
    return x * Phi(x)


def gelu_tanh_expr(x: sp.Expr = z) -> sp.Expr:
    """The tanh form ``x/2 (1 + tanh(√(2/π)(x + 0.044715 x³)))`` with the coefficient kept exact."""
    return x / 2 * (1 + sp.tanh(sp.sqrt(2 / sp.pi) * (x + TANH_CUBIC * x**3)))


def gelu_prime_expr() -> sp.Expr:
    """``d/dz GELU`` obtained by sympy differentiation (not typed in)."""
    return sp.diff(gelu_expr(z), z)


def gelu_prime_closed_form() -> sp.Expr:
    """The textbook form ``Φ(z) + z φ(z)``; :func:`verify_gelu_prime` checks it equals the derivative."""
    return Phi(z) + z * phi(z)


def verify_gelu_prime() -> bool:
    """True when sympy proves ``d/dz [zΦ(z)] - (Φ(z) + zφ(z)) == 0``."""
    return sp.simplify(gelu_prime_expr() - gelu_prime_closed_form()) == 0


def gelu_second_derivative_expr() -> sp.Expr:
    """``GELU''(z)``, which sympy factors as ``φ(z)(2 - z²)``: GELU' peaks at ``z = ±√2``."""
    return sp.factor(sp.simplify(sp.diff(gelu_expr(z), z, 2)))


def relu_expr(x: sp.Expr = z) -> sp.Expr:
    """``max(0, x)``."""
    return sp.Max(0, x)


def elu_expr(x: sp.Expr = z, alpha: float | sp.Rational = 1) -> sp.Expr:
    """ELU with parameter ``alpha > 0``: ``x`` for ``x > 0``, ``alpha (e^x - 1)`` otherwise."""
    _check_real("alpha", alpha)
    if alpha <= 0:
        raise ValueError(f"alpha must be > 0, got {alpha!r}")
    return sp.Piecewise((x, x > 0), (sp.nsimplify(alpha) * (sp.exp(x) - 1), True))


def limit_at_minus_infinity(expr: sp.Expr) -> sp.Expr:
    """``lim expr`` as ``z → -∞``; substitutes a negative symbol first so Piecewise branches resolve."""
    if not isinstance(expr, sp.Expr):
        raise TypeError(f"expr must be a sympy expression, got {type(expr).__name__}")
    w = sp.Symbol("w", negative=True)
    return sp.limit(expr.subs(z, w), w, -sp.oo)


def tanh_error_expr() -> sp.Expr:
    """``GELU(z) - GELU_tanh(z)``; an even function, because both forms satisfy f(z) - f(-z) = z."""
    return gelu_expr(z) - gelu_tanh_expr(z)


def tanh_error_quartic_coefficient() -> sp.Expr:
    """``c₄`` in ``GELU - GELU_tanh = c₄ z⁴ + O(z⁶)`` (exact; about 3.2e-4)."""
    return sp.simplify(tanh_error_series(6).coeff(z, 4))


def tanh_error_series(order: int = 8) -> sp.Expr:
    """Taylor series of the tanh-form error at 0 (without the O-term): the ``z²`` terms cancel
    exactly, so it starts at ``c₄ z⁴`` (:func:`tanh_error_quartic_coefficient`), tiny near 0."""
    _check_int("order", order, 2)
    return sp.series(tanh_error_expr(), z, 0, order).removeO()


def _as_exact(value: Real | str) -> sp.Expr:
    """Exact rational for a decimal input, so that 0.5 means 1/2 and not the nearest double."""
    if isinstance(value, str):
        try:
            return sp.Rational(value)
        except (TypeError, ValueError) as err:
            raise ValueError(f"cannot read {value!r} as a number") from err
    _check_real("z", value)
    if isinstance(value, sp.Expr):
        return value
    return sp.Rational(str(value))


def evaluate(expr: sp.Expr, at: Real | str, digits: int = DIGITS) -> sp.Float:
    """``expr`` at ``z = at`` to ``digits`` significant digits (``at`` is taken exactly)."""
    if not isinstance(expr, sp.Expr):
        raise TypeError(f"expr must be a sympy expression, got {type(expr).__name__}")
    _check_int("digits", digits, 5)
    free = expr.free_symbols - {z}
    if free:
        raise ValueError(f"expr has free symbols other than z: {sorted(map(str, free))}")
    value = sp.N(expr.subs(z, _as_exact(at)), digits)
    if not value.is_real:
        raise ValueError(f"expr is not real at z = {at!r}: {value}")
    return value


def round_half_even(value: sp.Float | float, decimals: int) -> Decimal:
    """``value`` rounded to ``decimals`` places from its decimal expansion (no binary surprises).

    A negative result that rounds to zero is returned as ``0`` (the post prints ``0.0000``).
    """
    _check_int("decimals", decimals, 0)
    text = str(sp.Float(value, DIGITS)) if not isinstance(value, float) else repr(value)
    rounded = Decimal(text).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_EVEN)
    return rounded if rounded != 0 else abs(rounded)


@lru_cache(maxsize=1)
def _prime_mp():
    return sp.lambdify(z, gelu_prime_closed_form(), modules="mpmath")


def gelu_prime_root(digits: int = DIGITS) -> sp.Float:
    """The unique real zero ``z₀ ≈ -0.7518`` of GELU'(z) = Φ(z) + zφ(z).

    Uniqueness: GELU'' = φ(z)(2 - z²) < 0 for z < -√2 and > 0 on (-√2, √2), GELU' → 0⁻ as
    z → -∞ and GELU'(0) = 1/2, so GELU' is negative on (-∞, z₀), zero at z₀ and positive after
    (and stays ≥ 1/2 > 0 for z ≥ 0 since GELU'(z) = 1 - GELU'(-z)).
    """
    _check_int("digits", digits, 5)
    with mpmath.workdps(digits + 10):
        # Bracketing solver on [-√2, 0]: GELU' is increasing there, negative at -√2, 1/2 at 0.
        root = mpmath.findroot(_prime_mp(), (-mpmath.sqrt(2), mpmath.mpf(0)), solver="anderson")
        return sp.Float(root, digits)


def gelu_minimum(digits: int = DIGITS) -> tuple[sp.Float, sp.Float]:
    """``(z₀, GELU(z₀))``: GELU's global minimum is at the root of GELU' (about -0.16997)."""
    root = gelu_prime_root(digits)
    return root, evaluate(gelu_expr(z), root, digits)


def gelu_prime_extrema(digits: int = DIGITS) -> dict[str, tuple[sp.Float, sp.Float]]:
    """GELU's extreme slopes, from GELU'' = φ(z)(2 - z²): ``{"min": (-√2, ≈ -0.1289), "max": (√2, ≈ 1.1289)}``."""
    _check_int("digits", digits, 5)
    return {
        key: (sp.Float(sp.N(at, digits), digits), sp.Float(sp.N(gelu_prime_closed_form().subs(z, at), digits), digits))
        for key, at in (("min", -sp.sqrt(2)), ("max", sp.sqrt(2)))
    }


@dataclass(frozen=True)
class TanhErrorMax:
    """Where ``|GELU(z) - GELU_tanh(z)|`` is largest on an interval, found by grid + refinement."""

    z: float  # a maximiser; the error is even, so when both ±z lie in range this is the one >= 0
    error: float  # the signed error GELU - GELU_tanh at z
    lo: float
    hi: float
    grid_points: int

    @property
    def abs_error(self) -> float:
        return abs(self.error)


@lru_cache(maxsize=1)
def _error_mp():
    err = tanh_error_expr()
    return sp.lambdify(z, err, modules="mpmath"), sp.lambdify(z, sp.diff(err, z), modules="mpmath")


def tanh_error_numpy(values: np.ndarray) -> np.ndarray:
    """``GELU - GELU_tanh`` in float64 (SciPy erf); absolute accuracy ~1e-16, enough for a grid."""
    from scipy.special import erf  # lazy: scipy is only needed for the numeric cross-checks

    x = np.asarray(values, dtype=np.float64)
    exact = 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    approx = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return exact - approx


def tanh_error_max(lo: float = -10.0, hi: float = 10.0, grid_points: int = 20_001) -> TanhErrorMax:
    """The maximum of ``|GELU - GELU_tanh|`` on ``[lo, hi]`` and where it occurs.

    A dense float64 grid locates the best cell; Newton's method on d(error)/dz at 40 digits then
    pins the stationary point inside that cell (an end point wins if it is larger).
    """
    for name, value in (("lo", lo), ("hi", hi)):
        _check_real(name, value)
    if not lo < hi:
        raise ValueError(f"need lo < hi, got lo={lo!r}, hi={hi!r}")
    _check_int("grid_points", grid_points, 3)
    grid = np.linspace(float(lo), float(hi), grid_points)
    errors = np.abs(tanh_error_numpy(grid))
    best = int(np.argmax(errors))
    error_mp, derivative_mp = _error_mp()
    candidates = [float(lo), float(hi)]
    if 0 < best < grid_points - 1:
        a, b = grid[best - 1], grid[best + 1]
        with mpmath.workdps(DIGITS):
            try:
                root = mpmath.findroot(derivative_mp, (mpmath.mpf(a), mpmath.mpf(b)), solver="anderson")
                if a <= root <= b:
                    candidates.append(float(root))
            except (ValueError, ZeroDivisionError):  # no sign change: the grid point stands
                candidates.append(float(grid[best]))
    else:
        candidates.append(float(grid[best]))
    with mpmath.workdps(DIGITS):
        values = [(abs(error_mp(mpmath.mpf(c))), c) for c in candidates]
        _, arg = max(values, key=lambda pair: (pair[0], pair[1]))
        if lo <= -arg <= hi:  # the error is even: report the non-negative one of the pair ±z
            arg = abs(arg)
        signed = float(error_mp(mpmath.mpf(arg)))
    return TanhErrorMax(z=arg, error=signed, lo=float(lo), hi=float(hi), grid_points=grid_points)


def tanh_error_crossings(threshold: float, hi: float = 10.0, grid_points: int = 10_001) -> list[float]:
    """The z in ``[0, hi]`` where ``|GELU - GELU_tanh|`` crosses ``threshold`` (the error is even).

    E.g. ``threshold=5e-5`` (half a unit in the 4th decimal) gives the band of z where the two
    forms print different 4-decimal values (up to rounding ties).
    """
    _check_real("threshold", threshold)
    _check_real("hi", hi)
    if threshold <= 0 or hi <= 0:
        raise ValueError(f"threshold and hi must be > 0, got threshold={threshold!r}, hi={hi!r}")
    _check_int("grid_points", grid_points, 3)
    grid = np.linspace(0.0, float(hi), grid_points)
    excess = np.abs(tanh_error_numpy(grid)) - threshold
    error_mp, _ = _error_mp()
    crossings = []
    with mpmath.workdps(DIGITS):
        for i in np.nonzero(np.sign(excess[:-1]) != np.sign(excess[1:]))[0]:
            f = lambda t: abs(error_mp(t)) - mpmath.mpf(threshold)  # noqa: E731
            root = mpmath.findroot(f, (mpmath.mpf(grid[i]), mpmath.mpf(grid[i + 1])), solver="anderson")
            crossings.append(float(root))
    return crossings


def library_cross_check(points: tuple[float, ...] = (-3.0, -1.0, 0.0, 0.5, 1.0, 3.0)) -> dict[str, float]:
    """Largest absolute difference of SciPy and PyTorch (float64) from the sympy values.

    Keys: ``scipy_exact``, ``torch_exact`` (``F.gelu`` default), ``torch_tanh``
    (``approximate='tanh'`` against the sympy tanh form), ``torch_default_vs_tanh`` (how far the
    default is from the tanh form: it is the exact form, not the tanh one), ``scipy_prime`` and
    ``torch_autograd_prime`` (derivative by autograd against the closed form).
    """
    import torch  # lazy: torch is only needed for this numeric cross-check of the closed forms
    from scipy.stats import norm  # lazy: scipy is only needed for the numeric cross-checks

    if not points:
        raise ValueError("points must not be empty")
    for p in points:
        _check_real("point", p)
    exact = np.array([float(evaluate(gelu_expr(z), p)) for p in points])
    tanh_form = np.array([float(evaluate(gelu_tanh_expr(z), p)) for p in points])
    prime = np.array([float(evaluate(gelu_prime_closed_form(), p)) for p in points])
    x = np.asarray(points, dtype=np.float64)
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    torch_exact = torch.nn.functional.gelu(t)
    (torch_prime,) = torch.autograd.grad(torch_exact.sum(), t)
    torch_tanh = torch.nn.functional.gelu(t, approximate="tanh").detach().numpy()
    torch_exact_np = torch_exact.detach().numpy()
    return {
        "scipy_exact": float(np.max(np.abs(x * norm.cdf(x) - exact))),
        "torch_exact": float(np.max(np.abs(torch_exact_np - exact))),
        "torch_tanh": float(np.max(np.abs(torch_tanh - tanh_form))),
        "torch_default_vs_tanh": float(np.max(np.abs(torch_exact_np - tanh_form))),
        "scipy_prime": float(np.max(np.abs(norm.cdf(x) + x * norm.pdf(x) - prime))),
        "torch_autograd_prime": float(np.max(np.abs(torch_prime.numpy() - prime))),
    }


def curves(values: np.ndarray) -> dict[str, np.ndarray]:
    """Float64 curves for plotting: GELU, tanh form, ReLU, ELU(α=1) and their derivatives."""
    from scipy.special import erf  # lazy: scipy is only needed for the numeric cross-checks

    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("values must be a non-empty 1-D array of finite numbers")
    cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * x**2) / math.sqrt(2.0 * math.pi)
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
    th = np.tanh(inner)
    d_inner = math.sqrt(2.0 / math.pi) * (1.0 + 3 * 0.044715 * x**2)
    return {
        "z": x,
        "gelu": x * cdf,
        "gelu_tanh": 0.5 * x * (1.0 + th),
        "relu": np.maximum(x, 0.0),
        "elu": np.where(x > 0, x, np.expm1(np.minimum(x, 0.0))),
        "gelu_prime": cdf + x * pdf,
        "gelu_tanh_prime": 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th**2) * d_inner,
        "relu_prime": (x > 0).astype(np.float64),
        "elu_prime": np.where(x > 0, 1.0, np.exp(np.minimum(x, 0.0))),
    }

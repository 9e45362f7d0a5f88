"""The standard normal in sympy, shared by the theory modules of the methods."""

from __future__ import annotations

import sympy as sp

z: sp.Symbol = sp.Symbol("z", real=True)


def Phi(x: sp.Expr = z) -> sp.Expr:
    """Standard normal CDF ``Φ(x) = (1 + erf(x/√2))/2`` as a sympy expression."""
    return (1 + sp.erf(x / sp.sqrt(2))) / 2


def phi(x: sp.Expr = z) -> sp.Expr:
    """Standard normal density ``φ(x) = exp(-x²/2)/√(2π)`` as a sympy expression."""
    return sp.exp(-(x**2) / 2) / sp.sqrt(2 * sp.pi)

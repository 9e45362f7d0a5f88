"""The computations the S-ReLU audit's findings rest on; :mod:`helpers.srelu.audit` turns them into
the audit's claims and re-exports every name here."""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp
import torch
import torch.nn.functional as F

from helpers.core import tables as T
from helpers.core.registry import display_name, get_activation
from helpers.srelu.activation import srelu, srelu_derivative
from helpers.srelu.mollify import BoxKernel, mollify
from helpers.srelu.paper import (
    APPENDIX_H_DELTA,
    ARXIV_REFERENCES,
    PAPER_RUNS,
    TABLE1_AVERAGE,
    TABLE1_CELU_PER_MODEL,
    TABLE1_UNLABELLED_ROW_VALUES,
    TABLE2,
)
from helpers.srelu.smelu import smelu
from helpers.srelu.theory import DELTA, X, Y, epanechnikov_density

#: The baselines of Sec. 5 by registry name, and how the tables label them. The paper states no
#: setting for any of them, so each is the library default the book trains (nn.ELU(), nn.CELU(),
#: nn.PReLU() with its initial slope 0.25, ...).
BASELINES: dict[str, str] = {name: display_name(name) for name in ("gelu", "elu", "prelu", "celu", "silu", "mish")}


def elu_celu_gap(n: int = 400_001) -> tuple[float, float, float, float]:
    """``(max |ELU − CELU|, max |ELU′ − CELU′|, ELU's default α, CELU's default α)`` in float64 on
    ``[−20, 20]``, for the modules the book trains (the paper gives neither α)."""
    x = torch.linspace(-20.0, 20.0, n, dtype=torch.float64)
    (ye, ge), (yc, gc) = (_values_and_slopes(name, x) for name in ("elu", "celu"))
    alpha_e = inspect.signature(F.elu).parameters["alpha"].default
    alpha_c = inspect.signature(F.celu).parameters["alpha"].default
    return (float((ye - yc).abs().max()), float((ge - gc).abs().max()), float(alpha_e), float(alpha_c))


def elu_celu_cells() -> dict[str, T.Difference]:
    cells = {
        f"Table 1 average, {ds}": T.paper_difference(TABLE1_AVERAGE[ds], "ELU", "CELU", n_runs=PAPER_RUNS)
        for ds in TABLE1_AVERAGE
    }
    cells |= {f"Table 2, {ds}": T.paper_difference(TABLE2[ds], "ELU", "CELU", n_runs=PAPER_RUNS) for ds in TABLE2}
    return cells


def _grid(lo: float, hi: float, step: float) -> torch.Tensor:
    return torch.arange(lo, hi + step / 2, step, dtype=torch.float64)


def _values_and_slopes(
    name: str, x: torch.Tensor, delta: float = APPENDIX_H_DELTA
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(f(x), f′(x))`` by autograd for S-ReLU at ``delta``, or an activation of the registry at
    its library default (PReLU at its initial slope)."""
    f = (lambda v: srelu(v, delta)) if name == "srelu" else get_activation(name).double()
    x = x.clone().requires_grad_(True)
    y = f(x)
    (g,) = torch.autograd.grad(y.sum(), x)
    return y.detach(), g


def lipschitz_table(step: float = 1e-4) -> dict[str, float]:
    """max |f′| on ``[−30, 30]`` (grid ``step``, float64, autograd) for S-ReLU at the paper's δ,
    ReLU and each baseline of Sec. 5 at its library default (PReLU at its initial slope)."""
    x = _grid(-30.0, 30.0, step)
    return {name: float(_values_and_slopes(name, x)[1].abs().max()) for name in ("srelu", "relu", *BASELINES)}


def negative_axis_table(delta: float = APPENDIX_H_DELTA, step: float = 1e-4) -> dict[str, dict[str, float]]:
    """For h ~ N(0, 1): the share of negative pre-activations on which f′ = 0 exactly, and the least
    value of f on ``[−30, 30]`` (``-inf`` reported as the value at −30 for PReLU, unbounded below)."""
    x = _grid(-30.0, 30.0, step)
    neg = x < 0
    weight = torch.exp(-(x[neg] ** 2) / 2)
    out: dict[str, dict[str, float]] = {}
    for name in ("srelu", "relu", *BASELINES):
        y, g = _values_and_slopes(name, x, delta)
        dead = (g[neg] == 0).double()
        out[name] = {"zero_gradient_share": float((dead * weight).sum() / weight.sum()), "min_value": float(y.min())}
    return out


def srelu_negative_slopes(delta: float = APPENDIX_H_DELTA) -> tuple[float, float]:
    """``(largest |S-ReLU′| on [−30, −δ], least S-ReLU′ inside (−δ, 0))`` on float64 grids."""
    x = torch.linspace(-30.0, -delta, 100_001, dtype=torch.float64)
    inside = torch.linspace(-delta, 0.0, 10_001, dtype=torch.float64)[1:-1]
    return float(srelu_derivative(x, delta).abs().max()), float(srelu_derivative(inside, delta).min())


@dataclass(frozen=True)
class KernelSmoothing:
    """ReLU mollified by one kernel on ``[−δ, δ]``: degree of the kernel's pieces, of the result's,
    its smoothness, its uniform error, the kernel's variance and its roughness ∫K² (in units of δ,
    δ² and 1/δ)."""

    name: str
    kernel_degree: int
    result_degree: int
    smoothness: int
    sup_error: sp.Expr
    variance: sp.Expr
    roughness: sp.Expr

    @property
    def error_per_sd(self) -> float:
        return float(self.sup_error / sp.sqrt(self.variance))

    @property
    def amise_factor(self) -> float:
        """sd(K)·∫K², scale-free: the kernel's factor in the asymptotic mean integrated squared error of
        a kernel density estimate at its best bandwidth (which grows as this factor to the power 4/5)."""
        return float(sp.sqrt(self.variance) * self.roughness)


#: Unit kernels on [−1, 1] as (left piece on [−1, 0], right piece on [0, 1]), in u = y/δ.
_UNIT_KERNELS: dict[str, tuple[sp.Expr, sp.Expr]] = {
    "box (SmeLU)": (sp.Rational(1, 2), sp.Rational(1, 2)),
    "triangle": (1 + Y, 1 - Y),
    "Epanechnikov (S-ReLU)": (epanechnikov_density(sp.Integer(1), Y),) * 2,
}


def _smoothing(name: str) -> KernelSmoothing:
    left, right = (e.subs(Y, Y / DELTA) / DELTA for e in _UNIT_KERNELS[name])
    # ReLU * K at x: the integral of (x − y) K(y) over y < x
    mid_left = sp.integrate((X - Y) * left, (Y, -DELTA, X))
    mid_right = sp.integrate((X - Y) * left, (Y, -DELTA, 0)) + sp.integrate((X - Y) * right, (Y, 0, X))
    pieces = [sp.Integer(0), sp.expand(mid_left), sp.expand(mid_right), X]
    knots = [-DELTA, sp.Integer(0), DELTA]

    def jump(k: int, i: int, t: sp.Expr) -> sp.Expr:  # of the k-th derivative at knot t, between pieces i, i + 1
        return sp.simplify(sp.diff(pieces[i], X, k).subs(X, t) - sp.diff(pieces[i + 1], X, k).subs(X, t))

    # the order of the last derivative (up to the 5th) that is continuous at every knot
    smooth = next((k for k in range(6) if any(jump(k, i, t) != 0 for i, t in enumerate(knots))), 6) - 1
    return KernelSmoothing(
        name=name,
        kernel_degree=max(sp.Poly(e, Y).degree() for e in (left * DELTA, right * DELTA)),
        result_degree=max(sp.Poly(p, X).degree() for p in pieces[1:3]),
        smoothness=smooth,
        sup_error=sp.simplify(pieces[2].subs(X, 0) / DELTA),
        variance=sp.simplify(
            (sp.integrate(Y**2 * left, (Y, -DELTA, 0)) + sp.integrate(Y**2 * right, (Y, 0, DELTA))) / DELTA**2
        ),
        roughness=sp.simplify((sp.integrate(left**2, (Y, -DELTA, 0)) + sp.integrate(right**2, (Y, 0, DELTA))) * DELTA),
    )


@functools.lru_cache(maxsize=1)
def relu_kernel_smoothing() -> tuple[KernelSmoothing, ...]:
    """ReLU mollified by the box, triangle and Epanechnikov kernels (sympy, exact)."""
    return tuple(_smoothing(name) for name in _UNIT_KERNELS)


def _relu_correlation_map(c: mpmath.mpf) -> mpmath.mpf:
    """The correlation of ReLU(u), ReLU(v) for unit-variance Gaussians of correlation c, normalised
    (the arc-cosine kernel: ReLU networks on the edge of chaos)."""
    return (mpmath.sqrt(1 - c * c) + (mpmath.pi - mpmath.acos(c)) * c) / mpmath.pi


@functools.lru_cache(maxsize=4)
def relu_correlation_depths(
    delta: float = APPENDIX_H_DELTA, max_depth: int = 20_000, checkpoints: tuple[int, ...] = (10, 100, 1_000, 10_000)
) -> tuple[dict[int, float], int]:
    """``({l: l²(1 − c_l)}, l*)``: iterating ReLU's correlation map from c₀ = 0, the rescaled gap at
    each checkpoint depth, and the first depth l* at which 1 − c_l ≤ δ²/2, the scale below which the
    inputs of a unit differ by less than δ and S-ReLU's smoothing can act (0 when not reached)."""
    if not (0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    mpmath.mp.dps = 40
    c = mpmath.mpf(0)
    threshold = mpmath.mpf(delta) ** 2 / 2
    rescaled, crossing = {}, 0
    for depth in range(1, max_depth + 1):
        c = _relu_correlation_map(c)
        if depth in checkpoints:
            rescaled[depth] = float(depth**2 * (1 - c))
        if not crossing and 1 - c <= threshold:
            crossing = depth
    return rescaled, crossing


def newest_arxiv_reference() -> tuple[str, str]:
    """``(arXiv id, "Month YYYY")`` of the newest arXiv reference the source prints."""
    ids = [m.group(0) for q in ARXIV_REFERENCES for m in [re.search(r"\d{4}\.\d{4,5}", q.text)] if m]
    if not ids:
        raise ValueError("no arXiv identifier in the source's references")
    newest = max(ids, key=lambda i: (int(i[:4]), int(i[5:])))
    return newest, _arxiv_month(newest)


def _arxiv_month(arxiv_id: str) -> str:
    """``2010.09931`` → "October 2020" (an arXiv identifier starts with its year and month)."""
    month = ("January February March April May June July August September October November December").split()
    return f"{month[int(arxiv_id[2:4]) - 1]} 20{arxiv_id[:2]}"


def smelu_match(beta: float = 1.0) -> float:
    x = np.linspace(-3 * beta, 3 * beta, 6001)
    numeric = mollify(lambda v: np.maximum(v, 0.0), BoxKernel(beta), x, breakpoints=(0.0,))
    closed = smelu(torch.from_numpy(x), beta).numpy()
    return float(np.abs(numeric - closed).max())


def lost_table_cells() -> dict[str, dict[str, list[str]]]:
    """Table 1's per-model cells that the text extraction damaged, per dataset: ``"value lost"``
    (nothing of the cell survives) and ``"label lost"`` (one value survives, without its model).
    Only the CELU column keeps its per-model values with their labels; the models are those whose
    CELU cells survive (ViT-Tiny, DeiT-Tiny, TNT-Small on CIFAR; ViT-Tiny, DeiT-Tiny on ImageNet-1K)."""
    activations = [a for a in TABLE1_AVERAGE["CIFAR-10"] if a != "CELU"]
    lost: dict[str, dict[str, list[str]]] = {}
    for ds, rows in TABLE1_CELU_PER_MODEL.items():
        survivors = TABLE1_UNLABELLED_ROW_VALUES.get(ds, {})
        cells = [f"{m} / {a}" for m in rows for a in activations]
        label_lost = [f"? / {a}" for a in activations if a in survivors]
        n_value_lost = len(cells) - len(label_lost)
        lost[ds] = {
            "value lost": cells[:n_value_lost]
            if not label_lost
            else [f"{a} ({n_value_lost // len(activations)} of {len(rows)} models)" for a in activations],
            "label lost": label_lost,
            "cells": cells,
        }
    return lost

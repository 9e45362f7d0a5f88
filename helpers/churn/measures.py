"""Churn between replicas, and its statistics over many replicas.

Measures of one pair of networks (``a``, ``b``: their predictions on the same N examples):

* **top-1 churn** (:func:`top1_churn`): the fraction of examples whose predicted labels differ,
  ``(1/N) Σ_n 1[ŷ_a(n) ≠ ŷ_b(n)]``;
* **churn on errors** (:func:`churn_on_errors`): the same fraction among the examples that either
  network gets wrong (on examples both get right the labels agree by definition, so this is top-1
  churn with that agreeing part left out);
* **relative prediction difference** (:func:`relative_pd`). Shamir & Lin (arXiv 2202.06499, on
  binary click predictions p) measure irreproducibility by the relative PD: over M models and N
  examples, ``Δ_r = (1/M) Σ_m (1/N) Σ_n |p_m(n) − p̄(n)| / p̄(n)`` with ``p̄(n)`` the mean of the M
  models' predictions for example n (as we read the paper: the source is not among the book's four,
  so this is our statement of it, not a quotation). Our networks are 10-class classifiers and the
  results store the probability of the predicted and of the true class (not the full softmax,
  :mod:`helpers.churn.predictions`), so we apply it to the probability each network gives the
  *true* class, the one scalar prediction that means the same event in every network. For one pair
  (M = 2) it reduces to ``(1/N) Σ_n |p_a(n) − p_b(n)| / (p_a(n) + p_b(n))``, which lies in [0, 1];
  an example where both probabilities are 0 contributes 0. This pairwise form is the kernel we average.

Statistics over N replicas of an arm (:func:`pair_matrix`: every pair's measure): the mean over
the N(N−1)/2 pairs is a U-statistic of degree 2 (:func:`u_statistic`). Its pairs are not
independent (every pair shares a model with 2(N−2) others), so its uncertainty comes from the
models: the leave-one-model-out jackknife (:func:`u_jackknife`, Arvesen's jackknife for
U-statistics), or a bootstrap that resamples models, not pairs (:func:`model_bootstrap`). Two arms
whose replica k share their seeds are compared by the jackknife of the difference of their
U-statistics, leaving out replica k of both arms together (:func:`paired_u_comparison`), which
gives a Student-t interval with N − 1 degrees of freedom, as the rest of the report's paired
comparisons have.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
from scipy import stats

from helpers.core.statistics import CONFIDENCE, Comparison, InsufficientData, minimal_detectable_effect

__all__ = [
    "top1_churn",
    "churn_on_errors",
    "relative_pd",
    "pair_matrix",
    "u_statistic",
    "u_jackknife",
    "model_bootstrap",
    "paired_u_comparison",
]

T = TypeVar("T")


def _labels(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 1 or a.shape != b.shape or a.size == 0:
        raise ValueError(
            f"two non-empty 1-d prediction arrays of one length are needed, got shapes {a.shape} and {b.shape}"
        )
    return a, b


def top1_churn(labels_a: np.ndarray, labels_b: np.ndarray) -> float:
    """The fraction of examples whose predicted labels differ."""
    a, b = _labels(labels_a, labels_b)
    return float(np.mean(a != b))


def churn_on_errors(labels_a: np.ndarray, labels_b: np.ndarray, correct_a: np.ndarray, correct_b: np.ndarray) -> float:
    """The fraction of differing labels among the examples that ``a`` or ``b`` gets wrong."""
    a, b = _labels(labels_a, labels_b)
    ca, cb = _labels(np.asarray(correct_a, dtype=bool), np.asarray(correct_b, dtype=bool))
    if ca.shape != a.shape:
        raise ValueError(f"correct_a/correct_b need one entry per example ({a.size}), got {ca.size}")
    wrong = ~(ca & cb)
    if not wrong.any():
        raise ValueError("churn on errors: both networks get every example right, so there is no error to count on")
    return float(np.mean(a[wrong] != b[wrong]))


def relative_pd(prob_a: np.ndarray, prob_b: np.ndarray) -> float:
    """Shamir & Lin's relative prediction difference of two networks (M = 2, module docstring):
    ``mean_n |p_a − p_b| / (p_a + p_b)``, with 0 where both are 0. Probabilities must lie in [0, 1]."""
    a, b = _labels(np.asarray(prob_a, dtype=np.float64), np.asarray(prob_b, dtype=np.float64))
    if not (np.all((a >= 0) & (a <= 1)) and np.all((b >= 0) & (b <= 1))):
        raise ValueError("relative_pd takes probabilities in [0, 1]")
    total = a + b
    terms = np.divide(np.abs(a - b), total, out=np.zeros_like(total), where=total > 0)
    return float(terms.mean())


def pair_matrix(items: Sequence[T], measure: Callable[[T, T], float]) -> np.ndarray:
    """The symmetric N×N matrix of ``measure`` over every pair of ``items`` (NaN on the diagonal)."""
    n = len(items)
    if n < 2:
        raise InsufficientData(f"pairwise measures need at least 2 replicas, got {n}")
    m = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1, n):
            m[i, j] = m[j, i] = float(measure(items[i], items[j]))
    return m


def _check_matrix(matrix: np.ndarray) -> np.ndarray:
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"a pair matrix is square, got shape {m.shape}")
    off = ~np.eye(len(m), dtype=bool)
    if not np.all(np.isfinite(m[off])) or not np.allclose(m, m.T, equal_nan=True):
        raise ValueError("a pair matrix is symmetric with finite values off the diagonal")
    return m


def u_statistic(matrix: np.ndarray) -> float:
    """The mean of a pair matrix over its N(N−1)/2 distinct pairs."""
    m = _check_matrix(matrix)
    if len(m) < 2:
        raise InsufficientData(f"a U-statistic needs at least 2 replicas, got {len(m)}")
    return float(m[np.triu_indices(len(m), 1)].mean())


def _leave_one_out(m: np.ndarray) -> np.ndarray:
    """The U-statistic of the pair matrix without model i, for every i (from row sums)."""
    n = len(m)
    upper = m[np.triu_indices(n, 1)].sum()
    rows = np.nansum(m, axis=1)
    return (upper - rows) / ((n - 1) * (n - 2) / 2)


def u_jackknife(matrix: np.ndarray) -> tuple[float, float]:
    """``(U, se)``: the U-statistic and its leave-one-model-out jackknife standard error,
    ``se² = (N−1)/N Σ_i (U₋ᵢ − mean U₋)²``. Needs N ≥ 3."""
    m = _check_matrix(matrix)
    if len(m) < 3:
        raise InsufficientData(f"the jackknife of a U-statistic needs at least 3 replicas, got {len(m)}")
    loo = _leave_one_out(m)
    n = len(m)
    return u_statistic(m), float(math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


def model_bootstrap(matrix: np.ndarray, n_boot: int = 2000, seed: int = 0) -> np.ndarray:
    """Bootstrap replicates of the U-statistic that resample the N **models** with replacement:
    each replicate averages the pairs of the resample whose two models are distinct originals (a
    model drawn twice is not a pair of replicas). Replicates with no such pair are dropped."""
    m = _check_matrix(matrix)
    if not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive int, got {n_boot!r}")
    n = len(m)
    rng = np.random.default_rng(seed)
    out = []
    iu = np.triu_indices(n, 1)
    for _ in range(n_boot):
        idx = rng.integers(0, n, size=n)
        a, b = idx[iu[0]], idx[iu[1]]
        keep = a != b
        if keep.any():
            out.append(m[a[keep], b[keep]].mean())
    return np.asarray(out)


def paired_u_comparison(
    matrix_a: np.ndarray, matrix_b: np.ndarray, *, confidence: float = CONFIDENCE, scale: float = 1.0
) -> Comparison:
    """``U(a) − U(b)`` for two arms whose replica i has the same seeds in both (row/column i of
    each matrix): the jackknife that leaves out replica i of both arms together gives the standard
    error; the interval is Student-t with N − 1 degrees of freedom. ``scale`` multiplies every
    value (100: percentage points)."""
    a, b = _check_matrix(matrix_a), _check_matrix(matrix_b)
    if a.shape != b.shape:
        raise ValueError(f"paired arms need the same replicas, got {len(a)} and {len(b)}")
    n = len(a)
    if n < 3:
        raise InsufficientData(f"a paired comparison of U-statistics needs at least 3 matched replicas, got {n}")
    loo = scale * (_leave_one_out(a) - _leave_one_out(b))
    effect = scale * (u_statistic(a) - u_statistic(b))
    se = float(math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))
    df = n - 1
    if se == 0:
        lo = hi = effect
        p = 0.0 if effect != 0 else 1.0
    else:
        half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
        lo, hi = effect - half, effect + half
        p = float(2 * stats.t.sf(abs(effect) / se, df))
    return Comparison(
        effect=effect,
        ci_low=lo,
        ci_high=hi,
        se=se,
        df=df,
        n=n,
        p=p,
        mde=minimal_detectable_effect(se, df),
        test="paired jackknife t over replicas (U-statistics)",
        sd=se * math.sqrt(n),
        n_a=n,
        n_b=n,
        confidence=confidence,
    )

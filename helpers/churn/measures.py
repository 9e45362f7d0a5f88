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
  models' predictions for example n (our statement of it: the source is not among the book's four).
  We apply it to the probability each network gives the *true* class (stored by
  :mod:`helpers.churn.predictions`), the one scalar prediction that means the same event in every
  10-class network. For one pair
  (M = 2) it reduces to ``(1/N) Σ_n |p_a(n) − p_b(n)| / (p_a(n) + p_b(n))``, which lies in [0, 1];
  an example where both probabilities are 0 contributes 0. This pairwise form is the kernel we average.

Statistics over N replicas of an arm (:func:`pair_matrix`: every pair's measure): the mean over
the N(N−1)/2 pairs is a U-statistic of degree 2 (:func:`u_statistic`). Its pairs are not
independent (every pair shares a model with 2(N−2) others), so its uncertainty comes from the
models: the leave-one-model-out jackknife (:func:`u_jackknife`, Arvesen's jackknife for
U-statistics). Two arms paired by replica compare by :func:`paired_u_comparison` (test set held
fixed: another set of seeds) or by :func:`two_way_u_comparison` (also another draw of test
examples), which the report's churn rows use.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
from scipy import stats

from helpers.core.comparison import CONFIDENCE, Comparison, InsufficientData, minimal_detectable_effect

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
    return _u(m)


def _u(m: np.ndarray) -> float:
    """:func:`u_statistic` of a matrix its caller checked."""
    return float(m[np.triu_indices(len(m), 1)].mean())


def _leave_one_out(m: np.ndarray) -> np.ndarray:
    """The U-statistic of the pair matrix without model i, for every i (from row sums)."""
    n = len(m)
    upper = m[np.triu_indices(n, 1)].sum()
    rows = np.nansum(m, axis=1)
    return (upper - rows) / ((n - 1) * (n - 2) / 2)


def u_jackknife(matrix: np.ndarray) -> tuple[float, float]:
    """``(U, se)``: the U-statistic and its leave-one-model-out jackknife standard error. Needs N ≥ 3."""
    m = _check_matrix(matrix)
    if len(m) < 3:
        raise InsufficientData(f"the jackknife of a U-statistic needs at least 3 replicas, got {len(m)}")
    return _u(m), _jackknife_se(_leave_one_out(m))


def _jackknife_se(loo: np.ndarray) -> float:
    """``se² = (N−1)/N Σ_i (U₋ᵢ − mean U₋)²`` of the N leave-one-out values ``loo``."""
    n = len(loo)
    return float(math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


def paired_u_comparison(
    matrix_a: np.ndarray, matrix_b: np.ndarray, *, confidence: float = CONFIDENCE, scale: float = 1.0
) -> Comparison:
    """``U(a) − U(b)`` for two arms whose replica i has the same seeds in both (row/column i of
    each matrix): the jackknife leaving out replica i of both arms gives the standard error; the
    interval is Student-t with N − 1 degrees of freedom. ``scale``: 100 for percentage points."""
    a, b = _check_matrix(matrix_a), _check_matrix(matrix_b)
    if a.shape != b.shape:
        raise ValueError(f"paired arms need the same replicas, got {len(a)} and {len(b)}")
    n = len(a)
    if n < 3:
        raise InsufficientData(f"a paired comparison of U-statistics needs at least 3 matched replicas, got {n}")
    loo = scale * (_leave_one_out(a) - _leave_one_out(b))
    effect = scale * (_u(a) - _u(b))
    return _replica_t(effect, _jackknife_se(loo), n, confidence, "paired jackknife t over replicas (U-statistics)")


def _replica_t(effect: float, se: float, n: int, confidence: float, test: str) -> Comparison:
    """A Student-t comparison of two arms paired over ``n`` replicas (``n − 1`` degrees of freedom)."""
    df = n - 1
    if se == 0:
        lo = hi = effect
        p = 0.0 if effect != 0 else 1.0
    else:
        half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
        lo, hi = effect - half, effect + half
        p = float(2 * stats.t.sf(abs(effect) / se, df))
    return Comparison(
        effect=float(effect),
        ci_low=float(lo),
        ci_high=float(hi),
        se=se,
        df=df,
        n=n,
        p=p,
        mde=minimal_detectable_effect(se, df),
        test=test,
        sd=se * math.sqrt(n),
        n_a=n,
        n_b=n,
        confidence=confidence,
    )


def pair_disagreements(labels: Sequence[np.ndarray]) -> np.ndarray:
    """``(P, E)`` float64 0/1: for each pair ``i < j`` of the N networks (``np.triu_indices``
    order), whether their top-1 labels differ on each of the E test examples."""
    stack = np.stack([np.asarray(x) for x in labels])
    if stack.ndim != 2 or len(stack) < 2:
        raise ValueError(f"pair_disagreements takes N >= 2 label vectors of one length, got shape {stack.shape}")
    i, j = np.triu_indices(len(stack), 1)
    return (stack[i] != stack[j]).astype(np.float64)


#: Resamples of :func:`two_way_u_comparison` (the standard error's own relative error is about 2 %).
TWO_WAY_RESAMPLES: int = 1000


@functools.lru_cache(maxsize=4)
def _example_counts(n_examples: int, n_boot: int, seed: int) -> np.ndarray:
    """``(B, E)`` float32: how often each test example is drawn in each resample (drawn once per
    test-set size: every comparison on that test set uses the same draws)."""
    rng = np.random.default_rng([seed, 0])
    counts = rng.multinomial(n_examples, np.full(n_examples, 1.0 / n_examples), size=n_boot).astype(np.float32)
    counts.flags.writeable = False
    return counts


def two_way_u_comparison(
    labels_a: Sequence[np.ndarray],
    labels_b: Sequence[np.ndarray],
    *,
    n_boot: int = TWO_WAY_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    scale: float = 1.0,
) -> Comparison:
    """``U(a) − U(b)`` of top-1 churn for two arms whose replica k shares its seeds in both (entry k
    of each list: that replica's labels on the same test examples), with a standard error from a
    two-way bootstrap: each resample draws the N replicas (the same draw in both arms; a pair of one
    replica drawn twice is no pair) and the E test examples (the same multiset in both arms), with
    replacement, and recomputes the difference. The interval is Student-t with N − 1 degrees of
    freedom. Sums of 0/1 disagreements weighted by integer counts are exact in float64, so the
    result is the same on every CPU."""
    if len(labels_a) != len(labels_b):
        raise ValueError(f"paired arms need the same replicas, got {len(labels_a)} and {len(labels_b)}")
    n = len(labels_a)
    if n < 3:
        raise InsufficientData(f"a paired comparison of U-statistics needs at least 3 matched replicas, got {n}")
    if not isinstance(n_boot, int) or isinstance(n_boot, bool) or n_boot < 2:
        raise ValueError(f"n_boot must be an int >= 2, got {n_boot!r}")
    d_a, d_b = pair_disagreements(labels_a), pair_disagreements(labels_b)
    if d_a.shape != d_b.shape:
        raise ValueError(f"the arms' replicas were evaluated on different numbers of examples: {d_a.shape} {d_b.shape}")
    n_examples = d_a.shape[1]
    effect = scale * (d_a.mean() - d_b.mean())  # every pair has E examples: the U-statistics' difference
    counts = _example_counts(n_examples, n_boot, seed)
    # (P, B) disagreement counts of every pair in every resample: integers below 2^24, so exact in
    # float32 whatever order the sum takes
    churn_a = d_a.astype(np.float32) @ counts.T
    churn_b = d_b.astype(np.float32) @ counts.T
    rng = np.random.default_rng([seed, 1])
    pair_index = np.full((n, n), -1)
    iu = np.triu_indices(n, 1)
    pair_index[iu] = pair_index[iu[::-1]] = np.arange(len(iu[0]))
    diffs = []
    for b in range(n_boot):
        drawn = rng.integers(0, n, size=n)
        pairs = pair_index[drawn[iu[0]], drawn[iu[1]]]
        pairs = pairs[pairs >= 0]
        if len(pairs):
            diffs.append((churn_a[pairs, b].sum() - churn_b[pairs, b].sum()) / (len(pairs) * n_examples))
    se = float(scale * np.std(diffs, ddof=1))
    test = (
        f"paired t over replicas, SE from a two-way bootstrap over replicas and {n_examples:,} test examples "
        f"({n_boot:,} resamples; U-statistics)"
    )
    return _replica_t(effect, se, n, confidence, test)

"""Fig. 1 (the (t, c) grid) and Fig. 2 (the c sweep): ``Δλ(t, c)`` and ``ΔBVS(t, c)`` per cell,
their monotone trends, equal-rate runs and seed differences."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from helpers.core.pairing import by_level
from helpers.core.statistics import one_sample
from helpers.core.verdicts import intersection_union, judge
from helpers.lambda_gelu.hardness import drift_cell_average
from helpers.lambda_gelu.records import (
    MODE_ABBREVIATIONS,
    RunInfo,
    _lambda_history,
    _val_metrics,
    run_info,
    run_table,
)


# ---------------------------------------------------------------------------- Fig. 1 / Fig. 2
def grid_cells(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """``Δλ(t, c)`` and ``ΔBVS(t, c)`` per cell of one pair's (t, c) grid, from its GELU baseline and
    non-annealed λ-GELU runs. ``Δλ`` is :func:`helpers.lambda_gelu.hardness.drift_cell_average`;
    ``delta_bvs = bvs_lambda − bvs_gelu`` (Eq. (4)), each a mean BVS; ``c_over_t2`` is the first-order
    rate factor of Eq. (3)."""
    results = list(results)
    table = run_table(results)
    pairs = table["pair"].unique()
    if len(pairs) != 1:
        raise ValueError(f"a grid holds runs of one pair, got {sorted(pairs)}")
    gelu = table[table["activation"] == "gelu"]
    if gelu.empty:
        raise ValueError("the grid needs the GELU baseline runs (activation 'gelu')")
    bvs_gelu = float(gelu["bvs"].mean())
    lam = [(r, i) for r, i in zip(results, table.itertuples()) if i.activation == "lambda_gelu" and not i.annealed]
    if not lam:
        raise ValueError("the grid has no (non-annealed) λ-GELU run")
    cells: dict[tuple[float, float], dict[tuple[int, str], Any]] = {}
    bvs: dict[tuple[float, float], list[float]] = {}
    for result, info in lam:
        key = (info.t, info.c)
        if (info.seed, info.mode) in cells.setdefault(key, {}):
            raise ValueError(f"duplicate run for t={info.t}, c={info.c}, seed={info.seed}, mode={info.mode}")
        cells[key][(info.seed, info.mode)] = _lambda_history(result)
        bvs.setdefault(key, []).append(info.bvs)
    rows = []
    for (t, c), histories in sorted(cells.items()):
        bvs_lambda = float(np.mean(bvs[(t, c)]))
        rows.append(
            {
                "t": t,
                "c": c,
                "delta_lambda": drift_cell_average(histories),
                "bvs_lambda": bvs_lambda,
                "bvs_gelu": bvs_gelu,
                "delta_bvs": bvs_lambda - bvs_gelu,
                "n_runs": len(histories),
                "c_over_t2": c / t**2,
            }
        )
    return pd.DataFrame(rows)


def grid_pivot(cells: pd.DataFrame, value: str = "delta_lambda") -> pd.DataFrame:
    """A ``t × c`` table of one column of :func:`grid_cells` (rows t ascending, columns c)."""
    if value not in cells.columns:
        raise ValueError(f"unknown column {value!r}; choose one of {list(cells.columns)}")
    return cells.pivot(index="t", columns="c", values=value).sort_index().sort_index(axis=1)


def monotone_trends(cells: pd.DataFrame) -> pd.DataFrame:
    """Fig. 1's two expected trends line by line: at every c, ``Δλ`` strictly decreasing in t; at
    every t, strictly increasing in c (lines of fewer than two cells skipped). Columns ``along``,
    ``fixed`` (the other parameter's value), ``values`` (Δλ in order), ``monotone``."""
    pivot = grid_pivot(cells)
    rows = []
    for along, table, sign in (("t", pivot, -1), ("c", pivot.T, 1)):  # a column of ``table`` is one line
        for fixed in table.columns:
            line = table[fixed].dropna().to_numpy()
            if line.size >= 2:
                monotone = bool(np.all(sign * np.diff(line) > 0))
                rows.append(
                    {"along": along, "fixed": float(fixed), "values": tuple(map(float, line)), "monotone": monotone}
                )
    return pd.DataFrame(rows, columns=["along", "fixed", "values", "monotone"])


def count_monotone(trends: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """``{"t": (monotone lines, lines), "c": (...)}`` from :func:`monotone_trends`."""
    out = {}
    for along in ("t", "c"):
        sub = trends[trends["along"] == along]
        out[along] = (int(sub["monotone"].sum()), int(len(sub)))
    return out


def equal_rate_runs(results: Iterable[Mapping[str, Any]], rel_tol: float = 1e-9) -> pd.DataFrame:
    """Runs of a (t, c) grid that share ``c/t²``, seed and init mode, compared epoch by epoch.

    With ``u = s/t`` (so ``λ = 1 + softplus(u)``), an SGD step ``s ← s − c·η_w·∂L/∂s`` is
    ``u ← u − (c/t²)·η_w·∂L/∂u``, momentum included (it is linear) and ``s`` has no weight decay;
    the initialisation fixes λ, hence ``u``. So two runs with the same ``c/t²`` differ only by float
    rounding. One row per pair of such runs, with the largest difference of any layer's λ at any epoch
    (absolute and relative) and of the validation metric.
    """
    if not (rel_tol >= 0):
        raise ValueError(f"rel_tol must be >= 0, got {rel_tol!r}")
    rows = []
    for (ra, a), (rb, b) in _lambda_run_pairs(results):
        rate_a, rate_b = a.c / a.t**2, b.c / b.t**2
        if (a.seed, a.mode, a.pair) != (b.seed, b.mode, b.pair) or (a.t, a.c) == (b.t, b.c):
            continue
        if not math.isclose(rate_a, rate_b, rel_tol=max(rel_tol, 1e-12)):
            continue
        la, lb = _lambda_history(ra), _lambda_history(rb)
        if la.shape != lb.shape:
            raise ValueError(f"runs at c/t² = {rate_a:g} have different history shapes {la.shape}, {lb.shape}")
        cells = {"rate": rate_a, "seed": a.seed, "mode": MODE_ABBREVIATIONS[a.mode], "cell_a": (a.t, a.c)}
        rows.append(
            {**cells, "cell_b": (b.t, b.c), "max_lambda_diff": float(np.abs(la - lb).max()), **_differences(ra, rb)}
        )
    return pd.DataFrame(
        rows,
        columns=["rate", "seed", "mode", "cell_a", "cell_b", "max_lambda_diff", "max_lambda_rel_diff", "max_val_diff"],
    )


def seed_differences(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The same comparison as :func:`equal_rate_runs` between two *seeds* of one (t, c) cell and
    init mode: the scale of run-to-run differences that are not rounding."""
    rows = []
    for (ra, a), (rb, b) in _lambda_run_pairs(results):
        if (a.pair, a.t, a.c, a.mode) != (b.pair, b.t, b.c, b.mode) or a.seed == b.seed:
            continue
        rows.append(
            {"cell": (a.t, a.c), "mode": MODE_ABBREVIATIONS[a.mode], "seeds": (a.seed, b.seed), **_differences(ra, rb)}
        )
    return pd.DataFrame(rows, columns=["cell", "mode", "seeds", "max_lambda_rel_diff", "max_val_diff"])


def _lambda_run_pairs(results: Iterable[Mapping[str, Any]]) -> Iterator[tuple[tuple[Mapping, RunInfo], ...]]:
    """Every two of the non-annealed λ-GELU runs of ``results``, each with its :class:`RunInfo`."""
    runs = [(r, run_info(r)) for r in results]
    return combinations([(r, i) for r, i in runs if i.activation == "lambda_gelu" and not i.annealed], 2)


def _differences(ra: Mapping[str, Any], rb: Mapping[str, Any]) -> dict[str, float]:
    """The largest relative difference of any layer's λ at any epoch of two runs, and of their
    validation metric."""
    la, lb = _lambda_history(ra), _lambda_history(rb)
    return {
        "max_lambda_rel_diff": float((np.abs(la - lb) / np.maximum(la, lb)).max()),
        "max_val_diff": float(np.abs(np.subtract(_val_metrics(ra), _val_metrics(rb))).max()),
    }


# ------------------------------------------------------- the grid's statistics: the seed is the unit
def delta_bvs_by_seed(results: Iterable[Mapping[str, Any]], t: float | None = None) -> dict[tuple[float, int], float]:
    """``ΔBVS`` of every (c, seed) of a grid against the GELU run *of the same seed*:
    ``{(c, seed): mean over init modes of BVS_λ − BVS_GELU(seed)}``, at ``t`` (all t when None).

    The runs of one seed share data order and initial weights, so their difference removes the
    seed-to-seed spread a difference of means keeps (most where a cell has fewer seeds than the GELU
    baseline, as Fig. 2 off the GPU).
    """
    table = run_table(results)
    g = table[table["activation"] == "gelu"]
    if g["seed"].duplicated().any():
        raise ValueError("two GELU runs share a seed; cannot pair by seed")
    gelu = {int(k): float(v) for k, v in zip(g["seed"], g["bvs"])}
    lam = table[(table["activation"] == "lambda_gelu") & ~table["annealed"]]
    if t is not None:
        lam = lam[np.isclose(lam["t"].astype(float), t)]
    if lam.empty:
        raise ValueError(f"no λ-GELU run at t = {t}")
    out = {}
    for (c, seed), g in lam.groupby(["c", "seed"]):
        if int(seed) not in gelu:
            raise ValueError(f"no GELU run with seed {seed} to pair with")
        out[(float(c), int(seed))] = float(g["bvs"].mean()) - gelu[int(seed)]
    return out


def _drift_ends(results: Iterable[Mapping[str, Any]], along: str) -> tuple[pd.Series, pd.Series]:
    """``V_λ`` of the λ-GELU runs (not annealed) at the end of ``along`` where the paper expects more
    drift (smallest t, largest c) and at the other end, each indexed by (other axis, mode, seed)."""
    if along not in ("t", "c"):
        raise ValueError(f"along must be 't' or 'c', got {along!r}")
    table = run_table(results)
    lam = table[(table["activation"] == "lambda_gelu") & ~table["annealed"]]
    more, less = (lam[along].min(), lam[along].max()) if along == "t" else (lam[along].max(), lam[along].min())
    key = ["c" if along == "t" else "t", "mode", "seed"]
    return lam[lam[along] == more].set_index(key)["drift"], lam[lam[along] == less].set_index(key)["drift"]


def _contrast(more: pd.Series, less: pd.Series, along: str) -> dict[tuple, float]:
    common = more.index.intersection(less.index)
    if common.empty:
        raise ValueError(f"no run at both ends of {along}")
    return {k: float(more[k] - less[k]) for k in common}


#: The smallest drift contrast of interest: 10 % of the mean ``V_λ`` at the end of the axis where the
#: paper expects less drift (``V_λ`` has no unit of its own; the rules page lists it).
DRIFT_SMALLEST_EFFECT: float = 0.10


def _seed_cells(cells: Mapping[tuple, float]) -> dict[tuple[float, int], float]:
    """``{(level, seed): mean}`` from ``{(level, ..., seed): value}``: the init modes (or any middle
    key) of one seed averaged, since they share that seed's data order and initial weights."""
    groups: dict[tuple[float, int], list[float]] = {}
    for key, value in cells.items():
        groups.setdefault((key[0], key[-1]), []).append(value)
    return {k: float(np.mean(v)) for k, v in sorted(groups.items())}


def _every_level(
    cells: Mapping[tuple[float, int], float], axis: str, *, label: str = "", **kw: Any
) -> tuple[str, dict[str, str]]:
    """An "at every ``axis``" claim on ``{(level, seed): value}``: a one-sample test per level
    (:func:`helpers.core.verdicts.judge` with ``kw``), combined by intersection-union."""
    parts = {}
    for level, seeds in by_level(cells).items():
        name = f"{axis} = {level:g}"
        verdict, fields, comp = judge(lambda seeds=seeds: one_sample(seeds), label=f"{name}{label}", **kw)
        fields["n"] = f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''}"
        parts[name] = (verdict, fields, comp)
    return intersection_union(parts, what=f"values of {axis}")


def trend_claim_stats(results: Iterable[Mapping[str, Any]], along: str, monotone: bool) -> tuple[str, dict[str, str]]:
    """Verdict and fields of a trend claim: confirmed when every line of cell means is monotone
    and, at every level of the other axis, the end-to-end contrast of ``V_λ`` has a 95% CI above 0
    over the seeds (init modes averaged within a seed: a seed is one unit, not three);
    contradicted when some level's CI is below 0."""

    try:
        more, less = _drift_ends(results, along)
        contrast = _contrast(more, less, along)
    except ValueError as err:
        return "inconclusive", {"test": f"no interval: {err}"}
    ends = "smallest − largest t" if along == "t" else "largest − smallest c"
    other = "c" if along == "t" else "t"
    reference = float(less.mean())  # the mean V_λ where less drift is expected
    verdict, fields = _every_level(
        _seed_cells(contrast),
        other,
        label=f": V_λ({ends})",
        direction=1,
        digits=3,
        negligible=DRIFT_SMALLEST_EFFECT * reference if reference > 0 else None,
    )
    if verdict == "confirmed" and not monotone:
        verdict = "inconclusive"
    fields["n"] = (f"{fields.get('n', '')} per {other} (the init modes of a seed averaged into one value)").strip()
    fields["test"] = fields.get("test", "") + "; plus: every line of cell means monotone"
    return verdict, fields


def close_to_gelu_stats(deltas: Mapping[tuple[float, int], float], margin: float) -> tuple[str, dict[str, str]]:
    """Equivalence (TOST, ``± margin``) of the matched-seed ΔBVS with 0 at every c: each c tested
    on its seeds, all must pass (intersection-union)."""

    verdict, fields = _every_level(deltas, "c", claim="equivalence", margin=margin, digits=4)
    fields["n"] = f"{fields.get('n', '')} per c, each against its own GELU seed".strip()
    return verdict, fields

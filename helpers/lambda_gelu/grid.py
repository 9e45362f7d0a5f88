"""Fig. 1 (the (t, c) grid) and Fig. 2 (the c sweep): ``Δλ(t, c)`` and ``ΔBVS(t, c)`` per cell,
their monotone trends, equal-rate runs and seed differences."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from helpers.lambda_gelu.hardness import drift_cell_average
from helpers.lambda_gelu.records import _lambda_history, _val_metrics, MODE_ABBREVIATIONS, run_info, run_table


__all__ = [
    "grid_cells",
    "grid_pivot",
    "monotone_trends",
    "count_monotone",
    "equal_rate_runs",
    "seed_differences",
]


# ---------------------------------------------------------------------------- Fig. 1 / Fig. 2
def grid_cells(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """``Δλ(t, c)`` and ``ΔBVS(t, c)`` per cell of a (t, c) grid of one pair (Fig. 1, Fig. 2).

    ``results`` holds the GELU baseline runs and the (non-annealed) λ-GELU runs of every cell.
    ``Δλ`` is :func:`helpers.lambda_gelu.hardness.drift_cell_average` (mean over seeds and modes of ``V_λ``);
    ``bvs_lambda`` the mean BVS over the same runs, ``bvs_gelu`` the mean BVS of the GELU runs,
    ``delta_bvs = bvs_lambda − bvs_gelu`` (Eq. (4)). ``c_over_t2`` is the first-order rate
    factor of Eq. (3) (see :mod:`helpers.lambda_gelu.theory`).
    """
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
        rows.append({"t": t, "c": c, "delta_lambda": drift_cell_average(histories),
                     "bvs_lambda": bvs_lambda, "bvs_gelu": bvs_gelu, "delta_bvs": bvs_lambda - bvs_gelu,
                     "n_runs": len(histories), "c_over_t2": c / t**2})
    return pd.DataFrame(rows)


def grid_pivot(cells: pd.DataFrame, value: str = "delta_lambda") -> pd.DataFrame:
    """A ``t × c`` table of one column of :func:`grid_cells` (rows t ascending, columns c)."""
    if value not in cells.columns:
        raise ValueError(f"unknown column {value!r}; choose one of {list(cells.columns)}")
    return cells.pivot(index="t", columns="c", values=value).sort_index().sort_index(axis=1)


def monotone_trends(cells: pd.DataFrame) -> pd.DataFrame:
    """The paper's two expected trends of Fig. 1, tested line by line.

    For every c (a column of the heatmap): is ``Δλ`` strictly *decreasing* as t grows ("smaller
    t → more drift")? For every t (a row): strictly *increasing* as c grows ("larger c → more
    drift")? Lines with fewer than two cells are skipped. Columns: ``along`` ("t" or "c"),
    ``fixed`` (the other parameter's value), ``values`` (Δλ in order), ``monotone``.
    """
    pivot = grid_pivot(cells)
    rows = []
    for c in pivot.columns:
        line = pivot[c].dropna().to_numpy()
        if line.size >= 2:
            rows.append({"along": "t", "fixed": float(c), "values": tuple(map(float, line)),
                         "monotone": bool(np.all(np.diff(line) < 0))})
    for t in pivot.index:
        line = pivot.loc[t].dropna().to_numpy()
        if line.size >= 2:
            rows.append({"along": "c", "fixed": float(t), "values": tuple(map(float, line)),
                         "monotone": bool(np.all(np.diff(line) > 0))})
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
    the initialisation fixes λ, hence ``u``. So two runs with the same ``c/t²`` are the same run
    in exact arithmetic, and differ only by float rounding. One row per pair of such runs:
    ``rate``, ``seed``, ``mode``, the two cells, the largest difference of any layer's λ at any
    epoch (``max_lambda_diff``, and relative to that λ, ``max_lambda_rel_diff``) and of the
    validation metric (``max_val_diff``).
    """
    if not (rel_tol >= 0):
        raise ValueError(f"rel_tol must be >= 0, got {rel_tol!r}")
    runs = [(r, run_info(r)) for r in results]
    runs = [(r, i) for r, i in runs if i.activation == "lambda_gelu" and not i.annealed]
    rows = []
    for k, (ra, a) in enumerate(runs):
        for rb, b in runs[k + 1:]:
            rate_a, rate_b = a.c / a.t**2, b.c / b.t**2
            if (a.seed, a.mode, a.pair) != (b.seed, b.mode, b.pair) or (a.t, a.c) == (b.t, b.c):
                continue
            if not math.isclose(rate_a, rate_b, rel_tol=max(rel_tol, 1e-12)):
                continue
            la, lb = _lambda_history(ra), _lambda_history(rb)
            if la.shape != lb.shape:
                raise ValueError(f"runs at c/t² = {rate_a:g} have different history shapes {la.shape}, {lb.shape}")
            diff = np.abs(la - lb)
            rows.append({"rate": rate_a, "seed": a.seed, "mode": MODE_ABBREVIATIONS[a.mode],
                         "cell_a": (a.t, a.c), "cell_b": (b.t, b.c),
                         "max_lambda_diff": float(diff.max()),
                         "max_lambda_rel_diff": float((diff / np.maximum(la, lb)).max()),
                         "max_val_diff": float(np.abs(np.subtract(_val_metrics(ra), _val_metrics(rb))).max())})
    return pd.DataFrame(rows, columns=["rate", "seed", "mode", "cell_a", "cell_b", "max_lambda_diff",
                                       "max_lambda_rel_diff", "max_val_diff"])


def seed_differences(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The same comparison as :func:`equal_rate_runs` between two *seeds* of one (t, c) cell and
    init mode: the scale of run-to-run differences that are not rounding."""
    runs = [(r, run_info(r)) for r in results]
    runs = [(r, i) for r, i in runs if i.activation == "lambda_gelu" and not i.annealed]
    rows = []
    for k, (ra, a) in enumerate(runs):
        for rb, b in runs[k + 1:]:
            if (a.pair, a.t, a.c, a.mode) != (b.pair, b.t, b.c, b.mode) or a.seed == b.seed:
                continue
            la, lb = _lambda_history(ra), _lambda_history(rb)
            diff = np.abs(la - lb)
            rows.append({"cell": (a.t, a.c), "mode": MODE_ABBREVIATIONS[a.mode], "seeds": (a.seed, b.seed),
                         "max_lambda_rel_diff": float((diff / np.maximum(la, lb)).max()),
                         "max_val_diff": float(np.abs(np.subtract(_val_metrics(ra), _val_metrics(rb))).max())})
    return pd.DataFrame(rows, columns=["cell", "mode", "seeds", "max_lambda_rel_diff", "max_val_diff"])

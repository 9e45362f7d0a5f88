"""Table I (BVS parity, mean hardness and drift per initialisation mode) and Fig. 3 (validation
curves, Spearman correlation of the hardness profiles across modes, layer profiles)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from helpers.lambda_gelu import paper
from helpers.lambda_gelu.hardness import spearman_across_modes
from helpers.lambda_gelu.protocol import PAIRS
from helpers.lambda_gelu.records import (
    _ACT_ORDER,
    _MODE_ORDER,
    _RELU_STYLE_MODELS,
    ACT_LABELS,
    BVS_TOL_ACCURACY,
    BVS_TOL_PERPLEXITY_REL,
    MODE_ABBREVIATIONS,
    MODE_PAIRS,
    RunInfo,
    _pair_order,
    _side_by_side,
    _val_metrics,
    _with_init,
    run_info,
    run_table,
)


# ------------------------------------------------------------------------------------ Table I
def table1(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Table I: per pair and activation/mode, mean ± std over seeds of BVS, mean BVS epoch, mean
    ± std of ``λ̄`` (network-wide mean of the final layerwise λ) and of the drift ``V_λ``, in the
    paper's order; annealed runs (Table II's) are left out.
    """
    table = run_table(results)
    table = table[~table["annealed"]]
    if table.empty:
        raise ValueError("no non-annealed run given")
    rows = []
    for (pair, act, mode), g in table.groupby(["pair", "act", "mode_label"], sort=False):
        rows.append(
            {
                "pair": pair,
                "paper_dataset": PAIRS[pair].paper_dataset,
                "dataset": g["dataset"].iloc[0],
                "act": act,
                "mode": mode,
                "n_seeds": int(g["seed"].nunique()),
                "epochs": int(g["epochs"].max()),
                "higher_is_better": bool(g["higher_is_better"].iloc[0]),
                "bvs": g["bvs"].mean(),
                "bvs_std": g["bvs"].std(ddof=1),
                "epoch": g["bvs_epoch"].mean(),
                "lam_mean": g["lam_bar"].mean(),
                "lam_std": g["lam_bar"].std(ddof=1),
                "drift": g["drift"].mean(),
                "drift_std": g["drift"].std(ddof=1),
            }
        )
    out = pd.DataFrame(rows)
    order = out.apply(
        lambda r: (_pair_order(r["pair"]), _ACT_ORDER.get(r["act"], 9), _MODE_ORDER.get(r["mode"], 9)), axis=1
    )
    return out.loc[order.sort_values().index].reset_index(drop=True)


def paper_table1() -> pd.DataFrame:
    """The paper's Table I (from :mod:`helpers.lambda_gelu.paper`) with :func:`table1`'s columns."""

    df = paper.table_i().rename(columns={"dataset": "paper_dataset"})
    df["higher_is_better"] = df["paper_dataset"].map(lambda d: paper.METRIC[d] != "perplexity")
    by_dataset = {spec.paper_dataset: key for key, spec in PAIRS.items()}
    df["pair"] = df["paper_dataset"].map(by_dataset)
    return df


_T1_VALUES = ("bvs", "bvs_std", "epoch", "lam_mean", "lam_std", "drift", "drift_std")


def table1_side_by_side(ours: pd.DataFrame) -> pd.DataFrame:
    """Our Table I rows beside the paper's (``<quantity>_paper``, ``<quantity>_ours``), for the pairs
    we ran."""
    paper = paper_table1()
    left = ours[["pair", "paper_dataset", "dataset", "act", "mode", "n_seeds", "epochs", *_T1_VALUES]]
    right = paper[["paper_dataset", "act", "mode", *_T1_VALUES]]
    merged = left.merge(right, on=["paper_dataset", "act", "mode"], how="left", suffixes=("_ours", "_paper"))
    cols = ["pair", "paper_dataset", "dataset", "act", "mode", "n_seeds", "epochs"]
    for v in _T1_VALUES:
        cols += [f"{v}_paper", f"{v}_ours"]
    return merged[cols]


def bvs_parity(table: pd.DataFrame) -> pd.DataFrame:
    """Per pair: GELU's BVS, the λ-GELU modes' lowest and highest BVS, the largest gap
    ``max_mode |BVS_λ − BVS_GELU|`` and whether it is within tolerance (:data:`BVS_TOL_ACCURACY`
    absolute for accuracy, :data:`BVS_TOL_PERPLEXITY_REL` relative for perplexity), of
    :func:`table1` or :func:`paper_table1`.
    """
    rows = []
    for dataset, g in table.groupby("paper_dataset", sort=False):
        gelu = g[g["act"] == "GELU"]["bvs"]
        lam = g[g["act"] == "λ-GELU"]["bvs"]
        if gelu.empty or lam.empty:
            continue
        base = float(gelu.iloc[0])
        gap = float((lam - base).abs().max())
        higher = bool(g["higher_is_better"].iloc[0])
        tol = BVS_TOL_ACCURACY if higher else BVS_TOL_PERPLEXITY_REL * base
        relu = g[g["act"] == "ReLU"]["bvs"]
        rows.append(
            {
                "pair": g["pair"].iloc[0],
                "paper_dataset": dataset,
                "higher_is_better": higher,
                "bvs_gelu": base,
                "bvs_relu": float(relu.iloc[0]) if not relu.empty else np.nan,
                "bvs_lambda_min": float(lam.min()),
                "bvs_lambda_max": float(lam.max()),
                # 1e-9: printed two-decimal values like 0.87 − 0.86 must count as a 0.01 gap
                "max_gap": gap,
                "tolerance": tol,
                "within": gap <= tol + 1e-9,
            }
        )
    return pd.DataFrame(rows)


def lambda_by_family(table: pd.DataFrame) -> pd.DataFrame:
    """Per pair (of :func:`table1` or :func:`paper_table1`): the mean over the λ-GELU modes of ``λ̄``,
    and the pair's family ("MLP/CNN" or "transformer")."""
    lam = table[table["act"] == "λ-GELU"]
    rows = []
    for pair, g in lam.groupby("pair", sort=False):
        model = PAIRS[pair].model
        rows.append(
            {
                "pair": pair,
                "paper_dataset": g["paper_dataset"].iloc[0],
                "model": model,
                "family": "MLP/CNN" if model in _RELU_STYLE_MODELS else "transformer",
                "lam_bar": float(g["lam_mean"].mean()),
            }
        )
    return pd.DataFrame(rows)


def parity_side_by_side(ours: pd.DataFrame) -> pd.DataFrame:
    """:func:`bvs_parity` of our :func:`table1` beside the paper's, one row per pair of either."""
    return _side_by_side(
        bvs_parity(ours),
        bvs_parity(paper_table1()),
        ("bvs_gelu", "bvs_lambda_min", "bvs_lambda_max", "max_gap", "within"),
    )


def family_side_by_side(ours: pd.DataFrame) -> pd.DataFrame:
    """:func:`lambda_by_family` of our :func:`table1` beside the paper's (``lam_bar paper`` /
    ``lam_bar ours``), one row per pair of either, in the paper's order."""
    paper = lambda_by_family(paper_table1())
    out = _side_by_side(lambda_by_family(ours), paper, ("lam_bar",))
    out.insert(
        2, "family", out["pair"].map(lambda p: "MLP/CNN" if PAIRS[p].model in _RELU_STYLE_MODELS else "transformer")
    )
    return out


# -------------------------------------------------------------------------------------- Fig. 3
def _table1_runs(results: Iterable[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], RunInfo]]:
    out = [(r, run_info(r)) for r in results]
    return [(r, i) for r, i in out if not i.annealed]


def validation_curves(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Fig. 3 (left): validation metric per epoch, mean and std over seeds, per pair and
    activation/mode. Long format: ``pair, act, mode, epoch, mean, std, n_seeds``."""
    groups: dict[tuple[str, str, str], list[list[float]]] = {}
    for result, info in _table1_runs(results):
        key = (
            info.pair,
            ACT_LABELS.get(info.activation, info.activation),
            MODE_ABBREVIATIONS.get(info.mode or "", "-"),
        )
        groups.setdefault(key, []).append(_val_metrics(result))
    rows = []
    for (pair, act, mode), curves in groups.items():
        if len({len(c) for c in curves}) != 1:
            raise ValueError(f"{pair} {act} {mode}: runs have different numbers of epochs")
        arr = np.asarray(curves)
        std = arr.std(axis=0, ddof=1) if len(arr) > 1 else np.full(arr.shape[1], np.nan)
        for e in range(arr.shape[1]):
            rows.append(
                {
                    "pair": pair,
                    "act": act,
                    "mode": mode,
                    "epoch": e + 1,
                    "mean": arr[:, e].mean(),
                    "std": std[e],
                    "n_seeds": len(arr),
                }
            )
    return pd.DataFrame(rows, columns=["pair", "act", "mode", "epoch", "mean", "std", "n_seeds"])


def _profiles_by_mode(results: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[int, np.ndarray]]]:
    """``{pair: {mode: {seed: [epoch(0..T), layer]}}}`` of the non-annealed λ-GELU runs."""
    out: dict[str, dict[str, dict[int, np.ndarray]]] = {}
    for result, info in _table1_runs(results):
        if info.activation != "lambda_gelu":
            continue
        by_seed = out.setdefault(info.pair, {}).setdefault(info.mode, {})
        if info.seed in by_seed:
            raise ValueError(
                f"{info.pair} {info.mode}: two runs with seed {info.seed} (pass one (t, c) cell at a time)"
            )
        by_seed[info.seed] = _with_init(result)
    return out


def spearman_curves(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Fig. 3 (right): ``ρ_S(e; m1, m2)`` per pair, pair of modes and epoch (0 = initialisation),
    from :func:`helpers.lambda_gelu.hardness.spearman_across_modes` over the seeds both modes have. NaN
    where undefined (the uniform profile is constant at epoch 0). Long format:
    ``pair, modes, epoch, rho, n_seeds``."""
    rows = []
    for pair, modes in _profiles_by_mode(results).items():
        for label, (m1, m2) in MODE_PAIRS.items():
            if m1 not in modes or m2 not in modes:
                continue
            seeds = sorted(set(modes[m1]) & set(modes[m2]))
            if not seeds:
                continue
            a = np.stack([modes[m1][s] for s in seeds])
            b = np.stack([modes[m2][s] for s in seeds])
            if a.shape[2] < 2:
                continue  # one activation layer: no ranking to compare
            rho = spearman_across_modes(a, b)
            rows += [
                {"pair": pair, "modes": label, "epoch": e, "rho": float(r), "n_seeds": len(seeds)}
                for e, r in enumerate(rho)
            ]
    return pd.DataFrame(rows, columns=["pair", "modes", "epoch", "rho", "n_seeds"])


def spearman_final(curves: pd.DataFrame) -> pd.DataFrame:
    """``ρ_S`` at the last epoch per pair and pair of modes, plus their mean (column ``mean``)."""
    if curves.empty:
        return pd.DataFrame(columns=["pair", *MODE_PAIRS, "mean"])
    last = curves.loc[curves.groupby(["pair", "modes"])["epoch"].idxmax()]
    wide = last.pivot(index="pair", columns="modes", values="rho")
    wide = wide.reindex(columns=[m for m in MODE_PAIRS if m in wide.columns])
    wide["mean"] = wide.mean(axis=1)
    wide = wide.reset_index()
    return wide.iloc[wide["pair"].map(_pair_order).argsort()].reset_index(drop=True)


def spearman_final_seeds(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Per-seed ``ρ_S`` at the last epoch: for each pair and seed, the Spearman correlation of the
    two modes' final λ profiles, averaged over the pairs of modes where it is defined: the units of
    the Fig. 3 intervals. Columns ``pair, seed, rho``."""
    rows = []
    for pair, modes in _profiles_by_mode(results).items():
        per_seed: dict[int, list[float]] = {}
        for m1, m2 in MODE_PAIRS.values():
            if m1 not in modes or m2 not in modes:
                continue
            for seed in sorted(set(modes[m1]) & set(modes[m2])):
                a, b = modes[m1][seed], modes[m2][seed]
                if a.shape[1] < 2:
                    continue
                r = float(spearman_across_modes(a[-1:], b[-1:])[-1])
                if np.isfinite(r):
                    per_seed.setdefault(seed, []).append(r)
        rows += [{"pair": pair, "seed": seed, "rho": float(np.mean(v))} for seed, v in sorted(per_seed.items())]
    return pd.DataFrame(rows, columns=["pair", "seed", "rho"])


def layer_profiles(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Final λ per layer (1-based, forward order) per pair and init mode: mean and std over
    seeds, with the initial λ. Long format: ``pair, mode, layer, lam_init, lam_final, lam_final_std``."""
    rows = []
    for pair, modes in _profiles_by_mode(results).items():
        for mode, by_seed in modes.items():
            arr = np.stack(list(by_seed.values()))  # [seed, epoch, layer]
            final = arr[:, -1]
            std = final.std(axis=0, ddof=1) if len(final) > 1 else np.full(final.shape[1], np.nan)
            for layer in range(final.shape[1]):
                rows.append(
                    {
                        "pair": pair,
                        "mode": MODE_ABBREVIATIONS[mode],
                        "layer": layer + 1,
                        "lam_init": float(arr[:, 0, layer].mean()),
                        "lam_final": float(final[:, layer].mean()),
                        "lam_final_std": float(std[layer]),
                    }
                )
    return pd.DataFrame(rows, columns=["pair", "mode", "layer", "lam_init", "lam_final", "lam_final_std"])

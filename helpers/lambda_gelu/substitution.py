"""Table II: annealing λ to λ_target (Algorithm 1) and the ReLU substitution at the
best-validation checkpoint; the paper's tables read against each other."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from helpers.lambda_gelu import paper
from helpers.lambda_gelu.profiles import paper_table1
from helpers.lambda_gelu.protocol import PAIRS
from helpers.lambda_gelu.records import _ACT_ORDER, _pair_order, _side_by_side, _with_init, run_info, run_table


# ----------------------------------------------------------------------------------- Table II
def table2(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Table II: per pair, the validation metric at the best-validation checkpoint (``original``)
    and after swapping every activation for ReLU (``substituted``), mean over seeds, for the GELU
    runs and the annealed λ-GELU runs (other runs are ignored). ``degradation`` is the change counted
    as a loss (``original − substituted`` for accuracy, the reverse for perplexity); ``lam_at_best``
    is the mean λ of the selected checkpoint.
    """
    table = run_table(results)
    keep = ((table["activation"] == "gelu") & ~table["annealed"]) | (
        (table["activation"] == "lambda_gelu") & table["annealed"]
    )
    table = table[keep]
    if table.empty:
        raise ValueError("no GELU or annealed λ-GELU run given")
    if table["original"].isna().any():
        raise ValueError("a GELU/λ-GELU result has no 'substitution' record")
    rows = []
    for (pair, act), g in table.groupby(["pair", "act"], sort=False):
        higher = bool(g["higher_is_better"].iloc[0])
        original, substituted = float(g["original"].mean()), float(g["substituted"].mean())
        rows.append(
            {
                "pair": pair,
                "paper_dataset": PAIRS[pair].paper_dataset,
                "dataset": g["dataset"].iloc[0],
                "mode": act,
                "n_seeds": int(g["seed"].nunique()),
                "higher_is_better": higher,
                "original": original,
                "substituted": substituted,
                "change": substituted - original,
                "degradation": (original - substituted) if higher else (substituted - original),
                "best_epoch": float(g["bvs_epoch"].mean()),
                "lam_at_best": float(g["lam_at_best"].mean()),
            }
        )
    out = pd.DataFrame(rows)
    order = out.apply(lambda r: (_pair_order(r["pair"]), _ACT_ORDER[r["mode"]]), axis=1)
    return out.loc[order.sort_values().index].reset_index(drop=True)


def paper_table2() -> pd.DataFrame:
    """The paper's Table II with :func:`table2`'s columns (its pairs all report accuracy)."""

    df = paper.table_ii().rename(columns={"dataset": "paper_dataset"})
    df["higher_is_better"] = df["paper_dataset"].map(lambda d: paper.METRIC[d] != "perplexity")
    df["degradation"] = np.where(
        df["higher_is_better"], df["original"] - df["substituted"], df["substituted"] - df["original"]
    )
    by_dataset = {spec.paper_dataset: key for key, spec in PAIRS.items()}
    df["pair"] = df["paper_dataset"].map(by_dataset)
    return df


def table2_side_by_side(ours: pd.DataFrame) -> pd.DataFrame:
    """Our Table II beside the paper's; the paper's columns are NaN for pairs it omits
    (GPT-2/WikiText-2), and ``in_paper`` says which."""
    paper = paper_table2()[["paper_dataset", "mode", "original", "substituted", "degradation"]]
    merged = ours.merge(paper, on=["paper_dataset", "mode"], how="left", suffixes=("_ours", "_paper"))
    merged["in_paper"] = merged["original_paper"].notna()
    return merged[
        [
            "pair",
            "paper_dataset",
            "dataset",
            "mode",
            "n_seeds",
            "in_paper",
            "original_paper",
            "original_ours",
            "substituted_paper",
            "substituted_ours",
            "degradation_paper",
            "degradation_ours",
            "best_epoch",
            "lam_at_best",
        ]
    ]


def annealing_effect(table: pd.DataFrame) -> pd.DataFrame:
    """Per pair (of :func:`table2` or :func:`paper_table2`): the degradation of both swaps, whether
    annealing reduces it, whether the annealed ReLU network beats the swapped GELU one, and
    ``anneal_cost``: how much worse than GELU the annealed model was before the swap (positive = worse)."""
    rows = []
    for pair, g in table.groupby("pair", sort=False):
        gelu, lam = g[g["mode"] == "GELU"], g[g["mode"] == "λ-GELU"]
        if gelu.empty or lam.empty:
            continue
        gelu, lam = gelu.iloc[0], lam.iloc[0]
        higher = bool(gelu["higher_is_better"])
        sign = 1.0 if higher else -1.0
        rows.append(
            {
                "pair": pair,
                "paper_dataset": gelu["paper_dataset"],
                "higher_is_better": higher,
                "gelu_degradation": float(gelu["degradation"]),
                "lambda_degradation": float(lam["degradation"]),
                "reduced": bool(lam["degradation"] < gelu["degradation"]),
                "gelu_substituted": float(gelu["substituted"]),
                "lambda_substituted": float(lam["substituted"]),
                "annealed_better_after": bool(sign * (lam["substituted"] - gelu["substituted"]) > 0),
                "anneal_cost": float(sign * (gelu["original"] - lam["original"])),
            }
        )
    return pd.DataFrame(rows)


def annealing_side_by_side(ours: pd.DataFrame) -> pd.DataFrame:
    """:func:`annealing_effect` of our :func:`table2` beside the paper's, one row per pair of
    either (paper order; ``<column> paper`` / ``<column> ours``, NaN where a side lacks the pair)."""
    return _side_by_side(
        annealing_effect(ours),
        annealing_effect(paper_table2()),
        ("gelu_degradation", "lambda_degradation", "reduced", "annealed_better_after", "anneal_cost"),
    )


def lambda_trajectories(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """λ per layer and epoch (0 = initialisation) of the annealed λ-GELU runs, mean over seeds.
    Long format: ``pair, epoch, layer, lam, switch_epoch`` (``switch_epoch`` = ``⌊0.25 T⌋``,
    the last epoch with learned λ)."""
    groups: dict[str, list[np.ndarray]] = {}
    switch: dict[str, int] = {}
    for result in results:
        info = run_info(result)
        if info.activation != "lambda_gelu" or not info.annealed:
            continue
        groups.setdefault(info.pair, []).append(_with_init(result))
        switch[info.pair] = math.floor(float(result["config"].get("anneal_switch", 0.25)) * info.epochs)
    rows = []
    for pair, arrs in groups.items():
        mean = np.mean(np.stack(arrs), axis=0)
        for e in range(mean.shape[0]):
            for layer in range(mean.shape[1]):
                rows.append(
                    {
                        "pair": pair,
                        "epoch": e,
                        "layer": layer + 1,
                        "lam": float(mean[e, layer]),
                        "switch_epoch": switch[pair],
                    }
                )
    return pd.DataFrame(rows, columns=["pair", "epoch", "layer", "lam", "switch_epoch"])


def paper_table_consistency() -> pd.DataFrame:
    """The paper against itself: Table II's GELU "Original" is, by its definition, the metric of
    the GELU best-validation checkpoint, i.e. Table I's GELU BVS. Both are printed to two
    decimals; ``consistent`` says whether the two printed values agree."""
    t1, t2 = paper_table1(), paper_table2()
    gelu1 = t1[t1["act"] == "GELU"].set_index("paper_dataset")
    gelu2 = t2[t2["mode"] == "GELU"].set_index("paper_dataset")
    rows = []
    for dataset in gelu2.index:
        a, b = float(gelu1.loc[dataset, "bvs"]), float(gelu2.loc[dataset, "original"])
        rows.append(
            {
                "paper_dataset": dataset,
                "table1_bvs": a,
                "table2_original": b,
                "consistent": math.isclose(a, b, abs_tol=1e-9),
            }
        )
    return pd.DataFrame(rows)


def our_table_consistency(t1: pd.DataFrame, t2: pd.DataFrame) -> float:
    """Largest ``|Table II GELU original − Table I GELU BVS|`` over the pairs of both tables
    (0 up to re-evaluation rounding: the substitution re-evaluates the best checkpoint)."""
    a = t1[t1["act"] == "GELU"].set_index("pair")["bvs"]
    b = t2[t2["mode"] == "GELU"].set_index("pair")["original"]
    common = a.index.intersection(b.index)
    if common.empty:
        raise ValueError("the two tables share no pair with a GELU row")
    return float((a[common] - b[common]).abs().max())

"""Display helpers of the λ-GELU pages: mean ± std cells, Table I/II as printed, scale notes, each
pair's standing against the floors and its stand-in data set."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from helpers.core.floors import floor_for, floor_table
from helpers.core.runtime import current_profile
from helpers.core.scale import arm_seeds_of
from helpers.lambda_gelu.protocol import DECISIVE_PAIRS, PAIRS, figure_scale
from helpers.lambda_gelu.records import _dataset_key, pair_label


# ------------------------------------------------------------------------------------ display
def format_pm(mean: float, std: float | None = None, digits: int = 3) -> str:
    """``"0.861 ± 0.002"``; the std in one significant digit of scientific notation when small;
    ``"–"`` for a missing mean."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    text = f"{mean:.{digits}f}"
    if std is None or (isinstance(std, float) and math.isnan(std)):
        return text
    # a std that would print as 0.000 keeps one significant digit instead
    return f"{text} ± {std:.0e}" if 0 < abs(std) < 0.5 * 10 ** (-digits) else f"{text} ± {std:.{digits}f}"


def _display_pm(df: pd.DataFrame, mean: str, std: str, digits: pd.Series) -> list[str]:
    return [format_pm(m, s, int(d)) for m, s, d in zip(df[mean], df[std], digits)]


def table1_display(side: pd.DataFrame) -> pd.DataFrame:
    """:func:`table1_side_by_side` as strings for reading: each quantity's paper value beside
    ours (mean ± std over seeds), accuracy to 3 decimals, perplexity and λ to 2."""
    digits = side["paper_dataset"].map(lambda d: 2 if d == "WikiText-2" else 3)
    two = pd.Series(2, index=side.index)  # the paper prints BVS and λ to two decimals
    out = pd.DataFrame(
        {
            "pair": [pair_label(p) for p in side["pair"]],
            "our data": side["dataset"],
            "act.": side["act"],
            "mode": side["mode"],
            "BVS paper": _display_pm(side, "bvs_paper", "bvs_std_paper", two),
            "BVS ours": _display_pm(side, "bvs_ours", "bvs_std_ours", digits),
            "Ep. paper": side["epoch_paper"].map(lambda v: "–" if pd.isna(v) else f"{v:.0f}"),
            "Ep. ours": [f"{e:.1f} / {t}" for e, t in zip(side["epoch_ours"], side["epochs"])],
            "λ̄ paper": _display_pm(side, "lam_mean_paper", "lam_std_paper", two),
            "λ̄ ours": _display_pm(side, "lam_mean_ours", "lam_std_ours", two),
            "Δλ paper": _display_pm(side, "drift_paper", "drift_std_paper", two),
            "Δλ ours": _display_pm(side, "drift_ours", "drift_std_ours", two),
        }
    )
    return out


def table2_display(side: pd.DataFrame) -> pd.DataFrame:
    """:func:`table2_side_by_side` as strings: original and substituted metric, paper and ours."""

    def fmt(v: float, d: int) -> str:
        return "–" if pd.isna(v) else f"{v:.{d}f}"

    digits = side["paper_dataset"].map(lambda d: 2 if d == "WikiText-2" else 3)
    rows = []
    for r, d in zip(side.itertuples(), digits):
        rows.append(
            {
                "pair": pair_label(r.pair),
                "our data": r.dataset,
                "mode": r.mode,
                "original paper": fmt(r.original_paper, 2),
                "original ours": fmt(r.original_ours, d),
                "substituted paper": fmt(r.substituted_paper, 2),
                "substituted ours": fmt(r.substituted_ours, d),
                "drop paper": fmt(r.degradation_paper, 2),
                "drop ours": fmt(r.degradation_ours, d),
                "best epoch (ours)": f"{r.best_epoch:.1f}",
                "λ̄ at that epoch (ours)": fmt(r.lam_at_best, 1),
            }
        )
    return pd.DataFrame(rows)


def scale_notes(pairs: Sequence[str], profile: str, *, figures: bool = False) -> pd.DataFrame:
    """What each pair changed from the paper at ``profile`` (the protocol's ``Scale.note``),
    with the data set and epochs used and the paper's gaps that we had to fill; ``figures``: at
    the scale Figs. 1-2 run at (:func:`helpers.lambda_gelu.protocol.figure_scale`)."""
    rows = []
    for pair in pairs:
        spec = PAIRS[pair]
        scale = figure_scale(pair, profile) if figures else spec.scale(profile)
        rows.append(
            {
                "pair": pair_label(pair),
                "data set used": scale.dataset,
                "epochs": scale.epochs,
                "seeds": len(scale.seeds),
                "what was scaled": scale.note or "as in the paper",
                "paper leaves open": spec.paper_gaps,
            }
        )
    return pd.DataFrame(rows)


def baseline_floors(
    runs: Sequence[dict[str, Any]], pairs: Sequence[str], profile: str, baseline: str = "gelu"
) -> pd.DataFrame:
    """The ``baseline`` runs of ``pairs`` against the floors of the cpu profile
    (:data:`helpers.core.floors.FLOORS`): reached best validation score, floor, met or missed by."""
    scales = {p: PAIRS[p].scale(profile) for p in pairs}
    labels = {(PAIRS[p].model, scales[p].dataset): pair_label(p, scales[p].dataset) for p in pairs}
    chosen = [r for r in runs if r["config"]["activation"] == baseline]
    return floor_table(chosen, labels=labels)


def decisive_scale(pairs: Sequence[str], profile: str) -> pd.DataFrame:
    """Per pair of ``pairs``: its epochs and seeds at ``profile`` (``arm_seeds``: Table I's ReLU and
    λ-GELU arms') and its ``standing``: ``"decisive"`` when it runs at the retrain's decisive cpu scale
    (:data:`~helpers.lambda_gelu.protocol.DECISIVE_PAIRS`), else ``"below floor"`` or ``"no floor"``
    (the floors of :mod:`helpers.core.floors` apply to the cpu profile only)."""
    unknown = [p for p in pairs if p not in PAIRS]
    if unknown:
        raise ValueError(f"unknown pair(s) {unknown}; choose from {list(PAIRS)}")
    rows = []
    for pair in pairs:
        spec = PAIRS[pair]
        scale = spec.scale(current_profile(profile))
        if pair in DECISIVE_PAIRS:
            standing = "decisive"
        else:
            standing = "no floor" if floor_for(spec.model, scale.dataset) is None else "below floor"
        seeds = {"seeds": len(scale.seeds), "arm_seeds": len(arm_seeds_of(scale))}
        rows.append({"pair": pair_label(pair), "epochs": scale.epochs, **seeds, "standing": standing})
    return pd.DataFrame(rows, columns=["pair", "epochs", "seeds", "arm_seeds", "standing"])


def stand_ins(pairs: Sequence[str], profile: str) -> list[tuple[str, str, str]]:
    """``(data set used, the paper's data set, pair label)`` of each pair of ``pairs`` that runs on a
    stand-in data set at ``profile``."""
    out = []
    for pair in pairs:
        spec = PAIRS[pair]
        used = spec.scale(profile).dataset
        if _dataset_key(used) != _dataset_key(spec.paper_dataset):
            out.append((used, spec.paper_dataset, pair_label(pair)))
    return out

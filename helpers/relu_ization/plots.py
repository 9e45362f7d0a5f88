"""The ReLU-ization chapter's figures (one function per figure; each returns the figure)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from helpers.relu_ization.analysis import scale
from helpers.relu_ization.protocol import ARM_LABELS, ARMS

ARM_COLORS: dict[str, str] = {
    "gelu": "#7f7f7f",
    "gelu_swap": "#bcbd22",
    "lgelu_anneal": "#1f77b4",
    "srelu_anneal": "#2ca02c",
    "relu": "#d62728",
    "lgelu_layerwise": "#9467bd",
}


def sparsity_by_layer(frame: pd.DataFrame, title: str = "") -> plt.Figure:
    """Exact-zero fraction after each activation site (mean over seeds, bars: min–max), one line
    per arm as deployed; dashed: the smooth network of an annealed arm before its swap."""
    if frame.empty:
        raise ValueError("no sparsity rows")
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    for arm in ARMS:
        for stage, style in (("deployed", "-"), ("before swap", "--")):
            g = frame[(frame["arm"] == arm) & (frame["stage"] == stage)]
            if g.empty:
                continue
            stats = g.groupby("layer")["zero_fraction"].agg(["mean", "min", "max"])
            x = stats.index.to_numpy()
            label = ARM_LABELS[arm] + (" (before swap)" if stage == "before swap" else "")
            ax.errorbar(
                x,
                100 * stats["mean"],
                yerr=[100 * (stats["mean"] - stats["min"]), 100 * (stats["max"] - stats["mean"])],
                color=ARM_COLORS[arm],
                linestyle=style,
                marker="o" if stage == "deployed" else "x",
                ms=3,
                capsize=2,
                lw=1.2,
                label=label,
            )
    ax.set_xlabel("activation site (input → output)")
    ax.set_ylabel("exact zeros (%)")
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2, loc="best")
    fig.tight_layout()
    return fig


def arm_metrics(rows: pd.DataFrame, title: str = "") -> plt.Figure:
    """Each arm's deployed float32 metric and its int8 metric, one dot per seed (hollow: the
    smooth network before its swap)."""
    if rows.empty:
        raise ValueError("no rows")
    hib = bool(rows["higher_is_better"].iloc[0])
    k = scale(hib)
    fig, ax = plt.subplots(figsize=(7.0, 3.4))
    arms = [a for a in ARMS if a in set(rows["arm"])]
    for i, arm in enumerate(arms):
        g = rows[rows["arm"] == arm]
        jitter = np.linspace(-0.08, 0.08, len(g)) if len(g) > 1 else np.zeros(1)
        ax.scatter(i - 0.15 + jitter, k * g["value"], color=ARM_COLORS[arm], s=16, label="float32" if i == 0 else None)
        ax.scatter(
            i + 0.15 + jitter, k * g["int8"], color=ARM_COLORS[arm], marker="s", s=16, label="int8" if i == 0 else None
        )
        if g["before"].notna().any():
            ax.scatter(
                i - 0.15 + jitter,
                k * g["before"],
                facecolors="none",
                edgecolors=ARM_COLORS[arm],
                s=16,
                label="before swap" if arm == "gelu_swap" else None,
            )
    ax.set_xticks(range(len(arms)), [ARM_LABELS[a].replace(" → ", "\n→ ") for a in arms], fontsize=7)
    ax.set_ylabel("accuracy (%)" if hib else "perplexity")
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def regions_by_arm(frame: pd.DataFrame, title: str = "") -> plt.Figure:
    """Linear regions crossed per line (each dot: one seed's mean over the lines)."""
    if frame.empty:
        raise ValueError("no region rows")
    per = frame.groupby(["arm", "seed"], sort=False)["pieces"].mean().reset_index()
    arms = [a for a in ARMS if a in set(per["arm"])]
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    for i, arm in enumerate(arms):
        v = per[per["arm"] == arm]["pieces"].to_numpy()
        ax.scatter(np.full(len(v), i) + np.linspace(-0.1, 0.1, len(v)), v, color=ARM_COLORS[arm], s=18)
        ax.hlines(v.mean(), i - 0.25, i + 0.25, color=ARM_COLORS[arm])
    ax.set_xticks(range(len(arms)), [ARM_LABELS[a].replace(" → ", "\n→ ") for a in arms], fontsize=7)
    ax.set_ylabel("regions crossed per line")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def layer_targets(frame: pd.DataFrame, global_target: float, title: str = "") -> plt.Figure:
    """Per-layer λ targets of arm (vi) (mean over seeds, bars: min–max) against the global λ_target."""
    if frame.empty:
        raise ValueError("no per-layer target rows")
    stats = frame.groupby("layer")["target"].agg(["mean", "min", "max"])
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    x = stats.index.to_numpy()
    ax.errorbar(
        x,
        stats["mean"],
        yerr=[stats["mean"] - stats["min"], stats["max"] - stats["mean"]],
        marker="o",
        color=ARM_COLORS["lgelu_layerwise"],
        capsize=3,
        label="per-layer target (vi)",
    )
    ax.axhline(global_target, color=ARM_COLORS["lgelu_anneal"], ls="--", label=f"global λ_target ≈ {global_target:.0f}")
    ax.set_yscale("log")
    ax.set_xlabel("λ-GELU layer (input → output)")
    ax.set_ylabel("λ at the end of annealing")
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig

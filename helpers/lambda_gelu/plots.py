"""The λ-GELU figures: Fig. 1 heatmaps, drift against rate, Fig. 3 trajectories and Spearman
curves, layer profiles, annealed λ and the substitution drop."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from matplotlib.ticker import MaxNLocator

# Inputs are the DataFrames of helpers.lambda_gelu.grid, .profiles and .substitution; each function
# returns the figure (the caller shows it).

_LGELU_MODE_STYLE = {"uni": ("C0", "-"), "inc": ("C1", "--"), "dec": ("C2", "-."), "-": ("k", "-")}
_LGELU_ACT_COLOR = {"GELU": "k", "ReLU": "C3"}


def _pair_panels(pairs: Sequence[str], ncols: int, size: tuple[float, float]) -> tuple[plt.Figure, np.ndarray]:
    """One panel per pair (the spare ones switched off); no pair is an error."""
    if not (n := len(pairs)):
        raise ValueError("no pair to plot")
    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_axis_off()
    return fig, axes


def lgelu_tc_heatmap(
    drift: pd.DataFrame,
    delta_bvs: pd.DataFrame,
    *,
    ax: plt.Axes | None = None,
    title: str | None = None,
    cmap: str = "viridis",
    digits: int = 3,
) -> plt.Figure:
    """Fig. 1/2 of the λ-GELU paper: colour = ``Δλ(t, c)``, cell text = ``ΔBVS(t, c)``, from two
    ``t × c`` tables of :func:`helpers.lambda_gelu.grid.grid_pivot`; NaN cells stay blank."""
    if not isinstance(drift, pd.DataFrame) or not isinstance(delta_bvs, pd.DataFrame):
        raise TypeError("drift and delta_bvs must be DataFrames from lgelu_analysis.grid_pivot")
    if drift.shape != delta_bvs.shape or not (
        drift.index.equals(delta_bvs.index) and drift.columns.equals(delta_bvs.columns)
    ):
        raise ValueError("drift and delta_bvs must have the same t index and c columns")
    if drift.empty:
        raise ValueError("empty grid")
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.3 * drift.shape[1] + 2.2, 0.9 * drift.shape[0] + 1.4))
    else:
        fig = ax.figure
    values = drift.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    # a log colour scale keeps the small cells readable when the drifts span orders of magnitude
    log = bool(finite.size) and finite.min() > 0 and finite.max() / finite.min() > 50
    norm = LogNorm(finite.min(), finite.max()) if log else None
    image = ax.imshow(values, cmap=cmap, aspect="auto", norm=norm)
    if log:
        middle = float(np.sqrt(finite.min() * finite.max()))
    else:
        middle = (finite.min() + finite.max()) / 2 if finite.size else 0.0
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            d = delta_bvs.iat[i, j]
            if np.isfinite(d):
                ax.text(
                    j,
                    i,
                    f"{d:+.{digits}f}",
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if values[i, j] < middle else "black",
                )
    ax.set_xticks(range(values.shape[1]), [f"{c:g}" for c in drift.columns])
    ax.set_yticks(range(values.shape[0]), [f"{t:g}" for t in drift.index])
    ax.set_xlabel(r"$c$  ($\eta_s = c\,\eta_w$)")
    ax.set_ylabel(r"$t$  (softplus temperature)")
    if title:
        ax.set_title(title)
    fig.colorbar(image, ax=ax, label=r"$\Delta\lambda(t, c)$  (mean drift $V_\lambda$)")
    fig.tight_layout()
    return fig


def lgelu_drift_vs_rate(cells: pd.DataFrame, *, ax: plt.Axes | None = None) -> plt.Figure:
    """``Δλ`` of every (t, c) cell against ``c/t²``, the factor through which (t, c) enter the
    first-order λ update (Eq. (3)); one marker colour per t."""
    for col in ("t", "c", "delta_lambda", "c_over_t2"):
        if col not in cells.columns:
            raise ValueError(f"cells needs a {col!r} column (from lgelu_analysis.grid_cells)")
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.6, 3.8))
    else:
        fig = ax.figure
    for k, (t, g) in enumerate(cells.groupby("t")):
        g = g.sort_values("c")
        ax.plot(g["c_over_t2"], g["delta_lambda"], "o-", color=f"C{k}", label=f"t = {t:g}")
    ax.set_xscale("log")
    ax.set_xlabel(r"$c/t^2$")
    ax.set_ylabel(r"$\Delta\lambda(t, c)$")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    return fig


def lgelu_trajectories_and_spearman(
    curves: pd.DataFrame,
    rho: pd.DataFrame,
    bvs_epochs: pd.DataFrame,
    pairs: Sequence[str],
    labels: dict[str, str] | None = None,
    *,
    metric_labels: dict[str, str] | None = None,
) -> plt.Figure:
    """Fig. 3 of the λ-GELU paper: per pair, the validation curves (mean ± std over seeds, dotted at
    each mean BVS epoch) on the left, ``ρ_S`` per pair of init modes on the right. ``bvs_epochs``:
    rows with ``pair, act, mode, epoch`` (e.g. ``table1``).
    """
    if not pairs:
        raise ValueError("no pair to plot")
    labels = labels or {}
    metric_labels = metric_labels or {}
    fig, axes = plt.subplots(len(pairs), 2, figsize=(10.5, 2.6 * len(pairs)), squeeze=False)
    for row, pair in enumerate(pairs):
        left, right = axes[row]
        sub = curves[curves["pair"] == pair]
        for (act, mode), g in sub.groupby(["act", "mode"], sort=False):
            color, style = (_LGELU_ACT_COLOR[act], ":") if act in _LGELU_ACT_COLOR else _LGELU_MODE_STYLE[mode]
            name = act if mode == "-" else f"λ-GELU {mode}"
            left.plot(g["epoch"], g["mean"], style, color=color, marker="o", ms=2.5, label=name)
            if g["std"].notna().any():
                left.fill_between(g["epoch"], g["mean"] - g["std"], g["mean"] + g["std"], color=color, alpha=0.15)
            mark = bvs_epochs[(bvs_epochs["pair"] == pair) & (bvs_epochs["act"] == act) & (bvs_epochs["mode"] == mode)]
            for e in mark["epoch"]:
                left.axvline(e, color=color, ls=":", lw=0.8)
        left.set_ylabel(metric_labels.get(pair, "validation metric"))
        left.set_title(labels.get(pair, pair), fontsize=10)
        left.grid(alpha=0.3)
        r = rho[rho["pair"] == pair]
        for k, (modes, g) in enumerate(r.groupby("modes", sort=False)):
            right.plot(g["epoch"], g["rho"], "o-", ms=3, color=f"C{k + 4}", label=modes)
        right.set_ylim(-1.05, 1.05)
        right.axhline(0, color="k", lw=0.5)
        right.set_ylabel(r"$\rho_S$")
        right.set_title(f"{labels.get(pair, pair)}: layer-ranking agreement", fontsize=10)
        right.grid(alpha=0.3)
        for ax in (left, right):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if row == 0:
            for ax, ncol in ((left, 2), (right, 1)):
                if ax.get_legend_handles_labels()[0]:
                    ax.legend(fontsize=7, ncol=ncol)
    axes[-1, 0].set_xlabel("epoch")
    axes[-1, 1].set_xlabel("epoch (0 = initialisation)")
    fig.tight_layout()
    return fig


def lgelu_layer_profiles(
    profiles: pd.DataFrame, pairs: Sequence[str], labels: dict[str, str] | None = None, *, ncols: int = 3
) -> plt.Figure:
    """Final λ per layer for each init mode (mean ± std over seeds; dashed: the initial λ),
    one panel per pair. ``profiles``: :func:`helpers.lambda_gelu.profiles.layer_profiles`."""
    labels = labels or {}
    fig, axes = _pair_panels(pairs, ncols, (3.8, 2.9))
    for ax, pair in zip(axes.flat, pairs):
        sub = profiles[profiles["pair"] == pair]
        for mode, g in sub.groupby("mode", sort=False):
            color, _ = _LGELU_MODE_STYLE.get(mode, ("k", "-"))
            ax.errorbar(
                g["layer"],
                g["lam_final"],
                yerr=g["lam_final_std"].fillna(0.0),
                fmt="o-",
                ms=3,
                color=color,
                capsize=2,
                label=f"{mode} (final)",
            )
            ax.plot(g["layer"], g["lam_init"], "--", color=color, lw=0.8, alpha=0.7)
        ax.set_title(labels.get(pair, pair), fontsize=10)
        ax.set_xlabel("activation layer (input → output)")
        ax.set_ylabel(r"final $\lambda_\ell$")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def lgelu_annealing_lambdas(
    trajectories: pd.DataFrame,
    pairs: Sequence[str],
    target: float,
    labels: dict[str, str] | None = None,
    *,
    ncols: int = 3,
) -> plt.Figure:
    """λ per layer and epoch under Algorithm 1 (mean over seeds; log scale), one panel per pair,
    with the switch epoch ⌊0.25T⌋ and λ_target marked. ``trajectories``:
    :func:`helpers.lambda_gelu.substitution.lambda_trajectories`."""
    labels = labels or {}
    fig, axes = _pair_panels(pairs, ncols, (3.8, 2.9))
    for ax, pair in zip(axes.flat, pairs):
        sub = trajectories[trajectories["pair"] == pair]
        layers = sorted(sub["layer"].unique())
        cmap = plt.get_cmap("viridis")
        for k, layer in enumerate(layers):
            g = sub[sub["layer"] == layer]
            ax.plot(g["epoch"], g["lam"], color=cmap(k / max(len(layers) - 1, 1)), lw=1)
        if not sub.empty:
            ax.axvline(sub["switch_epoch"].iloc[0], color="k", ls=":", lw=0.8, label="switch ⌊0.25T⌋")
        ax.axhline(target, color="C3", ls="--", lw=0.8, label=r"$\lambda_{\mathrm{target}}$")
        ax.set_yscale("log")
        ax.set_title(labels.get(pair, pair), fontsize=10)
        ax.set_xlabel("epoch (0 = initialisation)")
        ax.set_ylabel(r"$\lambda_\ell$ (one line per layer)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3, which="both")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def lgelu_substitution_drop(
    ours: pd.DataFrame, paper: pd.DataFrame | None = None, labels: dict[str, str] | None = None
) -> plt.Figure:
    """Drop of the validation metric when every activation is swapped for ReLU: direct GELU swap
    vs annealed λ-GELU, ours (filled) beside the paper's (hatched). Inputs:
    :func:`helpers.lambda_gelu.substitution.annealing_effect` of our table and of the paper's.
    Perplexity drops are on another scale: pass accuracy pairs only."""
    if ours.empty:
        raise ValueError("no pair to plot")
    labels = labels or {}
    pairs = list(ours["pair"])
    x = np.arange(len(pairs))
    fig, ax = plt.subplots(figsize=(1.6 * len(pairs) + 2.5, 3.4))
    width = 0.2
    sources = [(ours, -1.5, {}, "ours")]
    if paper is not None:
        sources.append((paper.set_index("pair").reindex(pairs), 0.5, {"alpha": 0.4, "hatch": "//"}, "paper"))
    for frame, offset, style, who in sources:
        for i, (column, color, what) in enumerate((("gelu", "0.4", "GELU"), ("lambda", "C0", "annealed λ-GELU"))):
            bar = frame[f"{column}_degradation"]
            ax.bar(x + (offset + i) * width, bar, width, color=color, label=f"{what} → ReLU ({who})", **style)
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xticks(x, [labels.get(p, p) for p in pairs], fontsize=8)
    ax.set_ylabel("drop of the validation metric")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig

"""Small plotting helpers shared by the notebooks (one function per kind of figure)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.colors import LogNorm
from matplotlib.ticker import MaxNLocator
import numpy as np
import pandas as pd
import torch


def show_image_grid(
    images: torch.Tensor | np.ndarray,
    labels: Sequence[int] | torch.Tensor | None = None,
    class_names: Sequence[str] | None = None,
    *,
    ncols: int = 8,
    cell_size: float = 1.2,
    cmap: str = "gray",
) -> plt.Figure:
    """A grid of images, each titled with its class name (or label) when given.

    ``images`` is ``N×C×H×W`` (C = 1 or 3) or ``N×H×W`` with values in ``[0, 1]`` (use
    ``DataSplits.unnormalize`` first for normalised tensors). Returns the figure; the caller
    shows or saves it.
    """
    array = (
        images.detach().cpu().numpy() if isinstance(images, torch.Tensor) else np.asarray(images)
    )
    if array.ndim == 4:
        if array.shape[1] not in (1, 3):
            raise ValueError(f"images must have 1 or 3 channels, got shape {array.shape}")
        array = array.transpose(0, 2, 3, 1)
        if array.shape[-1] == 1:
            array = array[..., 0]
    elif array.ndim != 3:
        raise ValueError(f"images must be N×C×H×W or N×H×W, got shape {array.shape}")
    n = len(array)
    if n == 0:
        raise ValueError("no images to show")
    if not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"ncols must be a positive int, got {ncols!r}")
    if labels is not None:
        labels = [int(v) for v in labels]
        if len(labels) != n:
            raise ValueError(f"{len(labels)} labels for {n} images")
        if class_names is not None and any(not 0 <= v < len(class_names) for v in labels):
            raise ValueError(f"a label is outside [0, {len(class_names)}) of class_names")
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(cell_size * ncols, (cell_size + 0.25) * nrows), squeeze=False
    )
    for i, ax in enumerate(axes.flat):
        ax.set_axis_off()
        if i >= n:
            continue
        ax.imshow(
            np.clip(array[i], 0.0, 1.0),
            cmap=cmap if array.ndim == 3 else None,
            vmin=0.0,
            vmax=1.0,
            interpolation="nearest",
        )
        if labels is not None:
            title = class_names[labels[i]] if class_names is not None else str(labels[i])
            ax.set_title(title, fontsize=8)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------ λ-GELU experiments
# Figures of notebooks 10-12 (λ-GELU paper, Section IV). Inputs are the DataFrames of
# helpers.lgelu_analysis; every function returns the figure and leaves showing it to the caller.

_LGELU_MODE_STYLE = {"uni": ("C0", "-"), "inc": ("C1", "--"), "dec": ("C2", "-."),
                     "-": ("k", "-")}
_LGELU_ACT_COLOR = {"GELU": "k", "ReLU": "C3"}


def _lgelu_axes(n: int, ncols: int, size: tuple[float, float]) -> tuple[plt.Figure, np.ndarray]:
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
    """Fig. 1/2 of the λ-GELU paper: colour = ``Δλ(t, c)``, cell text = ``ΔBVS(t, c)``.

    The colour scale is logarithmic when the drifts are positive and span more than a factor 50.

    ``drift`` and ``delta_bvs`` are ``t × c`` tables (:func:`helpers.lgelu_analysis.grid_pivot`)
    with the same index and columns; NaN cells stay blank.
    """
    if not isinstance(drift, pd.DataFrame) or not isinstance(delta_bvs, pd.DataFrame):
        raise TypeError("drift and delta_bvs must be DataFrames from lgelu_analysis.grid_pivot")
    if drift.shape != delta_bvs.shape or not (drift.index.equals(delta_bvs.index)
                                              and drift.columns.equals(delta_bvs.columns)):
        raise ValueError("drift and delta_bvs must have the same t index and c columns")
    if drift.empty:
        raise ValueError("empty grid")
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.3 * drift.shape[1] + 2.2, 0.9 * drift.shape[0] + 1.4))
    else:
        fig = ax.figure
    values = drift.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    # drifts can span orders of magnitude across the grid: a log colour scale keeps the small
    # cells readable (only when every drift is positive)
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
                ax.text(j, i, f"{d:+.{digits}f}", ha="center", va="center", fontsize=9,
                        color="white" if values[i, j] < middle else "black")
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
    """Fig. 3 of the λ-GELU paper: per pair, validation metric per epoch (mean ± std band over
    seeds, one line per activation/mode, dotted vertical line at each mean BVS epoch) on the
    left, and ``ρ_S`` per pair of init modes on the right.

    ``curves``: :func:`helpers.lgelu_analysis.validation_curves`; ``rho``: ``spearman_curves``;
    ``bvs_epochs``: rows with ``pair, act, mode, epoch`` (e.g. ``table1``).
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
    one panel per pair. ``profiles``: :func:`helpers.lgelu_analysis.layer_profiles`."""
    if not pairs:
        raise ValueError("no pair to plot")
    labels = labels or {}
    fig, axes = _lgelu_axes(len(pairs), ncols, (3.8, 2.9))
    for ax, pair in zip(axes.flat, pairs):
        sub = profiles[profiles["pair"] == pair]
        for mode, g in sub.groupby("mode", sort=False):
            color, _ = _LGELU_MODE_STYLE.get(mode, ("k", "-"))
            ax.errorbar(g["layer"], g["lam_final"], yerr=g["lam_final_std"].fillna(0.0), fmt="o-", ms=3,
                        color=color, capsize=2, label=f"{mode} (final)")
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
    :func:`helpers.lgelu_analysis.lambda_trajectories`."""
    if not pairs:
        raise ValueError("no pair to plot")
    labels = labels or {}
    fig, axes = _lgelu_axes(len(pairs), ncols, (3.8, 2.9))
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


def lgelu_substitution_drop(ours: pd.DataFrame, paper: pd.DataFrame | None = None,
                            labels: dict[str, str] | None = None) -> plt.Figure:
    """Drop of the validation metric when every activation is swapped for ReLU: direct GELU swap
    vs annealed λ-GELU, ours (filled) beside the paper's (hatched). Inputs:
    :func:`helpers.lgelu_analysis.annealing_effect` of our table and of the paper's. Perplexity
    drops (positive = worse) are on a separate axis scale, so pass accuracy pairs only or read
    the table."""
    if ours.empty:
        raise ValueError("no pair to plot")
    labels = labels or {}
    pairs = list(ours["pair"])
    x = np.arange(len(pairs))
    fig, ax = plt.subplots(figsize=(1.6 * len(pairs) + 2.5, 3.4))
    width = 0.2
    ax.bar(x - 1.5 * width, ours["gelu_degradation"], width, color="0.4", label="GELU → ReLU (ours)")
    ax.bar(x - 0.5 * width, ours["lambda_degradation"], width, color="C0", label="annealed λ-GELU → ReLU (ours)")
    if paper is not None:
        p = paper.set_index("pair").reindex(pairs)
        ax.bar(x + 0.5 * width, p["gelu_degradation"], width, color="0.4", alpha=0.4, hatch="//",
               label="GELU → ReLU (paper)")
        ax.bar(x + 1.5 * width, p["lambda_degradation"], width, color="C0", alpha=0.4, hatch="//",
               label="annealed λ-GELU → ReLU (paper)")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xticks(x, [labels.get(p, p) for p in pairs], fontsize=8)
    ax.set_ylabel("drop of the validation metric")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------ Flex-Act
_FLEXACT_COLORS = {
    "relu": "tab:blue", "sigmoid": "tab:orange", "tanh": "tab:green",
    "leaky_relu": "tab:red", "identity": "tab:purple",
}


def plot_selection_trajectories(
    panels: dict[str, dict],
    *,
    ncols: int | None = None,
    panel_size: tuple[float, float] = (3.2, 2.6),
    display: dict[str, str] | None = None,
) -> plt.Figure:
    """Flex-Act selection probabilities over epochs, one panel per entry of ``panels``.

    Each value is :func:`helpers.flexact_experiments.trajectories` output (``epochs``,
    ``probs`` of shape seeds × epochs × candidates, ``candidates``). A line is the mean over
    seeds, the band spans the seeds' minimum to maximum. Returns the figure.
    """
    if not panels:
        raise ValueError("no panels to plot")
    display = display or {}
    n = len(panels)
    ncols = min(ncols or n, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size[0] * ncols, panel_size[1] * nrows),
                             squeeze=False, sharey=True)
    for ax, (title, traj) in zip(axes.flat, panels.items()):
        probs = np.asarray(traj["probs"], dtype=float)
        if probs.ndim != 3:
            raise ValueError(f"panel {title!r}: probs must be seeds × epochs × candidates, got {probs.shape}")
        epochs = np.asarray(traj["epochs"])
        for j, name in enumerate(traj["candidates"]):
            color = _FLEXACT_COLORS.get(name)
            ax.plot(epochs, probs[:, :, j].mean(axis=0), color=color, label=display.get(name, name))
            ax.fill_between(epochs, probs[:, :, j].min(axis=0), probs[:, :, j].max(axis=0),
                            color=color, alpha=0.15, linewidth=0)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("epoch")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("selection probability")
    for ax in list(axes.flat)[n:]:
        ax.set_axis_off()
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def plot_function_fits(
    panels: dict[str, dict],
    *,
    ncols: int | None = None,
    panel_size: tuple[float, float] = (3.2, 2.6),
) -> plt.Figure:
    """Predictions against the informative input, one panel per ground truth.

    Each value holds ``x`` (grid), ``truth`` (target on the grid) and ``fits``
    (``{label: predictions on the grid}``). The truth is drawn thick and grey underneath.
    """
    if not panels:
        raise ValueError("no panels to plot")
    n = len(panels)
    ncols = min(ncols or n, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size[0] * ncols, panel_size[1] * nrows),
                             squeeze=False)
    for ax, (title, panel) in zip(axes.flat, panels.items()):
        x = np.asarray(panel["x"], dtype=float)
        ax.plot(x, panel["truth"], color="0.6", linewidth=5, alpha=0.6, label="truth")
        for label, pred in panel["fits"].items():
            flex = label.startswith("Flex-Act")  # drawn solid, thicker and on top of the fixed models
            ax.plot(x, pred, "-" if flex else "--", linewidth=1.8 if flex else 1.0,
                    zorder=3 if flex else 2, label=label)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("$x_1$ (other features 0)")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("prediction")
    for ax in list(axes.flat)[n:]:
        ax.set_axis_off()
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 5), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


# ------------------------------------------------------------ accuracy tables (S-ReLU, Flex-Act)
# Figures of notebooks 20, 21 and 31. Inputs are the frames of helpers.experiment_tables.


def plot_sweep_errorbars(
    panels: dict[str, dict[str, pd.DataFrame]],
    *,
    x: str = "x",
    logx: bool = True,
    xlabel: str = "",
    ylabel: str = "accuracy (%)",
    panel_size: tuple[float, float] = (4.2, 3.2),
) -> plt.Figure:
    """Mean ± std against a swept parameter, one panel per entry of ``panels``.

    Each panel maps a series label to a frame with columns ``x`` (the parameter), ``mean`` and
    ``std`` (NaN std: no error bar, e.g. a single seed). Panels have their own y-axis, because a
    scaled run and the paper's full run differ in level and only the shapes compare.
    """
    if not panels:
        raise ValueError("no panels to plot")
    fig, axes = plt.subplots(1, len(panels), figsize=(panel_size[0] * len(panels), panel_size[1]),
                             squeeze=False)
    markers = ("o", "s", "^", "D", "v")
    for ax, (title, series) in zip(axes.flat, panels.items()):
        if not series:
            raise ValueError(f"panel {title!r} has no series")
        for i, (label, frame) in enumerate(series.items()):
            missing = {x, "mean", "std"} - set(frame.columns)
            if missing:
                raise ValueError(f"series {label!r} lacks columns {sorted(missing)}")
            frame = frame.sort_values(x)
            std = frame["std"].to_numpy(float)
            ax.errorbar(frame[x], frame["mean"], yerr=np.where(np.isfinite(std), std, 0.0),
                        marker=markers[i % len(markers)], capsize=3, linewidth=1.2, markersize=4,
                        label=label)
        if logx:
            ax.set_xscale("log")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def plot_training_curves(
    panels: dict[str, pd.DataFrame],
    *,
    metrics: Sequence[str] = ("val_metric", "train_loss"),
    metric_labels: dict[str, str] | None = None,
    labels: dict | None = None,
    panel_size: tuple[float, float] = (4.2, 2.8),
) -> plt.Figure:
    """Training curves: one column per panel, one row per metric, one line per group.

    Each value is a :func:`helpers.experiment_tables.training_curves` frame (columns ``group``,
    ``epoch``, ``<metric>_mean``, ``<metric>_std``); lines are means over seeds, bands ± one std.
    ``labels`` maps a group to its legend label.
    """
    if not panels:
        raise ValueError("no panels to plot")
    metric_labels = {"val_metric": "validation accuracy (%)", "train_loss": "training loss",
                     "val_loss": "validation loss", **(metric_labels or {})}
    labels = labels or {}
    fig, axes = plt.subplots(len(metrics), len(panels),
                             figsize=(panel_size[0] * len(panels), panel_size[1] * len(metrics)),
                             squeeze=False, sharex="col")
    for j, (title, curves) in enumerate(panels.items()):
        for i, metric in enumerate(metrics):
            ax = axes[i, j]
            if f"{metric}_mean" not in curves.columns:
                raise ValueError(f"panel {title!r} has no {metric!r} curve")
            for k, (group, frame) in enumerate(curves.groupby("group", sort=False)):
                mean = frame[f"{metric}_mean"].to_numpy(float)
                std = frame[f"{metric}_std"].to_numpy(float)
                color = f"C{k % 10}"
                ax.plot(frame["epoch"], mean, color=color, marker=".", label=labels.get(group, str(group)))
                ok = np.isfinite(std)
                if ok.any():
                    ax.fill_between(frame["epoch"][ok], (mean - std)[ok], (mean + std)[ok], color=color,
                                    alpha=0.15, linewidth=0)
            ax.grid(alpha=0.3)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if i == 0:
                ax.set_title(title, fontsize=9)
            if j == 0:
                ax.set_ylabel(metric_labels.get(metric, metric))
            if i == len(metrics) - 1:
                ax.set_xlabel("epoch")
    handles, legend = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, legend, loc="lower center", ncol=min(len(legend), 8), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07 if len(metrics) > 1 else 0.12, 1, 1))
    return fig


def plot_selection_with_target(
    panels: dict[str, dict],
    *,
    display: dict[str, str] | None = None,
    panel_size: tuple[float, float] = (3.4, 2.8),
) -> plt.Figure:
    """Flex-Act selection probabilities (solid) and the regulariser's target p̃ (dashed) per epoch,
    one panel per entry, on a y-axis fitted to the data (small moves away from uniform stay visible).

    Each value is :func:`helpers.experiment_tables.flexact_trajectory` output for one run
    (``epochs``, ``probs`` of shape 1 × (E+1) × K, ``pseudo_probs`` of shape 1 × E × K,
    ``candidates``).
    """
    if not panels:
        raise ValueError("no panels to plot")
    display = display or {}
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(panel_size[0] * n, panel_size[1]), squeeze=False, sharey=True)
    for ax, (title, traj) in zip(axes.flat, panels.items()):
        probs = np.asarray(traj["probs"], dtype=float)
        target = np.asarray(traj["pseudo_probs"], dtype=float)
        if probs.ndim != 3 or probs.shape[0] != 1 or target.shape[0] != 1:
            raise ValueError(f"panel {title!r}: expected the trajectory of one run, got probs {probs.shape}")
        epochs = np.asarray(traj["epochs"])
        for j, name in enumerate(traj["candidates"]):
            color = _FLEXACT_COLORS.get(name)
            ax.plot(epochs, probs[0, :, j], color=color, marker=".", label=display.get(name, name))
            ax.plot(epochs[1:], target[0, :, j], color=color, linestyle="--", linewidth=0.9)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("probability")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    handles.append(plt.Line2D([], [], color="0.3", linestyle="--", linewidth=0.9))
    labels.append("target p̃ (dashed)")
    ncol = len(labels) if n > 1 else 3  # one narrow panel: wrap the legend
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.12 if n > 1 else 0.22, 1, 1))
    return fig

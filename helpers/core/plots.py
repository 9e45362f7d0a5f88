"""Small plotting helpers shared by the notebooks (one function per kind of figure); the
methods' own figures are in ``helpers/<method>/plots.py``."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.ticker import MaxNLocator


def show_image_grid(
    images: torch.Tensor | np.ndarray,
    labels: Sequence[int] | torch.Tensor | None = None,
    class_names: Sequence[str] | None = None,
    *,
    ncols: int = 8,
    cell_size: float = 1.2,
    cmap: str = "gray",
) -> plt.Figure:
    """A grid of images (``N×C×H×W``, C = 1 or 3, or ``N×H×W``, in ``[0, 1]``), each titled with its
    class name when given; returns the figure."""
    array = images.detach().cpu().numpy() if isinstance(images, torch.Tensor) else np.asarray(images)
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
    fig, axes = plt.subplots(nrows, ncols, figsize=(cell_size * ncols, (cell_size + 0.25) * nrows), squeeze=False)
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


# ------------------------------------------------------------ accuracy tables (S-ReLU, Flex-Act)
# Figures of notebooks 20, 21 and 31. Inputs are the frames of helpers.core.tables.


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

    Each panel maps a series label to a frame with columns ``x``, ``mean`` and ``std`` (NaN: no
    error bar). Panels have their own y-axis: scaled and full runs differ in level, only shapes compare.
    """
    if not panels:
        raise ValueError("no panels to plot")
    fig, axes = plt.subplots(1, len(panels), figsize=(panel_size[0] * len(panels), panel_size[1]), squeeze=False)
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
            ax.errorbar(
                frame[x],
                frame["mean"],
                yerr=np.where(np.isfinite(std), std, 0.0),
                marker=markers[i % len(markers)],
                capsize=3,
                linewidth=1.2,
                markersize=4,
                label=label,
            )
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

    Each value is a :func:`helpers.core.tables.training_curves` frame; lines are means over
    seeds, bands ± one std.
    """
    if not panels:
        raise ValueError("no panels to plot")
    metric_labels = {
        "val_metric": "validation accuracy (%)",
        "train_loss": "training loss",
        "val_loss": "validation loss",
        **(metric_labels or {}),
    }
    labels = labels or {}
    fig, axes = plt.subplots(
        len(metrics),
        len(panels),
        figsize=(panel_size[0] * len(panels), panel_size[1] * len(metrics)),
        squeeze=False,
        sharex="col",
    )
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
                    ax.fill_between(
                        frame["epoch"][ok], (mean - std)[ok], (mean + std)[ok], color=color, alpha=0.15, linewidth=0
                    )
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

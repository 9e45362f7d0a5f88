"""The Flex-Act figures: selection trajectories, function fits, selection against the target, the
effects of the readings the paper leaves open."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

_FLEXACT_COLORS = {
    "relu": "tab:blue",
    "sigmoid": "tab:orange",
    "tanh": "tab:green",
    "leaky_relu": "tab:red",
    "identity": "tab:purple",
}


def _panel_grid(panels: dict, ncols: int | None, size: tuple[float, float], **kwargs) -> tuple[plt.Figure, np.ndarray]:
    """A figure of ``len(panels)`` panels in rows of ``ncols``, the unused cells switched off."""
    if not panels:
        raise ValueError("no panels to plot")
    n = len(panels)
    ncols = min(ncols or n, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False, **kwargs)
    for ax in list(axes.flat)[n:]:
        ax.set_axis_off()
    return fig, axes


def _legend_below(fig: plt.Figure, handles: list, labels: list, ncol: int, bottom: float) -> plt.Figure:
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return fig


def plot_selection_trajectories(
    panels: dict[str, dict],
    *,
    ncols: int | None = None,
    panel_size: tuple[float, float] = (3.2, 2.6),
    display: dict[str, str] | None = None,
) -> plt.Figure:
    """Flex-Act selection probabilities over epochs, one panel per entry of ``panels``.

    Each value is :func:`helpers.flexact.synthetic.trajectories` output (``epochs``,
    ``probs`` of shape seeds × epochs × candidates, ``candidates``). A line is the mean over
    seeds, the band spans the seeds' minimum to maximum. Returns the figure.
    """
    display = display or {}
    fig, axes = _panel_grid(panels, ncols, panel_size, sharey=True)
    for ax, (title, traj) in zip(axes.flat, panels.items()):
        probs = np.asarray(traj["probs"], dtype=float)
        if probs.ndim != 3:
            raise ValueError(f"panel {title!r}: probs must be seeds × epochs × candidates, got {probs.shape}")
        epochs = np.asarray(traj["epochs"])
        for j, name in enumerate(traj["candidates"]):
            color = _FLEXACT_COLORS.get(name)
            ax.plot(epochs, probs[:, :, j].mean(axis=0), color=color, label=display.get(name, name))
            ax.fill_between(
                epochs, probs[:, :, j].min(axis=0), probs[:, :, j].max(axis=0), color=color, alpha=0.15, linewidth=0
            )
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("epoch")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("selection probability")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    return _legend_below(fig, handles, labels, len(labels), 0.08)


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
    fig, axes = _panel_grid(panels, ncols, panel_size)
    for ax, (title, panel) in zip(axes.flat, panels.items()):
        x = np.asarray(panel["x"], dtype=float)
        ax.plot(x, panel["truth"], color="0.6", linewidth=5, alpha=0.6, label="truth")
        for label, pred in panel["fits"].items():
            flex = label.startswith("Flex-Act")  # drawn solid, thicker and on top of the fixed models
            ax.plot(
                x, pred, "-" if flex else "--", linewidth=1.8 if flex else 1.0, zorder=3 if flex else 2, label=label
            )
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("$x_1$ (other features 0)")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("prediction")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    return _legend_below(fig, handles, labels, min(len(labels), 5), 0.12)


def plot_selection_with_target(
    panels: dict[str, dict],
    *,
    display: dict[str, str] | None = None,
    panel_size: tuple[float, float] = (3.4, 2.8),
) -> plt.Figure:
    """Flex-Act selection probabilities (solid) and the regulariser's target p̃ (dashed) per epoch,
    one panel per entry, on a y-axis fitted to the data (small moves away from uniform stay visible).

    Each value is :func:`helpers.flexact.selections.flexact_trajectory` output for one run
    (``epochs``, ``probs`` of shape 1 × (E+1) × K, ``pseudo_probs`` of shape 1 × E × K,
    ``candidates``).
    """
    display = display or {}
    n = len(panels)
    fig, axes = _panel_grid(panels, None, panel_size, sharey=True)
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
    # one narrow panel: wrap the legend
    return _legend_below(fig, handles, labels, len(labels) if n > 1 else 3, 0.12 if n > 1 else 0.22)


def plot_reading_effects(table, *, panel_size: tuple[float, float] = (3.6, 3.4)) -> plt.Figure:
    """Dot-and-interval plot of each reading's effects (95 % CIs), one row per reading, from
    :func:`helpers.flexact.readings.readings_table`:

    1. selection accuracy up to the ReLU/LeakyReLU twin − baseline (percentage points; ``d_twin``);
    2. held-out MSE against the baseline, pooled over the targets, as a factor (``log_ratio``, log axis);
    3. within the reading, MSE at α = 0.3 / at α = 0 on Sigmoid and Tanh (``alpha_log_ratio``, log
       axis): the paper's Table 1 says below 1.

    The baseline row has no interval in the first two panels (it is the reference).
    """
    if len(table) == 0:
        raise ValueError("no readings to plot")
    labels = list(table["label"])
    y = np.arange(len(labels))[::-1]
    panels = [
        ("picked truth (or twin) − baseline (points)", "d_twin", "d_twin_low", "d_twin_high", False, 0.0),
        ("held-out MSE ÷ baseline (all targets)", "log_ratio", "log_low", "log_high", True, 1.0),
        ("MSE α=0.3 ÷ α=0 (Sigmoid, Tanh)", "alpha_log_ratio", "alpha_log_low", "alpha_log_high", True, 1.0),
    ]
    fig, axes = plt.subplots(
        1, len(panels), figsize=(panel_size[0] * len(panels), panel_size[1]), sharey=True, squeeze=False
    )
    for ax, (title, mid, lo, hi, log, ref) in zip(axes.flat, panels):
        m, a, b = (np.asarray(table[c], dtype=float) for c in (mid, lo, hi))
        if log:
            m, a, b = np.exp(m), np.exp(a), np.exp(b)
            ax.set_xscale("log")
        has_ci = np.isfinite(a) & np.isfinite(b) & (b > a)
        ax.errorbar(
            m[has_ci],
            y[has_ci],
            xerr=[m[has_ci] - a[has_ci], b[has_ci] - m[has_ci]],
            fmt="o",
            color="tab:blue",
            ecolor="tab:blue",
            capsize=3,
            markersize=4,
        )
        ax.plot(m[~has_ci], y[~has_ci], "o", color="0.4", markersize=4)
        ax.axvline(ref, color="0.5", linewidth=1, linestyle="--")
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3, axis="x")
    axes[0, 0].set_yticks(y)
    axes[0, 0].set_yticklabels(labels, fontsize=8)
    fig.tight_layout()
    return fig

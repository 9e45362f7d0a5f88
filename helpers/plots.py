"""Small plotting helpers shared by the notebooks (one function per kind of figure)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
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

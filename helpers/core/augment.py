"""Training-batch augmentation on tensors already in memory.

The standard CIFAR augmentation (torchvision's ``RandomCrop(32, padding=4)`` +
``RandomHorizontalFlip()``) on a whole batch with one indexing operation, no per-image PIL work.
Draws come from torch's global generator, which checkpoints store, so a resumed run draws the same.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

__all__ = ["AUGMENTATIONS", "random_crop_flip", "batch_transform"]

AUGMENTATIONS: tuple[str, ...] = ("none", "crop_flip")
BatchTransform = Callable[[torch.Tensor], torch.Tensor]


def _check_images(x: object, where: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.dim() != 4 or not x.is_floating_point():
        shown = f"a {x.dim()}-d {x.dtype} tensor" if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"{where} needs a float batch of images (N, C, H, W), got {shown}")
    return x


def random_crop_flip(x: torch.Tensor, padding: int = 4) -> torch.Tensor:
    """A random ``H×W`` crop of each image of ``x`` zero-padded by ``padding``, then a horizontal
    flip of each with probability ½ (drawn from torch's global generator)."""
    _check_images(x, "random_crop_flip")
    if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0:
        raise ValueError(f"padding must be an int >= 0, got {padding!r}")
    n, _, h, w = x.shape
    padded = nn.functional.pad(x, (padding, padding, padding, padding))
    top = torch.randint(0, 2 * padding + 1, (n,))
    left = torch.randint(0, 2 * padding + 1, (n,))
    flip = torch.rand(n) < 0.5
    cols = torch.arange(w).expand(n, w)
    cols = torch.where(flip[:, None], cols.flip(1), cols) + left[:, None]  # a flip reverses the columns read
    rows = torch.arange(h)[None, :] + top[:, None]
    batch = torch.arange(n)[:, None, None, None]
    channel = torch.arange(x.shape[1])[None, :, None, None]
    out = padded[batch, channel, rows[:, None, :, None], cols[:, None, None, :]]
    return out.contiguous(memory_format=torch.channels_last) if _is_channels_last(x) else out.contiguous()


def _is_channels_last(x: torch.Tensor) -> bool:
    return x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()


def _to_channels_last(x: torch.Tensor) -> torch.Tensor:
    return x.contiguous(memory_format=torch.channels_last)


def batch_transform(augment: str = "none", channels_last: bool = False) -> BatchTransform | None:
    """The transform :func:`helpers.core.train.fit` applies to every training batch (``None``:
    nothing to do): the augmentation, then channels_last order if asked (validation batches stay
    contiguous; channels_last weights make oneDNN convert them)."""
    if augment not in AUGMENTATIONS:
        raise ValueError(f"augment must be one of {', '.join(AUGMENTATIONS)}, got {augment!r}")
    augmented = random_crop_flip if augment == "crop_flip" else None
    if not channels_last or augmented is None:
        return _to_channels_last if channels_last else augmented
    return lambda x: _to_channels_last(augmented(x))

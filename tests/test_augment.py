"""Training-batch augmentation (helpers.core.train_config.batch_transform) and its TrainConfig field."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers.core.results_cache import config_hash
from helpers.core.runs import TrainConfig
from helpers.core.train import fit
from helpers.core.train_config import batch_transform, random_crop_flip
from helpers.models import build_model


def _reference_crop_flip(
    x: torch.Tensor, top: torch.Tensor, left: torch.Tensor, flip: torch.Tensor, padding: int = 4
) -> torch.Tensor:
    """One image at a time, as torchvision's RandomCrop(padding) + RandomHorizontalFlip do it."""
    padded = nn.functional.pad(x, (padding,) * 4)
    h, w = x.shape[-2:]
    out = []
    for i in range(x.shape[0]):
        img = padded[i, :, top[i] : top[i] + h, left[i] : left[i] + w]
        out.append(img.flip(-1) if flip[i] else img)
    return torch.stack(out)


def test_crop_flip_equals_the_per_image_reference():
    x = torch.randn(64, 3, 8, 10)
    torch.manual_seed(5)
    got = random_crop_flip(x)
    torch.manual_seed(5)  # the same draws, in the same order
    n = x.shape[0]
    top, left, flip = torch.randint(0, 9, (n,)), torch.randint(0, 9, (n,)), torch.rand(n) < 0.5
    assert torch.equal(got, _reference_crop_flip(x, top, left, flip))
    assert 0 < int(flip.sum()) < n and len(set(top.tolist())) > 1  # both branches were exercised


def test_crop_flip_is_seeded_and_keeps_shape_dtype_and_layout():
    x = torch.randn(16, 3, 32, 32)
    torch.manual_seed(0)
    a = random_crop_flip(x)
    torch.manual_seed(0)
    b = random_crop_flip(x)
    assert torch.equal(a, b) and a.shape == x.shape and a.dtype == x.dtype
    cl = x.contiguous(memory_format=torch.channels_last)
    torch.manual_seed(0)
    c = random_crop_flip(cl)
    assert torch.equal(c, a) and c.is_contiguous(memory_format=torch.channels_last)
    torch.manual_seed(0)
    flipped_only = random_crop_flip(x, padding=0)  # no room to shift: each image as is, or mirrored
    assert all(torch.equal(o, i) or torch.equal(o, i.flip(-1)) for o, i in zip(flipped_only, x))


@pytest.mark.parametrize("bad", [torch.randn(4, 10), torch.randint(0, 5, (2, 3, 4, 4)), "images"])
def test_crop_flip_rejects_non_image_batches(bad):
    with pytest.raises(ValueError, match=r"\(N, C, H, W\)"):
        random_crop_flip(bad)


def test_bad_names_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="crop_flip"):
        batch_transform("cutout")
    with pytest.raises(ValueError, match="padding"):
        random_crop_flip(torch.randn(1, 1, 4, 4), padding=-1)
    with pytest.raises(ValueError, match="augment"):
        TrainConfig(experiment="t", dataset="cifar10", model="resnet18", augment="mixup")
    with pytest.raises(ValueError, match="image classification"):
        TrainConfig(experiment="t", dataset="tinyshakespeare", model="gpt", augment="crop_flip")


def test_default_fields_leave_the_cache_key_unchanged():
    base = TrainConfig(experiment="t", dataset="cifar10", model="resnet18")
    same = TrainConfig(experiment="t", dataset="cifar10", model="resnet18", augment="none")
    other = TrainConfig(experiment="t", dataset="cifar10", model="resnet18", augment="crop_flip")
    assert config_hash(base) == config_hash(same) != config_hash(other)


def _train(augment: str) -> list[dict]:
    torch.manual_seed(0)
    x, y = torch.randn(64, 3, 16, 16), torch.randint(0, 4, (64,))
    data = torch.utils.data.TensorDataset(x, y)
    loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=False)
    model = build_model("mlp", input_shape=(3, 16, 16), num_classes=4, depth=2, width=32)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    out = fit(
        model, loader, loader, optimizer=opt, epochs=2, task="classification", batch_transform=batch_transform(augment)
    )
    return out["history"]


def test_augmentation_changes_training_and_is_seeded():
    plain, augmented = _train("none"), _train("crop_flip")
    assert augmented[0]["train_loss"] != plain[0]["train_loss"]
    assert _train("crop_flip") == augmented  # seeded: bit-identical

"""The channels_last field of TrainConfig: validated, keyed only when set, and the same training
(up to float rounding) in a faster memory order."""

from __future__ import annotations

import pytest
import torch

from helpers.core.results_cache import config_hash
from helpers.core.runs import TrainConfig
from helpers.core.train import fit
from helpers.core.train_config import batch_transform
from helpers.models import build_model


def test_default_leaves_the_cache_key_unchanged_and_setting_it_changes_it():
    base = TrainConfig(experiment="t", dataset="cifar10", model="resnet18")
    same = TrainConfig(experiment="t", dataset="cifar10", model="resnet18", channels_last=False)
    other = TrainConfig(experiment="t", dataset="cifar10", model="resnet18", channels_last=True)
    assert config_hash(base) == config_hash(same) != config_hash(other)


@pytest.mark.parametrize("model", ["mlp", "vit", "gpt"])
def test_non_convolutional_models_are_refused(model):
    dataset = "tinyshakespeare" if model == "gpt" else "cifar10"
    with pytest.raises(ValueError, match="convolutional"):
        TrainConfig(experiment="t", dataset=dataset, model=model, channels_last=True)


def test_non_bool_is_refused():
    with pytest.raises(ValueError, match="True or False"):
        TrainConfig(experiment="t", dataset="cifar10", model="resnet18", channels_last="yes")


def test_training_batches_are_channels_last_after_the_augmentation():
    x = torch.randn(4, 3, 8, 8)
    for augment in ("none", "crop_flip"):
        cfg = TrainConfig(experiment="t", dataset="cifar10", model="resnet18", augment=augment, channels_last=True)
        out = batch_transform(cfg.augment, cfg.channels_last)(x)
        assert out.shape == x.shape and out.is_contiguous(memory_format=torch.channels_last)
    plain = TrainConfig(experiment="t", dataset="cifar10", model="resnet18")
    assert batch_transform(plain.augment, plain.channels_last) is None


def _history(channels_last: bool) -> list[dict]:
    torch.manual_seed(0)
    x, y = torch.randn(32, 3, 16, 16), torch.randint(0, 4, (32,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=8)
    # width 1/8: 8 channels at the shortcuts; at 1/16 (4) oneDNN's AVX2 kernel corrupts memory
    # (helpers.core.device), which the book refuses and this comparison must not measure
    model = build_model("resnet18", input_shape=(3, 16, 16), num_classes=4, width_mult=0.125)
    cast = None
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        cast = lambda b: b.contiguous(memory_format=torch.channels_last)  # noqa: E731
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return fit(model, loader, loader, optimizer=opt, epochs=2, task="classification", batch_transform=cast)["history"]


def test_channels_last_trains_the_same_model_up_to_rounding():
    plain, cl = _history(False), _history(True)
    for a, b in zip(plain, cl):
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=1e-4)
        assert b["val_loss"] == pytest.approx(a["val_loss"], rel=1e-4)


def test_channels_last_with_a_narrow_strided_1x1_convolution_is_refused_where_avx2_corrupts_it():
    from helpers.core.device import check_channels_last_convolutions

    cpu = torch.device("cpu")
    narrow = build_model("resnet18", input_shape=(3, 16, 16), num_classes=4, width_mult=0.0625)
    with pytest.raises(ValueError, match=r"4 input channels.*oneDNN#6035"):
        check_channels_last_convolutions(narrow, cpu, capability="AVX2")
    check_channels_last_convolutions(narrow, cpu, capability="AVX512")  # other kernels there
    check_channels_last_convolutions(narrow, torch.device("meta"), capability="AVX2")  # not a CPU
    wide = build_model("resnet18", input_shape=(3, 16, 16), num_classes=4, width_mult=0.125)
    check_channels_last_convolutions(wide, cpu, capability="AVX2")  # 8 channels: safe


def test_a_run_configured_so_stops_before_training(monkeypatch, require_dataset):
    from dataclasses import replace

    from helpers.core import device, runs

    require_dataset("cifar10")
    monkeypatch.setattr(device.torch.backends.cpu, "get_cpu_capability", lambda: "AVX2")
    # CIFAR-10's shapes without decoding its 60,000 images: the check comes before any data is used
    images = torch.utils.data.TensorDataset(torch.zeros(4, 3, 32, 32), torch.zeros(4, dtype=torch.long))
    shape = {"input_shape": (3, 32, 32), "num_classes": 10}
    monkeypatch.setattr(runs, "_build_data", lambda cfg: (images, images, shape, "CIFAR-10 shapes"))
    narrow = {"width_mult": 0.0625}
    cfg = TrainConfig(experiment="t", dataset="cifar10", model="resnet18", model_kwargs=narrow, channels_last=True)
    with pytest.raises(ValueError, match="channels_last=False"):
        runs.build_run(replace(cfg, n_train=64, n_val=64, batch_size=32))

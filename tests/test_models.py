"""Models: forward shapes, activation sites, replace_activations, reference parameter counts."""

import pytest
import torch
from torch import nn

from helpers.activations import ACTIVATION_TYPES
from helpers.models import GPT, MLP, ConvNeXt, ResNet18, ViT, activation_sites, build_model, replace_activations


def _count(m):
    return sum(p.numel() for p in m.parameters())


@pytest.mark.parametrize(
    "name,kwargs,shape",
    [
        ("mlp", {"depth": 2, "width": 8}, (3, 1, 28, 28)),
        ("resnet18", {"width_mult": 0.125}, (2, 3, 32, 32)),
        ("resnet34", {"width_mult": 0.125}, (2, 3, 32, 32)),
        ("vit", {"dim": 16, "depth": 2, "heads": 2}, (2, 3, 32, 32)),
        ("convnext", {"depths": (1, 1, 1, 1), "dims": (8, 16, 16, 16)}, (2, 3, 32, 32)),
    ],
)
def test_forward_shapes(name, kwargs, shape):
    model = build_model(name, input_shape=shape[1:], num_classes=7, **kwargs)
    assert model(torch.randn(shape)).shape == (shape[0], 7)


def test_gpt_forward_and_causality():
    torch.manual_seed(0)
    model = GPT(11, block_size=8, layers=2, dim=16, heads=2).eval()
    idx = torch.randint(0, 11, (2, 8))
    out = model(idx)
    assert out.shape == (2, 8, 11)
    changed = idx.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 11
    assert torch.allclose(model(changed)[:, :-1], out[:, :-1], atol=1e-6)  # no peeking ahead
    with pytest.raises(ValueError, match="block_size"):
        model(torch.zeros(1, 9, dtype=torch.long))


def test_resnet18_matches_torchvision_parameter_count():
    torchvision = pytest.importorskip("torchvision")
    ref = torchvision.models.resnet18(num_classes=10)
    ref.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)  # the CIFAR stem
    assert _count(ResNet18(10)) == _count(ref) == 11_173_962


def test_paper_scale_parameter_counts():
    # DeiT-tiny at patch 4 on 32x32 inputs: 5.36M parameters; GPT-2 small with tied head: 124.4M
    deit = ViT(200, image_size=64, patch=8, dim=192, depth=12, heads=3)
    assert 5.3e6 < _count(deit) < 5.7e6
    gpt2 = GPT(50257, block_size=1024, layers=12, dim=768, heads=12)
    assert _count(gpt2) == 124_439_808
    convnext_t = ConvNeXt(1000, stem_patch=4)
    assert 28.0e6 < _count(convnext_t) < 28.8e6  # ConvNeXt-T: 28.6M


def test_one_module_per_activation_site():
    sites = activation_sites(ResNet18(10, width_mult=0.125))
    assert len(sites) == 1 + 8 * 2  # stem + two per BasicBlock
    assert len(activation_sites(MLP(4, 2, depth=4, width=8))) == 4


@pytest.mark.parametrize("name", ["mlp", "resnet18", "vit", "convnext"])
def test_replace_activations_leaves_no_old_activation(name):
    kwargs = {
        "mlp": {},
        "resnet18": {"width_mult": 0.125},
        "vit": {"dim": 16, "depth": 2, "heads": 2},
        "convnext": {"depths": (1, 1, 1, 1), "dims": (8, 8, 8, 8)},
    }[name]
    model = build_model(name, input_shape=(3, 32, 32), num_classes=5, act=nn.GELU, **kwargs)
    n_sites = len(activation_sites(model))
    swapped = replace_activations(model, nn.ReLU)
    kinds = {type(m) for m in swapped.modules() if isinstance(m, ACTIVATION_TYPES)}
    assert kinds == {nn.ReLU}
    assert len(activation_sites(swapped)) == n_sites
    # the original is untouched and shares no activation object with the copy
    assert {type(m) for m in model.modules() if isinstance(m, ACTIVATION_TYPES)} == {nn.GELU}
    x = torch.randn(2, 3, 32, 32)
    assert swapped(x).shape == model(x).shape


def test_replace_with_module_aware_factory_and_errors():
    model = MLP(4, 2, depth=2, width=8, act=lambda: nn.LeakyReLU(0.3))
    swapped = replace_activations(model, lambda old: nn.LeakyReLU(old.negative_slope * 2))
    assert all(m.negative_slope == pytest.approx(0.6) for m in swapped.modules() if isinstance(m, nn.LeakyReLU))
    with pytest.raises(TypeError, match="nn.Module"):
        replace_activations(model, lambda: 3)
    with pytest.raises(TypeError):
        replace_activations("not a model", nn.ReLU)


def test_invalid_model_arguments():
    with pytest.raises(ValueError, match="unknown model"):
        build_model("alexnet", input_shape=(3, 32, 32), num_classes=10)
    with pytest.raises(ValueError, match="width"):
        MLP(4, 2, width=0)
    with pytest.raises(ValueError, match="divisible"):
        ViT(10, image_size=30, patch=4)
    with pytest.raises(ValueError, match="vocab_size"):
        build_model("gpt")


@pytest.mark.parametrize(
    "model, bad, message",
    [
        (
            lambda: MLP(4, 2),
            torch.randn(3, 5),
            r"MLP expects \(batch, \.\.\.\) with 4 features after flattening, got shape \(3, 5\)",
        ),
        (lambda: MLP(4, 2), torch.randn(4), r"got shape \(4,\)"),
        (
            lambda: ResNet18(width_mult=0.125),
            torch.randn(2, 1, 8, 8),
            r"ResNet expects images of shape \(batch, 3, H, W\)",
        ),
        (
            lambda: ViT(dim=16, depth=1, heads=2),
            torch.randn(2, 3, 28, 28),
            r"ViT expects images of shape \(batch, 3, 32, 32\)",
        ),
        (lambda: ConvNeXt(depths=(1, 1), dims=(8, 8)), torch.randn(2, 3, 32), r"ConvNeXt expects images"),
    ],
)
def test_a_wrong_input_is_named_not_failed_deep_inside_torch(model, bad, message):
    with pytest.raises(ValueError, match=message):
        model()(bad)


def test_integer_inputs_are_refused_with_the_model_name():
    with pytest.raises(TypeError, match="MLP expects a floating-point tensor .* got a torch.int64 tensor"):
        MLP(4, 2)(torch.ones(3, 4, dtype=torch.long))


def test_input_checks_leave_fx_tracing_and_the_right_inputs_alone():
    # int8 quantisation traces whole networks with torch.fx: the check must not run on a traced shape
    for model, x in ((MLP(4, 2), torch.randn(3, 2, 2)), (ResNet18(width_mult=0.125), torch.randn(2, 3, 8, 8))):
        traced = torch.fx.symbolic_trace(model.eval())
        torch.testing.assert_close(traced(x), model(x))

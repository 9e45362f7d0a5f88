"""Bad inputs to the number rules, the activation registry, activation-site surgery, TrainConfig
and the models: each fails early with a clear error (found by a bad-input audit)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch
from torch import nn

from helpers import methods
from helpers.activations import get_activation, register_activation
from helpers.core.runs import TrainConfig
from helpers.core.validation import InvalidValue, check_value, number
from helpers.lambda_gelu.activation import LambdaGELU
from helpers.models import GPT, MLP, ConvNeXt, ResNet18, activation_sites, build_model, replace_activations
from helpers.srelu.activation import srelu


def _config(**changes):
    return TrainConfig(experiment="t", dataset="adult", model="mlp", **changes)


# ------------------------------------------------------------------------------ number rules
@pytest.mark.parametrize(
    "make",
    [
        lambda: _config(lr=10**400),
        lambda: LambdaGELU(t=10**400),
        lambda: srelu(torch.zeros(2), 10**400),
        lambda: check_value("f", "x", 10**400, number()),
        lambda: _config(activation_kwargs={"t": 10**400}, activation="lambda_gelu"),
    ],
)
def test_huge_int_is_an_invalid_value_not_an_overflow(make):
    with pytest.raises(InvalidValue, match="10000"):
        make()


def test_numpy_float_scalars_are_accepted_as_python_floats():
    for value in (np.float32(0.1), np.float64(0.1), np.float16(0.5)):
        cfg = _config(lr=value)
        assert type(cfg.lr) is float and cfg.lr == float(value)
    # an np.float64 is keyed as the float it equals, as it always was
    from helpers.core.results_cache import config_hash

    assert config_hash(_config(lr=np.float64(0.1))) == config_hash(_config(lr=0.1))
    with pytest.raises(InvalidValue, match="finite"):
        _config(lr=np.float32("inf"))


# --------------------------------------------------------------------------------- registry
@pytest.mark.parametrize("name", ["MyAct", "../evil", "1act", "my-act", "", "a b"])
def test_register_refuses_names_get_activation_cannot_reach(name, monkeypatch):
    monkeypatch.setattr(methods, "ACTIVATIONS", dict(methods.ACTIVATIONS))
    with pytest.raises(ValueError, match="lowercase identifier"):
        register_activation(name, nn.ReLU)


def test_register_refuses_replacing_an_existing_name_unless_asked(monkeypatch):
    monkeypatch.setattr(methods, "ACTIVATIONS", dict(methods.ACTIVATIONS))
    with pytest.raises(ValueError, match="already registered.*replace=True"):
        register_activation("relu", nn.Tanh)
    assert isinstance(get_activation("relu"), nn.ReLU)
    register_activation("relu", methods.ACTIVATIONS["relu"])  # the same factory again: a no-op
    register_activation("relu", nn.Tanh, replace=True)
    assert isinstance(get_activation("relu"), nn.Tanh)
    register_activation("my_act_2", nn.SiLU)
    assert isinstance(get_activation("my_act_2"), nn.SiLU)


# ------------------------------------------------------------------------ activation surgery
def _mlp():
    return MLP(2, 2, depth=2, width=3, act=nn.GELU)


def test_replace_activations_refuses_a_module_instance():
    with pytest.raises(TypeError, match="not the module instance"):
        replace_activations(_mlp(), nn.ReLU())


@pytest.mark.parametrize(
    ("factory", "kind"),
    [
        (lambda inplace=False: nn.ReLU(inplace), nn.ReLU),
        (functools.partial(get_activation, "srelu", delta=0.1), type(get_activation("srelu", delta=0.1))),
        (lambda *, a=1: nn.Tanh(), nn.Tanh),
        (lambda **kw: nn.SiLU(**kw), nn.SiLU),
        (lambda old: nn.LeakyReLU(0.3), nn.LeakyReLU),  # one required parameter: the old module
    ],
)
def test_replace_activations_calls_factories_by_their_required_parameters(factory, kind):
    swapped = replace_activations(_mlp(), factory)
    acts = [m for m in swapped.body if not isinstance(m, nn.Linear)]
    assert len(acts) == 2 and all(type(m) is kind for m in acts)
    if kind is nn.ReLU:
        assert all(m.inplace is False for m in acts)


def test_replace_activations_refuses_two_required_parameters():
    with pytest.raises(TypeError, match="one \\(the old module\\)"):
        replace_activations(_mlp(), lambda old, other: nn.ReLU())


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("m",), "model must be an nn.Module"),
        ((_mlp(), [nn.GELU]), "types must be a non-empty tuple"),
        ((_mlp(), ()), "types must be a non-empty tuple"),
        ((_mlp(), (3,)), "types must be a non-empty tuple"),
    ],
)
def test_activation_sites_checks_its_inputs(args, match):
    with pytest.raises(TypeError, match=match):
        activation_sites(*args)


# ------------------------------------------------------------------------------ TrainConfig
def test_activation_name_must_be_registered_exactly():
    for field in ("activation", "penultimate_activation"):
        with pytest.raises(ValueError, match="use 'relu'"):
            TrainConfig(experiment="t", dataset="cifar10", model="resnet18", **{field: "RELU"})


@pytest.mark.parametrize("field", ["seed", "data_seed", "init_seed", "order_seed"])
def test_seeds_beyond_64_bits_are_refused(field):
    with pytest.raises(InvalidValue, match=field):
        _config(**{field: 2**64})
    assert getattr(_config(**{field: 2**64 - 1}), field) == 2**64 - 1
    torch.manual_seed(2**64 - 1)  # the largest accepted seed works


@pytest.mark.parametrize("bad", [None, [("lr", 0.1)], "lr"])
def test_from_dict_needs_a_dict(bad):
    with pytest.raises(TypeError, match="dict"):
        TrainConfig.from_dict(bad)


# ------------------------------------------------------------------------------------ models
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_float32_models_name_the_expected_input_dtype(dtype):
    mlp = MLP(4, 2, depth=1, width=3)
    with pytest.raises(TypeError, match="expects a torch.float32 input"):
        mlp(torch.zeros(2, 4, dtype=dtype))
    resnet = ResNet18(2, width_mult=1 / 16)
    with pytest.raises(TypeError, match="expects a torch.float32 input"):
        resnet(torch.zeros(1, 3, 8, 8, dtype=dtype))
    assert mlp.double()(torch.zeros(2, 4, dtype=torch.float64)).dtype == torch.float64


def test_autocast_input_dtype_still_accepted():
    mlp = MLP(4, 2, depth=1, width=3)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert mlp(torch.zeros(2, 4, dtype=torch.bfloat16)).shape == (2, 2)


def test_gpt_token_ids_are_checked():
    gpt = GPT(5, block_size=4, layers=1, dim=4, heads=1)
    for ids in (torch.zeros(1, 3), torch.zeros(1, 3, dtype=torch.bool)):
        with pytest.raises(TypeError, match="int64"):
            gpt(ids)
    for ids in (torch.tensor([[0, 5]]), torch.tensor([[-1, 0]])):
        with pytest.raises(ValueError, match=r"\[0, 5\)"):
            gpt(ids)
    assert gpt(torch.tensor([[0, 4]])).shape == (1, 2, 5)
    assert gpt(torch.tensor([[0, 4]], dtype=torch.int32)).shape == (1, 2, 5)


def test_convnext_names_the_minimum_image_size():
    model = ConvNeXt(2, depths=(1, 1), dims=(4, 8))
    with pytest.raises(ValueError, match="H, W >= 4"):
        model(torch.zeros(1, 3, 1, 1))
    assert model(torch.zeros(1, 3, 4, 4)).shape == (1, 2)


def test_factories_are_checked_when_the_model_is_built():
    with pytest.raises(TypeError, match="act must return an nn.Module"):
        build_model("mlp", input_shape=(4,), num_classes=2, act=lambda: 3)
    with pytest.raises(TypeError, match="penultimate_act must be a factory"):
        ResNet18(2, width_mult=1 / 16, penultimate_act=nn.ReLU())
    with pytest.raises(TypeError, match="penultimate_act must return an nn.Module"):
        ResNet18(2, width_mult=1 / 16, penultimate_act=lambda: 3)


def test_build_model_says_blocks_are_fixed_by_the_name():
    with pytest.raises(ValueError, match="'blocks'"):
        build_model("resnet18", input_shape=(3, 8, 8), num_classes=2, blocks=(1, 1, 1))
    with pytest.raises(TypeError, match="fixes blocks"):
        ResNet18(2, blocks=(1, 1, 1, 1))


@pytest.mark.parametrize(
    "make",
    [
        lambda: build_model("resnet18", input_shape=(3, 8, 8), num_classes=2, width_mult=1e300),
        lambda: build_model("resnet18", input_shape=(3, 8, 8), num_classes=10**400),
        lambda: build_model("mlp", input_shape=(4,), num_classes=10**400),
        lambda: GPT(5, block_size=4, layers=1, dim=4, heads=1, mlp_ratio=1e308),
    ],
)
def test_sizes_beyond_torch_are_invalid_values(make):
    with pytest.raises(InvalidValue):
        make()


def test_math_isfinite_still_overflows_on_huge_ints():  # why the rules cannot call it directly
    with pytest.raises(OverflowError):
        math.isfinite(10**400)


def test_build_model_refuses_a_factory_that_returns_one_module_for_every_site():
    # one λ for every site, and activation_sites listed only the first
    shared = LambdaGELU()
    with pytest.raises(ValueError, match=r"act returned the same LambdaGELU object .*new module on every call"):
        build_model("mlp", input_shape=(4,), num_classes=2, act=lambda: shared)
    relu = nn.ReLU()
    with pytest.raises(ValueError, match="same ReLU object"):
        build_model("gpt", vocab_size=5, act=lambda: relu, layers=2, dim=4, heads=1, block_size=4)
    # a factory may still hand out one module object once (ResNet's single penultimate site)
    model = build_model(
        "resnet18", input_shape=(3, 8, 8), num_classes=2, width_mult=1 / 16, penultimate_act=lambda: relu
    )
    assert model.penultimate is relu
    model = build_model("mlp", input_shape=(4,), num_classes=2, depth=3, act=LambdaGELU)
    assert len(activation_sites(model)) == 3


@pytest.mark.parametrize(
    "name, kwargs, unread",
    [
        ("mlp", {"input_shape": (4,), "num_classes": 2, "vocab_size": 5}, "vocab_size"),
        ("resnet18", {"input_shape": (3, 8, 8), "num_classes": 2, "vocab_size": 5}, "vocab_size"),
        ("gpt", {"vocab_size": 5, "num_classes": 3, "input_shape": (4,)}, "input_shape or num_classes"),
        ("gpt", {"vocab_size": 5, "num_classes": 3}, "num_classes"),
        ("gpt", {"vocab_size": 5, "input_shape": (4,)}, "input_shape"),
    ],
)
def test_build_model_refuses_data_arguments_the_model_does_not_read(name, kwargs, unread):
    # they were dropped: the MLP ignored vocab_size, the GPT had vocab_size outputs, not num_classes
    with pytest.raises(ValueError, match=rf"model '{name}' does not read {unread} "):
        build_model(name, **kwargs)


def test_build_model_still_takes_what_each_model_reads():
    gpt = build_model("gpt", vocab_size=5, layers=1, dim=4, heads=1, block_size=4)
    assert gpt(torch.tensor([[0, 4]])).shape == (1, 2, 5)
    assert build_model("mlp", input_shape=(4,), num_classes=3)(torch.zeros(2, 4)).shape == (2, 3)
    with pytest.raises(ValueError, match="model 'gpt' needs vocab_size"):
        build_model("gpt")
    with pytest.raises(ValueError, match="model 'mlp' needs input_shape and num_classes"):
        build_model("mlp", input_shape=(4,))

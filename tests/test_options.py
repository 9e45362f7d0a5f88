"""Method options (helpers.core.options): one typed object per method on a TrainConfig, laid out
flat in stored configs and cache keys."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import pytest

from helpers import methods
from helpers.core import options as O
from helpers.core import validation as v
from helpers.core.results_cache import config_dict, config_hash, field_defaults, hash_payload
from helpers.core.runs import TrainConfig
from helpers.flexact.options import FlexActOptions
from helpers.lambda_gelu.options import LambdaGeluOptions
from helpers.srelu.options import SReluOptions


def _cfg(**kw) -> TrainConfig:
    return TrainConfig(experiment="t", dataset="adult", model="mlp", **kw)


def test_a_config_reads_carried_options_and_defaults_otherwise():
    cfg = _cfg(activation="lambda_gelu", options=(LambdaGeluOptions(hardness_lr_mult=2.0),))
    assert cfg.option(LambdaGeluOptions).hardness_lr_mult == 2.0
    assert cfg.option(FlexActOptions) == FlexActOptions()
    assert "LambdaGeluOptions(hardness_lr_mult=2.0" in repr(cfg)


def test_options_are_canonical_so_the_same_run_is_the_same_config():
    flex = FlexActOptions(flexact_alpha=0.3)
    lgelu = LambdaGeluOptions(hardness_lr_mult=2.0)
    both = {"activation": "lambda_gelu", "penultimate_activation": "flexact"}
    a = _cfg(**both, options=(flex, lgelu, SReluOptions()))
    b = _cfg(**both, options=(lgelu, flex))
    assert a == b and a.options == b.options and len(a.options) == 2
    assert _cfg(options=(LambdaGeluOptions(),)) == _cfg()
    # an int where the default is a float is that float: the default, so dropped
    assert _cfg(activation="lambda_gelu", options=(LambdaGeluOptions(hardness_lr_mult=1),)).options == ()
    assert _cfg(lr=1) == _cfg(lr=1.0) and isinstance(_cfg(lr=1).lr, float)


def test_options_no_activation_of_the_run_reads_are_refused():
    """A run carrying another method's options trains exactly as without them: one run, one key."""
    with pytest.raises(ValueError, match=r"LambdaGeluOptions.*no effect.*lambda_gelu.*activations are relu"):
        _cfg(activation="relu", options=(LambdaGeluOptions(hardness_lr_mult=2.0),))
    with pytest.raises(ValueError, match=r"FlexActOptions.*no effect.*flexact"):
        _cfg(activation="gelu", options=(FlexActOptions(flexact_alpha=0.3),))
    # the penultimate site counts: the Flex-Act CIFAR runs train ReLU with a Flex-Act layer there
    assert _cfg(activation="relu", penultimate_activation="flexact", options=(FlexActOptions(flexact_alpha=0.3),))


def test_an_activations_defaults_have_one_spelling_in_the_key():
    """λ-GELU's t is always spelled (as every committed λ-GELU run spells it); a built-in's
    argument equal to its default is left out; either way both spellings give one key."""
    assert _cfg(activation="lambda_gelu").activation_kwargs == {"t": 0.1}
    assert config_hash(_cfg(activation="lambda_gelu")) == config_hash(
        _cfg(activation="lambda_gelu", activation_kwargs={"t": 0.1})
    )
    assert _cfg(activation="srelu").activation_kwargs == {"delta": 0.001}
    # lam_init=None starts at λ = 1.01: spelling that out is the same run
    assert _cfg(activation="lambda_gelu", activation_kwargs={"lam_init": 1.01}).activation_kwargs == {"t": 0.1}
    assert _cfg(activation="srelu", activation_kwargs={"delta": 0.1, "learnable": False}).activation_kwargs == {
        "delta": 0.1
    }
    assert _cfg(activation="gelu", activation_kwargs={"approximate": "none"}) == _cfg(activation="gelu")
    assert _cfg(activation="elu", activation_kwargs={"alpha": 1}).activation_kwargs == {}
    assert _cfg(activation="elu", activation_kwargs={"alpha": 0.5}).activation_kwargs == {"alpha": 0.5}
    assert config_hash(_cfg(activation="srelu", activation_kwargs={"delta": 1})) == config_hash(
        _cfg(activation="srelu", activation_kwargs={"delta": 1.0})
    )
    with pytest.raises(ValueError, match="registered as 'gelu_tanh'"):  # one module, one name
        _cfg(activation="gelu", activation_kwargs={"approximate": "tanh"})


def test_two_options_of_one_class_or_a_non_option_are_refused():
    with pytest.raises(ValueError, match="two LambdaGeluOptions"):
        _cfg(options=(LambdaGeluOptions(hardness_lr_mult=2.0), LambdaGeluOptions(init_mode="uniform")))
    with pytest.raises(ValueError, match="TrainConfig.options must be a tuple of MethodOptions"):
        _cfg(options=({"hardness_lr_mult": 2.0},))
    with pytest.raises(ValueError, match="TrainConfig.options"):
        _cfg(options=[LambdaGeluOptions()])


def test_an_unregistered_options_class_is_refused():
    @dataclass(frozen=True)
    class Loose(O.MethodOptions):
        loose_knob: float = 1.0
        RULES: ClassVar[dict[str, v.Rule]] = {"loose_knob": v.number(0)}

    with pytest.raises(ValueError, match="Loose, which is not a line of the table helpers.methods.OPTIONS"):
        _cfg(options=(Loose(loose_knob=2.0),))


def test_the_options_table_check_refuses_unsound_classes():
    O.check_options_table(methods.OPTIONS)  # the book's table is sound

    @dataclass(frozen=True)
    class Clash(O.MethodOptions):
        flexact_alpha: float = 0.0
        RULES: ClassVar[dict[str, v.Rule]] = {"flexact_alpha": v.number(0)}

    with pytest.raises(ValueError, match="both have the fields \\['flexact_alpha'\\]"):
        O.check_options_table((*methods.OPTIONS, Clash))

    @dataclass(frozen=True)
    class Unruled(O.MethodOptions):
        other_knob: float = 0.0

    with pytest.raises(TypeError, match="RULES must list a rule for each field"):
        O.check_options_table((Unruled,))
    with pytest.raises(TypeError, match="MethodOptions subclass"):
        O.check_options_table((dict,))


def test_stored_configs_and_keys_see_the_options_flat():
    cfg = _cfg(activation="lambda_gelu", options=(LambdaGeluOptions(hardness_lr_mult=2.0, init_mode="uniform"),))
    stored = config_dict(cfg)
    assert "options" not in stored and stored["hardness_lr_mult"] == 2.0 and stored["init_mode"] == "uniform"
    assert stored["flexact_lam"] == 1.0 and stored["delta_anneal_target"] is None  # every registered field
    assert set(O.options_field_names()) <= set(field_defaults(TrainConfig))
    payload = hash_payload(cfg)
    assert {"hardness_lr_mult", "init_mode"} <= set(payload) and "flexact_lam" not in payload
    fields = {k: val for k, val in stored.items() if k != "config_class"}
    back = TrainConfig.from_dict(fields)
    assert back == cfg and config_hash(back) == config_hash(cfg) and config_dict(back) == stored
    with pytest.raises(ValueError, match="not an 'options' entry"):
        TrainConfig.from_dict({**fields, "options": ()})


def test_option_rules_and_their_checks_against_the_config():
    with pytest.raises(ValueError, match="LambdaGeluOptions.anneal_target must be"):
        LambdaGeluOptions(anneal_target=0.5)
    with pytest.raises(ValueError, match="fixed S-ReLU"):
        _cfg(activation="gelu", options=(SReluOptions(delta_anneal_target=0.01),))
    ok = _cfg(activation="srelu", activation_kwargs={"delta": 0.05}, options=(SReluOptions(delta_anneal_target=0.01),))
    with pytest.raises(ValueError, match="last learning epoch"):
        ok.with_options(LambdaGeluOptions(anneal_layer_eps=0.01), epochs=2)
    swapped = ok.with_options(SReluOptions(delta_anneal_target=0.02))
    assert swapped.option(SReluOptions).delta_anneal_target == 0.02 and len(swapped.options) == 1
    assert dataclasses.replace(ok, seed=1).options == ok.options


def test_one_run_has_one_key_whatever_the_spelling_of_its_numbers_and_sizes():
    """#55 item 6, from the hostile probe: an int for a number field (its default None too), -0.0,
    and a batch larger than the training set each gave a second key for one run."""
    assert config_hash(_cfg(max_grad_norm=1)) == config_hash(_cfg(max_grad_norm=1.0))
    assert config_hash(_cfg(weight_decay=-0.0)) == config_hash(_cfg(weight_decay=0.0))
    assert _cfg(activation="lambda_gelu", options=(LambdaGeluOptions(anneal_target=100),)) == _cfg(
        activation="lambda_gelu", options=(LambdaGeluOptions(anneal_target=100.0),)
    )
    with pytest.raises(ValueError, match="batch_size=1000 exceeds n_train=256"):
        _cfg(n_train=256, batch_size=1000)
    assert _cfg(n_train=256, batch_size=256).batch_size == 256


def test_a_flexact_candidate_is_named_as_registered():
    from helpers.flexact.activation import FlexAct

    with pytest.raises(ValueError, match="'RELU' is not a registered name; use 'relu'"):
        FlexAct(["RELU", "gelu"])


def test_an_unknown_init_mode_is_refused_when_the_options_are_made():
    """From the probe: a typo used to pass construction and fail inside a training worker."""
    with pytest.raises(ValueError, match="init_mode must be one of 'uniform', 'increasing', 'decreasing'"):
        LambdaGeluOptions(init_mode="bogus")


def test_a_models_size_is_keyed_in_one_spelling():
    """From the probe: MLP's default size spelled out ({'depth': 4, 'width': 256}, as every committed
    MLP run spells it) and left out gave two keys; a non-size argument at its default is left out."""
    spelled = _cfg(model_kwargs={"depth": 4, "width": 256})
    assert _cfg() == spelled and config_hash(_cfg()) == config_hash(spelled)
    vit = {"dim": 48, "depth": 4, "heads": 2, "patch": 4}
    as_committed = TrainConfig(experiment="t", dataset="cifar10", model="vit", model_kwargs=vit)
    assert as_committed.model_kwargs == vit  # the size arguments stay, even patch at its default 4
    with_default = TrainConfig(experiment="t", dataset="cifar10", model="vit", model_kwargs={**vit, "dropout": 0.0})
    assert config_hash(with_default) == config_hash(as_committed)


def test_activation_arguments_are_plain_values():
    """From the probe: a tensor argument built the activation, then failed when the key was written."""
    import numpy as np
    import torch

    with pytest.raises(ValueError, match="lam_init=tensor.*not a plain value"):
        _cfg(activation="lambda_gelu", activation_kwargs={"lam_init": torch.tensor(2.0)})
    numpy_t = _cfg(activation="lambda_gelu", activation_kwargs={"t": np.float64(0.3)})
    assert numpy_t == _cfg(activation="lambda_gelu", activation_kwargs={"t": 0.3})

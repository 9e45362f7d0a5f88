"""Every field of every run-config class is checked by its table: kind, range, finiteness, names.

For each class the bad values are generated from the field's rule (a bool for a number, a
string for a number, NaN and ±inf, a path for a name, ...), so a field added with a rule is
tested by the same cases; a field added without one fails ``test_every_field_has_a_rule``.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from helpers.core import validation as v
from helpers.core.options import registered_options
from helpers.core.results_cache import config_hash
from helpers.core.runs import TRAIN_CONFIG_RULES, TrainConfig
from helpers.flexact.synthetic import SYNTHETIC_CONFIG_RULES, FlexActSyntheticConfig
from helpers.relu_ization.experiment import RELUIZATION_CONFIG_RULES, reluization_config

NAN, INF = float("nan"), float("inf")


def _bases() -> dict[str, tuple[object, dict[str, v.Rule]]]:
    return {
        "TrainConfig": (TrainConfig(experiment="t", dataset="adult", model="mlp"), TRAIN_CONFIG_RULES),
        "FlexActSyntheticConfig": (FlexActSyntheticConfig(), SYNTHETIC_CONFIG_RULES),
        "ReluizationConfig": (reluization_config("fmnist", "gelu", 0, "smoke"), RELUIZATION_CONFIG_RULES),
        # each method's options, by its own table
        **{cls.__name__: (cls(), dict(cls.RULES)) for cls in registered_options()},
    }


def _bad_values(rule: v.Rule) -> list[object]:
    """Values ``rule`` must refuse, by kind."""
    not_none = [] if rule.optional else [None]
    if rule.kind == "int":
        below = [rule.low - 1] if rule.low is not None else []
        return [True, False, "1", 1.0, NAN, INF, *below, *not_none]
    if rule.kind == "number":
        out: list[object] = [True, "0.1", NAN, INF, -INF, *not_none]
        if rule.low is not None:
            out.append(rule.low if rule.low_open else rule.low - 1)
        if rule.high is not None:
            out.append(rule.high if rule.high_open else rule.high + 1)
        return out
    if rule.kind == "bool":
        return [1, 0, "True", None]
    if rule.kind == "str":
        return [3, b"x", *([""] if rule.non_empty else []), *not_none]
    if rule.kind == "name":
        return ["", "a/b", "../up", "..", ".hidden", "a\\b", "x\ny", "/abs", "x" * 300, 3, None]
    if rule.kind == "choice":
        return ["no-such-choice", True, 3, *not_none]
    if rule.kind == "dict":
        return [[], "x", {1: 2}, {"x": NAN}, {"x": [INF]}, None]
    if rule.kind == "numbers":
        return [(), ("1",), (True,), (NAN,), (INF,), 0.1, *not_none]
    if rule.kind == "choices":
        return [(), ("no-such-choice",), "x", None]
    if rule.kind == "instances":
        return [[], (1,), "x", None]
    raise AssertionError(f"no bad values for rule kind {rule.kind!r}")


CASES = [
    (cls, name, bad)
    for cls, (_, rules) in _bases().items()
    for name, rule in rules.items()
    for bad in _bad_values(rule)
]


def _refusal_fault(case: tuple[str, str, object], bases: dict) -> str:
    """What is wrong with how ``case`` is refused ("" when it is a ValueError naming the field)."""
    cls, name, bad = case
    base, _ = bases[cls]
    try:
        dataclasses.replace(base, **{name: bad})
    except ValueError as err:
        return "" if name in str(err) else f"{cls}.{name}={bad!r}: refused without naming the field: {err}"
    except Exception as err:  # noqa: BLE001 - a raw error from deeper down is a fault to list
        return f"{cls}.{name}={bad!r}: {type(err).__name__} instead of ValueError: {err}"
    return f"{cls}.{name}={bad!r}: accepted"


#: The rule kinds of the generated cases: one test each, over every field of every config with that rule.
RULE_KINDS = sorted({rules[name].kind for _, (_, rules) in _bases().items() for name in rules})


@pytest.mark.parametrize("kind", RULE_KINDS)
def test_each_rule_kind_refuses_its_bad_values_and_names_the_field(kind):
    bases = _bases()
    cases = [c for c in CASES if bases[c[0]][1][c[1]].kind == kind]
    assert cases
    problems = [p for c in cases if (p := _refusal_fault(c, bases))]
    assert not problems, "\n".join(problems)


def test_every_field_has_a_rule():
    problems = {
        cls: sorted(set(rules) ^ {f.name for f in dataclasses.fields(base)}) for cls, (base, rules) in _bases().items()
    }
    assert not {cls: diff for cls, diff in problems.items() if diff}, "fields without a rule, or rules without a field"


def test_a_table_missing_a_field_is_refused():
    base, rules = _bases()["TrainConfig"]
    with pytest.raises(TypeError, match="no rule for \\['scale_note'\\]"):
        v.check_fields(base, {k: r for k, r in rules.items() if k != "scale_note"})


def test_messages_say_what_is_expected_and_why():
    with pytest.raises(
        ValueError, match=r"TrainConfig.epochs must be an int >= 1; got True \(a bool is not a number\)"
    ):
        TrainConfig(experiment="t", dataset="adult", model="mlp", epochs=True)
    with pytest.raises(ValueError, match=r"TrainConfig.lr must be a finite number > 0; got '0.1' \(a string"):
        TrainConfig(experiment="t", dataset="adult", model="mlp", lr="0.1")
    with pytest.raises(ValueError, match=r"max_grad_norm must be a finite number > 0, or None; got nan \(not finite\)"):
        TrainConfig(experiment="t", dataset="adult", model="mlp", max_grad_norm=NAN)
    with pytest.raises(ValueError, match=r"TrainConfig.experiment must be a folder name"):
        TrainConfig(experiment="../results", dataset="adult", model="mlp")


@pytest.mark.parametrize("name", ["min_lr", "warmup_start_lr"])
def test_a_floor_above_the_learning_rate_or_below_zero_is_refused(name):
    base = dict(experiment="t", dataset="adult", model="mlp", lr=0.1, schedule="warmup_cosine", warmup_epochs=1)
    with pytest.raises(ValueError, match=f"{name} must be <= lr"):
        TrainConfig(**base, **{name: 0.2})
    with pytest.raises(ValueError, match=f"TrainConfig.{name} must be a finite number >= 0"):
        TrainConfig(**base, **{name: -1.0})  # the cosine towards -1 was gradient ascent
    assert getattr(TrainConfig(**base, **{name: 0.1}), name) == 0.1  # the bound itself is allowed


def test_an_alias_of_a_dataset_is_refused_since_the_task_compares_canonical_names():
    with pytest.raises(ValueError, match="TrainConfig.dataset must be one of"):
        TrainConfig(experiment="t", dataset="tiny_shakespeare", model="gpt")


def test_a_bad_field_of_the_arm_inside_a_reluization_config_is_refused():
    base, _ = _bases()["ReluizationConfig"]
    with pytest.raises(ValueError, match="ReluizationConfig.train is not a valid TrainConfig: TrainConfig.epochs"):
        dataclasses.replace(base, train={**base.train, "epochs": True})


def test_one_number_has_one_spelling_in_the_key():
    """``lr=1`` and ``lr=1.0`` are one run, so one key: a float field stores the float (no committed
    result holds an int in a float field, so no committed key moved; ``verify_results`` checks)."""
    a = TrainConfig(experiment="t", dataset="adult", model="mlp", lr=1)
    assert a.lr == 1 and isinstance(a.lr, float)
    assert config_hash(a) == config_hash(TrainConfig(experiment="t", dataset="adult", model="mlp", lr=1.0))
    assert math.isfinite(a.weight_decay)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"model_kwargs": {"hidden": 3}}, "model 'mlp' takes no argument 'hidden'; its model_kwargs are depth, width"),
        ({"activation": "nope"}, "TrainConfig.activation 'nope'.*unknown activation"),
        ({"activation_kwargs": {"delta": 0.1}}, "TrainConfig.activation 'gelu'.*bad arguments"),
        (
            {"penultimate_activation": "flexact", "penultimate_kwargs": {"candidates": ("relu", "nope")}},
            "TrainConfig.penultimate_activation 'flexact'",
        ),
    ],
)
def test_activation_and_model_arguments_fail_when_the_config_is_made(fields, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(experiment="e", dataset="adult", model="mlp", **fields)


# ------------------------------------------------------- fields set where the run never reads them
_BASE = {"experiment": "t", "dataset": "adult", "model": "mlp"}


@pytest.mark.parametrize(
    "kwargs, field_name",
    [
        ({"schedule": "none", "warmup_epochs": 2}, "warmup_epochs"),
        ({"schedule": "cosine", "warmup_epochs": 2}, "warmup_epochs"),
        ({"schedule": "none", "warmup_start_lr": 0.01}, "warmup_start_lr"),
        ({"schedule": "none", "min_lr": 0.001}, "min_lr"),
        ({"optimizer": "adamw", "momentum": 0.5}, "momentum"),
        ({"penultimate_kwargs": {"beta": 1.0}}, "penultimate_kwargs"),
        ({"anneal_switch": 0.5}, "anneal_switch"),  # no option anneals
        ({"block_size": 128}, "block_size"),  # Adult is not cut into blocks
    ],
)
def test_a_field_the_run_never_reads_is_refused(kwargs, field_name):
    """It would change the cache key and not the run."""
    with pytest.raises(ValueError, match=rf"TrainConfig\.{field_name}=.*has no effect"):
        TrainConfig(**_BASE, **kwargs)


def test_one_run_one_key_settings_that_cannot_change_a_run_are_refused():
    """inplace changes memory, not the run; anneal_switch is read once an option anneals."""
    with pytest.raises(ValueError, match=r"TrainConfig.activation 'relu': leave inplace out; it changes memory"):
        TrainConfig(**_BASE, activation="relu", activation_kwargs={"inplace": True})
    with pytest.raises(ValueError, match=r"leave inplace out"):  # the default spelled out would be a second key
        TrainConfig(**_BASE, activation="relu", activation_kwargs={"inplace": False})
    from helpers.lambda_gelu.options import LambdaGeluOptions
    from helpers.srelu.options import SReluOptions

    assert (
        TrainConfig(
            **_BASE, activation="lambda_gelu", anneal_switch=0.5, options=(LambdaGeluOptions(anneal_target=100.0),)
        ).anneal_switch
        == 0.5
    )
    assert (
        TrainConfig(
            **_BASE, activation="srelu", anneal_switch=0.5, options=(SReluOptions(delta_anneal_target=1e-4),)
        ).anneal_switch
        == 0.5
    )
    assert TrainConfig(experiment="t", dataset="tinyshakespeare", model="gpt", block_size=32).block_size == 32


@pytest.mark.parametrize(
    "kwargs",
    [
        {"schedule": "warmup_cosine", "warmup_epochs": 2, "warmup_start_lr": 0.01, "min_lr": 0.001},
        {"schedule": "cosine", "min_lr": 0.001},
        {"optimizer": "sgd", "momentum": 0.5},
        {"optimizer": "adamw"},
        {"schedule": "none", "warmup_epochs": 0, "min_lr": 0.0},  # the defaults, spelt out
    ],
)
def test_the_same_fields_are_accepted_where_they_are_read(kwargs):
    TrainConfig(**_BASE, **kwargs)

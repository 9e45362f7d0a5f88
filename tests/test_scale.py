"""The core ``Scale``: built with keywords, checked on construction, and every protocol's table of them."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest
from refusals import refusal_fault

from helpers.core.runtime import PROFILES
from helpers.core.scale import Scale, arm_seeds_of
from helpers.flexact import protocol as flexact
from helpers.lambda_gelu import protocol as lambda_gelu
from helpers.relu_ization import protocol as relu_ization
from helpers.srelu import protocol as srelu

BASE = {"model_kwargs": {"width": 8}, "epochs": 3, "seeds": (0, 1, 2)}


def test_a_scale_takes_keywords_only_and_is_frozen():
    with pytest.raises(TypeError):
        Scale({"width": 8}, 3, (0, 1, 2))  # type: ignore[misc]
    scale = Scale(**BASE)
    with pytest.raises(FrozenInstanceError):
        scale.epochs = 4  # type: ignore[misc]
    assert replace(scale, epochs=4).epochs == 4


#: One bad value per row: the field, the value, and what the ValueError's message must contain.
BAD_VALUES = [
    ("epochs", 0, "Scale.epochs"),
    ("epochs", 2.0, "Scale.epochs"),
    ("n_train", 0, "Scale.n_train"),
    ("batch_size", True, "Scale.batch_size"),
    ("lr", float("nan"), "Scale.lr"),
    ("lr", -1e-3, "Scale.lr"),
    ("schedule", "linear", "Scale.schedule"),
    ("augment", "mixup", "Scale.augment"),
    ("precision", "fp16", "Scale.precision"),
    ("channels_last", 1, "Scale.channels_last"),
    ("model_kwargs", [("width", 8)], "Scale.model_kwargs"),
    ("seeds", (), "Scale.seeds"),
    ("seeds", [0, 1], "Scale.seeds"),
    ("seeds", (0, 0), "Scale.seeds"),
    ("seeds", (0, -1), "Scale.seeds"),
    ("arm_seeds", (0, 5), "subset"),
    ("warmup_epochs", 3, "Scale.warmup_epochs"),
    ("activations", (), "Scale.activations"),
    ("activations", "gelu", "Scale.activations"),
]


def test_a_bad_value_is_refused_naming_the_field():
    problems = [
        fault
        for field, value, words in BAD_VALUES
        if (fault := refusal_fault(f"{field}={value!r}", lambda: Scale(**{**BASE, field: value}), ValueError, words))
    ]
    assert not problems, "\n".join(problems)


def test_arm_seeds_default_to_every_seed():
    assert arm_seeds_of(Scale(**BASE)) == (0, 1, 2)
    assert arm_seeds_of(Scale(**BASE, arm_seeds=(0, 1))) == (0, 1)


@pytest.mark.parametrize(
    "table",
    [srelu.SCALES, flexact.SCALES, lambda_gelu.SCALES, relu_ization.SCALES],
    ids=["srelu", "flexact", "lambda_gelu", "relu_ization"],
)
def test_every_protocol_table_has_a_scale_per_profile(table):
    for key, scales in table.items():
        assert set(scales) == set(PROFILES), key
        assert all(isinstance(s, Scale) for s in scales.values()), key


def test_a_lambda_gelu_run_refuses_a_scale_without_its_data_set():
    with pytest.raises(ValueError, match="must name its data set"):
        lambda_gelu.pair_config("fmnist", "cpu", activation="gelu", seed=0, scale=Scale(**BASE))

"""Baseline floors (helpers.core.floors): met, missed by how much, no floor, bad input."""

from __future__ import annotations

import pytest

from helpers.core.floors import FLOORS, floor_for, floor_table


def _run(model: str, dataset: str, activation: str, metrics: list[float], losses: list[float] | None = None) -> dict:
    losses = losses or [1.0] * len(metrics)
    return {
        "config": {"model": model, "dataset": dataset, "activation": activation},
        "history": [{"epoch": e + 1, "val_metric": m, "val_loss": l} for e, (m, l) in enumerate(zip(metrics, losses))],
    }


def test_accuracy_floor_uses_the_best_epoch_and_the_mean_over_runs():
    runs = [
        _run("mlp", "fashion_mnist", "gelu", [0.80, 0.895, 0.89]),
        _run("mlp", "fashion_mnist", "gelu", [0.70, 0.893]),
    ]
    row = floor_table(runs).iloc[0]
    assert row["runs"] == 2 and row["reached (mean)"] == "89.40 %" and row["verdict"] == "met"
    assert row["range"] == "89.30 % – 89.50 %"
    missed = floor_table([_run("resnet18", "cifar10", "gelu", [0.35, 0.36])]).iloc[0]
    assert missed["verdict"] == "missed by 49.00 points"


def test_loss_floor_is_lower_is_better():
    ok = floor_table([_run("gpt", "tinyshakespeare", "gelu", [6.0, 5.5], [1.9, 1.75])]).iloc[0]
    assert ok["verdict"] == "met" and ok["reached (mean)"] == "1.750"
    bad = floor_table([_run("gpt", "tinyshakespeare", "gelu", [12.0], [2.5])]).iloc[0]
    assert bad["verdict"] == "missed by 0.700 nats/char"


def test_pairs_without_a_floor_and_labels():
    table = floor_table([_run("mlp", "adult", "gelu", [0.85])], labels={("mlp", "adult"): "MLP/Adult"})
    assert table.iloc[0]["pair"] == "MLP/Adult" and table.iloc[0]["floor"] == "no floor set"
    assert floor_for("mlp", "adult") is None and floor_for("vit", "cifar10") is FLOORS[("vit", "cifar10")]


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="no results"):
        floor_table([])
    with pytest.raises(ValueError, match="config"):
        floor_table([{"history": []}])
    with pytest.raises(ValueError, match="no finite"):
        floor_table([_run("vit", "cifar10", "gelu", [float("nan")])])

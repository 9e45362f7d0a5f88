"""The λ-GELU ResNet-18 pair's floor decision (page 11) is recomputed from the raw result files."""

from __future__ import annotations

import json
from statistics import mean

import pytest

from helpers.core.runtime import repo_root
from helpers.floor_decisions import resnet_pair_floor


def _best(experiment: str, **match) -> list[float]:
    values = []
    for path in sorted((repo_root() / "results" / experiment).glob("*.json")):
        result = json.loads(path.read_text())
        cfg = result["config"]
        if all(cfg.get(k) == v for k, v in match.items()):
            values.append(result["best_val_metric"])
    return values


def test_the_resnet_pair_floor_decision_matches_the_raw_result_files(monkeypatch):
    monkeypatch.delenv("REPRO_RESULTS_DIR")  # the committed results, not the test's empty folder
    decision = resnet_pair_floor()
    cpu = {"profile": "cpu", "model_kwargs": {"width_mult": 0.25}, "epochs": 20}
    gelu = _best("lgelu_cifar10_resnet", activation="gelu", **cpu)
    sgd_relu = _best("flexact_cifar", activation="relu", penultimate_activation=None, **cpu)
    assert decision["gelu_runs"] == len(gelu) == 5
    assert decision["gelu_mean"] == pytest.approx(mean(gelu))
    assert decision["sgd_relu_mean"] == pytest.approx(mean(sgd_relu))
    assert decision["shortfall_points"] == pytest.approx(100 * (0.85 - mean(gelu)))
    # the two recipes the page contrasts are what the runs were trained with
    assert decision["pair_recipe"].startswith("adamw") and decision["sgd_recipe"].startswith("sgd")
    assert decision["pair_runs"] == 22 and 5 < decision["pair_core_hours"] < 30

"""S-ReLU's run tables (rows with δ, runs loaded once) and its table claims, one function each."""

from __future__ import annotations

import math

import pytest

from helpers import methods  # noqa: F401  (registers the display names the claims print)
from helpers.core import tables as T
from helpers.srelu import claims as C
from helpers.srelu import protocol as P
from helpers.srelu import table_claims as TC
from helpers.srelu.claims import experiment_claims
from helpers.srelu.table_claims import StoredRuns, accuracy_rows, delta_of, load_runs


def _result(activation: str, kwargs: dict, seed: int, acc: float) -> dict:
    config = {
        "experiment": "x",
        "model": "vit",
        "dataset": "cifar10",
        "activation": activation,
        "activation_kwargs": kwargs,
        "penultimate_activation": None,
        "seed": seed,
    }
    history = [{"epoch": 1, "train_loss": 1.0, "val_loss": 1.0, "val_metric": acc}]
    return {"config": config, "history": history, "best_epoch": 1, "best_val_metric": acc, "status": "ok"}


def test_delta_of_reads_the_activation_kwargs_and_is_nan_without_one():
    assert delta_of(_result("srelu", {"delta": 0.01}, 0, 0.5)) == 0.01
    assert math.isnan(delta_of(_result("gelu", {}, 0, 0.5)))
    assert math.isnan(delta_of({"config": {"activation_kwargs": None}}))
    with pytest.raises(TypeError, match="'config' mapping, got list"):
        delta_of([])  # type: ignore[arg-type]


def test_accuracy_rows_group_by_delta():
    results = [_result("srelu", {"delta": d}, s, 0.5 + d / 100 + s / 1000) for d in (0.001, 1.0) for s in (0, 1)]
    rows = accuracy_rows(results)
    assert list(rows["delta"]) == [0.001, 0.001, 1.0, 1.0]
    summary = T.summarize(rows, "delta")
    assert list(summary.index) == [0.001, 1.0]
    assert summary.loc[1.0, "best_mean"] == pytest.approx(100 * (0.51 + 0.0005))


def test_load_runs_without_stored_results_is_empty_and_never_trains():
    runs = load_runs(P.delta_configs("cpu"), "delta", "cpu")
    assert runs == StoredRuns("cpu", None, None)


def test_each_table_claim_makes_the_key_its_docstring_names():
    empty = StoredRuns("cpu", None, None)
    made = {
        TC.table4_best_delta_claim: TC.table4_best_delta_claim(empty),
        TC.table4_large_delta_drop_claim: TC.table4_large_delta_drop_claim(empty),
        TC.beats_every_other_claim: TC.beats_every_other_claim("vit", empty),
        TC.margin_size_claim: TC.margin_size_claim("convnext", empty),
        TC.advantage_from_smoothing_claim: TC.advantage_from_smoothing_claim(
            dict.fromkeys(TC.BENCHMARKS, empty), "cpu"
        ),
        C.imagenet_convnext_claim: C.imagenet_convnext_claim(),
        C.cifar100_imagenet_tables_claim: C.cifar100_imagenet_tables_claim(),
        C.table1_average_row_claim: C.table1_average_row_claim(),
    }
    for fn, row in made.items():
        named = (fn.__doc__ or "").split("``")[1].replace("<model>", "vit" if "vit" in row.key else "convnext")
        assert row.key == named, fn.__name__


def test_run_claims_without_stored_runs_say_which_profile_is_missing():
    rows = experiment_claims("cpu")
    run_keys = [
        "srelu-table4-best-delta",
        "srelu-table4-large-delta-drop",
        "srelu-beats-every-other-vit",
        "srelu-margin-size-vit",
        "srelu-beats-every-other-convnext",
        "srelu-margin-size-convnext",
        "srelu-advantage-from-smoothing",
    ]
    assert [r.key for r in rows[: len(run_keys)]] == run_keys
    for row in rows[: len(run_keys)]:
        assert row.verdict == "not run here" and row.our_value == "—" and row.scale == ""
        assert row.note.startswith("cpu-profile results are not stored"), row.key
    assert rows[-1].key == "srelu-table1-average-row" and rows[-1].verdict == "confirmed"

"""The churn chapter: separable seeds, stored predictions, churn measures and their statistics."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
import torch

from helpers.churn import measures as M
from helpers.churn import protocol as P
from helpers.churn.predictions import decode_array, decode_predictions, encode_array
from helpers.core.results_cache import config_hash, load_result, run_or_load
from helpers.core.runs import TrainConfig, build_run, run_seeds
from helpers.core.runtime import repo_root, seed_everything


def _cfg(**overrides) -> TrainConfig:
    base = TrainConfig(
        experiment="churn_test",
        dataset="adult",
        model="mlp",
        activation="relu",
        n_train=64,
        n_val=32,
        epochs=1,
        batch_size=16,
        model_kwargs={"depth": 2, "width": 8},
    )
    return replace(base, **overrides)


def _start(cfg: TrainConfig) -> tuple[list[torch.Tensor], torch.Tensor]:
    """The initial weights and the first training batch's inputs, seeded as train_model seeds them."""
    seed_everything(run_seeds(cfg)[0])
    parts = build_run(cfg)
    return [p.detach().clone() for p in parts["model"].parameters()], next(iter(parts["train_loader"]))[0]


def _same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b))


# ------------------------------------------------------------------ separable seeds
def test_new_fields_at_their_defaults_leave_the_cache_key_unchanged():
    cfg = _cfg(seed=3)
    assert config_hash(cfg) == config_hash(replace(cfg, init_seed=None, order_seed=None, record_predictions=False))
    assert config_hash(replace(cfg, order_seed=3)) != config_hash(cfg)


def test_unset_seeds_reproduce_the_one_seed_run_exactly(require_dataset):
    require_dataset("adult")
    cfg = _cfg(seed=3)
    seed_everything(3)  # what train_model did before the fields existed
    parts = build_run(cfg)
    before = [p.detach().clone() for p in parts["model"].parameters()], next(iter(parts["train_loader"]))[0]
    weights, batch = _start(cfg)
    assert _same(weights, before[0]) and torch.equal(batch, before[1])


def test_order_seed_changes_the_data_order_and_not_the_initial_weights(require_dataset):
    require_dataset("adult")
    w0, b0 = _start(_cfg(init_seed=0, order_seed=0))
    w1, b1 = _start(_cfg(init_seed=0, order_seed=1))
    assert _same(w0, w1) and not torch.equal(b0, b1)


def test_init_seed_changes_the_initial_weights_and_not_the_data_order(require_dataset):
    require_dataset("adult")
    w0, b0 = _start(_cfg(init_seed=0, order_seed=0))
    w1, b1 = _start(_cfg(init_seed=1, order_seed=0))
    assert not _same(w0, w1) and torch.equal(b0, b1)


def test_training_draws_follow_the_order_seed_not_the_init_seed(require_dataset):
    require_dataset("adult")
    draws = []
    for init in (0, 1):
        _start(_cfg(init_seed=init, order_seed=5))
        draws.append(torch.rand(4))
    assert torch.equal(draws[0], draws[1])


def test_seeds_spelled_equal_to_seed_are_another_run_not_another_spelling(require_dataset):
    """Why init_seed = order_seed = seed keeps its own key (#55, one run one key): setting either
    seed gives training's random draws (augmentation, dropout) their own stream, so the run is not
    the unset one's; only the initial weights and the data order agree."""
    require_dataset("adult")
    draws = []
    for seeds in ({}, {"init_seed": 3, "order_seed": 3}):
        weights, batch = _start(_cfg(seed=3, **seeds))
        draws.append((weights, batch, torch.rand(4)))
    (w0, b0, r0), (w1, b1, r1) = draws
    assert _same(w0, w1) and torch.equal(b0, b1) and not torch.equal(r0, r1)
    assert config_hash(_cfg(seed=3)) != config_hash(_cfg(seed=3, init_seed=3, order_seed=3))


def test_seed_fields_reject_negative_values_and_predictions_need_classification():
    with pytest.raises(ValueError, match="init_seed"):
        _cfg(init_seed=-1)
    with pytest.raises(ValueError, match="order_seed"):
        _cfg(order_seed=1.5)
    with pytest.raises(ValueError, match="record_predictions"):
        TrainConfig(experiment="x", dataset="tinyshakespeare", model="gpt", record_predictions=True)


# ------------------------------------------------------------------ stored predictions
@pytest.mark.parametrize(
    "array",
    [np.arange(300, dtype=np.uint8) % 10, np.linspace(0, 1, 77).astype(np.float16), np.array([True, False, True] * 7)],
)
def test_encoded_arrays_round_trip(array):
    record = encode_array(array)
    assert record["dtype"] == str(array.dtype) and record["shape"] == [len(array)]
    np.testing.assert_array_equal(decode_array(record), array)


def test_a_damaged_encoded_array_is_refused():
    record = encode_array(np.arange(10, dtype=np.uint8))
    with pytest.raises(ValueError, match="values for shape"):
        decode_array({**record, "shape": [11]})
    with pytest.raises(ValueError, match="dtype"):
        encode_array(np.arange(3, dtype=np.int64))


def test_a_run_with_record_predictions_stores_the_final_networks_predictions(require_dataset, tmp_path, monkeypatch):
    require_dataset("adult")
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)  # this test trains on purpose; under CI a missing result is refused
    cfg = _cfg(activation="gelu", epochs=2, record_predictions=True, init_seed=0, order_seed=1)
    result = run_or_load(cfg)
    again = load_result(cfg)  # checksum verified
    preds = decode_predictions(again["predictions"])
    assert preds.epoch == 2 and len(preds.labels) == 32
    assert preds.accuracy == pytest.approx(result["history"][-1]["val_metric"])
    assert np.all((preds.top_prob >= preds.true_prob) | ~preds.correct)


# ------------------------------------------------------------------ measures
def test_top1_churn_and_churn_on_errors_count_the_differing_labels():
    a, b = np.array([0, 1, 2, 3]), np.array([0, 1, 9, 9])
    assert M.top1_churn(a, b) == 0.5
    ca, cb = np.array([True, True, True, False]), np.array([True, True, False, False])
    assert M.churn_on_errors(a, b, ca, cb) == 1.0
    with pytest.raises(ValueError, match="every example right"):
        M.churn_on_errors(a, a, np.ones(4, bool), np.ones(4, bool))


def test_relative_pd_is_the_mean_relative_gap_of_the_probabilities():
    assert M.relative_pd(np.array([0.2, 0.0]), np.array([0.6, 0.0])) == pytest.approx((0.4 / 0.8 + 0) / 2)
    with pytest.raises(ValueError, match="probabilities"):
        M.relative_pd(np.array([1.5]), np.array([0.5]))


def _matrix(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    labels = [rng.integers(0, 3, size=200) for _ in range(n)]
    return M.pair_matrix(labels, M.top1_churn)


def test_u_jackknife_matches_brute_force_leave_one_model_out():
    m = _matrix(7, 1)
    u, se = M.u_jackknife(m)
    loo = np.array([M.u_statistic(np.delete(np.delete(m, i, 0), i, 1)) for i in range(7)])
    assert u == pytest.approx(np.mean([m[i, j] for i, j in itertools.combinations(range(7), 2)]))
    assert se == pytest.approx(np.sqrt(6 / 7 * np.sum((loo - loo.mean()) ** 2)))


def test_u_jackknife_tracks_the_sampling_spread_of_pairwise_churn():
    """Models with their own error rates: pairs share models, so the spread is the models'."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 10, size=400)

    def replicas(n: int) -> list[np.ndarray]:
        rates = rng.uniform(0.05, 0.4, size=n)
        return [np.where(rng.random(400) < r, rng.integers(0, 10, size=400), truth) for r in rates]

    us, ses = zip(*(M.u_jackknife(M.pair_matrix(replicas(8), M.top1_churn)) for _ in range(400)))
    assert np.mean(ses) == pytest.approx(np.std(us), rel=0.3)


def test_paired_u_comparison_finds_a_real_difference_and_not_a_null_one():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 10, size=2000)

    def arm(rate: float) -> np.ndarray:
        return M.pair_matrix(
            [np.where(rng.random(2000) < rate, rng.integers(0, 10, size=2000), truth) for _ in range(8)], M.top1_churn
        )

    low, high = arm(0.05), arm(0.2)
    diff = M.paired_u_comparison(low, high, scale=100.0)
    assert diff.ci_high < 0 and diff.n == 8 and diff.df == 7
    same = M.paired_u_comparison(low, low)
    assert same.effect == 0 and same.exact


def test_the_two_way_interval_covers_the_test_set_that_the_replica_jackknife_holds_fixed():
    """Every pair of arm a disagrees on the same 20 of 10,000 examples, arm b's on none: the
    replicas agree exactly, so the jackknife over replicas sees no spread (an exact result), while
    another draw of 10,000 examples would hold about 20 ± √20 of them: the two-way SE is √20/E."""
    n_examples, n_rep = 10_000, 8
    base = np.zeros(n_examples, dtype=np.uint8)
    flips = np.arange(20)
    arm_a = [base.copy() for _ in range(n_rep)]
    for k, labels in enumerate(arm_a):
        labels[flips] = k % 2  # replicas alternate on these examples: half the pairs disagree there
    arm_b = [base.copy() for _ in range(n_rep)]
    jack = M.paired_u_comparison(M.pair_matrix(arm_a, M.top1_churn), M.pair_matrix(arm_b, M.top1_churn), scale=100.0)
    two = M.two_way_u_comparison(arm_a, arm_b, scale=100.0)
    assert two.effect == pytest.approx(jack.effect) and jack.effect > 0
    assert jack.se < two.se  # the test examples' share of the spread
    disagreeing_pairs = 16 / 28  # pairs of replicas of different parity
    expected = 100 * disagreeing_pairs * np.sqrt(20) / n_examples
    assert two.se == pytest.approx(expected, rel=0.35)
    assert two.test.startswith("paired") and "two-way bootstrap" in two.test
    again = M.two_way_u_comparison(arm_a, arm_b, scale=100.0)
    assert (again.ci_low, again.ci_high) == (two.ci_low, two.ci_high)  # seeded: the same on every call


def test_the_two_way_comparison_refuses_unpaired_or_too_few_replicas():
    labels = [np.zeros(50, dtype=np.uint8)] * 3
    with pytest.raises(ValueError, match="same replicas"):
        M.two_way_u_comparison(labels, labels[:2] + labels)
    with pytest.raises(M.InsufficientData):
        M.two_way_u_comparison(labels[:2], labels[:2])
    with pytest.raises(ValueError, match="examples"):
        M.two_way_u_comparison(labels, [np.zeros(40, dtype=np.uint8)] * 3)


# ------------------------------------------------------------------ protocol
def test_protocol_lists_eight_replicas_per_source_sharing_only_replica_zero():
    for model in P.MODELS:
        runs = P.retrain_configs(model)
        assert len(runs) == len(P.ARMS) * (3 * P.REPLICAS - 2)
        assert all(c.record_predictions for c in runs)
        assert len({config_hash(c) for c in runs}) == len(runs)
    order = P.churn_configs("mlp", "relu", "order")
    assert {c.init_seed for c in order} == {0} and [c.order_seed for c in order] == list(range(P.REPLICAS))


def test_protocol_runs_are_replica_major():
    runs = P.retrain_configs("conv")
    first = [max(c.init_seed, c.order_seed) for c in runs]
    assert first == sorted(first)


def test_cost_estimate_fits_the_budget():
    est = P.cost_estimate(root=repo_root() / "results")  # the committed results, not the tests' folder
    assert est["runs"] == sum(len(P.retrain_configs(m)) for m in P.MODELS)
    assert 0 < est["core_hours"] <= P.BUDGET_CORE_HOURS


def test_claims_say_not_run_here_while_the_runs_are_pending():
    from helpers.churn import claims as C

    rows = C.claims()
    assert len(rows) == 4
    for row in rows:
        if row.verdict == "not run here":
            assert "pending" in row.note and "retrain" in row.note


def _fake_predictions(n_replicas: int, flip: float, seed: int) -> dict:
    """Replicas of one arm: the true labels with a share ``flip`` of them changed at random."""
    from helpers.churn.predictions import Predictions

    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 10, 2000)
    out = {}
    for k in range(n_replicas):
        labels = np.where(rng.random(2000) < flip, (truth + 1) % 10, truth).astype(np.uint8)
        prob = np.full(2000, 0.9, dtype=np.float16)
        out[k] = Predictions(labels, prob, prob, labels == truth, "same", 6)
    return out


def test_a_claim_is_decided_on_the_model_whose_replicas_are_complete(monkeypatch):
    from helpers.churn import claims as C

    flips = {"relu": 0.10, "smelu_0.5": 0.06, "smelu_2": 0.03, "gelu": 0.05, "srelu_0.001": 0.10}

    def fake(model, arm, source="both", key="predictions"):
        n = C.REPLICAS if model == "mlp" else 3  # the convolutional network is still training
        return _fake_predictions(n, flips.get(arm, 0.05), seed=sum(map(ord, model + arm)))

    monkeypatch.setattr(C, "replica_predictions", fake)
    row = C.smooth_reduces_churn()
    assert row.verdict == "confirmed", row  # every smooth arm flips fewer labels than ReLU
    assert "Decided on MLP / Fashion-MNIST only" in row.note and "12 of 32 committed" in row.note  # 4 arms × 3 replicas
    assert "ResNet" not in row.our_value and "ResNet" not in row.scale
    monkeypatch.setattr(C, "replica_predictions", lambda model, arm, source="both", key="predictions": {})
    assert C.smooth_reduces_churn().verdict == "not run here"


def test_floor_frame_holds_gelu_against_the_books_floor_and_the_chapters(monkeypatch):
    """The committed GELU replicas: the MLP judged by the book's floor twice, the ResNet by the
    book's ResNet-18 floor and by CONV_FLOOR, each verdict agreeing with the mean it reports."""
    from helpers.churn import summary
    from helpers.core.floors import floor_for

    monkeypatch.delenv("REPRO_RESULTS_DIR", raising=False)
    frame = summary.floor_frame()
    assert list(frame.index) == [m.label for m in P.MODELS.values()]
    assert (frame["runs"] == P.REPLICAS).all() and (frame["baseline"] == "gelu").all()
    mlp, conv = (frame.loc[m.label] for m in P.MODELS.values())
    assert mlp["floor (chapter)"] == mlp["floor"] and mlp["verdict (chapter)"] == mlp["verdict"]
    assert conv["floor"] == floor_for("resnet18", "cifar10").text()
    assert conv["floor (chapter)"] == f"≥ {100 * P.CONV_FLOOR:.0f} % accuracy"
    reached = float(conv["reached (mean)"].rstrip(" %")) / 100
    assert (conv["verdict (chapter)"] == "met") == (reached >= P.CONV_FLOOR)
    assert (conv["verdict"] == "met") == (reached >= floor_for("resnet18", "cifar10").value)


def test_a_contradicted_churn_row_states_the_reading_it_rests_on(monkeypatch):
    from helpers.churn import claims as C

    flips = {"relu": 0.05, "smelu_0.5": 0.03, "smelu_2": 0.02, "gelu": 0.12, "lgelu": 0.12, "lgelu_anneal": 0.03}

    def fake(model, arm, source="both", key="predictions"):
        return _fake_predictions(C.REPLICAS, flips.get(arm, 0.05), seed=sum(map(ord, model + arm)))

    monkeypatch.setattr(C, "replica_predictions", fake)
    smooth = C.smooth_reduces_churn()  # only GELU has more churn than ReLU: the row rests on counting it in
    assert smooth.verdict_label == "contradicted at our scale, under our reading" and "GELU" in smooth.reading
    annealed = C.annealed_keeps_smooth_churn()  # far less churn after annealing: a miss on the good side
    assert annealed.verdict == "contradicted" and "favourable direction" in annealed.reading
    assert "±0.5" in annealed.reading
    flips.update({"gelu": 0.02, "smelu_0.5": 0.08})  # now a SmeLU arm contradicts, which the GELU reading
    smelu = C.smooth_reduces_churn()  # does not decide
    assert smelu.verdict == "contradicted" and smelu.reading == ""


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ("labels", "labels outside the 10 classes"),
        ("top_prob", "top_prob values outside [0, 1]"),
        ("correct", "examples whose probabilities disagree with 'correct'"),
        ("truncated", "its data is not valid zlib+base64"),
    ],
)
def test_a_restamped_churn_payload_with_impossible_predictions_is_refused(tmp_path, edit, problem):
    """A committed churn result whose predictions were edited and whose checksum was recomputed
    (so the checksum passes): out-of-range labels (200 of 10 classes), probabilities (7.0),
    'correct' flags that contradict the probabilities, or truncated data are refused by
    verify_results and by the decoder the churn rows use, naming the file and the entry."""
    import json
    import re

    from helpers.core.result_files import CorruptResult, with_checksum
    from tools.verify_results import _config_classes, verify_file

    source = sorted((repo_root() / "results" / "churn_cifar10").glob("*.json"))[0]
    data = json.loads(source.read_text())
    record = dict(data["predictions"])
    if edit == "labels":
        labels = decode_array(record["labels"]).copy()
        labels[:200] = 200
        record["labels"] = encode_array(labels)
    elif edit == "top_prob":
        top = decode_array(record["top_prob"]).copy()
        top[3] = 7.0
        record["top_prob"] = encode_array(top)
    elif edit == "correct":
        record["correct"] = encode_array(~decode_array(record["correct"]))
    else:
        record["labels"] = {**record["labels"], "data": record["labels"]["data"][:40]}
    path = tmp_path / source.name
    path.write_text(json.dumps(with_checksum({**data, "predictions": record})))
    with pytest.raises(CorruptResult, match=rf"{re.escape(str(path))}: predictions: .*{re.escape(problem)}"):
        verify_file(path, _config_classes())
    with pytest.raises(ValueError, match=re.escape(problem)):
        decode_predictions(record, 10)
    decode_predictions(data["predictions"], 10)  # the committed record itself passes

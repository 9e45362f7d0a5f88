"""The ReLU-ization chapter (notebooks 40-41): its analyses on small hand-made models whose answer
is known, the schedules it adds to training, the int8 path, and its claims on synthetic results."""

from __future__ import annotations

import importlib.util
import json
import math
import types
from dataclasses import replace

import numpy as np
import pytest
import sympy as sp
import torch
from scipy.stats import norm
from torch import nn

from helpers.core.models import MLP, build_model
from helpers.core.results_cache import config_hash, run_or_load
from helpers.core.runtime import repo_root
from helpers.lambda_gelu.activation import LambdaGELU
from helpers.lambda_gelu.hardness import expected_gate_error, lambda_target
from helpers.lambda_gelu.layer_targets import (
    LayerwiseAnnealing,
    PreactivationRecorder,
    activation_error,
    gate_error,
    layer_lambda_target,
    normal_gate_error,
    strided_sample,
)
from helpers.lambda_gelu.options import LambdaGeluOptions
from helpers.lambda_gelu.protocol import (
    FIGURE_CPU,
    pair_config,
    table1_configs,
    table2_configs,
)
from helpers.lambda_gelu.protocol import (
    SCALES as LAMBDA_GELU_SCALES,
)
from helpers.relu_ization import analysis as A
from helpers.relu_ization import claims as C
from helpers.relu_ization import experiment as E
from helpers.relu_ization import protocol as P
from helpers.relu_ization.experiment import swap_to_relu
from helpers.relu_ization.latency import latency_claims, load_record, measurement, pair_record, timed_weights_current
from helpers.relu_ization.quantize import module_summary, quantize_int8, quantized_engine
from helpers.relu_ization.regions import (
    count_regions,
    grid_pattern_changes,
    line_endpoints,
    line_pieces,
    relu_mlp_layers,
)
from helpers.relu_ization.sparsity import exact_zero_fraction, zero_fractions
from helpers.srelu.activation import SReLU
from helpers.srelu.options import SReluOptions
from helpers.srelu.theory import DELTA, gate_l1_gap
from helpers.srelu.training import GATE_GAP_PER_DELTA, DeltaAnnealing, delta_for_gate_gap, gate_gap, set_srelu_delta


# ------------------------------------------------------------------------------------ sparsity
def test_zero_fraction_of_a_relu_layer_on_known_inputs():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    with torch.no_grad():
        model[0].weight.copy_(torch.eye(4))
        model[0].bias.zero_()
    x = torch.tensor([[-1.0, 0.0, 2.0, -3.0], [1.0, 1.0, 1.0, -0.5]])  # zeros: 3 + 1 of 8
    out = zero_fractions(model, [x])
    assert out["sites"] == ["1"] and out["zero_fraction"] == [0.5] and out["n_values"] == [8]
    gelu = nn.Sequential(nn.Linear(4, 4), nn.GELU())
    gelu.load_state_dict(model.state_dict())
    assert zero_fractions(gelu, [x])["zero_fraction"] == [1 / 8]  # only GELU(0) = 0 exactly
    assert exact_zero_fraction(torch.tensor([0.0, -0.0, 1.0, 2.0])) == 0.5


def test_zero_fractions_rejects_bad_inputs():
    with pytest.raises(ValueError, match="no activation site"):
        zero_fractions(nn.Linear(2, 2), [torch.zeros(1, 2)])
    with pytest.raises(ValueError, match="empty"):
        zero_fractions(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), [])
    with pytest.raises(ValueError):
        exact_zero_fraction(torch.zeros(0))


# ------------------------------------------------------------------------------ linear regions
def _one_hidden_layer(weights, biases) -> MLP:
    model = MLP(1, 1, depth=1, width=len(weights), act=nn.ReLU)
    with torch.no_grad():
        model.body[0].weight.copy_(torch.tensor(weights, dtype=torch.float32)[:, None])
        model.body[0].bias.copy_(torch.tensor(biases, dtype=torch.float32))
    return model


def test_one_hidden_layer_regions_match_the_analytic_count():
    # units switch at t = 0.1, 0.3 and 0.7 on the segment 0 → 1: four pieces, four patterns
    model = _one_hidden_layer([1.0, 1.0, -1.0], [-0.1, -0.3, 0.7])
    edges, patterns = line_pieces(relu_mlp_layers(model), [0.0], [1.0])
    np.testing.assert_allclose(edges, [0.0, 0.1, 0.3, 0.7, 1.0], atol=1e-7)
    assert patterns.tolist() == [[False, False, True], [True, False, True], [True, True, True], [True, True, False]]
    assert count_regions(model, [[0.0]], [[1.0]]) == {"pieces": [4], "distinct": [4], "length": [1.0]}
    # a unit whose root lies outside the segment adds nothing; two units with one root add one piece
    model = _one_hidden_layer([1.0, 2.0, 1.0], [-0.5, -1.0, 5.0])
    assert count_regions(model, [[0.0]], [[1.0]])["pieces"] == [2]


def test_exact_regions_agree_with_a_fine_grid_on_a_deep_network():
    torch.manual_seed(3)
    model = MLP(5, 2, depth=3, width=12, act=nn.ReLU)
    a, b = torch.randn(5), torch.randn(5)
    edges, patterns = line_pieces(relu_mlp_layers(model), a, b)
    assert np.all(np.diff(edges) > 0) and len(patterns) > 3
    assert all((p != q).any() for p, q in zip(patterns[:-1], patterns[1:]))  # adjacent pieces differ
    resolution = int(4 / np.diff(edges).min()) + 2  # several grid points inside the thinnest piece
    assert grid_pattern_changes(model, a, b, resolution) == len(patterns) - 1
    assert grid_pattern_changes(model, a, b, 3) <= len(patterns) - 1  # a coarse grid undercounts


def test_regions_reject_non_relu_models_and_degenerate_lines():
    with pytest.raises(ValueError, match="ReLU"):
        relu_mlp_layers(MLP(3, 2, depth=2, width=4, act=nn.GELU))
    with pytest.raises(ValueError, match="ReLU MLP"):
        relu_mlp_layers(nn.Sequential(nn.Linear(2, 2), nn.ReLU()))
    model = MLP(3, 2, depth=2, width=4, act=nn.ReLU)
    with pytest.raises(ValueError, match="same point"):
        line_pieces(relu_mlp_layers(model), [1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="input size"):
        line_pieces(relu_mlp_layers(model), [1.0, 2.0], [1.0, 3.0])


def test_line_endpoints_pair_distinct_points_reproducibly():
    x = torch.arange(10.0)[:, None]
    s1, e1 = line_endpoints(x, 50, seed=0)
    s2, e2 = line_endpoints(x, 50, seed=0)
    assert torch.equal(s1, s2) and torch.equal(e1, e2) and not torch.any(s1 == e1)


# -------------------------------------------------------------------------- per-layer targets
def test_gate_error_of_a_normal_sample_matches_the_closed_form():
    rng = np.random.default_rng(0)
    sample = rng.normal(0.0, 2.0, 400_000)
    for lam in (1.0, 10.0, 160.0):
        assert gate_error(sample, lam) == pytest.approx(normal_gate_error(lam, 2.0), rel=0.02)
    eps = 5e-3
    exact = 1.0 / (2.0 * math.tan(math.pi * eps))  # G(λ) = arctan(1/(λσ))/π = ε
    assert normal_gate_error(exact, 2.0) == pytest.approx(eps, rel=1e-12)
    assert layer_lambda_target(sample, eps) == pytest.approx(exact, rel=0.02)
    # for large λ, G ≈ p(0)·E∞(λ): the per-layer target is about p(0)·λ_target
    p0 = 1.0 / (2.0 * math.sqrt(2 * math.pi))
    assert exact == pytest.approx(p0 * lambda_target(eps), rel=1e-3)


def test_layer_target_of_a_two_point_distribution_is_exact():
    # x = ±a only: G(λ) = Φ(−λa), so λ = −Φ⁻¹(ε)/a
    a, eps = 0.25, 0.01
    lam = layer_lambda_target(np.array([a, -a, a, -a]), eps)
    assert lam == pytest.approx(-norm.ppf(eps) / a, rel=1e-9)
    assert gate_error([a, -a], lam) == pytest.approx(eps, rel=1e-8)
    assert gate_error([a, -a], 0.99 * lam) > eps
    assert layer_lambda_target([100.0, -100.0], 0.01) == 1.0  # GELU already meets ε
    assert activation_error([a, -a], lam) == pytest.approx(a * eps, rel=1e-8)


def test_layer_target_rejects_bad_inputs():
    with pytest.raises(ValueError, match="eps"):
        layer_lambda_target([1.0, -1.0], 0.6)
    with pytest.raises(ValueError, match="empty"):
        layer_lambda_target([], 0.01)
    with pytest.raises(ValueError, match="NaN"):
        gate_error([1.0, float("nan")], 2.0)
    with pytest.raises(ValueError, match="no λ"):
        layer_lambda_target(np.zeros(10), 0.01)  # every input at 0: the gate error stays 1/2
    with pytest.raises(ValueError, match="lam"):
        gate_error([1.0], -1.0)


def test_strided_sample_is_evenly_spaced_and_bounded():
    x = torch.arange(100.0)
    assert torch.equal(strided_sample(x, 4), torch.tensor([0.0, 25.0, 50.0, 75.0]))
    assert torch.equal(strided_sample(x, 1000), x)
    with pytest.raises(ValueError):
        strided_sample(x, 0)


def _lgelu_net() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 8), LambdaGELU(t=0.1), nn.Linear(8, 8), LambdaGELU(t=0.1))


def test_layerwise_annealing_records_targets_and_anneals_each_layer_to_its_own():
    torch.manual_seed(0)
    model = _lgelu_net()
    hook = LayerwiseAnnealing(total_epochs=5, eps=0.01, switch_fraction=0.4)  # e_s = 2
    hook.on_epoch_start(1, model)
    model.train()
    model(torch.randn(16, 3))
    assert hook.epoch_record(model) == {}  # epoch 1 is not the switch epoch
    hook.on_epoch_start(2, model)
    batches = [torch.randn(32, 3) for _ in range(3)]
    recorder = PreactivationRecorder([model[1], model[3]], per_batch=10_000)
    for x in batches:
        model(x)
    model.eval()
    model(torch.randn(50, 3))  # evaluation passes are not recorded
    seen = recorder.samples()
    recorder.remove()
    record = hook.epoch_record(model)
    expected = [layer_lambda_target(s, 0.01) for s in seen]
    assert record["lambda_targets"] == pytest.approx(expected, rel=1e-12)
    starts = [float(m.base_lam.detach()) for m in (model[1], model[3])]
    lams = hook.on_epoch_start(4, model)  # w = (4 − 2)/(5 − 2)
    assert lams == pytest.approx([s + (2 / 3) * (t - s) for s, t in zip(starts, expected)], rel=1e-5)
    assert hook.on_epoch_start(5, model) == pytest.approx(expected, rel=1e-6)
    resumed = LayerwiseAnnealing(total_epochs=5, eps=0.01, switch_fraction=0.4)
    resumed.load_state_dict(hook.state_dict())  # a resumed run keeps the targets
    assert resumed.targets == hook.targets


def test_layerwise_annealing_needs_a_learning_epoch_and_its_targets():
    with pytest.raises(ValueError, match="learning epoch"):
        LayerwiseAnnealing(total_epochs=2, eps=0.01, switch_fraction=0.25)
    hook = LayerwiseAnnealing(total_epochs=4, eps=0.01)
    with pytest.raises(RuntimeError, match="targets"):
        hook.on_epoch_start(3, _lgelu_net())
    with pytest.raises(ValueError, match="eps"):
        LayerwiseAnnealing(total_epochs=4, eps=0.0)


# --------------------------------------------------------------------------------- δ schedule
def test_delta_schedule_endpoints_and_harmonic_ramp():
    hook = DeltaAnnealing(12, 2.0, 0.01, switch_fraction=0.25)
    assert hook.switch_epoch == 3
    assert [hook.delta_at(e) for e in (1, 2, 3)] == [2.0, 2.0, 2.0]
    assert hook.delta_at(12) == 0.01  # exactly the target
    inverse = np.array([1 / hook.delta_at(e) for e in range(3, 13)])
    np.testing.assert_allclose(np.diff(inverse), (1 / 0.01 - 1 / 2.0) / 9, rtol=1e-12)  # 1/δ linear, like λ
    assert all(
        a > b for a, b in zip([hook.delta_at(e) for e in range(3, 12)], [hook.delta_at(e) for e in range(4, 13)])
    )
    with pytest.raises(ValueError, match="epoch"):
        hook.delta_at(13)
    with pytest.raises(ValueError, match="delta_target"):
        DeltaAnnealing(12, 2.0, 0.0)


def test_delta_schedule_sets_every_srelu_module():
    model = nn.Sequential(nn.Linear(2, 2), SReLU(0.5), nn.Linear(2, 2), SReLU(0.5))
    hook = DeltaAnnealing(4, 0.5, 0.02, switch_fraction=0.5)
    hook.on_epoch_start(4, model)
    assert [m.delta for m in (model[1], model[3])] == [0.02, 0.02]
    assert hook.epoch_record(model) == {"delta": 0.02}
    with pytest.raises(ValueError, match="learn"):
        SReLU(0.1, learnable=True).set_delta(0.05)
    with pytest.raises(ValueError, match="no SReLU"):
        set_srelu_delta(nn.Sequential(nn.ReLU()), 0.1)


def test_srelu_gate_gap_constant_is_the_sympy_integral():
    assert sp.simplify(gate_l1_gap() - GATE_GAP_PER_DELTA * DELTA) == 0
    assert gate_gap(delta_for_gate_gap(0.005)) == pytest.approx(0.005)
    # the chapter's S-ReLU start and end sit at λ-GELU's gate error for λ = 1 and λ_target
    assert gate_gap(P.DELTA_START) == pytest.approx(expected_gate_error(1.0))
    assert gate_gap(P.DELTA_TARGET) == pytest.approx(expected_gate_error(P.LAMBDA_TARGET))


def test_train_config_checks_the_new_annealing_fields():
    base = pair_config("fmnist", "smoke", activation="lambda_gelu", mode="uniform", seed=0, anneal=True)
    lgelu = base.option(LambdaGeluOptions)
    with pytest.raises(ValueError, match="exclude each other"):
        replace(lgelu, anneal_layer_eps=0.005)
    with pytest.raises(ValueError, match="anneal_layer_eps"):
        replace(lgelu, anneal_target=None, anneal_layer_eps=0.7)
    layerwise = replace(lgelu, anneal_target=None, anneal_layer_eps=0.005)
    with pytest.raises(ValueError, match="last learning epoch"):
        base.with_options(layerwise, epochs=2)
    relu = pair_config("fmnist", "smoke", activation="relu", seed=0)
    with pytest.raises(ValueError, match="fixed S-ReLU"):
        relu.with_options(SReluOptions(delta_anneal_target=0.01))
    with pytest.raises(ValueError, match="delta_anneal_target"):
        SReluOptions(delta_anneal_target=-1.0)


# ------------------------------------------------------------------------------------- int8
def test_int8_path_on_a_tiny_model():
    torch.manual_seed(0)
    relu = MLP(6, 3, depth=2, width=16, act=nn.ReLU).eval()
    calibration = [torch.randn(32, 6) for _ in range(4)]
    q = quantize_int8(relu, calibration)
    assert module_summary(q) == {"int8": {"Linear": 1, "LinearReLU": 2}, "float": {}}
    with quantized_engine():
        y, y_again = q(calibration[0]), q(calibration[0])
    assert torch.equal(y, y_again)  # deterministic
    assert (y - relu(calibration[0])).abs().max() < 0.05 * relu(calibration[0]).abs().max()
    gelu = MLP(6, 3, depth=2, width=16, act=nn.GELU).eval()
    assert module_summary(quantize_int8(gelu, calibration))["float"] == {"GELU": 2}
    lgelu = MLP(6, 3, depth=2, width=16, act=lambda: LambdaGELU(t=0.1)).eval()
    assert module_summary(quantize_int8(lgelu, calibration))["float"] == {"LambdaGELU": 2}


def test_int8_engine_context_restores_the_global_state():
    torch.use_deterministic_algorithms(True)
    engine = torch.backends.quantized.engine
    try:
        with quantized_engine():
            assert torch.backends.quantized.engine == "x86"
            assert not torch.are_deterministic_algorithms_enabled()
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.backends.quantized.engine == engine
    finally:
        torch.use_deterministic_algorithms(False)
    with pytest.raises(ValueError, match="not supported"):
        with quantized_engine("no-such-engine"):
            pass


def test_int8_rejects_bad_inputs():
    model = MLP(6, 3, depth=1, width=4).eval()
    with pytest.raises(ValueError, match="calibration is empty"):
        quantize_int8(model, [])
    with pytest.raises(ValueError, match="scope"):
        quantize_int8(model, [torch.zeros(2, 6)], scope="everything")
    with pytest.raises(ValueError, match="FeedForward"):
        quantize_int8(model, [torch.zeros(2, 6)], scope="feedforward")


def test_feedforward_scope_quantises_only_the_transformer_mlps():
    torch.manual_seed(0)
    gpt = build_model("gpt", vocab_size=11, act=nn.ReLU, layers=2, dim=16, heads=2, block_size=8).eval()
    tokens = [torch.randint(0, 11, (4, 8)) for _ in range(2)]
    q = quantize_int8(gpt, tokens, scope="feedforward")
    summary = module_summary(q)
    assert summary["int8"] == {"Linear": 2, "LinearReLU": 2}
    assert summary["float"]["LayerNorm"] == 5 and summary["float"]["Linear"] == 5  # attention and head


def test_swap_to_relu_replaces_every_smooth_activation():
    model = nn.Sequential(nn.Linear(2, 2), nn.GELU(), LambdaGELU(t=0.1), SReLU(0.1), nn.ReLU())
    swapped = swap_to_relu(model)
    assert [type(m) for m in swapped][1:] == [nn.ReLU] * 4 and isinstance(model[1], nn.GELU)
    relu = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    assert swap_to_relu(relu) is relu


# ------------------------------------------------------------------------------------- protocol
def test_shared_arms_are_the_committed_lambda_gelu_runs():
    for arm, kw in (
        ("gelu", {"activation": "gelu"}),
        ("relu", {"activation": "relu"}),
        ("lgelu_anneal", {"activation": "lambda_gelu", "mode": "uniform", "anneal": True}),
    ):
        ours = P.arm_train_config("fmnist", arm, 1, "cpu")
        scale = P.pair_scale("fmnist", "cpu")
        assert config_hash(ours) == config_hash(pair_config("fmnist", "cpu", seed=1, scale=scale, **kw))
        # at the decisive scale (the retrain's batch (h)) they are the committed Table I/II runs
        assert config_hash(ours) in {
            config_hash(c) for c in table1_configs("cpu", ("fmnist",)) + table2_configs("cpu", ("fmnist",))
        }
    srelu = P.arm_train_config("fmnist", "srelu_anneal", 0, "cpu")
    assert (
        srelu.activation_kwargs == {"delta": P.DELTA_START}
        and srelu.option(SReluOptions).delta_anneal_target == P.DELTA_TARGET
    )
    # the ResNet pair runs at the decisive scale of batches (c)/(d), whose runs its shared arms are
    shared = {
        config_hash(P.arm_train_config("cifar10_resnet", arm, s, "cpu"))
        for arm in ("gelu", "relu", "lgelu_anneal")
        for s in (0, 1, 2)
    }
    assert shared <= {
        config_hash(c) for c in table1_configs("cpu", ("cifar10_resnet",)) + table2_configs("cpu", ("cifar10_resnet",))
    }


def test_each_pair_runs_its_lambda_gelu_pairs_scales_but_where_the_chapter_changes_the_cpu_one():
    for key, spec in P.RELU_PAIRS.items():
        for profile in ("smoke", "paper"):
            assert P.pair_scale(key, profile) is LAMBDA_GELU_SCALES[spec.lgelu_pair][profile], key
    # the cpu pairs (batches (h), (l), (j), (k) of the retrain, all committed): λ-GELU's decisive
    # scales, the MLP one with 17 seeds (batch (q)), the GPT one with 8 (batches (s), (t)), the ResNet one
    # with three seeds, and the S-ReLU chapter's decisive ViT
    mlp, lgelu_mlp = P.pair_scale("fmnist", "cpu"), LAMBDA_GELU_SCALES["fmnist"]["cpu"]
    # ... and each states the looks its seed count took (seeds added after the plan looked at the rows)
    assert mlp.seeds == tuple(range(17)) and replace(mlp, seeds=lgelu_mlp.seeds, looks=1) == lgelu_mlp
    gpt, lgelu_gpt = P.pair_scale("gpt", "cpu"), LAMBDA_GELU_SCALES["wikitext_gpt"]["cpu"]
    assert gpt.seeds == tuple(range(8)) and replace(gpt, seeds=lgelu_gpt.seeds, looks=1) == lgelu_gpt
    assert P.pair_scale("vit", "cpu") is P.VIT_CPU
    resnet, lgelu_resnet = P.pair_scale("cifar10_resnet", "cpu"), LAMBDA_GELU_SCALES["cifar10_resnet"]["cpu"]
    assert resnet.seeds == (0, 1, 2) != lgelu_resnet.seeds and replace(resnet, seeds=lgelu_resnet.seeds) == lgelu_resnet
    assert P.cpu_pairs() == tuple(P.RELU_PAIRS) and P.pending_pairs() == {}
    configs = E.reluization_configs("fmnist", "cpu")
    assert len(configs) == 17 * len(P.TRAIN_ARMS)
    assert [c.seed for c in configs] == sorted(c.seed for c in configs)  # seed-major
    # a scale given explicitly (here the earlier one of Fig. 1) gives other runs, with its seeds
    earlier = E.reluization_configs("fmnist", "cpu", scale=FIGURE_CPU["fmnist"])
    assert len(earlier) == len(FIGURE_CPU["fmnist"].seeds) * len(P.TRAIN_ARMS)
    assert not {config_hash(c) for c in configs} & {config_hash(c) for c in earlier}


def test_reluization_config_key_follows_the_pair_scale():
    cfg = E.reluization_config("fmnist", "relu", 0, "cpu")
    assert cfg.train_config() == P.arm_train_config("fmnist", "relu", 0, "cpu")
    bigger = replace(cfg, train={**cfg.train, "n_train": 60000})
    assert config_hash(bigger) != config_hash(cfg)  # a new scale is a new run, never a stale load
    with pytest.raises(ValueError, match="ReluizationConfig.arm must be one of 'gelu', 'lgelu_anneal'"):
        replace(cfg, arm="gelu_swap")
    with pytest.raises(ValueError, match="profile"):
        replace(cfg, profile="smoke")
    smoke = P.arm_train_config("gpt", "lgelu_layerwise", 0, "smoke")
    assert smoke.epochs >= 2 and math.floor(smoke.anneal_switch * smoke.epochs) >= 1


# ------------------------------------------------------------------------ runner, tables, claims
@pytest.mark.slow
def test_smoke_run_of_every_arm_and_its_tables_and_claims(require_dataset):
    require_dataset("fashion_mnist")
    results = [run_or_load(cfg) for cfg in E.reluization_configs("fmnist", "smoke")]
    by_arm = {r["config"]["arm"]: r for r in results}
    assert by_arm["relu"]["before_swap"] == by_arm["relu"]["after_swap"]
    # a run records its CPU time beside its wall time (the budget's check on paused runs); one
    # thread, never paused here, so the two agree to within the process's own overheads
    assert all(0 < r["cpu_seconds"] <= r["train_seconds"] * 1.5 + 1 for r in results)
    assert all("cpu_seconds" not in r["train"] for r in results)
    assert all(0 <= z <= 1 for r in results for z in r["sparsity"]["after_swap"])
    assert by_arm["srelu_anneal"]["train"]["history"][-1]["delta"] == P.DELTA_TARGET
    assert by_arm["lgelu_anneal"]["train"]["history"][-1]["lambdas"] == pytest.approx([P.LAMBDA_TARGET] * 4, rel=1e-6)
    targets = next(
        row["lambda_targets"] for row in by_arm["lgelu_layerwise"]["train"]["history"] if "lambda_targets" in row
    )
    assert by_arm["lgelu_layerwise"]["train"]["history"][-1]["lambdas"] == pytest.approx(targets, rel=1e-6)
    assert len(by_arm["gelu"]["regions"]["pieces"]) == E.reluization_config("fmnist", "gelu", 0, "smoke").n_lines
    rows = A.arm_rows(results)
    assert list(rows["arm"]) == list(P.ARMS)
    assert A.summary_table(rows).shape[0] == len(P.ARMS)
    found = C.pair_claims("fmnist", results, "smoke")
    assert found and all(c.verdict == "inconclusive" for c in found)  # one seed: no interval, never a verdict


def test_an_arm_reuses_the_final_weights_its_committed_run_kept(require_dataset, monkeypatch):
    """The retrain keeps each run's final weights (REPRO_KEEP_FINAL_WEIGHTS): the GELU arm then
    analyses that run's own network instead of training it again, with the same numbers as a
    retraining (seeded CPU training is deterministic), and says so."""
    from helpers.core.results_cache import result_path
    from helpers.core.runs import KEEP_FINAL_WEIGHTS_ENV, final_weights_path

    require_dataset("fashion_mnist")
    arm = E.reluization_config("fmnist", "gelu", 0, "smoke")
    retrained = run_or_load(arm)  # no weights kept: trains, and compares with the committed run
    assert retrained["reproduces"]["found"] is False
    monkeypatch.setenv(KEEP_FINAL_WEIGHTS_ENV, "1")
    tcfg = arm.train_config()
    run_or_load(tcfg)
    assert final_weights_path(tcfg).exists()
    result_path(arm).unlink()
    reused = run_or_load(arm)
    assert reused["reproduces"]["reused_weights"] is True and reused["reproduces"]["identical"] is None
    for key in ("before_swap", "after_swap", "sparsity", "regions", "int8"):
        assert reused[key] == retrained[key], key
    assert A.reproduction_frame([reused])["reused"].tolist() == [True]


def _fake_results(values: dict[str, list[float]], swap: dict[str, list[float]]) -> list[dict]:
    """Results of the five training arms over len(values[arm]) seeds (accuracy)."""
    out = []
    for arm, vals in values.items():
        for seed, v in enumerate(vals):
            after = v - swap.get(arm, [0.0] * len(vals))[seed]
            out.append(
                {
                    "config": {"pair": "fmnist", "arm": arm, "seed": seed},
                    "higher_is_better": True,
                    "before_swap": v,
                    "after_swap": after if arm != "relu" else v,
                    "int8": {"before_swap": v - 0.001, "after_swap": after - 0.001},
                    "sparsity": {"sites": ["a", "b"], "before_swap": [0.4, 0.5], "after_swap": [0.45, 0.5]},
                    "train": {"history": [{"lambdas": [100.0, 200.0], "lambda_targets": [100.0, 200.0]}]},
                    "preactivations": {"lambda_for_eps": [90.0, 210.0]},
                    "regions": {"pieces": [100, 120], "distinct": [100, 120], "length": [10.0, 10.0]},
                }
            )
    return out


def test_claims_decide_from_the_paired_seeds():
    seeds = 5
    base = [0.84, 0.85, 0.83, 0.845, 0.84]
    values = {
        "gelu": base,
        "lgelu_anneal": [v + 0.0001 for v in base],
        "srelu_anneal": base,
        "relu": [v + 0.0002 * (i % 2) for i, v in enumerate(base)],
        "lgelu_layerwise": base,
    }
    swap = {
        "gelu": [0.01, 0.012, 0.011, 0.013, 0.009],
        "lgelu_anneal": [0.0] * seeds,
        "srelu_anneal": [0.0, 0.0001, -0.0001, 0.0, 0.0],
        "lgelu_layerwise": [0.0] * seeds,
    }
    found = {c.claim.split(": ", 1)[1]: c for c in C.pair_claims("fmnist", _fake_results(values, swap), "cpu")}
    assert found["swapping a trained GELU network's activations for ReLU costs accuracy"].verdict == "confirmed"
    assert found["annealed λ-GELU → ReLU costs less at its swap than GELU → ReLU"].verdict == "confirmed"
    assert all(c.source == C.SOURCE and c.anchor == "reluization-mlp-claims" for c in found.values())
    # the same claims fail when the data say otherwise
    values_bad = dict(values, relu=[v + 0.03 for v in base])
    bad = {c.claim.split(": ", 1)[1]: c for c in C.pair_claims("fmnist", _fake_results(values_bad, swap), "cpu")}
    key = "annealed λ-GELU → ReLU matches ReLU trained from scratch, float32 (within ±0.5 points)"
    assert found[key].verdict == "confirmed" and bad[key].verdict == "contradicted"


def test_layer_targets_row_states_its_reading_only_when_contradicted():
    """A contradicted layer-targets row rests on where the targets are measured (the switch epoch),
    and cites the paper's Section V sentence that motivates per-layer targets."""
    import pandas as pd

    def row(offset: float):
        targets = pd.DataFrame(
            [{"seed": k, "layer": i, "target": P.LAMBDA_TARGET + offset + k + i} for k in range(4) for i in range(3)]
        )
        d = types.SimpleNamespace(pair="fmnist", profile="cpu", targets=targets)  # the one frame this row reads
        return C._layer_targets_smaller_claim("fmnist", d, "cpu")

    above, below = row(50.0), row(-80.0)
    assert above.verdict_label == "contradicted at our scale, under our reading"
    assert "switch epoch" in above.reading and "25%" in above.reading
    assert below.verdict == "confirmed" and below.reading == ""
    assert "layer-specific targets from empirical pre-activation distributions" in above.note


def test_latency_benchmark_times_interleaved_and_claims(monkeypatch):
    path = repo_root() / "benchmarks" / "relu_ization_latency.py"
    spec = importlib.util.spec_from_file_location("_relu_ization_latency_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    calls = {"a": lambda: None, "b": lambda: sum(range(200))}
    times = bench.interleaved_times(calls, rounds=5, number=3)
    assert {k: len(v) for k, v in times.items()} == {"a": 5, "b": 5}
    summary = bench.ratio_summary(times, "b")
    assert summary["b"]["ratio"] == 1.0 and summary["b"]["ci"] == [1.0, 1.0]
    with pytest.raises(KeyError):
        bench.ratio_summary(times, "c")
    with pytest.raises(ValueError):
        bench.interleaved_times({}, rounds=3)
    rows = []
    for arm in ("gelu", "relu", "lgelu_anneal"):
        for precision, f in (("float32", 1.0), ("int8", 0.5)):
            for batch in (1, 256):
                fast = 0.7 if arm != "gelu" else 1.0
                ratios = [fast * f * (1 + 0.01 * i) for i in range(5)]
                rows.append(
                    {
                        "arm": arm,
                        "label": arm,
                        "precision": precision,
                        "batch": batch,
                        "ratios": ratios,
                        "median_seconds": 1.0,
                        "ratio": float(np.median(ratios)),
                        "ci": [0.0, 1.0],
                    }
                )
    record = {
        "rounds": 5,
        "cpu": "test CPU",
        "threads": 1,
        "torch": "x",
        "date": "2026-01-01",
        "pairs": {
            "fmnist": {
                "label": "MLP",
                "seed": 0,
                "rows": rows,
                "notebook": C.NB_MLP,
                "anchor": "reluization-mlp-claims",
            }
        },
    }
    monkeypatch.setattr("helpers.relu_ization.latency.timed_weights_current", lambda record, pair, *a, **k: True)
    verdicts = [c.verdict for c in latency_claims("cpu", record)]
    assert verdicts == ["confirmed", "confirmed", "confirmed", "confirmed", "confirmed"]
    # a pair whose cpu runs are pending keeps its timings in the record but states no claims yet
    both = {**record, "pairs": {**record["pairs"], "vit": record["pairs"]["fmnist"]}}
    monkeypatch.setattr("helpers.relu_ization.latency.pending_pairs", lambda: {})
    assert len(latency_claims("cpu", both)) == 10
    monkeypatch.setattr("helpers.relu_ization.latency.pending_pairs", lambda: {"vit": "waits"})
    assert len(latency_claims("cpu", both)) == 5
    # timings of networks that are no longer the pair's committed runs state no claims either
    monkeypatch.setattr("helpers.relu_ization.latency.pending_pairs", lambda: {})
    monkeypatch.setattr(
        "helpers.relu_ization.latency.timed_weights_current", lambda record, pair, *a, **k: pair != "vit"
    )
    assert len(latency_claims("cpu", both)) == 5


def test_timed_weights_current_compares_with_the_committed_results(monkeypatch):
    """The record's weights check names the committed metrics its weights reproduced; once the
    pair's committed results differ (a scale switch), its timings are stale."""
    committed = {"gelu": {"before_swap": 90.0, "after_swap": 80.0}, "relu": {"before_swap": 85.0, "after_swap": 85.0}}
    monkeypatch.setattr("helpers.relu_ization.latency.load_result", lambda cfg: committed.get(cfg.arm))
    check = {
        arm: {
            "before_swap": [v["before_swap"], v["before_swap"]],
            "after_swap": [v["after_swap"], v["after_swap"]],
            "identical": True,
        }
        for arm, v in committed.items()
    }
    machine = {
        "cpu": "c",
        "torch": "x",
        "threads": 1,
        "rounds": 5,
        "date": "2026-01-01",
        "load_average": 1.0,
        "seconds": 3.0,
    }
    record = {"pairs": {"fmnist": {"label": "MLP", "seed": 0, "rows": [], "weights_check": check, **machine}}}
    assert timed_weights_current(record, "fmnist")
    assert not measurement(record, "fmnist")["stale"]
    committed["relu"] = {"before_swap": 86.0, "after_swap": 86.0}  # the pair's results changed since
    assert not timed_weights_current(record, "fmnist")
    assert timed_weights_current(record, "fmnist", arms=("gelu",))  # a row timing GELU alone is still current
    assert not timed_weights_current(record, "fmnist", arms=("gelu", "relu"))
    assert not timed_weights_current(record, "fmnist", arms=("lgelu_anneal",))  # an arm never checked
    assert measurement(record, "fmnist")["stale"]
    del committed["relu"]  # or are not committed at all
    assert not timed_weights_current(record, "fmnist")
    record["pairs"]["fmnist"]["weights_check"] = {}  # nothing checked: nothing known to be current
    assert not timed_weights_current(record, "fmnist")


def test_latency_record_keeps_each_pairs_machine(monkeypatch):
    """Pairs timed in separate runs (maybe on different CPUs) each carry their own machine fields;
    a record written before that lends its top-level ones, and a missing field is an error."""
    monkeypatch.setattr("helpers.relu_ization.latency.timed_weights_current", lambda record, pair, *a, **k: True)
    machine = {"cpu": "old CPU", "torch": "x", "threads": 1, "rounds": 5, "date": "2026-01-01"}
    entry = {
        "label": "MLP",
        "seed": 0,
        "rows": [],
        "notebook": C.NB_MLP,
        "anchor": "a",
        "load_average": 1.0,
        "seconds": 3.0,
        "weights_check": {"gelu": {"identical": True}, "relu": {"identical": True}},
    }
    old = {**machine, "pairs": {"fmnist": dict(entry)}}
    assert pair_record(old, "fmnist")["cpu"] == "old CPU"
    new = {
        "pairs": {"fmnist": {**entry, **machine}, "gpt": {**entry, **machine, "cpu": "new CPU", "date": "2026-02-02"}}
    }
    assert pair_record(new, "fmnist")["cpu"] == "old CPU" and pair_record(new, "gpt")["cpu"] == "new CPU"
    timed = measurement(new, "gpt")
    assert (timed["cpu"], timed["date"], timed["reproduces"]) == ("new CPU", "2026-02-02", True)
    bad = {"pairs": {"fmnist": {**entry, "weights_check": {"gelu": {"identical": False}}}}, **machine}
    assert measurement(bad, "fmnist")["reproduces"] is False
    unchecked = {"pairs": {"fmnist": {**entry, "weights_check": {}}}, **machine}
    assert measurement(unchecked, "fmnist")["reproduces"] is None
    with pytest.raises(KeyError, match="no 'cpu'"):
        pair_record({"pairs": {"fmnist": entry}}, "fmnist")
    with pytest.raises(KeyError, match="no pair 'vit'"):
        pair_record(new, "vit")


def test_tables_from_synthetic_results():
    base = [0.84, 0.85, 0.83]
    values = {arm: base for arm in P.TRAIN_ARMS}
    results = _fake_results(values, {"gelu": [0.01, 0.02, 0.03]})
    rows = A.arm_rows(results)
    gelu_swap = rows[rows["arm"] == "gelu_swap"]
    np.testing.assert_allclose(gelu_swap["swap_cost"], [1.0, 2.0, 3.0])  # accuracy points lost
    np.testing.assert_allclose(gelu_swap["vs_gelu"], [1.0, 2.0, 3.0])
    assert rows[rows["arm"] == "relu"]["swap_cost"].isna().all()
    assert A.summary_table(rows).loc[P.ARM_LABELS["gelu_swap"], "swap cost"] == "2.00 ± 1.00"
    sparsity = A.sparsity_frame(results)
    assert set(sparsity[sparsity["arm"] == "lgelu_anneal"]["stage"]) == {"before swap", "deployed"}
    assert set(sparsity[sparsity["arm"] == "gelu"]["stage"]) == {"deployed"}
    regions = A.regions_frame(results)
    assert set(regions["arm"]) == {"gelu_swap", "lgelu_anneal", "srelu_anneal", "relu", "lgelu_layerwise"}
    with pytest.raises(ValueError, match="no results"):
        A.arm_rows([])


def test_latency_record_rejects_bad_input(tmp_path):
    assert load_record(tmp_path / "missing.json") is None
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_record(broken)
    for text in ("[]", '{"pairs": []}', '{"pairs": {"fmnist": {"label": "x"}}}'):
        broken.write_text(text)
        with pytest.raises(ValueError, match="not a benchmark record"):
            load_record(broken)
    good = {"pairs": {"fmnist": {"rows": []}}}
    broken.write_text(json.dumps(good))
    assert load_record(broken) == good


def test_reproduction_frame_says_where_each_side_trained(tmp_path):
    """The arms that retrain a committed Table I/II run: identical, reused, or different, and the
    machines both results record (a different CPU type explains a difference; no record cannot).
    The committed results it reads are verified: a hand-edited one raises instead of testifying."""
    from helpers.core.result_files import CorruptResult, with_checksum
    from helpers.core.runtime import repo_root

    def result(identical, diff, reused=False, here="Intel (AVX512)", key="h0"):
        model, cap = here.split(" (")
        return {
            "config": {"arm": "gelu", "seed": 0},
            "before_swap": 0.9,
            "higher_is_better": True,
            "provenance": {"cpu_model": model, "cpu_capability": cap.rstrip(")")},
            "reproduces": {
                "experiment": "lgelu_fmnist",
                "config_hash": key,
                "found": True,
                "identical": identical,
                "reused_weights": reused,
                "max_abs_diff_val_metric": diff,
            },
        }

    # Three real committed Table I results, re-signed with the provenance each case needs.
    sources = sorted((repo_root() / "results" / "lgelu_fmnist").glob("*.json"))[:3]
    committed = tmp_path / "results" / "lgelu_fmnist"
    committed.mkdir(parents=True)
    keys = []
    for src, provenance in zip(
        sources,
        [{"cpu_model": "AMD EPYC", "cpu_capability": "AVX2"}, {"cpu_model": "Intel", "cpu_capability": "AVX512"}, None],
    ):
        data = {k: v for k, v in json.loads(src.read_text()).items() if k != "provenance"}
        if provenance is not None:
            data["provenance"] = provenance
        (committed / src.name).write_text(json.dumps(with_checksum(data)))
        keys.append(src.stem)
    amd, intel, unrecorded = keys

    def frame(*runs):
        return A.reproduction_frame(list(runs), results_dir=tmp_path / "results")

    same = frame(result(True, 0.0), result(None, None, reused=True))
    assert same["reused"].tolist() == [False, True] and same["identical"].tolist() == [True, None]
    assert same["trained on"].isna().all()  # an identical or reused run needs no machine
    other_cpu = frame(result(False, 0.0114, key=amd), result(False, 0.003, key=amd))
    assert other_cpu["max |Δ val metric|"].tolist() == pytest.approx([1.14, 0.3])  # accuracy points
    assert other_cpu["trained on"].tolist() == ["AMD EPYC (AVX2)"] * 2
    assert other_cpu["retrained on"].tolist() == ["Intel (AVX512)"] * 2
    mixed = frame(result(True, 0.0), result(False, 0.01, key=intel))
    assert mixed["trained on"].tolist()[1] == mixed["retrained on"].tolist()[1] == "Intel (AVX512)"
    # a committed result without provenance, or no longer in results/, cannot say where it trained
    assert frame(result(False, 0.01, key=unrecorded))["trained on"].isna().all()
    assert frame(result(False, 0.01, key="0" * 16))["trained on"].isna().all()
    no_repro = [{**result(True, 0.0), "reproduces": {"found": False}}]
    assert frame(*no_repro).empty
    with pytest.raises(ValueError, match="no results"):
        A.reproduction_frame([])
    # A committed file edited after it was written fails its checksum: the frame names it.
    damaged = committed / f"{amd}.json"
    damaged.write_text(damaged.read_text().replace('"AMD EPYC"', '"Intel"'))
    with pytest.raises(CorruptResult, match=f"{amd}.json.*checksum"):
        frame(result(False, 0.01, key=amd))


def test_float32_zero_threshold_finds_where_exact_zeros_start():
    from helpers.lambda_gelu.activation import LambdaGELU
    from helpers.relu_ization.sparsity import float32_zero_threshold
    from helpers.srelu.activation import SReLU

    gelu = float32_zero_threshold(nn.GELU())
    assert -5.6 < gelu < -5.45  # 1 + erf(x/√2) rounds to 0 there, far above Φ's underflow (about −14)
    assert float(nn.GELU()(torch.tensor(gelu - 0.1))) == 0.0 and float(nn.GELU()(torch.tensor(-5.3))) != 0.0
    lam = 160.0
    assert float32_zero_threshold(LambdaGELU(fixed_lambda=lam)) * lam == pytest.approx(gelu, abs=0.1)
    assert float32_zero_threshold(SReLU(0.5)) == pytest.approx(-0.5)
    assert float32_zero_threshold(nn.ReLU()) == 0.0
    with pytest.raises(ValueError, match="not exactly 0"):
        float32_zero_threshold(nn.ELU())
    with pytest.raises(ValueError, match="activation module or function"):
        float32_zero_threshold("gelu")
    for bad in (1.0, 0.0, float("nan"), -float("inf"), -1e39, "−10", True):
        with pytest.raises(ValueError, match="lowest"):
            float32_zero_threshold(nn.GELU(), lowest=bad)

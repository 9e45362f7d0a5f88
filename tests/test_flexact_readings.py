"""Flex-Act readings the paper leaves open: the new config fields, the reverse KL, the α schedule,
stable result keys, the readings sweep and its analysis (:mod:`helpers.flexact.readings`)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from refusals import refusal_fault  # noqa: E402

from helpers.core.results_cache import config_hash  # noqa: E402
from helpers.flexact import reading_specs as RS  # noqa: E402
from helpers.flexact import readings as RD  # noqa: E402
from helpers.flexact.activation import FlexAct  # noqa: E402
from helpers.flexact.hook import AlphaSchedule, FlexActHook  # noqa: E402
from helpers.flexact.regulariser import gradient_norm_regularizer, kl_to_pseudo_probabilities  # noqa: E402
from helpers.flexact.synthetic import (  # noqa: E402
    GROUND_TRUTHS,
    FlexActSyntheticConfig,
    sensitivity_configs,
    synthetic_config,
    synthetic_configs,
)

RESULTS = Path(__file__).resolve().parents[1] / "results" / "flexact_synthetic"


# ------------------------------------------------------------------------------ config fields


def test_reading_fields_reject_bad_values_naming_the_field():
    bad_readings = [
        (dict(kl_direction="backward"), "kl_direction"),
        (dict(kl_direction=None), "kl_direction"),
        (dict(alpha_schedule="cosine"), "alpha_schedule"),
        (dict(alpha_schedule="warmup", alpha_fraction=0.0), "alpha_fraction"),
        (dict(alpha_schedule="warmup", alpha_fraction=1.5), "alpha_fraction"),
        (dict(alpha_schedule="warmup", alpha_fraction=True), "alpha_fraction"),
        (dict(alpha_fraction=0.25), "alpha_fraction"),  # a fraction without a schedule
        (dict(hard="yes"), "hard"),
        (dict(tau_schedule="cosine"), "tau_schedule"),
    ]
    problems = [
        fault
        for kwargs, field in bad_readings
        if (
            fault := refusal_fault(
                f"FlexActSyntheticConfig(alpha=0.3, {', '.join(f'{k}={v!r}' for k, v in kwargs.items())})",
                lambda: FlexActSyntheticConfig(alpha=0.3, **kwargs),
                ValueError,
                field,
            )
        )
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(method="flexact", alpha=0.0, kl_direction="reverse"), "kl_direction"),
        (dict(method="flexact", alpha=0.0, alpha_schedule="decay"), "alpha_schedule"),
        (dict(method="relu", alpha_schedule="warmup"), "alpha_schedule"),
        (dict(method="relu", hard=True), "hard"),
    ],
)
def test_regulariser_readings_need_the_regulariser(kwargs, field):
    with pytest.raises(ValueError, match=field):
        FlexActSyntheticConfig(**kwargs)


def test_readings_name_themselves_in_the_label():
    base = synthetic_config("cpu", "sigmoid", "flexact", 0, alpha=0.3)
    assert base.label == "Flex-Act (α=0.3)" and base.reading == ""
    assert replace(base, hard=True).label == "Flex-Act (α=0.3, hard)"
    assert replace(base, kl_direction="reverse").label == "Flex-Act (α=0.3, KL(p‖p̃))"
    assert replace(base, tau_schedule="constant").label == "Flex-Act (α=0.3, τ=1)"
    assert replace(base, alpha_schedule="decay").label == "Flex-Act (α=0.3, α decay 0.5)"


# ------------------------------------------------------------------------------ stable keys

#: Result keys committed before the reading fields existed (computed with the code of that time).
KNOWN_HASHES = {
    ("relu", "flexact", 0, 0.3, 1.0): "e584f850a76faf6d",
    ("sigmoid", "flexact", 3, 0.0, 1.0): "19aa5d9aa8f560b5",
    ("tanh", "relu", 4, 0.0, 1.0): "563167707df8763b",
    ("identity", "flexact", 2, 0.3, 10.0): "2c6751434e96db21",
    ("leaky_relu", "flexact", 1, 1.0, 1.0): "6d3aeac0113552b1",
}


@pytest.mark.parametrize("key, expected", list(KNOWN_HASHES.items()))
def test_default_readings_keep_the_committed_keys(key, expected):
    gt, method, seed, alpha, lam = key
    cfg = synthetic_config("cpu", gt, method, seed, alpha=alpha, lam=lam)
    assert config_hash(cfg) == expected
    assert (RESULTS / f"{expected}.json").exists()


def test_every_table1_and_sensitivity_key_is_committed():
    configs = synthetic_configs("cpu") + sensitivity_configs("cpu")
    missing = [c.label for c in configs if not (RESULTS / f"{config_hash(c)}.json").exists()]
    assert not missing


def test_defaults_are_todays_reading():
    """A default is left out of the key, so it must stay the reading the committed runs used."""
    cfg = FlexActSyntheticConfig()
    assert (cfg.hard, cfg.tau_schedule, cfg.tau_start, cfg.tau_min) == (False, "exponential", 1.0, 0.1)
    assert (cfg.kl_direction, cfg.alpha_schedule, cfg.alpha_fraction, cfg.lam) == ("forward", "constant", 0.5, 1.0)
    hook = FlexActHook(0.3, 1.0)
    assert hook.kl_direction == "forward" and hook.alpha_schedule is None


def test_a_changed_reading_changes_the_key():
    base = synthetic_config("cpu", "relu", "flexact", 0, alpha=0.3)
    keys = {
        config_hash(base),
        config_hash(replace(base, hard=True)),
        config_hash(replace(base, kl_direction="reverse")),
        config_hash(replace(base, alpha_schedule="warmup")),
        config_hash(replace(base, alpha_schedule="warmup", alpha_fraction=0.25)),
    }
    assert len(keys) == 5


# ------------------------------------------------------------------------------ reverse KL


def test_reverse_kl_matches_a_hand_computation():
    g_bar = [1.0, 2.0, 0.5]
    logits = [2.0, -1.0, 0.5]
    lam = 0.5
    e_t = [math.exp(-g / lam) for g in g_bar]
    p_tilde = [v / sum(e_t) for v in e_t]
    e_p = [math.exp(v) for v in logits]
    p = [v / sum(e_p) for v in e_p]
    reverse = sum(pk * math.log(pk / qk) for pk, qk in zip(p, p_tilde))
    forward = sum(qk * math.log(qk / pk) for pk, qk in zip(p, p_tilde))
    g = torch.tensor(g_bar, dtype=torch.float64)
    theta = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    got = kl_to_pseudo_probabilities(g, theta, lam, direction="reverse")
    assert got.item() == pytest.approx(reverse, rel=1e-12)
    assert kl_to_pseudo_probabilities(g, theta, lam).item() == pytest.approx(forward, rel=1e-12)
    assert abs(reverse - forward) > 0.05 * forward  # the two directions differ here, so the test can tell them apart
    # gradient in the logits: p_j (log p_j − log p̃_j − KL)
    (grad,) = torch.autograd.grad(got, theta)
    hand = [pk * (math.log(pk) - math.log(qk) - reverse) for pk, qk in zip(p, p_tilde)]
    assert grad.tolist() == pytest.approx(hand, rel=1e-10)


def test_kl_direction_is_validated_everywhere():
    g, theta = torch.ones(3), torch.zeros(3)
    with pytest.raises(ValueError, match="kl_direction"):
        kl_to_pseudo_probabilities(g, theta, 1.0, direction="both")
    m = FlexAct()
    with pytest.raises(ValueError, match="kl_direction"):
        gradient_norm_regularizer(torch.randn(4, 2), list(m.candidates), m.logits, 0.3, 1.0, direction="up")
    with pytest.raises(ValueError, match="kl_direction"):
        FlexActHook(0.3, 1.0, kl_direction="up")


def test_hook_adds_the_reverse_kl():
    torch.manual_seed(0)
    m = FlexAct().double()
    with torch.no_grad():
        m.logits.copy_(torch.tensor([0.5, -0.3, 0.2, 0.0, -0.1], dtype=torch.float64))
    m(torch.randn(8, 3, dtype=torch.float64))
    g_bar = m.mean_gradient_norms()
    model = torch.nn.Sequential(m)
    rev = FlexActHook(0.3, 1.0, kl_direction="reverse").extra_loss(model)
    fwd = FlexActHook(0.3, 1.0).extra_loss(model)
    assert rev.item() == pytest.approx(
        0.3 * kl_to_pseudo_probabilities(g_bar, m.logits, 1.0, direction="reverse").item(), rel=1e-12
    )
    assert rev.item() != pytest.approx(fwd.item(), rel=1e-6)


# ------------------------------------------------------------------------------ α schedule


@pytest.mark.parametrize(
    "kind, values",
    [
        ("constant", {0: 0.3, 25: 0.3, 50: 0.3, 99: 0.3}),
        ("warmup", {0: 0.0, 25: 0.15, 50: 0.3, 99: 0.3}),
        ("late", {0: 0.0, 49: 0.0, 50: 0.3, 99: 0.3}),
        ("decay", {0: 0.3, 25: 0.15, 50: 0.0, 99: 0.0}),
    ],
)
def test_alpha_schedule_values(kind, values):
    schedule = AlphaSchedule(0.3, total=100, kind=kind, fraction=0.5)
    for t, expected in values.items():
        assert schedule(t) == pytest.approx(expected, abs=1e-15), (kind, t)


def test_alpha_schedule_fraction_moves_the_switch():
    assert AlphaSchedule(1.0, total=100, kind="warmup", fraction=0.25)(10) == pytest.approx(0.4)
    assert AlphaSchedule(1.0, total=100, kind="late", fraction=0.25)(25) == 1.0
    assert AlphaSchedule(1.0, total=100, kind="late", fraction=0.25)(24) == 0.0


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(kind="step"), r"AlphaSchedule\.kind"),
        (dict(fraction=0.0), r"AlphaSchedule\.fraction"),
        (dict(fraction=2.0), r"AlphaSchedule\.fraction"),
        (dict(total=0), r"AlphaSchedule\.total"),
    ],
)
def test_alpha_schedule_validation(kwargs, field):
    with pytest.raises(ValueError, match=field):
        AlphaSchedule(0.3, **{"total": 10, **kwargs})
    with pytest.raises(ValueError, match="position"):
        AlphaSchedule(0.3, total=10)(-1)


def test_hook_follows_the_alpha_schedule():
    m = FlexAct()
    model = torch.nn.Sequential(m)
    hook = FlexActHook(0.3, 1.0, alpha_schedule=AlphaSchedule(0.3, total=10, kind="warmup", fraction=0.5))
    m(torch.randn(4, 2))
    hook.on_step(0, model)
    assert hook.alpha_now == 0.0 and hook.extra_loss(model) is None  # off: costs nothing
    hook.on_step(5, model)
    full = FlexActHook(0.3, 1.0).extra_loss(model)
    assert hook.alpha_now == pytest.approx(0.3) and hook.extra_loss(model).item() == pytest.approx(full.item())
    assert hook.epoch_record(model)["alpha"] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="differs"):
        FlexActHook(0.1, 1.0, alpha_schedule=AlphaSchedule(0.3, total=10))


def test_late_and_warmup_runs_start_as_alpha_zero(monkeypatch):
    """Until α switches on, a 'late' run is the α = 0 run step for step."""
    base = synthetic_config("smoke", "sigmoid", "flexact", 0, alpha=0.3)
    from helpers.flexact.synthetic import _train_and_evaluate

    zero = _train_and_evaluate(replace(base, alpha=0.0, epochs=1))
    late = _train_and_evaluate(replace(base, alpha_schedule="late", alpha_fraction=1.0, epochs=1))
    on = _train_and_evaluate(replace(base, epochs=1))
    assert late["val_mse"] == zero["val_mse"]
    assert on["val_mse"] != zero["val_mse"]


# ------------------------------------------------------------------------------ the sweep


def test_readings_change_one_choice_at_a_time():
    configs = RD.readings_configs("cpu")
    assert len(configs) == len(set(configs))
    families = {}
    for cfg in configs:
        base = synthetic_config("cpu", cfg.ground_truth, "flexact", cfg.seed, alpha=cfg.alpha)
        changed = {
            f
            for f in ("hard", "tau_schedule", "tau_min", "kl_direction", "alpha_schedule", "lam")
            if getattr(cfg, f) != getattr(base, f)
        }
        assert len(changed) == 1, (cfg.label, changed)
        families.setdefault(changed.pop(), set()).add(cfg.seed)
    assert set(families) == {"hard", "tau_schedule", "kl_direction", "alpha_schedule", "lam"}
    assert families["hard"] == {0, 1, 2, 3, 4} and families["lam"] == {0, 1, 2}
    # α = 0.3 on every target; α = 0 only where the reading changes the unregularised model
    zero = [c for c in configs if c.alpha == 0]
    assert {c.ground_truth for c in zero} == set(RS.ALPHA_TARGETS)
    assert all(c.hard or c.tau_schedule != "exponential" for c in zero)
    per_reading = len(GROUND_TRUTHS) * 5
    assert len(configs) == 6 * per_reading + 2 * len(GROUND_TRUTHS) * 3 + 3 * len(RS.ALPHA_TARGETS) * 5


def test_baseline_is_table1():
    table1 = set(synthetic_configs("cpu"))
    base = RS.baseline_configs("cpu")
    assert set(base[0.3]) <= table1 and set(base[0.0]) <= table1
    assert len(base[0.3]) == len(base[0.0]) == 25
    # the λ readings are the sensitivity study's runs
    lam = [c for c in RD.readings_configs("cpu") if c.lam != 1.0]
    assert set(lam) == {c for c in sensitivity_configs("cpu") if c.lam != 1.0}


def _fake_runs(mse: dict, chosen: dict) -> dict:
    """``{reading: {α: results}}`` from ``{(reading, α, gt, seed): value}`` dicts."""
    runs: dict = {}
    for (reading, alpha, gt, seed), value in mse.items():
        runs.setdefault(reading, {}).setdefault(alpha, []).append(
            {
                "config": {"ground_truth": gt, "seed": seed},
                "val_mse": value,
                "chosen_activation": chosen.get((reading, alpha, gt, seed), gt),
            }
        )
    return runs


def test_pooled_log_ratio_and_selection_difference():
    seeds = (0, 1, 2)
    mse, chosen = {}, {}
    for seed in seeds:
        for gt in GROUND_TRUTHS:
            mse[("baseline", 0.3, gt, seed)] = 0.01
            # the reading halves (MSE + ε) on every target: a pooled log ratio of exactly ln 0.5
            mse[("x", 0.3, gt, seed)] = 0.5 * (0.01 + RS.EPSILON) - RS.EPSILON
        chosen[("x", 0.3, "sigmoid", seed)] = "relu"  # a real miss on every seed
        chosen[("x", 0.3, "relu", seed)] = "leaky_relu"  # a miss, but right up to the twin
    chosen[("x", 0.3, "tanh", 0)] = "identity"  # one more real miss
    frame = RD.readings_frame(_fake_runs(mse, chosen))
    pooled = RD.pooled_log_ratio(frame, "x")
    assert pooled.effect == pytest.approx(math.log(0.5)) and pooled.n == 3
    strict = RD.selection_difference(frame, "x")
    assert strict.paired and strict.n == 15  # pairs of runs (target, seed)
    assert strict.effect == pytest.approx(-100 * 7 / 15)
    twin = RD.selection_difference(frame, "x", twins=True)
    assert twin.effect == pytest.approx(-100 * 4 / 15)
    assert RD.mcnemar_p(frame, "x", twins=True) == pytest.approx(2 * 0.5**4)  # 4 lost, 0 gained
    acc = RD.selection_accuracy(frame, "x")
    assert (acc.k, acc.n) == (15 - 7, 15)
    assert RD.selection_accuracy(frame, "x", twins=True).k == 15 - 4
    assert RD.majority_targets(frame, "x")["sigmoid"] == "relu"


def test_comparisons_pair_a_short_reading_with_the_baselines_first_seeds():
    mse = {("baseline", 0.3, gt, s): 0.01 * (1 + s) for gt in GROUND_TRUTHS for s in range(5)}
    mse.update({("x", 0.3, gt, s): 0.02 * (1 + s) for gt in GROUND_TRUTHS for s in range(3)})
    frame = RD.readings_frame(_fake_runs(mse, {}))
    comps = RD.mse_comparisons(frame, "x")
    assert comps["relu"].n == 3
    assert comps["relu"].effect == pytest.approx(0.01 * (1 + 2 + 3) / 3)  # seeds 0-2 only
    with pytest.raises(ValueError, match="seeds"):
        RD.mse_comparisons(
            RD.readings_frame(_fake_runs({("baseline", 0.3, "relu", 0): 0.1, ("x", 0.3, "relu", 7): 0.1}, {})), "x"
        )


def test_readings_claims_without_results_are_not_run_here():
    from helpers.flexact.claims import readings_claims

    claims = readings_claims()
    assert len(claims) == 2 and {c.verdict for c in claims} == {"not run here"}
    assert all(c.anchor == "flexact-readings" for c in claims)


def test_readings_smoke_sweep_analysis_and_plot():
    runs = RD.run_readings("smoke", workers=1)
    assert set(runs) == {"baseline", *(r.key for r in RS.READINGS)}
    frame = RD.readings_frame(runs)
    table = RD.readings_table(frame)
    assert list(table.index) == ["baseline", *(r.key for r in RS.READINGS)]
    assert table.loc["baseline", "n_runs"] == len(GROUND_TRUTHS)
    assert math.isnan(table.loc["hard", "log_low"])  # one seed: no interval over seeds, no crash
    per_target = RD.per_target_table(frame)
    assert per_target.shape[0] == len(RS.READINGS) + 1
    from helpers.flexact.plots import plot_reading_effects

    fig = plot_reading_effects(table)
    assert len(fig.axes) == 3

"""Hardness tooling: initialisation modes, parameter groups, annealing, metrics, substitution."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.integrate import quad
from scipy.special import ndtr
from scipy.stats import spearmanr
from torch import nn

from helpers.core.train import optimizer_from_groups
from helpers.lambda_gelu import hardness as H
from helpers.lambda_gelu.activation import LAMBDA_NEAR_ONE, LambdaGELU
from helpers.models import MLP


def _lambda_mlp(depth: int = 4, **kw) -> MLP:
    return MLP(12, 3, depth=depth, width=8, act=lambda: LambdaGELU(t=0.1, **kw))


# ------------------------------------------------------------------------------ initialisation
def test_init_modes():
    assert H.init_lambdas("uniform", 3) == [LAMBDA_NEAR_ONE] * 3
    inc = H.init_lambdas("increasing", 5)
    dec = H.init_lambdas("decreasing", 5)
    assert inc[0] == pytest.approx(LAMBDA_NEAR_ONE) and inc[-1] == pytest.approx(2.0)
    assert np.all(np.diff(inc) > 0) and dec == inc[::-1]
    assert H.init_lambdas("increasing", 1) == [LAMBDA_NEAR_ONE]
    assert H.init_lambdas("decreasing", 1) == [2.0]
    assert H.init_lambdas("increasing", 3, lam_min=1.001, lam_max=1.5) == pytest.approx([1.001, 1.2505, 1.5])


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        (("linear", 3), {}, "unknown init mode"),
        (("uniform", 0), {}, "num_layers"),
        (("uniform", 2.0), {}, "num_layers"),
        (("increasing", 3), {"lam_min": 1.0}, "lam_min"),
        (("increasing", 3), {"lam_min": 2.5, "lam_max": 2.0}, "lam_min"),
    ],
)
def test_init_modes_reject_bad_arguments(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        H.init_lambdas(*args, **kwargs)


def test_apply_init_mode_sets_lambda_in_layer_order():
    model = _lambda_mlp(depth=4)
    values = H.apply_init_mode(model, "decreasing")
    assert H.layer_lambdas(model) == pytest.approx(values, rel=1e-6)
    assert values[0] == pytest.approx(2.0) and values[-1] == pytest.approx(LAMBDA_NEAR_ONE)
    with pytest.raises(ValueError, match="LambdaGELU"):
        H.apply_init_mode(MLP(4, 2, depth=2, width=4), "uniform")


def test_apply_init_mode_per_channel_module_gets_one_value():
    model = nn.Sequential(
        nn.Conv2d(1, 3, 1),
        LambdaGELU(granularity="channel", num_channels=3),
        nn.Conv2d(3, 3, 1),
        LambdaGELU(granularity="channel", num_channels=3),
    )
    H.apply_init_mode(model, "increasing")
    assert torch.allclose(model[3].lam, torch.full((3,), 2.0))


# -------------------------------------------------------------------------------- optimisation
def test_param_groups_put_every_s_in_the_hardness_group():
    model = _lambda_mlp()
    groups = H.hardness_param_groups(model, lr=0.05, weight_decay=1e-4, c=9)
    by_name = {g["name"]: g for g in groups}
    s_params = [m.s for m in H.lambda_modules(model)]
    assert {id(p) for p in by_name["hardness"]["params"]} == {id(p) for p in s_params}
    assert by_name["hardness"]["lr"] == pytest.approx(0.45) and by_name["hardness"]["weight_decay"] == 0.0
    assert by_name["weights"]["lr"] == 0.05 and by_name["weights"]["weight_decay"] == 1e-4
    all_ids = [id(p) for g in groups for p in g["params"]]
    assert sorted(all_ids) == sorted(id(p) for p in model.parameters())  # each exactly once


@pytest.mark.parametrize(
    "kwargs,match",
    [({"c": 0}, "c must"), ({"c": -1}, "c must"), ({"lr": 0}, "lr must"), ({"weight_decay": -1e-4}, "weight_decay")],
)
def test_param_groups_reject_bad_arguments(kwargs, match):
    args = {"lr": 0.1, "weight_decay": 0.0, "c": 1.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        H.hardness_param_groups(_lambda_mlp(), **args)


def _optimizer(
    model: nn.Module, name: str = "sgd", *, lr: float, weight_decay: float = 0.0, c: float = 1.0, momentum: float = 0.0
):
    """SGD or AdamW over the hardness groups, as a λ-GELU run builds its optimiser."""
    return optimizer_from_groups(H.hardness_param_groups(model, lr, weight_decay, c), name, lr=lr, momentum=momentum)


def test_sgd_moves_s_with_c_times_lr():
    torch.manual_seed(0)
    model = _lambda_mlp(depth=2)
    opt = _optimizer(model, "sgd", lr=0.01, weight_decay=0.0, c=3.0)
    model(torch.randn(16, 12)).pow(2).mean().backward()
    s = model.body[1].s
    before, grad = s.detach().clone(), s.grad.detach().clone()
    opt.step()
    assert torch.allclose(s.detach(), before - 0.03 * grad)


def test_adamw_does_not_decay_s():
    model = _lambda_mlp(depth=2)
    opt = _optimizer(model, "adamw", lr=0.1, weight_decay=0.5, c=9.0)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)  # no gradient: only weight decay could move a parameter
    s_before = model.body[1].s.detach().clone()
    w_before = model.body[0].weight.detach().clone()
    opt.step()
    assert torch.equal(model.body[1].s.detach(), s_before)
    assert torch.allclose(model.body[0].weight.detach(), w_before * (1 - 0.1 * 0.5))


def test_the_optimiser_rejects_unknown_name_and_bad_c():
    with pytest.raises(ValueError, match="optimizer"):
        _optimizer(_lambda_mlp(), "rmsprop", lr=0.1)
    with pytest.raises(ValueError, match="c must"):
        _optimizer(_lambda_mlp(), "sgd", lr=0.1, c=0.0)


# ------------------------------------------------------------------------------------ annealing
def test_lambda_target_closed_form_and_quadrature():
    target = H.lambda_target(5e-3)
    assert target == pytest.approx(200 * math.sqrt(2 / math.pi), rel=1e-15)
    assert target == pytest.approx(159.577, abs=1e-3)
    assert H.expected_gate_error(target) == pytest.approx(5e-3, rel=1e-14)
    numeric = quad(lambda x: ndtr(target * x), -np.inf, 0)[0] + quad(lambda x: 1 - ndtr(target * x), 0, np.inf)[0]
    assert numeric == pytest.approx(5e-3, rel=1e-8)
    for bad in (0.0, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="eps"):
            H.lambda_target(bad)


def _learn(model: nn.Module, epoch: int) -> None:
    """Stand-in for an epoch of training: move every trainable s."""
    with torch.no_grad():
        for k, m in enumerate(H.lambda_modules(model)):
            if m.s.requires_grad:
                m.s.add_(0.05 * (k + 1) * epoch)


def test_annealing_schedule_algorithm_1():
    total, target = 8, H.lambda_target(5e-3)
    sched = H.AnnealingSchedule(total, target)
    assert sched.switch_epoch == 2
    model = _lambda_mlp(depth=3)
    H.apply_init_mode(model, "increasing")
    seen, learned = {}, None
    for epoch in range(1, total + 1):
        seen[epoch] = sched.on_epoch_start(epoch, model)
        if epoch <= sched.switch_epoch:
            assert all(m.s.requires_grad for m in H.lambda_modules(model))
        else:
            assert not any(m.s.requires_grad for m in H.lambda_modules(model))
        _learn(model, epoch)  # moves s only while it is trainable
        if epoch == sched.switch_epoch:
            learned = H.layer_lambdas(model)  # λ_ℓ(e_s): after training epoch e_s
    # λ(T) is the target exactly (its float32 value) in every layer
    assert all(v == float(torch.tensor(target, dtype=torch.float32)) for v in seen[total])
    # λ(e_s) is the learned value, and the schedule is linear from it to the target
    start = torch.tensor(learned)
    for epoch in range(sched.switch_epoch + 1, total + 1):
        w = (epoch - sched.switch_epoch) / (total - sched.switch_epoch)
        assert seen[epoch] == pytest.approx((start + w * (target - start)).tolist(), rel=1e-6)
    assert sched.annealed_lambda(start, sched.switch_epoch).tolist() == pytest.approx(learned, rel=1e-12)


def test_annealing_resumes_from_a_checkpoint():
    sched = H.AnnealingSchedule(12, 100.0)
    model = _lambda_mlp(depth=2)
    for epoch in range(1, 6):
        sched.on_epoch_start(epoch, model)
        _learn(model, epoch)
    expected = sched.on_epoch_start(9, model)
    resumed = _lambda_mlp(depth=2)
    resumed.load_state_dict(model.state_dict())
    assert H.AnnealingSchedule(12, 100.0).on_epoch_start(9, resumed) == expected


def test_annealing_frozen_s_is_not_moved_by_the_optimizer():
    model = _lambda_mlp(depth=2)
    opt = _optimizer(model, "sgd", lr=0.1, c=9.0, momentum=0.9)
    sched = H.AnnealingSchedule(4, 50.0)
    for epoch in (1, 2):
        sched.on_epoch_start(epoch, model)
        opt.zero_grad()
        model(torch.randn(8, 12)).pow(2).mean().backward()
        opt.step()
    s_frozen = [m.s.detach().clone() for m in H.lambda_modules(model)]
    for epoch in (3, 4):
        sched.on_epoch_start(epoch, model)
        opt.zero_grad()
        model(torch.randn(8, 12)).pow(2).mean().backward()
        opt.step()
    assert all(torch.equal(a, m.s.detach()) for a, m in zip(s_frozen, H.lambda_modules(model)))
    assert H.layer_lambdas(model) == [50.0, 50.0]


def test_annealing_short_runs_and_bad_arguments():
    sched = H.AnnealingSchedule(1, 20.0)  # e_s = 0: annealing from the initial λ at once
    assert sched.switch_epoch == 0
    assert sched.on_epoch_start(1, _lambda_mlp(depth=2)) == [20.0, 20.0]
    for kwargs in (
        {"total_epochs": 0, "lambda_target": 10.0},
        {"total_epochs": 5, "lambda_target": 0.5},
        {"total_epochs": 5, "lambda_target": 10.0, "switch_fraction": 1.0},
    ):
        with pytest.raises(ValueError):
            H.AnnealingSchedule(**kwargs)
    with pytest.raises(ValueError, match="epoch"):
        H.AnnealingSchedule(5, 10.0).on_epoch_start(6, _lambda_mlp())
    with pytest.raises(ValueError, match="LambdaGELU"):
        H.AnnealingSchedule(5, 10.0).on_epoch_start(1, nn.Linear(2, 2))


# -------------------------------------------------------------------------------------- metrics
def test_layer_lambdas_means_over_channels():
    m = LambdaGELU(granularity="channel", num_channels=3, fixed_lambda=torch.tensor([1.0, 2.0, 6.0]))
    assert H.layer_lambdas(nn.Sequential(m, LambdaGELU(fixed_lambda=4.0))) == [3.0, 4.0]


def test_hardness_drift_by_hand():
    history = [[1.0, 2.0], [1.5, 1.0], [1.0, 1.5]]  # layer 1: 0.5 + 0.5, layer 2: 1 + 0.5
    assert H.hardness_drift(history) == pytest.approx((1.0 + 1.5) / 2)
    assert H.hardness_drift([[1.0, 2.0]]) == 0.0
    for bad in ([1.0, 2.0], [[1.0, float("nan")]], np.zeros((0, 2))):
        with pytest.raises(ValueError):
            H.hardness_drift(bad)


def test_drift_cell_average():
    runs = {
        (0, "uniform"): [[1.0], [2.0]],
        (0, "increasing"): [[1.0], [1.5]],
        (1, "uniform"): [[1.0], [1.0]],
        (1, "increasing"): [[2.0], [4.0]],
    }
    assert H.drift_cell_average(runs) == pytest.approx((1.0 + 0.5 + 0.0 + 2.0) / 4)
    with pytest.raises(ValueError, match="incomplete"):
        H.drift_cell_average({(0, "uniform"): [[1.0]], (1, "increasing"): [[1.0]]})
    with pytest.raises(ValueError):
        H.drift_cell_average({})


def test_best_validation_score():
    assert H.best_validation_score([0.5, 0.8, 0.8, 0.7]) == (0.8, 2)
    assert H.best_validation_score([30.0, 28.5, 29.0], mode="min") == (28.5, 2)
    assert H.best_validation_score([float("nan"), 0.6, 0.4]) == (0.6, 2)
    with pytest.raises(ValueError):
        H.best_validation_score([float("nan")])
    with pytest.raises(ValueError):
        H.best_validation_score([0.1], mode="median")
    with pytest.raises(ValueError):
        H.best_validation_score([])


def test_spearman_across_modes():
    rng = np.random.default_rng(0)
    a = rng.random((3, 4, 5))  # seeds × epochs × layers
    assert np.allclose(H.spearman_across_modes(a, 2 * a + 1), 1.0)
    assert np.allclose(H.spearman_across_modes(a, -a), -1.0)
    b = rng.random((3, 4, 5))
    expected = [np.mean([spearmanr(a[r, e], b[r, e]).statistic for r in range(3)]) for e in range(4)]
    assert np.allclose(H.spearman_across_modes(a, b), expected)
    b[0, 1] = 1.0  # seed 0 constant at epoch 1: left out of that epoch's mean
    rho = H.spearman_across_modes(a, b)
    assert rho[1] == pytest.approx(np.mean([spearmanr(a[r, 1], b[r, 1]).statistic for r in (1, 2)]))
    const = np.ones((2, 3, 4))
    assert np.all(np.isnan(H.spearman_across_modes(const, a[:2, :3, :4])))
    assert H.spearman_across_modes(a[0], a[0]) == pytest.approx(np.ones(4))
    with pytest.raises(ValueError):
        H.spearman_across_modes(a, b[:, :2])
    with pytest.raises(ValueError, match="2 layers"):
        H.spearman_across_modes(a[..., :1], b[..., :1])


# ---------------------------------------------------------------------------------- substitution
def test_substitute_relu_replaces_gelu_and_lambda_gelu_only():
    model = nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.Linear(4, 4), LambdaGELU(), nn.Tanh())
    swapped = H.substitute_relu(model)
    assert isinstance(model[1], nn.GELU) and isinstance(model[3], LambdaGELU)  # original untouched
    assert isinstance(swapped[1], nn.ReLU) and isinstance(swapped[3], nn.ReLU) and isinstance(swapped[4], nn.Tanh)
    assert not any(isinstance(m, (nn.GELU, LambdaGELU)) for m in swapped.modules())


def test_evaluate_substitution_after_annealing_changes_little():
    torch.manual_seed(0)
    model = _lambda_mlp(depth=3)
    x = torch.randn(256, 12)
    loader = [(x[:128], None), (x[128:], None)]

    def mean_output(m, batches):
        return float(torch.cat([m(xb) for xb, _ in batches]).mean())

    model.train()
    raw = H.evaluate_substitution(model, loader, mean_output)
    assert model.training  # mode restored
    H.AnnealingSchedule(4, H.lambda_target(5e-3)).on_epoch_start(4, model)
    annealed = H.evaluate_substitution(model, loader, mean_output)
    assert set(annealed) == {"original", "substituted", "change"}
    assert abs(annealed["change"]) < abs(raw["change"])
    assert abs(annealed["change"]) < 1e-2

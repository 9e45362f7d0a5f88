"""Flex-Act module, regulariser (Eqs. 1-4), temperature schedule and training hook."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
import torch
from refusals import refusal_fault
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from helpers.activations import get_activation
from helpers.core.runtime import seed_everything
from helpers.flexact.activation import DEFAULT_CANDIDATES, FlexAct, flexact_modules
from helpers.flexact.hook import FlexActHook, TemperatureSchedule
from helpers.flexact.regulariser import (
    gradient_norm_regularizer,
    kl_to_pseudo_probabilities,
    mean_gradient_norms,
    pseudo_probabilities,
)


def _reference_mix(module: FlexAct, h: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Σ_j w_j φ_j(h) the slow, obvious way."""
    return sum(weights[j].to(h.dtype) * cand(h) for j, cand in enumerate(module.candidates))


def _implemented(name: str) -> bool:
    try:
        get_activation(name)(torch.zeros(2))
    except (NotImplementedError, AttributeError, TypeError):
        return False
    return True


# ------------------------------------------------------------------------------ construction


def test_default_construction_through_registry():
    m = get_activation("flexact")
    assert isinstance(m, FlexAct)
    assert m.names == DEFAULT_CANDIDATES
    assert m.logits.shape == (5,) and m.logits.requires_grad
    assert torch.allclose(m.probabilities(), torch.full((5,), 0.2))
    assert m.chosen_activation == "relu"  # ties: the first
    assert m.tau == 1.0 and m.hard is False and m.eval_mode == "argmax"


def test_candidates_accept_names_modules_and_mappings():
    m = FlexAct(("gelu", nn.SiLU(), "identity"))
    assert m.names == ("gelu", "silu", "identity")
    m2 = FlexAct({"soft": nn.Softplus(beta=2.0), "lin": "identity"})
    assert m2.names == ("soft", "lin")
    x = torch.randn(4, 3)
    assert m2(x).shape == x.shape


@pytest.mark.skipif(
    not (_implemented("lambda_gelu") and _implemented("srelu")), reason="lambda_gelu / srelu not implemented yet"
)
def test_registry_methods_as_candidates():
    m = FlexAct(("relu", "lambda_gelu", "srelu"))
    x = torch.randn(8, 4, requires_grad=True)
    m(x).sum().backward()
    assert m.logits.grad is not None and torch.count_nonzero(m.logits.grad) > 0
    assert len(list(m.parameters())) >= 2  # λ-GELU's own parameter is trained with the logits


#: One invalid construction per row: FlexAct's keyword arguments and the error they must raise.
INVALID_CONSTRUCTIONS = [
    ({"candidates": ()}, ValueError),
    ({"candidates": []}, ValueError),
    ({"candidates": "relu"}, TypeError),
    ({"candidates": ("relu", "no_such_activation")}, ValueError),
    ({"candidates": ("relu", 3)}, TypeError),
    ({"candidates": ("relu", "relu")}, ValueError),
    ({"candidates": (nn.ReLU(inplace=True), "tanh")}, ValueError),
    ({"tau": 0.0}, ValueError),
    ({"tau": -1.0}, ValueError),
    ({"tau": float("nan")}, ValueError),
    ({"tau": "1"}, TypeError),
    ({"hard": 1}, TypeError),
    ({"eval_mode": "sample"}, ValueError),
    ({"init_logits": [0.0, 1.0]}, ValueError),
]


def _call_text(name: str, kwargs: dict) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


def test_invalid_construction():
    problems = [
        fault
        for kwargs, error in INVALID_CONSTRUCTIONS
        if (fault := refusal_fault(_call_text("FlexAct", kwargs), lambda: FlexAct(**kwargs), error))
    ]
    assert not problems, "\n".join(problems)


def test_tau_setter_validates():
    m = FlexAct()
    m.tau = 0.5
    assert m.tau == 0.5
    with pytest.raises(ValueError, match="tau"):
        m.tau = 0.0


def test_unknown_name_error_names_the_table():
    with pytest.raises(ValueError, match="known: .*helpers.methods.ACTIVATIONS"):
        FlexAct(("relu", "swishy"))


# ------------------------------------------------------------------------------ forward values


@pytest.mark.parametrize(
    "candidates",
    [
        DEFAULT_CANDIDATES,
        ("relu", "identity"),
        ("sigmoid",),
        ("tanh", "sigmoid"),
        (nn.LeakyReLU(0.2), "relu"),
        (nn.LeakyReLU(1.5), "sigmoid"),  # slope > 1: a negative relu coefficient
        ("relu", "gelu", "tanh", nn.SiLU()),  # fused basis part plus generic candidates
    ],
)
def test_mixture_matches_reference(candidates):
    torch.manual_seed(0)
    m = FlexAct(candidates).double()
    h = torch.randn(6, 5, dtype=torch.float64) * 3
    h[0, 0] = 0.0  # the kink
    for weights in (
        torch.rand(len(m.names), dtype=torch.float64),
        torch.eye(len(m.names), dtype=torch.float64)[-1],
    ):  # one-hot: zero coefficients
        torch.testing.assert_close(m.mix(h, weights), _reference_mix(m, h, weights), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "candidates", [DEFAULT_CANDIDATES, ("relu", "gelu", "tanh", nn.SiLU()), (nn.LeakyReLU(1.5), "identity")]
)
def test_mixture_gradcheck(candidates):
    torch.manual_seed(1)
    m = FlexAct(candidates).double()
    h = torch.randn(4, 3, dtype=torch.float64)
    h = (h + 0.1 * torch.sign(h)).requires_grad_(True)  # keep away from relu's kink
    w = torch.rand(len(m.names), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(m.mix, (h, w))


def test_shapes_and_dtypes():
    m = FlexAct()
    for shape in [(7,), (3, 4), (2, 3, 4, 5)]:
        x = torch.randn(*shape)
        assert m(x).shape == x.shape
    m64 = FlexAct().double()
    assert m64(torch.randn(3, dtype=torch.float64)).dtype == torch.float64
    with pytest.raises(TypeError, match="tensor"):
        m([1.0, 2.0])


def test_noncontiguous_input_and_expanded_grad():
    m = FlexAct()
    x = torch.randn(4, 6, requires_grad=True)
    y = m(x.t())  # non-contiguous input
    y.sum().backward()  # grad_output is an expanded (stride-0) tensor
    assert x.grad is not None and torch.isfinite(x.grad).all()


def test_training_forward_uses_one_gumbel_sample_per_call():
    seed_everything(0)
    m = FlexAct()
    x = torch.randn(16, 3)
    out = m(x)
    w = m.last_weights
    assert w is not None and w.shape == (5,) and math.isclose(float(w.sum()), 1.0, rel_tol=1e-6)
    torch.testing.assert_close(out, _reference_mix(m, x, w))


def test_seeded_sampling_is_reproducible():
    outs = []
    for _ in range(2):
        seed_everything(5)
        m = FlexAct()
        outs.append(torch.stack([m.sample_weights() for _ in range(3)]))
    assert torch.equal(outs[0], outs[1])
    seed_everything(6)
    assert not torch.equal(FlexAct().sample_weights(), outs[0][0])


def test_hard_samples_are_one_hot_with_gradients():
    seed_everything(0)
    m = FlexAct(hard=True)
    x = torch.randn(10, 2)
    out = m(x)
    w = m.last_weights
    assert sorted(w.tolist()) == [0.0, 0.0, 0.0, 0.0, 1.0]
    chosen = int(w.argmax())
    torch.testing.assert_close(out, m.candidates[chosen](x))
    out.square().mean().backward()
    assert torch.count_nonzero(m.logits.grad) > 0  # straight-through: every logit learns


def test_eval_mode_argmax_and_expected():
    m = FlexAct()
    with torch.no_grad():
        m.logits.copy_(torch.tensor([0.0, 3.0, 1.0, 0.0, -1.0]))
    assert m.chosen_activation == "sigmoid"
    assert m.probabilities_dict()["sigmoid"] == pytest.approx(float(m.probabilities()[1]))
    x = torch.randn(5, 4)
    m.eval()
    assert torch.equal(m(x), torch.sigmoid(x))
    assert torch.equal(m(x), m(x))  # deterministic
    m.eval_mode = "expected"
    torch.testing.assert_close(m(x), _reference_mix(m, x, torch.softmax(m.logits.detach(), 0)))
    with pytest.raises(ValueError, match="eval_mode"):
        m.eval_mode = "median"


# ------------------------------------------------------------------------------ gradient flow


def test_task_loss_reaches_the_logits():
    seed_everything(0)
    m = FlexAct()
    x = torch.randn(32, 4)
    loss = (m(x) - torch.tanh(x)).square().mean()
    loss.backward()
    assert m.logits.grad is not None and torch.count_nonzero(m.logits.grad) == 5


def test_regulariser_reaches_the_logits_and_not_the_weights():
    seed_everything(0)
    lin = nn.Linear(3, 4)
    m = FlexAct()
    m(lin(torch.randn(16, 3)))
    reg = m.regularizer(alpha=0.3, lam=1.0)
    reg.backward()
    assert torch.count_nonzero(m.logits.grad) == 5
    assert lin.weight.grad is None  # ḡ is detached by default: a pseudo-label target


def test_regulariser_without_detach_reaches_the_weights():
    seed_everything(0)
    lin = nn.Linear(3, 4)
    m = FlexAct()
    m(lin(torch.randn(16, 3)))
    m.regularizer(alpha=0.3, lam=1.0, detach=False).backward()
    assert lin.weight.grad is not None and torch.count_nonzero(lin.weight.grad) > 0


# ------------------------------------------------------------------------------ regulariser values


def _np_softmax(v: np.ndarray) -> np.ndarray:
    e = np.exp(v - v.max())
    return e / e.sum()


def test_regulariser_matches_hand_computation():
    h = np.array([[-1.0, 2.0], [0.5, -0.5], [3.0, 1.0]])
    logits = np.array([0.3, -0.2, 0.1])
    alpha, lam = 0.3, 0.7
    # φ'(h) by hand for relu, sigmoid, identity; per-sample L2 norm over the 2 features; mean.
    sig = 1 / (1 + np.exp(-h))
    derivs = [(h > 0).astype(float), sig * (1 - sig), np.ones_like(h)]
    g_bar = np.array([np.linalg.norm(d, axis=1).mean() for d in derivs])
    assert g_bar[2] == pytest.approx(math.sqrt(2))
    assert g_bar[0] == pytest.approx((1 + 1 + math.sqrt(2)) / 3)
    p_tilde = _np_softmax(-g_bar / lam)
    p = _np_softmax(logits)
    kl = float(np.sum(p_tilde * np.log(p_tilde / p)))

    m = FlexAct(("relu", "sigmoid", "identity")).double()
    with torch.no_grad():
        m.logits.copy_(torch.tensor(logits))
    m(torch.tensor(h))
    np.testing.assert_allclose(m.mean_gradient_norms().numpy(), g_bar, rtol=1e-12)
    np.testing.assert_allclose(m.pseudo_probabilities(lam).numpy(), p_tilde, rtol=1e-12)
    reg = m.regularizer(alpha, lam)
    assert reg.item() == pytest.approx(alpha * kl, rel=1e-12)
    reg.backward()
    # ∂(α KL(p̃‖p))/∂θ = α (p − p̃)
    np.testing.assert_allclose(m.logits.grad.numpy(), alpha * (p - p_tilde), rtol=1e-10, atol=1e-14)


def test_functional_forms_agree_with_module():
    h = torch.randn(8, 3, dtype=torch.float64)
    m = FlexAct().double()
    m(h)
    cands = list(m.candidates)
    g_bar = mean_gradient_norms(h, cands)
    direct = gradient_norm_regularizer(h, cands, m.logits, 0.3, 2.0)
    assert direct.item() == pytest.approx(m.regularizer(0.3, 2.0).item(), rel=1e-12)
    assert direct.item() == pytest.approx(0.3 * kl_to_pseudo_probabilities(g_bar, m.logits, 2.0).item(), rel=1e-12)
    p = pseudo_probabilities(g_bar, 2.0)
    assert float(p.sum()) == pytest.approx(1.0)
    assert int(p.argmax()) == int(g_bar.argmin())  # larger gradient -> smaller pseudo-probability


def test_gradient_norms_of_generic_candidates_by_autograd():
    h = torch.linspace(-2, 2, 9, dtype=torch.float64).reshape(9, 1)
    g_bar = mean_gradient_norms(h, [nn.Softplus()])
    expected = torch.sigmoid(h).mean()  # softplus' = sigmoid, |·| of a scalar per sample
    assert float(g_bar[0]) == pytest.approx(float(expected), rel=1e-12)


def test_kl_is_zero_at_the_pseudo_probabilities_and_positive_elsewhere():
    g_bar = torch.tensor([0.2, 0.9, 0.5], dtype=torch.float64)
    lam = 0.5
    logits = torch.log(pseudo_probabilities(g_bar, lam))
    assert kl_to_pseudo_probabilities(g_bar, logits, lam).item() == pytest.approx(0.0, abs=1e-14)
    assert kl_to_pseudo_probabilities(g_bar, torch.zeros(3, dtype=torch.float64), lam).item() > 0


def test_alpha_zero_turns_the_regulariser_off_exactly():
    seed_everything(0)
    m = FlexAct()
    m(torch.randn(8, 4))
    reg = m.regularizer(alpha=0.0, lam=1.0)
    assert reg.item() == 0.0 and not reg.requires_grad
    assert gradient_norm_regularizer(torch.randn(3, 2), list(m.candidates), m.logits, 0.0, 1.0).item() == 0.0
    hook = FlexActHook(alpha=0.0, lam=1.0)
    assert hook.extra_loss(nn.Sequential(m)) is None


def test_regulariser_rejects_bad_hyperparameters():
    bad_hyperparameters = [
        (-0.1, 1.0, ValueError),
        (0.3, 0.0, ValueError),
        (0.3, -1.0, ValueError),
        (float("inf"), 1.0, ValueError),
        ("0.3", 1.0, TypeError),
    ]
    faults = []
    for alpha, lam, error in bad_hyperparameters:
        m = FlexAct()
        m(torch.randn(4, 2))
        args = f"{alpha!r}, {lam!r}"
        faults += [
            refusal_fault(f"m.regularizer({args})", lambda: m.regularizer(alpha, lam), error),
            refusal_fault(
                f"gradient_norm_regularizer(..., {args})",
                lambda: gradient_norm_regularizer(torch.randn(4, 2), list(m.candidates), m.logits, alpha, lam),
                error,
            ),
            refusal_fault(f"FlexActHook({args})", lambda: FlexActHook(alpha, lam), error),
        ]
    problems = [fault for fault in faults if fault]
    assert not problems, "\n".join(problems)


def test_regulariser_needs_a_training_forward():
    m = FlexAct()
    with pytest.raises(RuntimeError, match="forward"):
        m.regularizer(0.3, 1.0)
    m.eval()
    m(torch.randn(3, 2))  # evaluation passes do not store pre-activations
    assert m.last_pre_activations is None
    with pytest.raises(ValueError, match="empty"):
        mean_gradient_norms(torch.empty(0, 3), list(m.candidates))


def test_copy_and_pickle_after_forward():
    m = FlexAct()
    m(torch.randn(4, 3, requires_grad=True))
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert clone.last_pre_activations is None
        assert torch.equal(clone.logits, m.logits)
        clone(torch.randn(2, 3))


# ------------------------------------------------------------------------------ schedule and hook


def test_temperature_schedule_values():
    exp = TemperatureSchedule(1.0, 0.1, 10, "exponential")
    assert exp(0) == 1.0
    assert exp(5) == pytest.approx(math.sqrt(0.1))
    assert exp(10) == pytest.approx(0.1) and exp(50) == pytest.approx(0.1)
    lin = TemperatureSchedule(2.0, 0.5, 4, "linear")
    assert [lin(t) for t in range(5)] == pytest.approx([2.0, 1.625, 1.25, 0.875, 0.5])
    assert TemperatureSchedule(0.7, 0.1, 3, "constant")(2) == 0.7


def test_temperature_schedule_rejects_bad_arguments():
    base = dict(tau_start=1.0, tau_min=0.1, total=10, kind="exponential")
    bad_arguments = [
        dict(tau_start=0.0),
        dict(tau_min=-1.0),
        dict(tau_start=0.1, tau_min=1.0),
        dict(total=0),
        dict(total=2.5),
        dict(kind="cosine"),
    ]
    faults = [
        refusal_fault(
            _call_text("TemperatureSchedule", kwargs), lambda: TemperatureSchedule(**{**base, **kwargs}), ValueError
        )
        for kwargs in bad_arguments
    ]
    faults.append(refusal_fault("TemperatureSchedule()(-1)", lambda: TemperatureSchedule()(-1), ValueError))
    problems = [fault for fault in faults if fault]
    assert not problems, "\n".join(problems)


def test_hook_trains_anneals_and_records():
    from helpers.core.train import fit

    gen = seed_everything(0)
    x = torch.rand(128, 2) * 2 - 1
    y = torch.sigmoid(5 * x[:, :1])
    train = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, generator=gen)
    val = DataLoader(TensorDataset(x, y), batch_size=128)
    model = nn.Sequential(nn.Linear(2, 1), FlexAct())
    schedule = TemperatureSchedule(1.0, 0.2, total=3 * len(train))
    hook = FlexActHook(alpha=0.3, lam=1.0, temperature_schedule=schedule)
    out = fit(
        model,
        train,
        val,
        optimizer=torch.optim.Adam(model.parameters(), lr=0.05),
        epochs=3,
        task="regression",
        hooks=[hook],
    )
    hist = out["history"]
    assert [row["tau"] for row in hist] == sorted((row["tau"] for row in hist), reverse=True)
    assert hist[-1]["tau"] == pytest.approx(schedule(3 * len(train) - 1))
    assert model[1].tau == hist[-1]["tau"]
    for row in hist:
        rec = row["flexact"]["1"]
        assert len(rec["probs"]) == 5 and sum(rec["probs"]) == pytest.approx(1.0)
        assert len(rec["pseudo_probs"]) == 5 and rec["kl"] >= 0 and rec["kl_mean"] >= 0
    assert hist[0]["flexact"]["1"]["probs"] != hist[-1]["flexact"]["1"]["probs"]


def test_hook_sums_over_layers():
    seed_everything(0)
    model = nn.Sequential(nn.Linear(3, 4), FlexAct(), nn.Linear(4, 2), FlexAct(("relu", "tanh")))
    model(torch.randn(8, 3))
    hook = FlexActHook(alpha=0.5, lam=1.0)
    total = hook.extra_loss(model)
    mods = flexact_modules(model)
    assert set(mods) == {"1", "3"}
    expected = sum(mod.regularizer(0.5, 1.0).item() for mod in mods.values())
    assert total.item() == pytest.approx(expected, rel=1e-6)


def test_hook_argument_checks():
    with pytest.raises(TypeError):
        FlexActHook(0.3, 1.0, temperature_schedule=0.5)
    with pytest.raises(ValueError):
        FlexActHook(0.3, 1.0, unit="batch")
    with pytest.raises(TypeError):
        flexact_modules("not a model")

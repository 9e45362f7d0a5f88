"""Hardness tooling for λ-GELU networks (λ-GELU paper, Sections III, IV-A to IV-C, Algorithm 1):
initialisation across depth, optimiser groups with ``η_s = c·η_w`` and no weight decay on ``s``, the
annealing of Algorithm 1, the metrics ``V_λ``, ``Δλ(t, c)``, BVS and ``ρ_S(e; m1, m2)``, and ReLU
substitution.

"Layers" are the :class:`~helpers.lambda_gelu.activation.LambdaGELU` modules in registration order
(``model.modules()``), which for the book's models is also the order of the forward pass; the
initialisation modes count only those with a learnable ``s``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from numbers import Real
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from helpers.core.models import replace_activations
from helpers.core.validation import checked_arguments, integer, number
from helpers.lambda_gelu.activation import LAMBDA_NEAR_ONE, LambdaGELU

InitMode = Literal["uniform", "increasing", "decreasing"]
INIT_MODES: tuple[str, ...] = ("uniform", "increasing", "decreasing")

#: Upper end of the increasing/decreasing initialisation range [≈1, 2] (Section IV-A).
LAMBDA_INIT_MAX: float = 2.0


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _positive(name: str, value: object) -> float:
    v = _real(name, value)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v


def _check_model(model: object) -> nn.Module:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    return model


# ------------------------------------------------------------------------------ initialisation
def init_lambdas(
    mode: InitMode, num_layers: int, *, lam_min: float = LAMBDA_NEAR_ONE, lam_max: float = LAMBDA_INIT_MAX
) -> list[float]:
    """Initial λ per layer (first to last) for the paper's initialisation modes.

    ``"uniform"``: ``lam_min`` everywhere (the paper's "λ ≈ 1"); ``"increasing"``: evenly spaced
    from ``lam_min`` (first layer) to ``lam_max`` (last); ``"decreasing"``: the reverse. λ = 1
    exactly would need ``s = −∞``, hence ``lam_min`` > 1 (default
    :data:`helpers.lambda_gelu.activation.LAMBDA_NEAR_ONE`, see there why not closer to 1). With one layer,
    increasing gives ``[lam_min]`` and decreasing ``[lam_max]``.
    """
    if mode not in INIT_MODES:
        raise ValueError(f"unknown init mode {mode!r}; choose one of {INIT_MODES}")
    if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
        raise ValueError(f"num_layers must be a positive int, got {num_layers!r}")
    lo, hi = _real("lam_min", lam_min), _real("lam_max", lam_max)
    if not 1 < lo <= hi:
        raise ValueError(f"need 1 < lam_min <= lam_max, got lam_min={lam_min!r}, lam_max={lam_max!r}")
    if mode == "uniform":
        return [lo] * num_layers
    first, last = (lo, hi) if mode == "increasing" else (hi, lo)
    return [float(v) for v in np.linspace(first, last, num_layers)]


def lambda_modules(model: nn.Module, *, learnable_only: bool = False) -> list[LambdaGELU]:
    """The model's λ-GELU modules in registration order (optionally only those with an ``s``)."""
    mods = [m for m in _check_model(model).modules() if isinstance(m, LambdaGELU)]
    return [m for m in mods if m.s is not None] if learnable_only else mods


def apply_init_mode(model: nn.Module, mode: InitMode, **kwargs: float) -> list[float]:
    """Set ``s`` of every learnable λ-GELU module so that λ follows :func:`init_lambdas` (the same λ
    in every channel of a module); return the λ values set."""
    mods = lambda_modules(model, learnable_only=True)
    if not mods:
        raise ValueError("model has no LambdaGELU module with a learnable s")
    values = init_lambdas(mode, len(mods), **kwargs)
    for module, lam in zip(mods, values):
        module.set_lambda(lam)
    return values


# ---------------------------------------------------------------------------- optimisation
def hardness_parameters(model: nn.Module) -> list[nn.Parameter]:
    """Every λ-GELU ``s`` parameter of the model (shared modules counted once)."""
    seen: set[int] = set()
    params = []
    for module in lambda_modules(model, learnable_only=True):
        if id(module.s) not in seen:
            seen.add(id(module.s))
            params.append(module.s)
    return params


def hardness_param_groups(model: nn.Module, lr: float, weight_decay: float, c: float) -> list[dict[str, Any]]:
    """Groups ``"weights"`` (``lr``, ``weight_decay``) and ``"hardness"`` (every ``s``: ``lr = c·lr``, no
    weight decay; Sections III and IV: ``η_s = c·η_w``); empty groups are left out."""
    _check_model(model)
    lr = _positive("lr", lr)
    c = _positive("c", c)
    weight_decay = _real("weight_decay", weight_decay)
    if weight_decay < 0:
        raise ValueError(f"weight_decay must be >= 0, got {weight_decay!r}")
    hardness = hardness_parameters(model)
    hardness_ids = {id(p) for p in hardness}
    weights = [p for p in model.parameters() if id(p) not in hardness_ids]
    groups = []
    if weights:
        groups.append({"params": weights, "lr": lr, "weight_decay": weight_decay, "name": "weights"})
    if hardness:
        groups.append({"params": hardness, "lr": c * lr, "weight_decay": 0.0, "name": "hardness"})
    if not groups:
        raise ValueError("model has no parameters")
    return groups


# ----------------------------------------------------------------------------------- annealing
def expected_gate_error(lam: float) -> float:
    """``E∞(λ) = ∫|H(x) − Φ(λx)| dx = 2/(λ√(2π))`` (closed form; see
    :mod:`helpers.lambda_gelu.theory` for the derivation)."""
    return 2.0 / (_positive("lam", lam) * math.sqrt(2.0 * math.pi))


def lambda_target(eps: float) -> float:
    """The smallest λ with ``E∞(λ) <= eps``: ``2/(eps·√(2π))`` (≈ 159.6 for ``eps = 5e-3``)."""
    eps = _positive("eps", eps)
    return 2.0 / (eps * math.sqrt(2.0 * math.pi))


class AnnealingSchedule:
    """Algorithm 1 of the paper as a per-epoch hook: learn λ, then anneal it linearly to a target.

    Epochs are 1-based, ``on_epoch_start(e, model)`` is called *before* training epoch ``e``,
    and ``λ_ℓ(e)`` denotes the hardness used *during* epoch ``e``. With
    ``e_s = floor(switch_fraction · T)``:

    * ``e <= e_s``: λ is learned (the override is cleared and ``s`` is trainable);
    * ``e > e_s``: ``s`` is frozen and λ is overridden with
      ``λ_ℓ(e) = λ_ℓ(e_s) + (e − e_s)/(T − e_s) · (λ_target − λ_ℓ(e_s))``,

    where ``λ_ℓ(e_s)`` is the learned value after epoch ``e_s`` (``1 + softplus(s/t)`` of the
    frozen ``s``), so ``λ_ℓ(T) = λ_target`` exactly (to float32). The hook keeps no state: the learned values live
    in the frozen ``s``, so a resumed run continues the same schedule. Modules in fixed mode anneal
    from their fixed λ.
    """

    @checked_arguments(
        {
            "total_epochs": integer(1),
            "lambda_target": number(1),
            "switch_fraction": number(0, 1, high_open=True),
        }
    )
    def __init__(self, total_epochs: int, lambda_target: float, switch_fraction: float = 0.25) -> None:
        self._set_run(total_epochs, lambda_target, switch_fraction)

    def _set_run(self, total_epochs: int, lambda_target: float, switch_fraction: float) -> None:
        # unchecked: each constructor (this one, LayerwiseAnnealing's) checked its arguments
        frac = float(switch_fraction)
        self.total_epochs = total_epochs
        self.lambda_target = float(lambda_target)
        self.switch_fraction = frac
        self.switch_epoch = math.floor(frac * total_epochs)  # e_s, always < T

    def __repr__(self) -> str:
        return (
            f"AnnealingSchedule(total_epochs={self.total_epochs}, lambda_target={self.lambda_target:.6g}, "
            f"switch_fraction={self.switch_fraction}, switch_epoch={self.switch_epoch})"
        )

    def weight(self, epoch: int) -> float:
        """``(e − e_s)/(T − e_s)`` clipped to [0, 1]: 0 while learning, 1 at ``e = T``."""
        self._check_epoch(epoch)
        return self._weight(epoch)

    def _weight(self, epoch: int) -> float:  # unchecked: for on_epoch_start, which checked the epoch
        e_s, total = self.switch_epoch, self.total_epochs
        return min(1.0, max(0.0, (epoch - e_s) / (total - e_s)))

    def annealed_lambda(self, start: torch.Tensor | float, epoch: int) -> torch.Tensor:
        """``λ(e)`` from the learned ``λ(e_s) = start`` (exact endpoints via ``torch.lerp``)."""
        start_t = torch.as_tensor(start, dtype=torch.float64)
        return torch.lerp(start_t, torch.full_like(start_t, self.lambda_target), self.weight(epoch))

    def _check_epoch(self, epoch: int) -> None:
        if isinstance(epoch, bool) or not isinstance(epoch, int) or not 1 <= epoch <= self.total_epochs:
            raise ValueError(f"epoch must be an int in 1..{self.total_epochs}, got {epoch!r}")

    def on_epoch_start(self, epoch: int, model: nn.Module) -> list[float]:
        """Prepare ``model`` for training epoch ``epoch``; return the per-layer λ it will use."""
        self._check_epoch(epoch)
        mods = lambda_modules(model)
        if not mods:
            raise ValueError("model has no LambdaGELU module to anneal")
        for module in mods:
            if epoch <= self.switch_epoch:
                module.clear_fixed_lambda(unfreeze=True)
            else:
                start = module.base_lam.detach()
                module.set_fixed_lambda(self.annealed_lambda(start, epoch).to(start.dtype))
        return layer_lambdas(model)


#: The public constructors of this module that check their arguments against a table
#: (``tests/test_constructor_validation.py`` generates bad inputs for each).
CHECKED_CONSTRUCTORS: tuple[type, ...] = (AnnealingSchedule,)


# -------------------------------------------------------------------------------------- metrics
def layer_lambdas(model: nn.Module) -> list[float]:
    """λ in use per λ-GELU module (registration order); the mean over channels/neurons."""
    return [float(m.lam.detach().double().mean()) for m in lambda_modules(model)]


def _history(history: object, name: str = "history") -> np.ndarray:
    arr = np.asarray(history, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(
            f"{name} must be a 2-D array (epochs × layers) with at least one of each, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or Inf")
    return arr


def hardness_drift(history: object) -> float:
    """``V_λ = (1/L) Σ_ℓ Σ_{e=1}^{T−1} |λ_ℓ(e+1) − λ_ℓ(e)|`` from ``history[e, ℓ]`` (epochs × layers)."""
    arr = _history(history)
    return float(np.abs(np.diff(arr, axis=0)).sum(axis=0).mean())


def drift_cell_average(histories: Mapping[tuple[Any, str], object]) -> float:
    """``Δλ(t, c) = E_r E_m [V_λ(r, m, t, c)]`` from ``{(seed, mode): history}`` of one (t, c) cell.

    Every seed must have the same set of modes (a complete grid), so the mean over modes of the
    mean over seeds is the plain mean and no run weighs more than another.
    """
    if not histories:
        raise ValueError("histories is empty")
    by_seed: dict[Any, dict[str, float]] = {}
    for key, hist in histories.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise ValueError(f"keys must be (seed, mode) pairs, got {key!r}")
        by_seed.setdefault(key[0], {})[key[1]] = hardness_drift(hist)
    modes = {frozenset(m) for m in by_seed.values()}
    if len(modes) != 1:
        raise ValueError(f"incomplete grid: seeds have different modes {sorted(map(sorted, modes))}")
    return float(np.mean([np.mean(list(m.values())) for m in by_seed.values()]))


def best_validation_score(values: Sequence[float], mode: Literal["max", "min"] = "max") -> tuple[float, int]:
    """``(BVS, epoch)``: the best score and its 1-based epoch (the first on ties); NaN epochs (a
    diverged evaluation) are skipped."""
    if mode not in ("max", "min"):
        raise ValueError(f"mode must be 'max' or 'min', got {mode!r}")
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"values must be a non-empty 1-D sequence, got shape {arr.shape}")
    if np.all(np.isnan(arr)):
        raise ValueError("all validation scores are NaN")
    idx = int(np.nanargmax(arr) if mode == "max" else np.nanargmin(arr))
    return float(arr[idx]), idx + 1


def spearman_across_modes(profiles_a: object, profiles_b: object) -> np.ndarray:
    """``ρ_S(e; m1, m2) = E_r[Spearman(λ̄^(r,m1)(e), λ̄^(r,m2)(e))]`` for every epoch.

    Inputs are arrays ``[seed, epoch, layer]`` (or ``[epoch, layer]`` for one seed) of the two
    modes, with the same seeds in the same order. A seed whose profile is constant at an epoch
    (e.g. the uniform initialisation before training moves it) has no rank correlation: it
    contributes NaN and the epoch's value is the mean over the seeds where it is defined; NaN
    when it is defined for none. Needs at least 2 layers.
    """
    from scipy.stats import (  # lazy: scipy.stats is slow to import; training never needs it
        ConstantInputWarning,
        spearmanr,
    )

    a, b = np.asarray(profiles_a, dtype=float), np.asarray(profiles_b, dtype=float)
    if a.ndim == 2 and b.ndim == 2:
        a, b = a[None], b[None]
    if a.ndim != 3 or a.shape != b.shape:
        raise ValueError(
            f"profiles must both be [seed, epoch, layer] arrays of one shape, got {np.shape(profiles_a)} "
            f"and {np.shape(profiles_b)}"
        )
    if a.shape[2] < 2:
        raise ValueError("Spearman correlation needs at least 2 layers")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("profiles contain NaN or Inf")
    rho = np.full(a.shape[:2], np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        for r in range(a.shape[0]):
            for e in range(a.shape[1]):
                if np.ptp(a[r, e]) == 0 or np.ptp(b[r, e]) == 0:
                    continue
                rho[r, e] = spearmanr(a[r, e], b[r, e]).statistic
    defined = ~np.isnan(rho)
    counts = defined.sum(axis=0)
    sums = np.where(defined, rho, 0.0).sum(axis=0)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


# ------------------------------------------------------------------------------ substitution
def substitute_relu(model: nn.Module) -> nn.Module:
    """A deep copy of ``model`` with every GELU and λ-GELU module replaced by ``nn.ReLU``."""
    return replace_activations(_check_model(model), nn.ReLU, types=(nn.GELU, LambdaGELU))


def evaluate_substitution(
    model: nn.Module, val_loader: Iterable, metric_fn: Callable[[nn.Module, Iterable], float]
) -> dict[str, float]:
    """``{"original", "substituted", "change"}``: ``metric_fn(model, val_loader)`` of ``model`` and of
    :func:`substitute_relu` of it, in eval mode (``model``'s mode is restored). ``metric_fn`` owns the
    aggregation (perplexity from the mean loss, not averaged per batch)."""
    _check_model(model)
    if not callable(metric_fn):
        raise TypeError(f"metric_fn must be callable, got {metric_fn!r}")
    substituted = substitute_relu(model)
    was_training = model.training
    try:
        model.eval()
        substituted.eval()
        with torch.no_grad():
            original = float(metric_fn(model, val_loader))
            swapped = float(metric_fn(substituted, val_loader))
    finally:
        model.train(was_training)
    return {"original": original, "substituted": swapped, "change": swapped - original}

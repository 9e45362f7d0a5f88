"""Flex-Act's synthetic regression study (paper Section 4.1, Table 1, Figs. 1-3, Appendix A).

Task (:mod:`helpers.flexact.synthetic_task`): ``y = a(k·x₁)`` with ``k = 5`` and three distractor
features, one ground truth ``a`` per column of Table 1; models: the five fixed activations and Flex-Act
(``α ∈ {0, 0.3}``) over them. What the paper states, what its numbers imply (one neuron, ``x₁ ~ U(−1, 1)``:
:func:`~helpers.flexact.synthetic_analysis.single_neuron_optimum`) and what we chose is listed on the page
(``notebooks/30_flexact_synthetic``); the config fields ``hard``, ``tau_schedule``/``tau_min``,
``kl_direction``, ``alpha_schedule``/``alpha_fraction`` and ``lam`` give the other readings (their defaults
are ours, so they leave every stored key unchanged; :mod:`helpers.flexact.readings` sweeps them).

``run_or_load(cfg)`` caches each run's JSON under ``results/flexact_synthetic/``."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from helpers.core import validation as v
from helpers.core.registry import get_activation
from helpers.core.results_cache import run_many
from helpers.core.runtime import PROFILES, current_profile, seed_everything, training_threads
from helpers.core.train import fit
from helpers.flexact.activation import DEFAULT_CANDIDATES, FlexAct
from helpers.flexact.hook import ALPHA_SCHEDULES, TEMPERATURE_SCHEDULES, AlphaSchedule, FlexActHook, TemperatureSchedule
from helpers.flexact.paper import ALPHAS, GROUND_TRUTH_NAMES, K_SCALE, N_FEATURES
from helpers.flexact.regulariser import KL_DIRECTIONS
from helpers.flexact.synthetic_task import (
    GROUND_TRUTHS,
    INFORMATIVE_DISTRIBUTIONS,
    SyntheticNet,
    _target_function,
    batch_loader,
    synthetic_data,
)

__all__ = ["GROUND_TRUTHS", "FIXED_METHODS", "METHODS", "DISPLAY", "INFORMATIVE_DISTRIBUTIONS"]
__all__ += ["synthetic_data", "SyntheticNet", "batch_loader", "FlexActSyntheticConfig", "profile_settings"]
__all__ += ["synthetic_config", "synthetic_configs", "SENSITIVITY_ALPHAS", "SENSITIVITY_LAMBDAS", "SENSITIVITY_SEEDS"]
__all__ += ["sensitivity_configs", "run_all", "build_model", "run_synthetic"]


FIXED_METHODS: tuple[str, ...] = DEFAULT_CANDIDATES
METHODS: tuple[str, ...] = ("flexact", *FIXED_METHODS)
DISPLAY: dict[str, str] = GROUND_TRUTH_NAMES


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlexActSyntheticConfig:
    """One run of the synthetic study. ``method`` is ``"flexact"`` or a fixed activation name."""

    experiment: str = "flexact_synthetic"
    profile: str = "cpu"
    ground_truth: str = "relu"
    method: str = "flexact"
    alpha: float = 0.0
    lam: float = 1.0
    seed: int = 0
    n_train: int = 1024
    n_val: int = 4096
    hidden: int = 0
    epochs: int = 60
    lr: float = 0.05
    lr_schedule: str = "cosine"
    batch_size: int = 32
    k: float = K_SCALE
    n_features: int = N_FEATURES
    informative: str = "uniform"
    tau_start: float = 1.0
    tau_min: float = 0.1
    tau_schedule: str = "exponential"
    hard: bool = False
    kl_direction: str = "forward"
    alpha_schedule: str = "constant"
    alpha_fraction: float = 0.5
    scale_note: str = ""

    def __post_init__(self) -> None:
        current_profile(self.profile)
        v.check_fields(self, SYNTHETIC_CONFIG_RULES)  # each field; the rules spanning fields follow
        if self.method != "flexact" and self.alpha != 0:
            raise ValueError("alpha applies to method='flexact' only; fixed models need alpha=0")
        if self.tau_min > self.tau_start:
            raise ValueError(f"tau_min ({self.tau_min}) must not exceed tau_start ({self.tau_start})")
        # A reading of the regulariser changes nothing when the regulariser is off: refuse it, so
        # that one run is not stored twice under two keys (see :mod:`helpers.flexact.readings`).
        for name, default in (("kl_direction", "forward"), ("alpha_schedule", "constant"), ("alpha_fraction", 0.5)):
            if getattr(self, name) != default and (self.method != "flexact" or self.alpha == 0):
                raise ValueError(
                    f"{name} applies to Flex-Act with alpha > 0 only (the regulariser is off "
                    f"here), got {name}={getattr(self, name)!r}"
                )
        if self.alpha_fraction != 0.5 and self.alpha_schedule == "constant":
            raise ValueError(
                f"alpha_fraction applies to a non-constant alpha_schedule only, got "
                f"alpha_fraction={self.alpha_fraction!r} with alpha_schedule='constant'"
            )
        if self.hard and self.method != "flexact":
            raise ValueError("hard applies to method='flexact' only")

    @property
    def reading(self) -> str:
        """The non-default readings of the method, e.g. ``"hard"`` or ``"KL(p ‖ p̃)"`` (``""``: ours)."""
        parts = []
        if self.hard:
            parts.append("hard")
        if (self.tau_schedule, self.tau_start, self.tau_min) != ("exponential", 1.0, 0.1):
            if self.tau_schedule == "constant":
                parts.append(f"τ={self.tau_start:g}")
            else:
                kind = "exp" if self.tau_schedule == "exponential" else "lin"
                parts.append(f"τ {kind} {self.tau_start:g}→{self.tau_min:g}")
        if self.kl_direction == "reverse":
            parts.append("KL(p‖p̃)")
        if self.alpha_schedule != "constant" or self.alpha_fraction != 0.5:
            parts.append(f"α {self.alpha_schedule} {self.alpha_fraction:g}")
        return ", ".join(parts)

    @property
    def label(self) -> str:
        """Row label as in Table 1 (``Flex-Act (α=0.3)``, ``ReLU Model``); a run under another
        reading names it (``Flex-Act (α=0.3, hard)``)."""
        if self.method == "flexact":
            lam = "" if self.lam == 1.0 else f", λ={self.lam:g}"
            reading = f", {self.reading}" if self.reading else ""
            return f"Flex-Act (α={self.alpha:g}{lam}{reading})"
        return f"{DISPLAY[self.method]} Model"


#: Every field of :class:`FlexActSyntheticConfig`: kind, range, finiteness (:mod:`helpers.core.validation`).
SYNTHETIC_CONFIG_RULES: dict[str, v.Rule] = {
    "experiment": v.path_name(),
    "profile": v.choice(PROFILES),
    "ground_truth": v.choice(GROUND_TRUTHS),
    "method": v.choice(METHODS),
    "alpha": v.number(0),
    "lam": v.number(0, low_open=True),
    "seed": v.integer(0),
    "n_train": v.integer(1),
    "n_val": v.integer(1),
    "hidden": v.integer(0),
    "epochs": v.integer(1),
    "lr": v.number(0, low_open=True),
    "lr_schedule": v.choice(("cosine", "none")),
    "batch_size": v.integer(1),
    "k": v.number(),
    "n_features": v.integer(1),
    "informative": v.choice(INFORMATIVE_DISTRIBUTIONS),
    "tau_start": v.number(0, low_open=True),
    "tau_min": v.number(0, low_open=True),
    "tau_schedule": v.choice(TEMPERATURE_SCHEDULES),
    "hard": v.boolean(),
    "kl_direction": v.choice(KL_DIRECTIONS),
    "alpha_schedule": v.choice(ALPHA_SCHEDULES),
    "alpha_fraction": v.number(0, 1, low_open=True),
    "scale_note": v.text(),
}


# Profiles: what each one changes (the paper gives none of these numbers).
_PROFILES: dict[str, tuple[int, int, int, int, tuple[int, ...]]] = {  # n_train, n_val, epochs, batch_size, seeds
    "smoke": (128, 256, 2, 32, (0,)),
    "cpu": (1024, 4096, 60, 32, (0, 1, 2, 3, 4)),
    "paper": (10_000, 10_000, 100, 64, (0, 1, 2, 3, 4)),
}
_NOTES: dict[str, str] = {
    "smoke": "smoke: 128 samples, 2 epochs, 1 seed (code path only)",
    "cpu": "1,024 training / 4,096 held-out samples, 60 epochs of batch 32 (paper: unstated)",
    "paper": "paper protocol; sizes and epochs unstated in the paper, ours are larger than cpu",
}


def profile_settings(profile: str) -> dict[str, Any]:
    """The scaled settings of ``profile`` (sizes, epochs, seeds, note)."""
    profile = current_profile(profile)
    sizes = dict(zip(("n_train", "n_val", "epochs", "batch_size", "seeds"), _PROFILES[profile]))
    return {**sizes, "note": _NOTES[profile]}


def synthetic_config(
    profile: str, ground_truth: str, method: str, seed: int, *, alpha: float = 0.0, lam: float = 1.0
) -> FlexActSyntheticConfig:
    """The config of one cell of Table 1 for one seed."""
    s = profile_settings(profile)
    sizes = {name: s[name] for name in ("n_train", "n_val", "epochs", "batch_size")}
    return FlexActSyntheticConfig(
        profile=profile,
        ground_truth=ground_truth,
        method=method,
        alpha=float(alpha),
        lam=float(lam),
        seed=seed,
        scale_note=s["note"],
        **sizes,
    )


def synthetic_configs(profile: str) -> list[FlexActSyntheticConfig]:
    """Table 1's grid: 5 ground truths × (Flex-Act α ∈ {0.3, 0} + 5 fixed models) × seeds."""
    seeds = profile_settings(profile)["seeds"]
    configs = []
    for gt in GROUND_TRUTHS:
        for seed in seeds:
            for alpha in ALPHAS:
                configs.append(synthetic_config(profile, gt, "flexact", seed, alpha=alpha))
            for method in FIXED_METHODS:
                configs.append(synthetic_config(profile, gt, method, seed))
    return configs


SENSITIVITY_ALPHAS: tuple[float, ...] = (0.03, 0.1, 1.0)
SENSITIVITY_LAMBDAS: tuple[float, ...] = (0.1, 10.0)
SENSITIVITY_SEEDS = 3


def sensitivity_configs(profile: str) -> list[FlexActSyntheticConfig]:
    """Flex-Act beyond the paper's two settings, on the first 3 seeds of the profile:
    ``α`` ∈ :data:`SENSITIVITY_ALPHAS` at ``λ = 1``, and ``λ`` ∈ :data:`SENSITIVITY_LAMBDAS` at
    ``α = 0.3`` (the paper gives no ``λ``)."""
    seeds = profile_settings(profile)["seeds"][:SENSITIVITY_SEEDS]
    pairs = [(a, 1.0) for a in SENSITIVITY_ALPHAS] + [(0.3, lam) for lam in SENSITIVITY_LAMBDAS]
    return [
        synthetic_config(profile, gt, "flexact", seed, alpha=alpha, lam=lam)
        for alpha, lam in pairs
        for gt in GROUND_TRUTHS
        for seed in seeds
    ]


def run_all(configs: list[FlexActSyntheticConfig], desc: str = "flexact synthetic") -> list[dict]:
    """``run_or_load`` every config (missing ones train in parallel: :func:`helpers.core.results_cache.run_many`)."""
    return run_many(configs, desc=desc)


# --------------------------------------------------------------------------------------------
# Runner
# --------------------------------------------------------------------------------------------


def build_model(cfg: FlexActSyntheticConfig) -> SyntheticNet:
    act = FlexAct(hard=cfg.hard) if cfg.method == "flexact" else get_activation(cfg.method)
    return SyntheticNet(cfg.n_features, cfg.hidden, act)


@torch.no_grad()
def _held_out(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
    model.eval()
    sq = (model(x) - y).square().flatten().double()
    return {"val_mse": float(sq.mean()), "val_sq_err_std": float(sq.std(unbiased=False))}


def run_synthetic(cfg: FlexActSyntheticConfig, workdir: Path) -> dict[str, Any]:
    """Train one model and return history, held-out MSE, choice and predictions on a grid."""
    with training_threads():  # 1 thread by default, like every training run
        result = _train_and_evaluate(cfg)
    try:
        workdir.rmdir()  # no checkpoints: a run takes seconds
    except OSError:
        pass
    return result


def _train_and_evaluate(cfg: FlexActSyntheticConfig) -> dict[str, Any]:
    seed_everything(cfg.seed)
    data_gen = torch.Generator().manual_seed(10_000 + cfg.seed)  # same data for every method
    (x_train, y_train), (x_val, y_val) = (
        synthetic_data(cfg.ground_truth, n, data_gen, k=cfg.k, n_features=cfg.n_features, informative=cfg.informative)
        for n in (cfg.n_train, cfg.n_val)
    )
    model = build_model(cfg)
    train_loader = batch_loader(x_train, y_train, cfg.batch_size, shuffle=True, seed=cfg.seed)
    val_loader = batch_loader(x_val, y_val, cfg.n_val, shuffle=False, seed=0)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = (
        torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs) if cfg.lr_schedule == "cosine" else None
    )
    hooks = []
    flexact = model.act if isinstance(model.act, FlexAct) else None
    if flexact is not None:
        steps = cfg.epochs * len(train_loader)
        schedule = TemperatureSchedule(cfg.tau_start, cfg.tau_min, steps, cfg.tau_schedule)
        alpha_schedule = (
            AlphaSchedule(cfg.alpha, steps, cfg.alpha_schedule, cfg.alpha_fraction)
            if cfg.alpha_schedule != "constant"
            else None
        )
        hooks.append(
            FlexActHook(cfg.alpha, cfg.lam, schedule, kl_direction=cfg.kl_direction, alpha_schedule=alpha_schedule)
        )
    initial_probs = flexact.probabilities().tolist() if flexact is not None else None
    started = time.perf_counter()
    out = fit(
        model,
        train_loader,
        val_loader,
        optimizer=optimizer,
        epochs=cfg.epochs,
        task="regression",
        scheduler=scheduler,
        hooks=hooks,
        checkpoint_path=None,
        desc=f"{cfg.ground_truth} {cfg.label} s{cfg.seed}",
    )
    seconds = time.perf_counter() - started
    held_out = _held_out(model, x_val, y_val)
    if flexact is not None:
        # The same network evaluated with the softmax(θ)-weighted mixture instead of the argmax:
        # tells whether a poor held-out MSE comes from the discrete choice or from the weights.
        flexact.eval_mode = "expected"
        held_out["val_mse_expected"] = _held_out(model, x_val, y_val)["val_mse"]
        flexact.eval_mode = "argmax"
    grid = torch.zeros(201, cfg.n_features)
    grid[:, 0] = torch.linspace(-1, 1, 201) if cfg.informative == "uniform" else torch.linspace(-3, 3, 201)
    with torch.no_grad():
        model.eval()
        grid_pred = model(grid).flatten().tolist()
        grid_true = _target_function(cfg.ground_truth)(cfg.k * grid[:, :1]).flatten().tolist()
    result: dict[str, Any] = {
        "history": out["history"],
        **held_out,
        "chosen_activation": flexact.chosen_activation if flexact is not None else cfg.method,
        "candidates": list(flexact.names) if flexact is not None else None,
        "initial_probs": initial_probs,
        "final_probs": flexact.probabilities().tolist() if flexact is not None else None,
        "weight": model.linear.weight.detach().flatten().tolist() if cfg.hidden == 0 else None,
        "bias": float(model.linear.bias.detach()[0]) if cfg.hidden == 0 else None,
        "grid": {"x1": grid[:, 0].tolist(), "truth": grid_true, "pred": grid_pred},
        "train_seconds": seconds,  # informative only; never compared
    }
    return result

"""Flex-Act in training: the Gumbel-softmax temperature schedule, the schedule of the KL weight α
(constant in the paper; the others are readings we try), and the hook that adds the
gradient-norm regulariser (Eqs. 3-4) to the loss, plus Flex-Act's part of a
:class:`~helpers.core.runs.TrainConfig` run (its :class:`~helpers.flexact.options.FlexActOptions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn

from helpers.core.runs import RunExtension, TrainConfig
from helpers.core.train import TrainHook
from helpers.core.validation import boolean, check_value, checked_arguments, choice, instance_of, integer, number
from helpers.flexact.activation import FlexAct, flexact_modules
from helpers.flexact.options import FlexActOptions
from helpers.flexact.regulariser import (
    RULES,
    _layer_regularizer,
    kl_to_pseudo_probabilities,
    mean_gradient_norms,
    pseudo_probabilities,
)

# --------------------------------------------------------------------------------------------
# Temperature schedule and training hook
# --------------------------------------------------------------------------------------------


#: Kinds of :class:`TemperatureSchedule`.
TEMPERATURE_SCHEDULES: tuple[str, ...] = ("exponential", "linear", "constant")


@checked_arguments(
    {
        "tau_start": number(0, low_open=True),
        "tau_min": number(0, low_open=True),
        "total": integer(1),
        "kind": choice(TEMPERATURE_SCHEDULES),
    }
)
@dataclass(frozen=True)
class TemperatureSchedule:
    """``τ(t)`` from ``tau_start`` to ``tau_min`` over ``total`` units (steps or epochs), then flat.

    ``kind``: ``"exponential"`` (``τ_start·(τ_min/τ_start)^(t/total)``), ``"linear"``, or
    ``"constant"`` (always ``tau_start``). The paper only says "as τ is annealed".
    """

    tau_start: float = 1.0
    tau_min: float = 0.1
    total: int = 1
    kind: Literal["exponential", "linear", "constant"] = "exponential"

    def __post_init__(self) -> None:
        # each argument is checked by the table above; this is the rule that spans two of them
        if self.tau_min > self.tau_start:
            raise ValueError(f"tau_min ({self.tau_min}) must not exceed tau_start ({self.tau_start})")

    def __call__(self, t: int) -> float:
        check_value(type(self).__name__, "position", t, integer(0))  # the step or epoch, from 0
        return self._at(t)

    def _at(self, t: int) -> float:  # unchecked: the hook's steps count from 0
        frac = min(t / self.total, 1.0)
        if self.kind == "constant":
            return self.tau_start
        if self.kind == "linear":
            return self.tau_start + (self.tau_min - self.tau_start) * frac
        return self.tau_start * (self.tau_min / self.tau_start) ** frac


#: Kinds of :class:`AlphaSchedule`.
ALPHA_SCHEDULES: tuple[str, ...] = ("constant", "warmup", "late", "decay")


@checked_arguments(
    {
        "alpha": number(0),
        "total": integer(1),
        "kind": choice(ALPHA_SCHEDULES),
        "fraction": number(0, 1, low_open=True),
    }
)
@dataclass(frozen=True)
class AlphaSchedule:
    """``α(t)``, the weight of the KL term at step ``t`` of ``total`` (the paper gives a constant α).

    ``kind`` (``f = fraction``, ``T = total``):

    * ``"constant"``: ``α`` at every step;
    * ``"warmup"``: ``α·min(1, t/(f·T))``, ramped linearly from 0 over the first ``f`` of training
      (the usual way a KL term is brought in, e.g. KL annealing of VAEs);
    * ``"late"``: 0 before step ``f·T``, ``α`` from then on (the weights fit the data first, then
      the regulariser corrects the choice);
    * ``"decay"``: ``α·max(0, 1 − t/(f·T))``, from ``α`` down to 0 at ``f`` of training and off
      after it (the regulariser steers the early choice, then lets the task loss commit: the
      paper's "rapidly discovers and locks onto").
    """

    alpha: float
    total: int = 1
    kind: str = "constant"
    fraction: float = 0.5

    def __call__(self, t: int) -> float:
        check_value(type(self).__name__, "position", t, integer(0))  # the step or epoch, from 0
        return self._at(t)

    def _at(self, t: int) -> float:  # unchecked: the hook's steps count from 0
        alpha = float(self.alpha)
        if self.kind == "constant":
            return alpha
        span = self.fraction * self.total
        if self.kind == "warmup":
            return alpha * min(1.0, t / span)
        if self.kind == "late":
            return alpha if t >= span else 0.0
        return alpha * max(0.0, 1.0 - t / span)  # decay


class FlexActHook(TrainHook):
    """Training hook (:class:`helpers.core.train.TrainHook`) for models with Flex-Act layers.

    * sets ``tau`` of every Flex-Act module from ``temperature_schedule`` before each step
      (``unit="step"``, 0-based global step) or each epoch (``unit="epoch"``, epoch 1 -> 0);
      without a schedule the modules keep their own ``tau``;
    * ``extra_loss``: ``α·Σ_layers KL(p̃ ‖ p)`` (Eqs. 3-4) at the batch just seen (``kl_direction=
      "reverse"``: ``KL(p ‖ p̃)``; with an ``alpha_schedule``, ``α`` is the schedule's value at the
      step, set in ``on_step`` like τ); ``None`` when that ``α`` is 0, so the regulariser is off
      and costs nothing;
    * ``epoch_record``: ``{"tau": τ, "flexact": {layer: row}}`` where ``row`` holds ``probs``
      (selection probabilities ``softmax(θ)`` at the end of the epoch), and ``grad_norms`` (ḡ),
      ``pseudo_probs`` (p̃) and ``kl`` at the epoch's last training batch (recorded for
      ``α = 0`` too, as a diagnostic), plus ``kl_mean`` over the epoch's steps when ``α > 0``.
    """

    @checked_arguments(
        {
            "alpha": RULES["alpha"],
            "lam": RULES["lam"],
            "temperature_schedule": instance_of(TemperatureSchedule, optional=True),
            "unit": choice(("step", "epoch")),
            "detach": boolean(),
            "kl_direction": RULES["kl_direction"],
            "alpha_schedule": instance_of(AlphaSchedule, optional=True),
        }
    )
    def __init__(
        self,
        alpha: float,
        lam: float,
        temperature_schedule: TemperatureSchedule | None = None,
        *,
        unit: Literal["step", "epoch"] = "step",
        detach: bool = True,
        kl_direction: str = "forward",
        alpha_schedule: AlphaSchedule | None = None,
    ) -> None:
        self.alpha = float(alpha)
        self.kl_direction = kl_direction
        if alpha_schedule is not None and alpha_schedule.alpha != self.alpha:
            raise ValueError(f"alpha_schedule.alpha ({alpha_schedule.alpha}) differs from alpha ({self.alpha})")
        self.alpha_schedule = alpha_schedule
        self.alpha_now = self.alpha  # α at the current step (the schedule's value; α without one)
        self.lam = float(lam)
        self.schedule = temperature_schedule
        self.unit = unit
        self.detach = detach
        self.tau: float | None = None
        self._kl_sum: dict[str, float] = {}
        self._kl_steps = 0
        self._cached_model: nn.Module | None = None
        self._cached_modules: dict[str, FlexAct] = {}

    def _modules(self, model: nn.Module) -> dict[str, FlexAct]:
        # Walking the module tree every step costs more than the step itself for tiny models;
        # the tree does not change during training, so walk it once per model.
        if self._cached_model is not model:
            self._cached_model, self._cached_modules = model, flexact_modules(model)
        return self._cached_modules

    def _set_tau(self, t: int, model: nn.Module) -> None:
        if self.schedule is None:
            return
        # unchecked: __init__ checked the schedule once for the run, and its τ is positive
        self.tau = self.schedule._at(t)
        for module in self._modules(model).values():
            module.__dict__["tau"] = float(self.tau)

    def on_epoch_start(self, epoch: int, model: nn.Module) -> None:
        self._kl_sum, self._kl_steps = {}, 0
        if self.unit == "epoch":
            self._set_tau(max(epoch - 1, 0), model)

    def on_step(self, step: int, model: nn.Module) -> None:
        if self.unit == "step":
            self._set_tau(step, model)
        if self.alpha_schedule is not None:  # always per step (the schedules are fractions of training)
            self.alpha_now = self.alpha_schedule._at(step)

    def extra_loss(self, model: nn.Module) -> torch.Tensor | None:
        alpha = self.alpha_now
        if alpha == 0.0:
            return None
        total: torch.Tensor | None = None
        for name, module in self._modules(model).items():
            h = module.last_pre_activations
            if h is None:
                continue
            # unchecked: __init__ checked alpha, lam and the direction once for the run
            term = _layer_regularizer(
                h, module.candidates, module.logits, alpha, self.lam, detach=self.detach, direction=self.kl_direction
            )
            self._kl_sum[name] = self._kl_sum.get(name, 0.0) + float(term.detach()) / alpha
            total = term if total is None else total + term
        self._kl_steps += 1
        return total

    def epoch_record(self, model: nn.Module) -> dict[str, Any]:
        layers: dict[str, dict[str, Any]] = {}
        for name, module in self._modules(model).items():
            row: dict[str, Any] = {"probs": module.probabilities().tolist()}
            h = module.last_pre_activations
            if h is not None and h.numel():
                g_bar = mean_gradient_norms(h.detach(), module.candidates)
                row["grad_norms"] = g_bar.tolist()
                row["pseudo_probs"] = pseudo_probabilities(g_bar, self.lam).tolist()
                row["kl"] = float(
                    kl_to_pseudo_probabilities(g_bar, module.logits.detach(), self.lam, direction=self.kl_direction)
                )
            if self._kl_steps and name in self._kl_sum:
                row["kl_mean"] = self._kl_sum[name] / self._kl_steps
            layers[name] = row
        tau = self.tau
        if tau is None and layers:
            tau = next(iter(self._modules(model).values())).tau
        record: dict[str, Any] = {"tau": tau, "flexact": layers}
        if self.alpha_schedule is not None:
            record["alpha"] = self.alpha_now  # α at the epoch's last step
        return record

    def state_dict(self) -> dict[str, Any]:
        return {"tau": self.tau}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.tau = state.get("tau")


#: The public constructors of this module that check their arguments against a table
#: (``tests/test_constructor_validation.py`` generates bad inputs for each).
CHECKED_CONSTRUCTORS: tuple[type, ...] = (TemperatureSchedule, AlphaSchedule, FlexActHook)


class FlexActRun(RunExtension):
    """A :class:`FlexActHook` for every run with a Flex-Act activation (its table line); with
    ``flexact_tau_min`` it anneals τ exponentially from 1 over every training step of the run."""

    def hooks(self, model: nn.Module, cfg: TrainConfig, steps_per_epoch: int) -> list[TrainHook]:
        schedule = None
        opts = cfg.option(FlexActOptions)
        if opts.flexact_tau_min is not None:  # anneal over every training step of the run
            schedule = TemperatureSchedule(1.0, opts.flexact_tau_min, cfg.epochs * steps_per_epoch, "exponential")
        return [FlexActHook(alpha=opts.flexact_alpha, lam=opts.flexact_lam, temperature_schedule=schedule)]


RUN_EXTENSION = FlexActRun()

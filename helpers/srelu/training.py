"""S-ReLU's part of a :class:`~helpers.core.runs.TrainConfig` run: δ annealing (beyond the paper).

The S-ReLU paper fixes δ; its error bound ``sup|S-ReLU − ReLU| = 3δ/16`` says that δ → 0 turns
the network into a ReLU network. :class:`DeltaAnnealing` is the δ twin of the λ-GELU paper's
Algorithm 1 (``helpers.lambda_gelu.hardness.AnnealingSchedule``), designed for the ReLU-ization
chapter (notebooks 40-41):

* epochs ``e <= e_s = floor(switch_fraction·T)``: δ stays at its start value δ₀ (S-ReLU has no
  learnable δ here, so this is Algorithm 1's smooth phase with nothing to learn);
* epochs ``e > e_s``: ``1/δ(e) = 1/δ₀ + (e − e_s)/(T − e_s)·(1/δ_T − 1/δ₀)``, so ``δ(T) = δ_T``.

Why ``1/δ`` and not δ is linear: S-ReLU's gate gap ``∫|H − S-ReLU'| = 3δ/8``
(:func:`helpers.srelu.theory.gate_l1_gap`) and λ-GELU's ``E∞(λ) = 2/(λ√(2π))`` are both
proportional to ``1/hardness``. With ``δ ∝ 1/λ`` (equal gate gap) the schedule is exactly
Algorithm 1's linear ramp in λ, carried over to δ. The hook keeps no state of its own (δ(e) is a
function of the epoch), so a run resumed from a checkpoint continues the same schedule.
"""

from __future__ import annotations

import math
from typing import Any

from torch import nn

from helpers.core.runs import RunExtension, TrainConfig
from helpers.core.train import TrainHook
from helpers.core.validation import checked_arguments, integer, number
from helpers.srelu.activation import SReLU
from helpers.srelu.options import SReluOptions


def _positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


#: ``∫|H − S-ReLU'| dx = (3/8)·δ`` (derived by :func:`helpers.srelu.theory.gate_l1_gap`; a test
#: checks the constant against it).
GATE_GAP_PER_DELTA: float = 3.0 / 8.0


def gate_gap(delta: float) -> float:
    """S-ReLU's gate gap ``∫|H(x) − S-ReLU'(x)| dx = 3δ/8``, the counterpart of λ-GELU's ``E∞(λ)``."""
    return GATE_GAP_PER_DELTA * _positive("delta", delta)


def delta_for_gate_gap(eps: float) -> float:
    """The δ whose gate gap is ``eps``: ``8·eps/3``."""
    return _positive("eps", eps) / GATE_GAP_PER_DELTA


def srelu_modules(model: nn.Module) -> list[SReLU]:
    """The model's S-ReLU modules in registration order."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    return [m for m in model.modules() if isinstance(m, SReLU)]


def set_srelu_delta(model: nn.Module, delta: float) -> int:
    """Set δ of every (fixed-δ) S-ReLU module of ``model``; return how many were set."""
    mods = srelu_modules(model)
    if not mods:
        raise ValueError("model has no SReLU module")
    for module in mods:
        module.set_delta(delta)
    return len(mods)


class DeltaAnnealing(TrainHook):
    """δ fixed at ``delta_start`` for ``e_s`` epochs, then ``1/δ`` linear to ``1/delta_target`` at ``T``."""

    @checked_arguments(
        {
            "total_epochs": integer(1),
            "delta_start": number(0, low_open=True),
            "delta_target": number(0, low_open=True),
            "switch_fraction": number(0, 1, high_open=True),
        }
    )
    def __init__(
        self, total_epochs: int, delta_start: float, delta_target: float, switch_fraction: float = 0.25
    ) -> None:
        self.delta_start = float(delta_start)
        self.delta_target = float(delta_target)
        self.total_epochs = total_epochs
        self.switch_fraction = float(switch_fraction)
        self.switch_epoch = math.floor(self.switch_fraction * total_epochs)  # e_s < T

    def __repr__(self) -> str:
        return (
            f"DeltaAnnealing(total_epochs={self.total_epochs}, delta_start={self.delta_start:.6g}, "
            f"delta_target={self.delta_target:.6g}, switch_epoch={self.switch_epoch})"
        )

    def delta_at(self, epoch: int) -> float:
        """δ used during training epoch ``epoch`` (1-based); exact endpoints δ₀ and δ_T."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or not 1 <= epoch <= self.total_epochs:
            raise ValueError(f"epoch must be an int in 1..{self.total_epochs}, got {epoch!r}")
        if epoch <= self.switch_epoch:
            return self.delta_start
        w = (epoch - self.switch_epoch) / (self.total_epochs - self.switch_epoch)
        if w >= 1.0:
            return self.delta_target
        return 1.0 / ((1.0 - w) / self.delta_start + w / self.delta_target)

    def on_epoch_start(self, epoch: int, model: nn.Module) -> None:
        set_srelu_delta(model, self.delta_at(epoch))

    def epoch_record(self, model: nn.Module) -> dict[str, Any]:
        return {"delta": srelu_modules(model)[0].delta}


#: The public constructors of this module that check their arguments against a table
#: (``tests/test_constructor_validation.py`` generates bad inputs for each).
CHECKED_CONSTRUCTORS: tuple[type, ...] = (DeltaAnnealing,)


class SReLURun(RunExtension):
    """δ annealing for a run that carries :class:`SReluOptions` (``delta_anneal_target``; its table line)."""

    def hooks(self, model: nn.Module, cfg: TrainConfig, steps_per_epoch: int) -> list[TrainHook]:
        start = cfg.activation_kwargs.get("delta", SReLU().delta)
        target = cfg.option(SReluOptions).delta_anneal_target
        return [DeltaAnnealing(cfg.epochs, start, target, switch_fraction=cfg.anneal_switch)]


RUN_EXTENSION = SReLURun()

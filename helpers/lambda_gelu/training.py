"""λ-GELU's part of a :class:`~helpers.core.runs.TrainConfig` run (a :class:`~helpers.core.runs.RunExtension`).

* ``init_mode``: the initialisation across depth (:func:`~helpers.lambda_gelu.hardness.apply_init_mode`);
* ``hardness_lr_mult`` (c): the optimiser's parameter groups, ``η_s = c·η_w`` and no weight decay
  on ``s`` (:func:`~helpers.lambda_gelu.hardness.hardness_param_groups`);
* ``anneal_target``: Algorithm 1 (:class:`~helpers.lambda_gelu.hardness.AnnealingSchedule`);
* ``anneal_layer_eps``: Algorithm 1 with one distribution-aware target per layer
  (:class:`~helpers.lambda_gelu.layer_targets.LayerwiseAnnealing`, beyond the paper);
* the λ of every layer at the start (``lambda_init``) and after every epoch (``lambdas`` in the
  history, :class:`LambdaRecorder`); both are empty for a model without λ-GELU.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from helpers.core.runs import RunExtension, TrainConfig
from helpers.core.train import TrainHook
from helpers.lambda_gelu.hardness import AnnealingSchedule, apply_init_mode, hardness_param_groups, layer_lambdas
from helpers.lambda_gelu.layer_targets import LayerwiseAnnealing

__all__ = ["LambdaRecorder", "LambdaGELURun", "RUN_EXTENSION"]


class LambdaRecorder(TrainHook):
    """Logs every λ-GELU layer's hardness at the end of each epoch (``lambdas`` in history)."""

    def epoch_record(self, model: nn.Module) -> dict[str, Any]:
        lambdas = layer_lambdas(model)
        return {"lambdas": lambdas} if lambdas else {}


class LambdaGELURun(RunExtension):
    """The λ-GELU fields of :class:`TrainConfig`, applied to a built model."""

    def prepare(self, model: nn.Module, cfg: TrainConfig) -> None:
        if cfg.init_mode is not None:
            apply_init_mode(model, cfg.init_mode)

    def param_groups(self, model: nn.Module, cfg: TrainConfig) -> list[dict[str, Any]]:
        # also for models without λ-GELU: one "weights" group, and c is still validated
        return hardness_param_groups(model, cfg.lr, cfg.weight_decay, cfg.hardness_lr_mult)

    def hooks(self, model: nn.Module, cfg: TrainConfig, steps_per_epoch: int) -> list[TrainHook]:
        hooks: list = [LambdaRecorder()]
        if cfg.anneal_target is not None:
            hooks.append(AnnealingSchedule(cfg.epochs, cfg.anneal_target, switch_fraction=cfg.anneal_switch))
        if cfg.anneal_layer_eps is not None:
            hooks.append(LayerwiseAnnealing(cfg.epochs, cfg.anneal_layer_eps, switch_fraction=cfg.anneal_switch))
        return hooks

    def initial_record(self, model: nn.Module) -> dict[str, Any]:
        return {"lambda_init": layer_lambdas(model)}


RUN_EXTENSION = LambdaGELURun()

"""λ-GELU's part of a :class:`~helpers.core.runs.TrainConfig` run (a :class:`~helpers.core.runs.RunExtension`).

It applies the run's :class:`~helpers.lambda_gelu.options.LambdaGeluOptions` and records the λ of
every layer at the start (``lambda_init``) and after every epoch (``lambdas``) of a λ-GELU run
(:data:`LAMBDA_RECORD`; its line in ``helpers.methods.RUN_EXTENSIONS`` gives every other run an
empty ``lambda_init``, so that every result of a :class:`TrainConfig` has the same fields), and
Table II's ReLU substitution test for every GELU and λ-GELU run (:data:`RELU_SUBSTITUTION`).
"""

from __future__ import annotations

import copy
from typing import Any

from torch import nn

from helpers.core.models import replace_activations
from helpers.core.runs import RunExtension, TrainConfig, autocast_context
from helpers.core.train import TrainHook, evaluate
from helpers.lambda_gelu.hardness import (
    AnnealingSchedule,
    apply_init_mode,
    hardness_param_groups,
    hardness_parameters,
    layer_lambdas,
)
from helpers.lambda_gelu.layer_targets import LayerwiseAnnealing
from helpers.lambda_gelu.options import LambdaGeluOptions


class LambdaRecorder(TrainHook):
    """Logs every λ-GELU layer's hardness at the end of each epoch (``lambdas`` in history)."""

    def epoch_record(self, model: nn.Module) -> dict[str, Any]:
        lambdas = layer_lambdas(model)
        return {"lambdas": lambdas} if lambdas else {}


class LambdaGELURun(RunExtension):
    """The λ-GELU options of a :class:`TrainConfig` (:class:`LambdaGeluOptions`), for a model with
    λ-GELU sites (or a config that asks for an init mode or annealing, which then fails naming the
    missing sites)."""

    def applies(self, model: nn.Module, cfg: TrainConfig) -> bool:
        opts = cfg.option(LambdaGeluOptions)
        asks = opts.init_mode is not None or opts.anneals
        return asks or bool(hardness_parameters(model))

    def prepare(self, model: nn.Module, cfg: TrainConfig) -> None:
        init_mode = cfg.option(LambdaGeluOptions).init_mode
        if init_mode is not None:
            apply_init_mode(model, init_mode)

    def param_groups(self, model: nn.Module, cfg: TrainConfig) -> list[dict[str, Any]]:
        return hardness_param_groups(model, cfg.lr, cfg.weight_decay, cfg.option(LambdaGeluOptions).hardness_lr_mult)

    def hooks(self, model: nn.Module, cfg: TrainConfig, steps_per_epoch: int) -> list[TrainHook]:
        opts = cfg.option(LambdaGeluOptions)
        hooks: list = []
        if opts.anneal_target is not None:
            hooks.append(AnnealingSchedule(cfg.epochs, opts.anneal_target, switch_fraction=cfg.anneal_switch))
        if opts.anneal_layer_eps is not None:
            hooks.append(LayerwiseAnnealing(cfg.epochs, opts.anneal_layer_eps, switch_fraction=cfg.anneal_switch))
        return hooks


class LambdaRecord(RunExtension):
    """λ of every layer before training and after each epoch."""

    def hooks(self, model: nn.Module, cfg: TrainConfig, steps_per_epoch: int) -> list[TrainHook]:
        return [LambdaRecorder()]

    def initial_record(self, model: nn.Module) -> dict[str, Any]:
        return {"lambda_init": layer_lambdas(model)}


#: The activations whose runs record Table II's substitution test.
SUBSTITUTED_ACTIVATIONS: tuple[str, ...] = ("gelu", "gelu_tanh", "lambda_gelu")


class ReluSubstitution(RunExtension):
    """Table II's test: at the best-validation checkpoint, swap every activation for ReLU and
    re-evaluate without any weight update (``substitution`` in the result)."""

    def applies(self, model: nn.Module, cfg: TrainConfig) -> bool:
        return cfg.activation in SUBSTITUTED_ACTIVATIONS

    def final_record(
        self, model: nn.Module, cfg: TrainConfig, out: dict[str, Any], parts: dict[str, Any]
    ) -> dict[str, Any]:
        # a copy: the run's model stays at its last epoch for the extensions after this one
        model = copy.deepcopy(model)
        model.load_state_dict(out["best_state"])
        with autocast_context(cfg.precision):  # evaluated as it was trained
            original = evaluate(model, parts["val_loader"], cfg.task)["val_metric"]
            swapped = replace_activations(model, nn.ReLU)
            substituted = evaluate(swapped, parts["val_loader"], cfg.task)["val_metric"]
        return {"substitution": {"epoch": out["best_epoch"], "original": original, "substituted": substituted}}


RUN_EXTENSION = LambdaGELURun()
LAMBDA_RECORD = LambdaRecord()
RELU_SUBSTITUTION = ReluSubstitution()

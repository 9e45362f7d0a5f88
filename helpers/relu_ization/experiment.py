"""The chapter's runner: train one arm, swap it to ReLU, and measure what the swap buys.

:func:`run_reluization` trains the arm's :class:`~helpers.core.runs.TrainConfig`
(:func:`helpers.core.runs.train_model`) and analyses **the model at the end of training** (the
end of an annealing schedule, where λ = λ_target or δ = δ_T; no checkpoint is picked on the
validation set). For the model before and after every activation is replaced by ReLU:

* the validation metric (accuracy, or perplexity for the language model), float32;
* the same after post-training static int8 quantisation (:mod:`.quantize`), calibrated on the
  first ``n_calibration`` training images (or text blocks);
* the fraction of exact zeros after every activation site on the validation set (:mod:`.sparsity`);
* per activation site, statistics of its inputs on the calibration images: the λ that brings the
  distribution-aware gate error to ε (:func:`helpers.lambda_gelu.layer_targets.layer_lambda_target`)
  and the swap errors at the global λ_target;
* for MLP pairs, the exact count of linear regions along lines between validation images (:mod:`.regions`).

:class:`ReluizationConfig` lives beside its runner, so that building the configs registers the runner.

Weights are not committed: each run keeps its final state dict beside its result
(``<hash>.weights.ckpt``, ignored by git) for the latency benchmark; :func:`trained_models` retrains
a run whose file is missing (seeded CPU training is deterministic). An arm that is a committed
Table I/II run (GELU, ReLU, annealed λ-GELU) is not trained twice when that run kept its final
weights on this machine (:data:`helpers.core.runs.KEEP_FINAL_WEIGHTS_ENV`): the analyses load them,
and ``reproduces`` says ``reused_weights``.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import Subset

from helpers.core import validation as v
from helpers.core.checkpoint import load_weights, save_weights
from helpers.core.data import make_loader
from helpers.core.models import activation_sites, replace_activations
from helpers.core.result_files import CorruptResult
from helpers.core.results_cache import config_hash, hash_payload, load_result, result_path
from helpers.core.runs import TrainConfig, build_run, final_weights_path, train_to_completion
from helpers.core.runtime import PROFILES, current_profile, training_threads
from helpers.core.scale import Scale
from helpers.core.train import evaluate
from helpers.lambda_gelu.activation import LambdaGELU
from helpers.lambda_gelu.layer_targets import activation_error, gate_error, layer_lambda_target, strided_sample
from helpers.relu_ization.protocol import (
    EPSILON,
    LAMBDA_TARGET,
    RELU_PAIRS,
    TRAIN_ARMS,
    arm_train_config,
    pair_seeds,
    relu_pair,
)
from helpers.relu_ization.quantize import ENGINE, QUANT_API, module_summary, quantize_int8, quantized_engine
from helpers.relu_ization.regions import count_regions, line_endpoints
from helpers.relu_ization.sparsity import zero_fractions
from helpers.srelu.activation import SReLU
from helpers.srelu.training import DeltaAnnealing, set_srelu_delta


@dataclass(frozen=True)
class ReluizationConfig:
    """One training arm, trained and then analysed (swap, sparsity, int8, pre-activations, regions).

    ``train`` is the arm's :class:`TrainConfig` as its non-default fields (so the key changes with
    the pair's scale, and not when TrainConfig gains a defaulted field). ``n_calibration``:
    training examples for int8 calibration and pre-activation statistics; ``n_lines``: lines for
    the linear-region count (MLP pairs).
    """

    experiment: str
    pair: str
    arm: str
    seed: int
    train: dict[str, Any]
    profile: str = "cpu"
    n_calibration: int = 2048
    n_lines: int = 16
    scale_note: str = ""

    def __post_init__(self) -> None:
        current_profile(self.profile)
        v.check_fields(self, RELUIZATION_CONFIG_RULES)
        relu_pair(self.pair)
        if self.train.get("profile", "cpu") != self.profile:
            raise ValueError(f"train must be a TrainConfig's fields of profile {self.profile!r}")
        try:  # every field of the arm's run, checked by TrainConfig's own table
            TrainConfig.from_dict(self.train)
        except (TypeError, ValueError) as err:
            raise ValueError(f"ReluizationConfig.train is not a valid TrainConfig: {err}") from None

    @property
    def precision(self) -> str:
        """The precision the arm trains in (its TrainConfig's), so that the result's provenance
        records it rather than the float32 of configs without the field."""
        return self.train.get("precision", "float32")

    def train_config(self) -> TrainConfig:
        return TrainConfig.from_dict(self.train)


#: Every field of :class:`ReluizationConfig`: kind, range, finiteness (:mod:`helpers.core.validation`).
RELUIZATION_CONFIG_RULES: dict[str, v.Rule] = {
    "experiment": v.path_name(),
    "pair": v.text(non_empty=True),  # relu_pair names the pairs
    "arm": v.choice(TRAIN_ARMS),
    "seed": v.integer(0),
    "train": v.mapping(),
    "profile": v.choice(PROFILES),
    "n_calibration": v.integer(1),
    "n_lines": v.integer(1),
    "scale_note": v.text(),
}


def reluization_config(pair: str, arm: str, seed: int, profile: str, scale: Scale | None = None) -> ReluizationConfig:
    """One arm × seed of ``pair`` at ``profile``, at the pair's scale or at ``scale``."""
    cfg = arm_train_config(pair, arm, seed, profile, scale)
    fields = {k: v for k, v in hash_payload(cfg).items() if k != "config_class"}
    fields["profile"] = cfg.profile  # kept even at its default, so the profile check above can read it
    n_cal = 2048 if current_profile(profile) != "smoke" else 128
    return ReluizationConfig(
        experiment=f"reluization_{pair}",
        pair=pair,
        arm=arm,
        seed=seed,
        train=fields,
        profile=profile,
        n_calibration=n_cal,
        n_lines=16 if profile != "smoke" else 2,
        scale_note=cfg.scale_note,
    )


def reluization_configs(
    pair: str, profile: str, arms: tuple[str, ...] = TRAIN_ARMS, scale: Scale | None = None
) -> list[ReluizationConfig]:
    """Every training arm × seed of ``pair`` at ``profile`` (at ``scale`` when given), seed-major."""
    return [reluization_config(pair, arm, s, profile, scale) for s in pair_seeds(pair, profile, scale) for arm in arms]


#: The smooth activations the swap replaces by ``nn.ReLU``.
SWAPPED_TYPES: tuple[type[nn.Module], ...] = (nn.GELU, LambdaGELU, SReLU)
#: Values sampled per batch and site for the pre-activation statistics.
PREACT_PER_BATCH = 4096


def swap_to_relu(model: nn.Module) -> nn.Module:
    """A copy of ``model`` with every GELU, λ-GELU and S-ReLU replaced by ``nn.ReLU``; a model
    without any (a ReLU network) is returned as it is."""
    if not any(isinstance(m, SWAPPED_TYPES) for m in model.modules()):
        return model
    return replace_activations(model, nn.ReLU, types=SWAPPED_TYPES)


def calibration_batches(dataset: torch.utils.data.Dataset, n: int, batch_size: int) -> list[torch.Tensor]:
    """The inputs of the first ``n`` examples of ``dataset`` (its stored order), in batches."""
    if len(dataset) == 0:
        raise ValueError("the calibration dataset is empty")
    subset = Subset(dataset, range(min(n, len(dataset))))
    return [batch[0] for batch in make_loader(subset, batch_size, shuffle=False)]


@torch.no_grad()
def _preactivation_samples(model: nn.Module, batches: list[torch.Tensor]) -> tuple[list[str], list[torch.Tensor]]:
    sites = activation_sites(model)
    modules = dict(model.named_modules())
    chunks: dict[str, list[torch.Tensor]] = {s: [] for s in sites}
    handles = [
        modules[s].register_forward_pre_hook(
            lambda mod, args, s=s: chunks[s].append(strided_sample(args[0], PREACT_PER_BATCH))
        )
        for s in sites
    ]
    model.eval()
    try:
        for x in batches:
            model(x)
    finally:
        for h in handles:
            h.remove()
    return sites, [torch.cat(chunks[s]) for s in sites]


def _preactivation_stats(model: nn.Module, batches: list[torch.Tensor]) -> dict[str, list]:
    sites, samples = _preactivation_samples(model, batches)
    lams = {s: float(m.lam.detach().double().mean()) for s, m in model.named_modules() if isinstance(m, LambdaGELU)}
    keys = ("std", "lambda_for_eps", "gate_error_global", "activation_error_global", "activation_error_own")
    out: dict[str, list] = {"sites": sites, **{k: [] for k in keys}}
    for site, x in zip(sites, samples):
        out["std"].append(float(x.double().std()))
        out["lambda_for_eps"].append(layer_lambda_target(x, EPSILON))
        out["gate_error_global"].append(gate_error(x, LAMBDA_TARGET))
        out["activation_error_global"].append(activation_error(x, LAMBDA_TARGET))
        own = lams.get(site)
        out["activation_error_own"].append(activation_error(x, own) if own is not None else None)
    out["n_samples"] = [int(x.numel()) for x in samples]
    return out


def _metric(model: nn.Module, loader, task: str, int8: bool = False) -> float:
    with quantized_engine() if int8 else contextlib.nullcontext():
        return float(evaluate(model, loader, task)["val_metric"])


def analyse(
    model: nn.Module, tcfg: TrainConfig, parts: dict[str, Any], *, pair: str, n_calibration: int, n_lines: int
) -> dict[str, Any]:
    """Every measurement of the chapter on a trained ``model`` (see the module docstring)."""
    spec = RELU_PAIRS[pair]
    val_loader, task = parts["val_loader"], tcfg.task
    calibration = calibration_batches(parts["train_loader"].dataset, n_calibration, 256 if task != "lm" else 32)
    model.eval()
    swapped = swap_to_relu(model)
    is_relu = swapped is model
    before = _metric(model, val_loader, task)
    after = before if is_relu else _metric(swapped, val_loader, task)
    q_before = quantize_int8(model, calibration, scope=spec.quant_scope)
    q_after = q_before if is_relu else quantize_int8(swapped, calibration, scope=spec.quant_scope)
    int8_before = _metric(q_before, val_loader, task, int8=True)
    int8_after = int8_before if is_relu else _metric(q_after, val_loader, task, int8=True)
    sparse_before = zero_fractions(model, val_loader)
    sparse_after = sparse_before if is_relu else zero_fractions(swapped, val_loader)
    out: dict[str, Any] = {
        "before_swap": before,
        "after_swap": after,
        "int8": {
            "before_swap": int8_before,
            "after_swap": int8_after,
            "api": QUANT_API,
            "engine": ENGINE,
            "scope": spec.quant_scope,
            "modules_before_swap": module_summary(q_before),
            "modules_after_swap": module_summary(q_after),
            "n_calibration": sum(len(b) for b in calibration),
        },
        "sparsity": {
            "sites": sparse_before["sites"],
            "before_swap": sparse_before["zero_fraction"],
            "after_swap": sparse_after["zero_fraction"],
            "n_values": sparse_before["n_values"],
        },
        "preactivations": _preactivation_stats(model, calibration),
    }
    if spec.linear_regions:
        val_inputs = torch.cat([batch[0] for batch in val_loader])
        starts, ends = line_endpoints(val_inputs, n_lines, seed=0)  # the same lines for every arm and seed
        out["regions"] = count_regions(swapped, starts.flatten(1), ends.flatten(1))
    return out


def weights_path(cfg: ReluizationConfig) -> Path:
    """Where a run keeps its final state dict: beside its result, ignored by git (``*.ckpt``)."""
    return result_path(cfg).with_suffix(".weights.ckpt")


def _final_hardness(model: nn.Module, hooks: list, tcfg: TrainConfig) -> None:
    """Put S-ReLU's δ at its end-of-schedule value (δ is not part of the state dict, so a run
    resumed after its last checkpoint would otherwise keep the start value)."""
    for hook in hooks:
        if isinstance(hook, DeltaAnnealing):
            set_srelu_delta(model, hook.delta_at(tcfg.epochs))


#: The keys of a training result (:func:`helpers.core.runs.train_model`) a reused run takes from the
#: committed result of its TrainConfig.
_TRAIN_RESULT_KEYS = (
    "history",
    "best_epoch",
    "best_val_metric",
    "higher_is_better",
    "lambda_init",
    "n_params",
    "data_source",
)


def _reused_training(tcfg: TrainConfig) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(parts, train_result)`` of the committed run of ``tcfg`` with its final weights loaded, when
    that run kept them on this machine (:func:`helpers.core.runs.final_weights_path`, written by the
    retrain); ``None`` (train it) otherwise. The network is then the committed run's own, not a
    retraining of it: bit for bit what its result describes."""
    try:
        committed = load_result(tcfg)
    except CorruptResult:
        return None
    if committed is None:
        return None
    state = load_weights(final_weights_path(tcfg), config_hash(tcfg))  # None: missing or stale (warned)
    if state is None:
        return None
    parts = build_run(tcfg)
    parts["model"].load_state_dict(state)
    return parts, {k: committed[k] for k in _TRAIN_RESULT_KEYS if k in committed}


def _reproduces(tcfg: TrainConfig, history: list[dict[str, Any]], reused: bool = False) -> dict[str, Any]:
    """Does this training match the committed result of the same TrainConfig (if there is one)?
    ``reused``: the run did not train; it loaded that committed run's final weights."""
    record: dict[str, Any] = {"experiment": tcfg.experiment, "config_hash": config_hash(tcfg), "found": False}
    if reused:
        return {**record, "found": True, "reused_weights": True, "identical": None, "max_abs_diff_val_metric": None}
    try:
        committed = load_result(tcfg)
    except CorruptResult:
        committed = None
    if committed is None:
        return record
    ours = [row["val_metric"] for row in history]
    theirs = [row["val_metric"] for row in committed["history"]]
    record.update(
        found=True,
        identical=ours == theirs,
        max_abs_diff_val_metric=max(abs(a - b) for a, b in zip(ours, theirs)) if len(ours) == len(theirs) else None,
    )
    return record


def run_reluization(cfg: ReluizationConfig, workdir: Path) -> dict[str, Any]:
    """Train, swap and analyse one arm (one thread, as every run of the book)."""
    with training_threads():
        started, cpu_started = time.perf_counter(), time.process_time()
        tcfg = cfg.train_config()
        reused = _reused_training(tcfg)
        if reused is not None:
            parts, train_result = reused
        else:
            parts, _, train_result = train_to_completion(tcfg, workdir)
        model = parts["model"]
        _final_hardness(model, parts["hooks"], tcfg)
        analysed = time.perf_counter()
        result = analyse(model, tcfg, parts, pair=cfg.pair, n_calibration=cfg.n_calibration, n_lines=cfg.n_lines)
        save_weights(weights_path(cfg), model.state_dict(), config_hash(cfg))
        return {
            "metric": "accuracy" if tcfg.task == "classification" else "perplexity",
            "higher_is_better": train_result["higher_is_better"],
            "final_epoch": tcfg.epochs,
            **result,
            "train": {k: v for k, v in train_result.items() if k not in ("train_seconds", "cpu_seconds")},
            "reproduces": _reproduces(tcfg, train_result["history"], reused=reused is not None),
            "analysis_seconds": time.perf_counter() - analysed,
            # training (0 when the weights were reused: the committed run states its own) and analyses,
            # in wall time and in this process's CPU time (a pause costs none)
            "train_seconds": time.perf_counter() - started,
            "cpu_seconds": time.process_time() - cpu_started,
        }


def trained_models(cfg: ReluizationConfig) -> tuple[nn.Module, nn.Module, dict[str, Any]]:
    """``(model, swapped, parts)`` of a run at the end of training: from its weights file, or
    retrained (deterministically) when the file is missing. ``parts`` are the run's data loaders."""
    tcfg = cfg.train_config()
    path, key = weights_path(cfg), config_hash(cfg)
    with training_threads():
        state = load_weights(path, key)  # None: missing, or stale/damaged (warned)
        reused = _reused_training(tcfg) if state is None else None
        if state is not None:
            parts = build_run(tcfg)
            model = parts["model"]
            model.load_state_dict(state)
        elif reused is not None:
            parts, _ = reused
            model = parts["model"]
        else:
            workdir = result_path(cfg).with_suffix("")  # where run_or_load checkpoints it too
            workdir.mkdir(parents=True, exist_ok=True)
            parts, _, _ = train_to_completion(tcfg, workdir)
            model = parts["model"]
            save_weights(path, model.state_dict(), key)
        _final_hardness(model, parts["hooks"], tcfg)
    model.eval()
    return model, swap_to_relu(model), parts

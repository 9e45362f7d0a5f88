"""The churn chapter's runs: arms × models × replicas per source of nondeterminism, and their cost.

Arms: ReLU; SmeLU at two half-widths β; S-ReLU at the paper's δ = 0.001 and at δ = 1; GELU;
λ-GELU learned; λ-GELU annealed towards ReLU by Algorithm 1 (Table II's procedure, its ReLU swap
recorded by :mod:`helpers.churn.predictions`).

Sources of nondeterminism, one at a time, with 8 replicas k = 0..7 each (``TrainConfig.init_seed``
and ``order_seed``): ``order`` (init seed 0, order seed k), ``init`` (init seed k, order seed 0) and
``both`` (k, k). Replica 0 is the same run, (0, 0), in all three, so an arm has 22 distinct runs.
Replica k of every arm has the same seeds, so arms are compared paired by replica.

Models: the MLP of λ-GELU's Table I at its decisive scale (``lambda_gelu.protocol.SCALES["fmnist"]["cpu"]``)
in 10 epochs with a cosine decay instead of 20 at a constant rate (the budget; the decay also ends
every replica at a small step, so churn does not measure where the last step happened to land);
its floor is the book's, ≥ 89 % for GELU. And ResNet-18 at 1/8 width on CIFAR-10 (10,000 training
images, 6 epochs), the convolutional network the budget allows, with this chapter's floor
:data:`CONV_FLOOR` (the book's 85 % needs runs 10x longer).
"""

from __future__ import annotations

import dataclasses
import glob
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.core.results_cache import config_hash
from helpers.core.runs import TrainConfig
from helpers.core.runtime import results_root
from helpers.core.scale import Scale
from helpers.lambda_gelu import protocol as lgelu
from helpers.lambda_gelu.options import LambdaGeluOptions

#: The issue's budget for every run of the chapter, in core-hours.
BUDGET_CORE_HOURS = 20.0
#: Replicas per arm and per source of nondeterminism.
REPLICAS = 8
SOURCES: tuple[str, ...] = ("order", "init", "both")
#: This chapter's floor for its convolutional network (GELU's test accuracy at the last epoch).
CONV_FLOOR = 0.45


@dataclass(frozen=True)
class Arm:
    """One activation of the chapter: registry name, keyword arguments, λ-GELU options, and its
    smoothing width for the churn-accuracy plot (0 for ReLU; None where no width applies)."""

    key: str
    label: str
    activation: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    width: float | None = None
    anneal: bool = False


ARMS: tuple[Arm, ...] = (
    Arm("relu", "ReLU", "relu", width=0.0),
    Arm("smelu_0.5", "SmeLU β = 0.5", "smelu", {"beta": 0.5}, width=0.5),
    Arm("smelu_2", "SmeLU β = 2", "smelu", {"beta": 2.0}, width=2.0),
    Arm("srelu_0.001", "S-ReLU δ = 0.001", "srelu", {"delta": 0.001}, width=0.001),
    Arm("srelu_1", "S-ReLU δ = 1", "srelu", {"delta": 1.0}, width=1.0),
    Arm("gelu", "GELU", "gelu"),
    Arm("lgelu", "λ-GELU (learned)", "lambda_gelu"),
    Arm("lgelu_anneal", "λ-GELU annealed → ReLU", "lambda_gelu", anneal=True),
)
ARM_BY_KEY = {a.key: a for a in ARMS}


@dataclass(frozen=True)
class ChurnModel:
    """One model of the chapter: the λ-GELU pair whose recipe it uses, its scale, its results folder."""

    key: str
    label: str
    pair: str
    scale: Scale
    experiment: str


MODELS: dict[str, ChurnModel] = {
    "mlp": ChurnModel(
        "mlp",
        "MLP / Fashion-MNIST",
        "fmnist",
        dataclasses.replace(
            lgelu.SCALES["fmnist"]["cpu"],
            epochs=10,
            schedule="cosine",
            seeds=(0,),
            note="λ-GELU's decisive MLP (depth 4, width 256; all 60,000 training and 10,000 test images; SGD at "
            "0.05, momentum 0.9), 10 epochs with a cosine decay instead of 20 at a constant rate; float32, "
            "one thread per run",
        ),
        "churn_fmnist",
    ),
    "conv": ChurnModel(
        "conv",
        "ResNet-18 (1/8 width) / CIFAR-10",
        "cifar10_resnet",
        Scale(
            dataset="cifar10",
            model_kwargs={"width_mult": 0.125},
            epochs=6,
            n_train=10_000,
            seeds=(0,),
            lr=1e-3,
            schedule="cosine",
            note="ResNet-18 at 1/8 width; 10,000 CIFAR-10 training images, all 10,000 test images; 6 epochs, "
            "AdamW at 1e-3 with a cosine decay, no augmentation; float32, one thread per run",
        ),
        "churn_cifar10",
    ),
}


def replica_seeds(source: str, k: int) -> tuple[int, int]:
    """``(init_seed, order_seed)`` of replica ``k`` of ``source``."""
    if source not in SOURCES:
        raise ValueError(f"unknown source of nondeterminism {source!r}; choose one of {SOURCES}")
    if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < REPLICAS:
        raise ValueError(f"replica must be an int in [0, {REPLICAS}), got {k!r}")
    return {"order": (0, k), "init": (k, 0), "both": (k, k)}[source]


def arm_config(model: str, arm: str, source: str, k: int) -> TrainConfig:
    """The run of replica ``k`` of ``arm`` on ``model`` for ``source``."""
    if model not in MODELS or arm not in ARM_BY_KEY:
        raise ValueError(f"unknown model {model!r} or arm {arm!r}; models {tuple(MODELS)}, arms {tuple(ARM_BY_KEY)}")
    spec, a = MODELS[model], ARM_BY_KEY[arm]
    init, order = replica_seeds(source, k)
    is_lambda = a.activation == "lambda_gelu"
    base = lgelu.pair_config(
        spec.pair,
        "cpu",
        activation="lambda_gelu" if is_lambda else "relu",
        mode="uniform" if is_lambda else None,
        anneal=a.anneal,
        seed=0,
        experiment=spec.experiment,
        scale=spec.scale,
    )
    kwargs = dict(base.activation_kwargs) if is_lambda else dict(a.kwargs)
    return dataclasses.replace(
        base,
        activation=a.activation,
        activation_kwargs=kwargs,
        init_seed=init,
        order_seed=order,
        record_predictions=True,
    )


def churn_configs(model: str, arm: str, source: str) -> list[TrainConfig]:
    """The replicas 0..7 of ``arm`` on ``model`` for ``source``, in replica order."""
    return [arm_config(model, arm, source, k) for k in range(REPLICAS)]


def _distinct_runs(model: str) -> list[tuple[Arm, TrainConfig]]:
    """Every distinct run of ``model`` with its arm, replica-major (replica 0 is shared by the sources)."""
    seen: set[str] = set()
    out: list[tuple[Arm, TrainConfig]] = []
    for k in range(REPLICAS):
        for arm in ARMS:
            for source in SOURCES:
                cfg = arm_config(model, arm.key, source, k)
                h = config_hash(cfg)
                if h not in seen:
                    seen.add(h)
                    out.append((arm, cfg))
    return out


def retrain_configs(model: str) -> list[TrainConfig]:
    """Every distinct run of ``model``, replica-major (replica k of every arm and source before
    replica k + 1), so that the runs finished at any moment form complete matched sets."""
    return [cfg for _, cfg in _distinct_runs(model)]


def _committed_rates(model: str, root: Path | None = None) -> dict[str, list[float]]:
    """Seconds per epoch of the committed float32 runs of the same model and width as ``model``'s
    runs (any epoch count), by activation: those at the same data sizes if any, else all of them
    scaled to these sizes."""
    spec = MODELS[model]
    ref = arm_config(model, "relu", "both", 0)
    full_train, full_val = {"fashion_mnist": (60_000, 10_000), "cifar10": (50_000, 10_000)}[ref.dataset]
    ours = (ref.n_train or full_train) + (ref.n_val or full_val) / 3
    exact_rates: dict[str, list[float]] = {}
    scaled_rates: dict[str, list[float]] = {}
    pattern = str((root or results_root("cpu")) / "*" / "*.json")
    for path in glob.glob(pattern):
        if path.endswith(".failed.json"):
            continue
        record = json.loads(Path(path).read_text())
        c = record.get("config", {})
        if c.get("config_class") != "TrainConfig" or "train_seconds" not in record:
            continue
        same = (c.get("model"), c.get("dataset"), c.get("model_kwargs")) == (ref.model, ref.dataset, ref.model_kwargs)
        if not same or c.get("precision", "float32") != "float32":
            continue
        # Per training-and-evaluation epoch, scaled to this model's sizes (training images, plus a
        # third of the test images: a forward pass only).
        n_train, n_val = c.get("n_train") or full_train, c.get("n_val") or full_val
        per_epoch = float(record["train_seconds"]) / int(c["epochs"]) * ours / (n_train + n_val / 3)
        kind = c["activation"] + ("+anneal" if c.get("anneal_target") is not None else "")
        exact = (c.get("n_train"), c.get("n_val")) == (ref.n_train, ref.n_val)
        (exact_rates if exact else scaled_rates).setdefault(kind, []).append(per_epoch)
    # Runs at this model's own sizes, where there are any: the per-image scaling is a model of the cost.
    rates = exact_rates or scaled_rates
    if not rates:
        raise ValueError(f"no committed float32 run of {spec.label} to price the churn runs from")
    return rates


def _mean_rate(rates: dict[str, list[float]], kind: str) -> float:
    """Seconds per epoch of ``kind``: the mean of its committed runs, else (no such run) the
    slowest activation's mean, so that an unpriced arm is not priced low."""
    if kind in rates:
        return sum(rates[kind]) / len(rates[kind])
    return max(sum(v) / len(v) for v in rates.values())


def cost_estimate(models: Iterable[str] = tuple(MODELS), root: Path | None = None) -> dict[str, Any]:
    """Core-hours of every distinct run of the chapter, per model and arm, each run priced from the
    committed float32 runs of the same model, width and activation (:func:`_committed_rates`,
    :func:`_mean_rate`); :data:`BUDGET_CORE_HOURS` bounds the total."""
    table: dict[str, dict[str, float]] = {}
    total = 0.0
    runs = 0
    for model in models:
        rates = _committed_rates(model, root)
        table[model] = {}
        for arm, cfg in _distinct_runs(model):
            kind = cfg.activation + ("+anneal" if cfg.option(LambdaGeluOptions).anneal_target is not None else "")
            hours = _mean_rate(rates, kind) * cfg.epochs / 3600
            table[model][arm.key] = table[model].get(arm.key, 0.0) + hours
            total += hours
            runs += 1
    return {"core_hours": total, "runs": runs, "budget": BUDGET_CORE_HOURS, "by_model_arm": table}

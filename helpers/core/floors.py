"""Baseline floors: how well a baseline must train before its runs can decide a claim.

Two activations compared in a model that has barely learned (a ResNet at 36 % on CIFAR-10) can only
tie. Each model–dataset pair of the cpu profile has one floor on the baseline's (GELU's or ReLU's)
best validation score; :func:`floor_table` shows what a page's baseline runs reached against it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class Floor:
    """The floor of one model–dataset pair on one metric of its best validation epoch."""

    model: str
    dataset: str
    metric: str  # "accuracy" (a history's val_metric) or "val_loss" (nats per token)
    value: float
    higher_is_better: bool

    def text(self) -> str:
        if self.metric == "accuracy":
            return f"≥ {100 * self.value:.0f} % accuracy"
        return f"≤ {self.value:g} nats/char validation loss"


#: The floors of the cpu profile; MLP/Adult has none (it trains at full data and width there).
FLOORS: dict[tuple[str, str], Floor] = {
    ("mlp", "fashion_mnist"): Floor("mlp", "fashion_mnist", "accuracy", 0.89, True),
    ("resnet18", "cifar10"): Floor("resnet18", "cifar10", "accuracy", 0.85, True),
    ("convnext", "cifar10"): Floor("convnext", "cifar10", "accuracy", 0.75, True),
    ("vit", "cifar10"): Floor("vit", "cifar10", "accuracy", 0.60, True),
    ("gpt", "tinyshakespeare"): Floor("gpt", "tinyshakespeare", "val_loss", 1.8, False),
}


def floor_for(model: str, dataset: str) -> Floor | None:
    """The floor of ``model`` on ``dataset``, or None where the issue set none."""
    return FLOORS.get((model, dataset))


def _best_value(result: Mapping[str, Any], floor: Floor) -> float:
    """The run's best validation value on the floor's metric (over its epochs)."""
    history = result.get("history") or []
    key = "val_metric" if floor.metric == "accuracy" else "val_loss"
    values = [float(row[key]) for row in history if row.get(key) is not None and math.isfinite(float(row[key]))]
    if not values:
        raise ValueError(f"run {result.get('config_hash', '?')} has no finite {key} in its history")
    return max(values) if floor.higher_is_better else min(values)


def _format(value: float, floor: Floor) -> str:
    return f"{100 * value:.2f} %" if floor.metric == "accuracy" else f"{value:.3f}"


def floor_table(
    results: Iterable[Mapping[str, Any]],
    labels: Mapping[tuple[str, str], str] | None = None,
    floors: Mapping[tuple[str, str], Floor] | None = None,
) -> pd.DataFrame:
    """One row per (model, dataset, activation) of a page's baseline ``results``: runs, mean and
    range of the best validation value, the floor, and "met", "missed by X" or "no floor set".
    ``labels``: ``{("mlp", "fashion_mnist"): "MLP/FMNIST"}``; ``floors`` overrides :data:`FLOORS`.
    """
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for result in results:
        cfg = result.get("config")
        if not isinstance(cfg, Mapping) or not all(k in cfg for k in ("model", "dataset", "activation")):
            raise ValueError(
                "floor_table needs result files (dicts with a 'config' holding model, dataset and activation)"
            )
        groups.setdefault((cfg["model"], cfg["dataset"], cfg["activation"]), []).append(result)
    if not groups:
        raise ValueError("floor_table got no results")
    rows = []
    for (model, dataset, activation), runs in groups.items():
        label = (labels or {}).get((model, dataset), f"{model}/{dataset}")
        floor = (floors or {}).get((model, dataset)) or floor_for(model, dataset)
        row: dict[str, Any] = {"pair": label, "baseline": activation, "runs": len(runs)}
        if floor is None:
            row.update({"reached (mean)": "", "range": "", "floor": "no floor set", "verdict": ""})
        else:
            values = [_best_value(r, floor) for r in runs]
            mean = sum(values) / len(values)
            gap = (mean - floor.value) if floor.higher_is_better else (floor.value - mean)
            if gap >= 0:
                verdict = "met"
            elif floor.metric == "accuracy":
                verdict = f"missed by {100 * -gap:.2f} points"
            else:
                verdict = f"missed by {-gap:.3f} nats/char"
            row.update(
                {
                    "reached (mean)": _format(mean, floor),
                    "range": f"{_format(min(values), floor)} – {_format(max(values), floor)}",
                    "floor": floor.text(),
                    "verdict": verdict,
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)

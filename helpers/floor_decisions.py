"""Whether the λ-GELU ResNet-18 pair is rerun to its floor: the measured numbers behind the choice.

The pair follows the λ-GELU paper's recipe for ResNet-18 (AdamW; Sec. IV: "trained with AdamW
using LR = 5·10⁻⁴ and WD = 10⁻⁴") and reaches about 84 % on CIFAR-10 at the cpu scale, under the
85 % floor of :mod:`helpers.core.floors`. The same network at the same width and epochs reaches
about 86 % with the Flex-Act pair's SGD + cosine recipe. Rerunning the pair with that recipe would
cost what its runs cost again, and would test λ-GELU under an optimiser the paper did not use for
this model (its learning-rate multiplier ``c`` acts differently under SGD and Adam, Sec. III).
:func:`resnet_pair_floor` gathers both sides from the committed results, so the page states them
rather than a remembered number.
"""

from __future__ import annotations

from statistics import mean
from typing import Any

from helpers.core.floors import floor_for
from helpers.core.results_cache import load_result
from helpers.core.runs import TrainConfig
from helpers.flexact import protocol as flexact
from helpers.lambda_gelu import protocol as lgelu


def _committed(configs: list[TrainConfig]) -> list[tuple[TrainConfig, dict[str, Any]]]:
    found = [(c, load_result(c)) for c in configs]
    return [(c, r) for c, r in found if r is not None]


def _recipe(cfg: TrainConfig) -> str:
    schedule = "" if cfg.schedule in (None, "none") else f" + {cfg.schedule}"
    return f"{cfg.optimizer} (lr {cfg.lr:g}){schedule}, {cfg.epochs} epochs, augmentation {cfg.augment}"


def resnet_pair_floor() -> dict[str, Any]:
    """The λ-GELU ResNet-18/CIFAR-10 pair against its floor, and what reaching it would cost.

    Returns the floor, the pair's GELU and ReLU means (best validation accuracy) with their recipe,
    the Flex-Act pair's plain ReLU mean with its recipe, the number of the pair's committed cpu
    runs and their recorded core-hours (the cost of rerunning them), and the shortfall in points.
    Raises ``LookupError`` when a side has no committed run.
    """
    pair = lgelu.table1_configs("cpu", ("cifar10_resnet",)) + lgelu.table2_configs("cpu", ("cifar10_resnet",))
    pair_runs = _committed(pair)
    plain = [c for c in flexact.table2_configs("cpu") if c.penultimate_activation is None]
    plain_runs = _committed(plain)
    if not pair_runs or not plain_runs:
        raise LookupError("the λ-GELU ResNet-18 pair or the Flex-Act pair has no committed cpu run")
    floor = floor_for("resnet18", "cifar10")
    if floor is None:
        raise LookupError("no floor is set for resnet18 on cifar10")

    gelu = [r["best_val_metric"] for c, r in pair_runs if c.activation == "gelu"]
    relu = [r["best_val_metric"] for c, r in pair_runs if c.activation == "relu"]
    sgd_relu = [r["best_val_metric"] for _, r in plain_runs]
    seconds = sum(float(r["train_seconds"]) for _, r in pair_runs)
    return {
        "floor": floor.value,
        "gelu_mean": mean(gelu),
        "gelu_runs": len(gelu),
        "relu_mean": mean(relu),
        "relu_runs": len(relu),
        "pair_recipe": _recipe(pair_runs[0][0]),
        "shortfall_points": 100 * (floor.value - mean(gelu)),
        "sgd_relu_mean": mean(sgd_relu),
        "sgd_relu_runs": len(sgd_relu),
        "sgd_recipe": _recipe(plain_runs[0][0]),
        "pair_runs": len(pair_runs),
        "pair_core_hours": seconds / 3600,
    }

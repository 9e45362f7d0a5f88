"""The ConvNeXt pilot (retrain batch m) and the floor rerun it chose (batch p), as the S-ReLU
benchmarks page shows them; the scales are in :mod:`helpers.srelu.protocol`.
"""

from __future__ import annotations

import pandas as pd

from helpers.core.registry import display_name
from helpers.core.results_cache import load_result
from helpers.srelu.protocol import (
    CONVNEXT_FLOOR,
    CONVNEXT_FLOOR_SEEDS_ON_PAGE,
    PILOT_CANDIDATES,
    convnext_floor_configs,
    convnext_pilot_configs,
    earlier_convnext_configs,
)

__all__ = ["pilot_curves", "pilot_summary", "floor_progress", "earlier_gelu_accuracy", "floor_seeds_waiting"]


def _pilot_results() -> dict[str, dict]:
    """Each candidate's committed result (candidates without one are left out)."""
    out = {}
    for name, cfg in zip(PILOT_CANDIDATES, convnext_pilot_configs()):
        result = load_result(cfg)
        if result is not None:
            out[name] = result
    return out


def pilot_curves() -> pd.DataFrame:
    """Validation accuracy (%) per epoch (rows) and candidate (columns)."""
    return pd.DataFrame(
        {
            name: pd.Series({h["epoch"]: 100 * h["val_metric"] for h in r["history"]})
            for name, r in _pilot_results().items()
        }
    )


def pilot_summary() -> pd.DataFrame:
    """Per candidate: epochs, final and best accuracy (%), core-hours of its one run, and points of
    accuracy per core-hour above the first epoch's."""
    rows = []
    for name, r in _pilot_results().items():
        history = r["history"]
        hours = float(r["train_seconds"]) / 3600
        final = 100 * history[-1]["val_metric"]
        rows.append(
            {
                "candidate": name,
                "epochs": len(history),
                "final accuracy %": final,
                "best accuracy %": 100 * max(h["val_metric"] for h in history),
                "core-hours": hours,
                "seconds per epoch": float(r["train_seconds"]) / len(history),
                "points per core-hour after epoch 1": (final - 100 * history[0]["val_metric"]) / hours,
            }
        )
    return pd.DataFrame(rows).set_index("candidate")


def floor_progress() -> tuple[int, int, float]:
    """``(committed, listed, core-hours)`` of Table 2's rerun at the chosen scale."""
    configs = convnext_floor_configs()
    seconds = [float(r["train_seconds"]) for cfg in configs if (r := load_result(cfg)) is not None]
    return len(seconds), len(configs), sum(seconds) / 3600


def earlier_gelu_accuracy() -> tuple[float, int]:
    """``(mean best validation accuracy in %, runs)`` of GELU at batch (a)'s 12-epoch scale, the
    network the pilot started from."""
    accs = [
        100 * float(r["best_val_metric"])
        for cfg in earlier_convnext_configs()
        if cfg.activation == "gelu" and (r := load_result(cfg)) is not None
    ]
    if not accs:
        raise FileNotFoundError("no committed GELU result of batch (a)'s ConvNeXt: run `retrain a`")
    return sum(accs) / len(accs), len(accs)


def floor_seeds_waiting() -> tuple[list[int], list[str]]:
    """The floor scale's seeds the page does not stand on yet (empty when it stands on all), and
    the runs they wait for (``"GELU seed 4"``)."""
    missing = [s for s in CONVNEXT_FLOOR.seeds if s not in CONVNEXT_FLOOR_SEEDS_ON_PAGE]
    waiting = [
        f"{display_name(cfg.activation)} seed {cfg.seed}"
        for cfg in convnext_floor_configs()
        if cfg.seed in missing and load_result(cfg) is None
    ]
    return missing, waiting

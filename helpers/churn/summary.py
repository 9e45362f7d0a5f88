"""What the churn page shows from the committed replicas: one row per model, arm and source of
nondeterminism, and the churn-accuracy picture over the smoothing width.

Every number is recomputed from the per-example predictions stored in the result files
(:mod:`helpers.churn.predictions`); an (arm, source) with fewer than three committed replicas has
no row value yet (the jackknife needs three).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers.churn import measures as M
from helpers.churn.claims import churn_matrix, replica_predictions
from helpers.churn.protocol import (
    ARMS,
    CONV_FLOOR,
    MODELS,
    REPLICAS,
    SOURCES,
    churn_configs,
    retrain_configs,
)
from helpers.core.floors import Floor, floor_for, floor_table
from helpers.core.results_cache import load_result

__all__ = ["REPLICAS", "MODELS", "arm_table", "committed_runs", "floor_frame", "width_frame"]

_MIN_REPLICAS = 3


def committed_runs(model: str) -> tuple[int, int, float]:
    """``(committed, listed, core-hours)``: the distinct runs of ``model`` in results/ and their
    recorded training time."""
    listed = retrain_configs(model)
    seconds = [float(r["train_seconds"]) for cfg in listed if (r := load_result(cfg)) is not None]
    return len(seconds), len(listed), sum(seconds) / 3600


def arm_table(model: str) -> pd.DataFrame:
    """Per arm (rows) and source (column groups): replicas n, top-1 churn % (jackknife SE),
    churn on errors %, relative PD % of the true class's probability, and accuracy %."""
    rows = []
    for arm in ARMS:
        for source in SOURCES:
            preds = replica_predictions(model, arm.key, source)
            row = {"arm": arm.label, "source": source, "n": len(preds)}
            if len(preds) >= _MIN_REPLICAS:
                reps = sorted(preds)
                churn, se = M.u_jackknife(churn_matrix(preds, reps))
                row |= {
                    "churn %": 100 * churn,
                    "± SE": 100 * se,
                    "churn on errors %": 100 * M.u_statistic(churn_matrix(preds, reps, "errors")),
                    "relative PD %": 100 * M.u_statistic(churn_matrix(preds, reps, "pd")),
                    "accuracy %": 100 * float(np.mean([preds[k].accuracy for k in reps])),
                }
            rows.append(row)
    return pd.DataFrame(rows).set_index(["arm", "source"])


def width_frame(model: str, source: str = "both") -> pd.DataFrame:
    """Churn and accuracy of the arms with a smoothing width (ReLU at 0, SmeLU's β, S-ReLU's δ),
    for the churn-accuracy plot; only arms with at least three committed replicas."""
    table = arm_table(model).xs(source, level="source")
    rows = []
    for arm in ARMS:
        if arm.width is None or arm.label not in table.index or pd.isna(table.loc[arm.label].get("churn %")):
            continue
        family = "SmeLU" if arm.activation == "smelu" else ("S-ReLU" if arm.activation == "srelu" else "ReLU")
        r = table.loc[arm.label]
        rows.append(
            {
                "arm": arm.label,
                "family": family,
                "width": arm.width,
                "churn %": r["churn %"],
                "± SE": r["± SE"],
                "accuracy %": r["accuracy %"],
            }
        )
    return pd.DataFrame(rows)


def floor_frame(source: str = "both") -> pd.DataFrame:
    """GELU's committed replicas of each model against the book's floor for that model and data
    (:mod:`helpers.core.floors`, on the best validation epoch), and against this chapter's floor:
    the book's for the MLP, :data:`~helpers.churn.protocol.CONV_FLOOR` for the ResNet, which the
    budget keeps far below the book's ResNet-18 floor."""
    frames = []
    for key, model in MODELS.items():
        results = [r for cfg in churn_configs(key, "gelu", source) if (r := load_result(cfg)) is not None]
        if not results:
            continue
        pair = (results[0]["config"]["model"], results[0]["config"]["dataset"])
        labels = {pair: model.label}
        book = floor_table(results, labels)
        ours = floor_for(*pair) if key != "conv" else Floor(*pair, "accuracy", CONV_FLOOR, True)
        chapter = floor_table(results, labels, floors={pair: ours} if ours is not None else None)
        frames.append(book.assign(**{"floor (chapter)": chapter["floor"], "verdict (chapter)": chapter["verdict"]}))
    return pd.concat(frames, ignore_index=True).set_index("pair") if frames else pd.DataFrame()

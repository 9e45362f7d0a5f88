"""Which candidate each Flex-Act layer of a :class:`~helpers.core.runs.TrainConfig` run picked, from
the ``flexact`` records of its history (per seed, and the trajectory over epochs)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from helpers.core.tables import _config
from helpers.flexact.activation import DEFAULT_CANDIDATES


def _flexact_layer(result: Mapping[str, Any], layer: str | None) -> tuple[str, list[dict]]:
    rows = [row.get("flexact") for row in result["history"]]
    if not rows or any(not r for r in rows):
        raise ValueError(f"run {result.get('config_hash')} has no Flex-Act records (no Flex-Act layer?)")
    names = list(rows[0])
    if layer is None:
        if len(names) != 1:
            raise ValueError(f"the run has several Flex-Act layers {names}; name one with layer=")
        layer = names[0]
    if layer not in rows[0]:
        raise KeyError(f"no Flex-Act layer {layer!r} (have {names})")
    return layer, [r[layer] for r in rows]


def _candidates(cfg: Mapping[str, Any]) -> list[str]:
    return list((cfg.get("penultimate_kwargs") or {}).get("candidates", DEFAULT_CANDIDATES))


def _initial_probs(cfg: Mapping[str, Any], k: int) -> list[float]:
    init = (cfg.get("penultimate_kwargs") or {}).get("init_logits")
    if init is None:
        return [1.0 / k] * k  # logits start at 0
    logits = np.asarray(init, dtype=float)
    e = np.exp(logits - logits.max())
    return (e / e.sum()).tolist()


def flexact_selections(results: Iterable[Mapping[str, Any]], layer: str | None = None) -> pd.DataFrame:
    """Per Flex-Act run: seed, the chosen candidate (argmax of the final selection probabilities),
    its probability, the final probabilities and the final τ."""
    rows = []
    for result in results:
        cfg = _config(result)
        _, records = _flexact_layer(result, layer)
        cands = _candidates(cfg)
        probs = np.asarray(records[-1]["probs"], dtype=float)
        if len(probs) != len(cands):
            raise ValueError(f"{len(probs)} probabilities for candidates {cands}")
        row = {
            "model": cfg.get("model"),
            "seed": cfg.get("seed"),
            "chosen": cands[int(np.argmax(probs))],
            "p_chosen": float(probs.max()),
            "tau_final": result["history"][-1].get("tau"),
        }
        row.update({f"p_{c}": float(p) for c, p in zip(cands, probs)})
        rows.append(row)
    if not rows:
        raise ValueError("no Flex-Act results given")
    return pd.DataFrame(rows)


def flexact_trajectory(results: Sequence[Mapping[str, Any]], layer: str | None = None) -> dict[str, Any]:
    """Selection probabilities per epoch (epoch 0 = initialisation) stacked over ``results`` (CIFAR-10
    or synthetic runs), in the format of :func:`helpers.flexact.plots.plot_selection_trajectories`:
    ``{"epochs": (E+1,), "probs": (runs, E+1, K), "candidates": [...], "tau": (E,),
    "pseudo_probs": (runs, E, K)}``."""
    if not results:
        raise ValueError("no Flex-Act results given")
    probs, pseudo, cands, n_epochs = [], [], None, None
    for result in results:
        cfg = _config(result)
        _, records = _flexact_layer(result, layer)
        these = _candidates(cfg)
        if cands is not None and these != cands:
            raise ValueError(f"runs have different candidate sets: {cands} and {these}")
        if n_epochs is not None and len(records) != n_epochs:
            raise ValueError("runs have different numbers of epochs")
        cands, n_epochs = these, len(records)
        initial = result.get("initial_probs") or _initial_probs(cfg, len(these))  # a synthetic run stores its own
        probs.append([initial, *[r["probs"] for r in records]])
        pseudo.append([r.get("pseudo_probs", [math.nan] * len(these)) for r in records])
    tau = np.array([row.get("tau") for row in results[0]["history"]], dtype=float)
    return {
        "epochs": np.arange(n_epochs + 1),
        "probs": np.array(probs, dtype=float),
        "candidates": cands,
        "tau": tau,
        "pseudo_probs": np.array(pseudo, dtype=float),
    }

"""The ReLU-ization chapter's runs (beyond the papers): five arms per model–dataset pair.

A network trained with a smooth activation is turned into a ReLU network. The arms:

* (i) GELU, and (ii) the same GELU network with every activation swapped for ReLU;
* (iii) λ-GELU annealed to λ_target by the λ-GELU paper's Algorithm 1, then swapped;
* (iv) S-ReLU with δ annealed towards 0 (:class:`helpers.srelu.training.DeltaAnnealing`), then swapped;
* (v) ReLU trained from scratch;
* (vi) λ-GELU annealed to a distribution-aware target per layer
  (:class:`helpers.lambda_gelu.layer_targets.LayerwiseAnnealing`), then swapped (analysis 6).

Five training arms (:data:`TRAIN_ARMS`) give the six rows: a GELU run provides (i) before and
(ii) after its swap. Every pair reuses a pair of the λ-GELU protocol (:data:`helpers.lambda_gelu.protocol.PAIRS`):
its optimiser recipe and its scale per profile, so the GELU, ReLU and annealed λ-GELU arms are
exactly the committed Table I/II runs (same config, same hash) and their retraining is checked
against them. The run configs (:class:`~helpers.relu_ization.experiment.ReluizationConfig`) are
built in :mod:`helpers.relu_ization.experiment`, beside their runner. A pair's scales are its row of
:data:`SCALES`: its λ-GELU pair's row, with the cpu scale changed where the chapter runs another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from helpers.core.runs import TrainConfig
from helpers.core.runtime import current_profile
from helpers.core.scale import Scale
from helpers.lambda_gelu.hardness import expected_gate_error, lambda_target
from helpers.lambda_gelu.options import LambdaGeluOptions
from helpers.lambda_gelu.protocol import EPSILON, pair_config
from helpers.lambda_gelu.protocol import SCALES as LAMBDA_GELU_SCALES
from helpers.srelu.options import SReluOptions
from helpers.srelu.training import delta_for_gate_gap

__all__ = [
    "ARMS",
    "TRAIN_ARMS",
    "ARM_LABELS",
    "ReluPair",
    "RELU_PAIRS",
    "SCALES",
    "EPSILON",
    "LAMBDA_TARGET",
    "DELTA_START",
    "DELTA_TARGET",
    "VIT_CPU",
    "delta_matching_lambda",
    "pair_scale",
    "pair_seeds",
    "cpu_pairs",
    "pending_pairs",
    "relu_pair",
    "arm_train_config",
]

#: The tolerance of both annealing targets: the λ-GELU paper's ε (Section IV-C).
LAMBDA_TARGET: float = lambda_target(EPSILON)


#: "Matches" margin of an accuracy, in points (why absolute: :data:`MARGINS`).
ACCURACY_MARGIN = 0.5
#: "Matches" margin of a perplexity, relative to ReLU from scratch at the scale run: perplexity's
#: scale moves with the model, the data and the training length.
PERPLEXITY_MARGIN_REL = 0.02
SPARSITY_MARGIN = 5.0  # points of exact-zero fraction
REGION_MARGIN_PCT = 20.0
#: The "matches" margins of the pairs' rows (:data:`helpers.relu_ization.claims.MARGINS` adds latency's):
#: (the rows, their keys as a pattern, the margin, how it is derived).
MARGINS: tuple[tuple[str, str, str, str], ...] = (
    (
        "ReLU-ization, accuracy pairs: swap free, matches ReLU, int8 matches, per-layer no worse",
        r"reluization-(?!gpt-|latency-).*-(swap-free|matches-relu|no-worse)",
        f"±{ACCURACY_MARGIN:g} points of accuracy",
        "absolute: test-set accuracy is a rate whose resolution does not move with the model "
        "(half a point is 50 of 10,000 test images)",
    ),
    (
        "ReLU-ization, perplexity pair (GPT): the same rows",
        r"reluization-gpt-.*-(swap-free|matches-relu|no-worse)",
        f"±{PERPLEXITY_MARGIN_REL:.0%} of ReLU from scratch's perplexity",
        "relative, derived from the runs when the row is decided (perplexity's scale moves with the model, "
        "the data and the training length); the row's note gives the value",
    ),
    (
        "ReLU-ization: as sparse as ReLU, as sparse before the swap",
        r"reluization-.*-sparse-.*",
        f"±{SPARSITY_MARGIN:g} points of exact-zero fraction",
        "absolute: a fraction of activations, a rate like accuracy",
    ),
    (
        "ReLU-ization: as many linear regions as ReLU",
        r"reluization-.*-regions-.*",
        f"±{REGION_MARGIN_PCT:g} % of ReLU from scratch's count",
        "relative: a count that grows with width and depth",
    ),
)


def delta_matching_lambda(lam: float) -> float:
    """The S-ReLU radius whose gate gap ``∫|H − S-ReLU'| = 3δ/8`` equals λ-GELU's ``E∞(λ)``."""
    return delta_for_gate_gap(expected_gate_error(lam))


#: S-ReLU's start: as far from ReLU as GELU (λ = 1) by the gate gap, 16/(3√(2π)) ≈ 2.13.
DELTA_START: float = delta_matching_lambda(1.0)
#: S-ReLU's end: the gate gap ε of λ_target, δ = 8ε/3 ≈ 0.0133 (sup |S-ReLU − ReLU| = 3δ/16 = ε/2).
DELTA_TARGET: float = delta_for_gate_gap(EPSILON)

#: The training arms; :data:`ARMS` are the rows of the chapter's tables.
TRAIN_ARMS: tuple[str, ...] = ("gelu", "lgelu_anneal", "srelu_anneal", "relu", "lgelu_layerwise")
ARMS: tuple[str, ...] = ("gelu", "gelu_swap", "lgelu_anneal", "srelu_anneal", "relu", "lgelu_layerwise")
ARM_LABELS: dict[str, str] = {
    "gelu": "(i) GELU",
    "gelu_swap": "(ii) GELU → ReLU",
    "lgelu_anneal": "(iii) annealed λ-GELU → ReLU",
    "srelu_anneal": "(iv) annealed S-ReLU → ReLU",
    "relu": "(v) ReLU from scratch",
    "lgelu_layerwise": "(vi) λ-GELU, per-layer targets → ReLU",
}


#: The chapter's ViT pair in the cpu profile: the S-ReLU chapter's decisive ViT (batch (b) of the
#: retrain: width 48, depth 4, patch 4; all of CIFAR-10 with crop + flip; 10 epochs; its GELU reaches
#: 63 %) with the λ-GELU DeiT pair's AdamW recipe (weight decay 0.07) at peak learning rate 1e-3 and a
#: cosine decay. The DeiT stand-in's cpu scale stops near 38 %, too weak for int8 and sparsity numbers.
VIT_CPU: Scale = Scale(
    dataset="cifar10",
    model_kwargs={"dim": 48, "depth": 4, "heads": 2, "patch": 4},
    epochs=10,
    seeds=(0, 1, 2),
    lr=1e-3,
    augment="crop_flip",
    schedule="cosine",
    note="CIFAR-10 (JPEG mirror), all 50,000 training and 10,000 test images, random crop + "
    "flip; a ViT of width 48, depth 4, patch 4 (the S-ReLU chapter's decisive ViT); "
    "10 epochs, AdamW at peak 1e-3 with a cosine decay; float32, one thread per run",
)


@dataclass(frozen=True, kw_only=True)
class ReluPair:
    """A model–dataset pair of the chapter.

    ``lgelu_pair``: the λ-GELU protocol pair whose recipe it runs (its scales: :data:`SCALES`).
    ``quant_scope``: what int8 quantisation covers (``"model"``: the whole network, traced by
    torch.fx; ``"feedforward"``: every transformer feed-forward block, the part that holds the
    activation, since the attention code does not trace). ``cpu_pending``: why the cpu results
    are not committed yet (empty: they are).
    """

    key: str
    lgelu_pair: str
    label: str
    quant_scope: str
    linear_regions: bool = False
    cpu_pending: str = ""


RELU_PAIRS: dict[str, ReluPair] = {
    "fmnist": ReluPair(
        key="fmnist", lgelu_pair="fmnist", label="MLP/Fashion-MNIST", quant_scope="model", linear_regions=True
    ),
    "gpt": ReluPair(
        key="gpt", lgelu_pair="wikitext_gpt", label="GPT decoder/Tiny Shakespeare", quant_scope="feedforward"
    ),
    "cifar10_resnet": ReluPair(
        key="cifar10_resnet", lgelu_pair="cifar10_resnet", label="ResNet-18/CIFAR-10", quant_scope="model"
    ),
    "vit": ReluPair(key="vit", lgelu_pair="tinyimagenet_deit", label="ViT/CIFAR-10", quant_scope="feedforward"),
}

#: Each pair's scale per profile: its λ-GELU pair's, so that the GELU, ReLU and annealed λ-GELU
#: arms are that protocol's runs (for the seeds it has). In the cpu profile: MLP/FMNIST with 17 seeds
#: and GPT with 8 (seeds added after the seed plan looked at the rows, hence ``looks``); ResNet-18
#: with three seeds, the minimum, since a run costs 35-40 core-minutes in bf16; and :data:`VIT_CPU`.
SCALES: dict[str, dict[str, Scale]] = {
    "fmnist": {
        **LAMBDA_GELU_SCALES["fmnist"],
        # 5 seeds, then 17 after the seed plan looked at the rows: two looks
        "cpu": replace(LAMBDA_GELU_SCALES["fmnist"]["cpu"], seeds=tuple(range(17)), looks=2),
    },
    "gpt": {
        **LAMBDA_GELU_SCALES["wikitext_gpt"],
        # 3 seeds, then 5, then 8, each after looking at the rows: three looks
        "cpu": replace(LAMBDA_GELU_SCALES["wikitext_gpt"]["cpu"], seeds=tuple(range(8)), looks=3),
    },
    "cifar10_resnet": {
        **LAMBDA_GELU_SCALES["cifar10_resnet"],
        "cpu": replace(LAMBDA_GELU_SCALES["cifar10_resnet"]["cpu"], seeds=(0, 1, 2)),
    },
    "vit": {**LAMBDA_GELU_SCALES["tinyimagenet_deit"], "cpu": VIT_CPU},
}


def relu_pair(pair: str) -> ReluPair:
    if pair not in RELU_PAIRS:
        raise ValueError(f"unknown pair {pair!r}; choose one of {', '.join(RELU_PAIRS)}")
    return RELU_PAIRS[pair]


def pair_scale(pair: str, profile: str) -> Scale:
    """The scale ``pair`` runs at in ``profile`` (:data:`SCALES`)."""
    return SCALES[relu_pair(pair).key][current_profile(profile)]


def pair_seeds(pair: str, profile: str, scale: Scale | None = None) -> tuple[int, ...]:
    """The seeds of ``pair`` at ``profile`` (at ``scale`` when given)."""
    return (scale or pair_scale(pair, profile)).seeds


def cpu_pairs() -> tuple[str, ...]:
    """Pairs whose cpu-profile results are committed."""
    return tuple(k for k, p in RELU_PAIRS.items() if not p.cpu_pending)


def pending_pairs() -> dict[str, str]:
    """Pairs whose cpu runs wait, with the reason."""
    return {k: p.cpu_pending for k, p in RELU_PAIRS.items() if p.cpu_pending}


def arm_train_config(pair: str, arm: str, seed: int, profile: str, scale: Scale | None = None) -> TrainConfig:
    """The :class:`TrainConfig` of a training arm, at the pair's scale or at ``scale``. GELU, ReLU
    and annealed λ-GELU are the λ-GELU protocol's own configs (Table I/II); S-ReLU and the
    per-layer λ-GELU are built beside them.

    Smoke runs of a one-epoch pair get 2 epochs and a switch at 50 %, so that every annealing
    arm has a learning epoch and an annealing epoch.
    """
    if arm not in TRAIN_ARMS:
        raise ValueError(f"unknown training arm {arm!r}; choose one of {', '.join(TRAIN_ARMS)}")
    lp = relu_pair(pair).lgelu_pair
    scale = scale or pair_scale(pair, profile)
    if arm in ("gelu", "relu"):
        cfg = pair_config(lp, profile, activation=arm, seed=seed, scale=scale)
    else:
        cfg = pair_config(lp, profile, activation="lambda_gelu", mode="uniform", seed=seed, anneal=True, scale=scale)
    changes: dict[str, Any] = {}
    if current_profile(profile) == "smoke" and math.floor(cfg.anneal_switch * cfg.epochs) < 1:
        changes.update(epochs=max(cfg.epochs, 2))
        if arm not in ("gelu", "relu"):  # only an annealed arm reads the switch
            changes.update(anneal_switch=0.5)
    if arm == "lgelu_layerwise":
        layerwise = replace(cfg.option(LambdaGeluOptions), anneal_target=None, anneal_layer_eps=EPSILON)
        return cfg.with_options(layerwise, experiment=f"reluization_{pair}", **changes)
    if arm == "srelu_anneal":  # λ-GELU's knobs back at their defaults
        return cfg.with_options(
            LambdaGeluOptions(),
            SReluOptions(delta_anneal_target=DELTA_TARGET),
            experiment=f"reluization_{pair}",
            activation="srelu",
            activation_kwargs={"delta": DELTA_START},
            **changes,
        )
    return replace(cfg, **changes)


#: The smallest difference of interest of a per-layer λ target from the global one: 10 % of it.
TARGET_SMALLEST_EFFECT: float = 0.10
#: This chapter's lines of the rules page's table of smallest effects (:func:`helpers.claims.smallest_effects`,
#: through the chapter's claims module).
SMALLEST_EFFECT: dict[str, tuple[str, str]] = {
    "λ target (per-layer vs global)": (
        f"{TARGET_SMALLEST_EFFECT:.0%} of the global λ_target",
        "relative: λ has no unit of its own",
    ),
}


def matches_margin(rows: pd.DataFrame, higher_is_better: bool) -> tuple[float, str]:
    """``(margin, how it was derived)`` of a pair's "matches" claims, in display units, computed
    from the runs being judged: :data:`ACCURACY_MARGIN` points for an accuracy, and
    :data:`PERPLEXITY_MARGIN_REL` of ReLU from scratch's mean perplexity (to 2 significant digits)."""
    if higher_is_better:
        return ACCURACY_MARGIN, f"±{ACCURACY_MARGIN:g} points of accuracy (absolute: a rate's resolution)"
    base = float(rows.loc[rows["arm"] == "relu", "value"].mean())
    if not (math.isfinite(base) and base > 0):
        raise ValueError(f"no ReLU-from-scratch perplexity to derive the margin from (got {base!r})")
    margin = float(f"{PERPLEXITY_MARGIN_REL * base:.2g}")
    return margin, (
        f"±{margin:g} perplexity: {PERPLEXITY_MARGIN_REL:.0%} of ReLU from scratch's {base:.2f} at this scale"
    )

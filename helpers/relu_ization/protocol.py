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
built in :mod:`helpers.relu_ization.experiment`, beside their runner. **Changing a pair's scale is one line**: the ``lgelu_pair`` of its
:class:`ReluPair` (or the :func:`pair_scale` line that reads it), e.g. when the decisive-scale
pairs land.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from helpers.core.runs import TrainConfig
from helpers.core.runtime import current_profile
from helpers.lambda_gelu.hardness import expected_gate_error, lambda_target
from helpers.lambda_gelu.protocol import DECISIVE_CPU, EPSILON, PAIRS, Scale, pair_config
from helpers.srelu.training import delta_for_gate_gap

__all__ = [
    "ARMS", "TRAIN_ARMS", "ARM_LABELS", "ReluPair", "RELU_PAIRS", "EPSILON", "LAMBDA_TARGET",
    "DELTA_START", "DELTA_TARGET", "VIT_CPU", "delta_matching_lambda", "pair_scale", "pair_seeds", "cpu_pairs",
    "pending_pairs", "relu_pair", "arm_train_config",
]

#: The tolerance of both annealing targets: the λ-GELU paper's ε (Section IV-C).
LAMBDA_TARGET: float = lambda_target(EPSILON)


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


#: The chapter's ViT pair in the cpu profile: the S-ReLU chapter's decisive ViT (claim (b) of the
#: retrain: width 48, depth 4, patch 4; all of CIFAR-10 with crop + flip; 10 epochs; its GELU reaches
#: 63 %) with the λ-GELU DeiT pair's AdamW recipe (weight decay 0.07) at peak learning rate 1e-3 and a
#: cosine decay. The DeiT stand-in's earlier cpu scale (width 64, 4,000 images, 6 epochs) stops near 38 %,
#: too weak a model for int8 and sparsity numbers to mean much.
VIT_CPU: Scale = Scale("cifar10", {"dim": 48, "depth": 4, "heads": 2, "patch": 4}, 10, None, None, (0, 1, 2),
                       lr=1e-3, augment="crop_flip", schedule="cosine",
                       note="CIFAR-10 (JPEG mirror), all 50,000 training and 10,000 test images, random crop + "
                            "flip; a ViT of width 48, depth 4, patch 4 (the S-ReLU chapter's decisive ViT); "
                            "10 epochs, AdamW at peak 1e-3 with a cosine decay; float32, one thread per run")


@dataclass(frozen=True)
class ReluPair:
    """A model–dataset pair of the chapter.

    ``lgelu_pair``: the λ-GELU protocol pair whose recipe and scales it runs at (the one-line
    scale switch). ``cpu_scale``: the scale of its cpu runs when it is not (yet) its λ-GELU pair's,
    e.g. while the pair's runs at the decisive scale are still training. ``quant_scope``: what int8 quantisation covers (``"model"``: the whole network,
    traced by torch.fx; ``"feedforward"``: every transformer feed-forward block, the part that
    holds the activation, since the attention code does not trace). ``cpu_seeds``: seeds of the
    cpu profile (``None``: the scale's). ``cpu_pending``: why the cpu results are not committed
    yet (empty: they are).
    """

    key: str
    lgelu_pair: str
    label: str
    quant_scope: str
    linear_regions: bool = False
    cpu_scale: Scale | None = None
    cpu_seeds: tuple[int, ...] | None = None
    cpu_pending: str = ""


RELU_PAIRS: dict[str, ReluPair] = {
    # At λ-GELU's decisive MLP/FMNIST scale; the chapter's 25 runs there are claim (h) of the retrain
    # (helpers.protocols.retrain), all committed.
    "fmnist": ReluPair("fmnist", "fmnist", "MLP/Fashion-MNIST", "model", linear_regions=True,
                       cpu_scale=DECISIVE_CPU["fmnist"], cpu_seeds=(0, 1, 2, 3, 4)),
    # At λ-GELU's GPT floor scale (claim (i)); the chapter's 15 GPT runs there are claim (l) of the
    # retrain, all committed.
    "gpt": ReluPair("gpt", "wikitext_gpt", "GPT decoder/Tiny Shakespeare", "feedforward",
                    cpu_scale=DECISIVE_CPU["wikitext_gpt"]),
    # Three seeds (the minimum): the decisive ResNet runs cost 35-40 core-minutes each, bf16
    # (claim (j) of the retrain; all 15 committed).
    "cifar10_resnet": ReluPair("cifar10_resnet", "cifar10_resnet", "ResNet-18/CIFAR-10", "model",
                               cpu_scale=DECISIVE_CPU["cifar10_resnet"], cpu_seeds=(0, 1, 2)),
    # At the S-ReLU chapter's decisive ViT scale (VIT_CPU), not the λ-GELU DeiT stand-in's earlier one.
    "vit": ReluPair("vit", "tinyimagenet_deit", "ViT/CIFAR-10", "feedforward", cpu_scale=VIT_CPU),
}


def relu_pair(pair: str) -> ReluPair:
    if pair not in RELU_PAIRS:
        raise ValueError(f"unknown pair {pair!r}; choose one of {', '.join(RELU_PAIRS)}")
    return RELU_PAIRS[pair]


def pair_scale(pair: str, profile: str) -> Scale:
    """The scale ``pair`` runs at in ``profile``: its λ-GELU pair's, or its pinned ``cpu_scale``."""
    spec = relu_pair(pair)
    if current_profile(profile) == "cpu" and spec.cpu_scale is not None:
        return spec.cpu_scale
    return PAIRS[spec.lgelu_pair].scale(profile)


def pair_seeds(pair: str, profile: str, scale: Scale | None = None) -> tuple[int, ...]:
    """The seeds of ``pair`` at ``profile`` (at ``scale`` when given, e.g. the decisive one)."""
    spec = relu_pair(pair)
    if current_profile(profile) == "cpu" and spec.cpu_seeds is not None:
        return spec.cpu_seeds
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
        changes.update(epochs=max(cfg.epochs, 2), anneal_switch=0.5)
    if arm == "lgelu_layerwise":
        changes.update(experiment=f"reluization_{pair}", anneal_target=None, anneal_layer_eps=EPSILON)
    elif arm == "srelu_anneal":
        changes.update(experiment=f"reluization_{pair}", activation="srelu", activation_kwargs={"delta": DELTA_START},
                       hardness_lr_mult=1.0, init_mode=None, anneal_target=None, delta_anneal_target=DELTA_TARGET)
    return replace(cfg, **changes)

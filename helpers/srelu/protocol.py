"""The S-ReLU paper's experiments (Appendix G Table 4; Tables 1 and 2) as run configs.

Paper recipe (Appendix H): AdamW, weight decay 0.05, cosine schedule from 2.5e-4 to 1e-5 after
20 warmup epochs starting at 1e-6, gradient clipping 1.0, batch 256, 100 epochs, patch 4 on
32x32 inputs, width 192 (ViT-tiny), timm's standard augmentations, δ = 0.001 for S-ReLU.
"""

from __future__ import annotations

from dataclasses import dataclass

from helpers.core.runs import TrainConfig
from helpers.core.runtime import current_profile

DELTAS: tuple[float, ...] = (0.001, 0.01, 0.1, 0.2, 0.5, 1.0, 5.0, 10.0)
PAPER_DELTA = 0.001
# Tables 1-2's activations, plus ReLU, which the paper leaves out although S-ReLU at δ = 0.001 is
# within 0.001·3/8 of it everywhere.
ACTIVATIONS: tuple[str, ...] = ("gelu", "elu", "prelu", "celu", "silu", "mish", "srelu", "relu")


@dataclass(frozen=True)
class SReLUScale:
    model_kwargs: dict
    epochs: int
    warmup_epochs: int
    n_train: int | None
    n_val: int | None
    seeds: tuple[int, ...]
    batch_size: int
    note: str


VIT_PAPER = {"dim": 192, "depth": 12, "heads": 3, "patch": 4}
CONVNEXT_PAPER = {"depths": (3, 3, 9, 3), "dims": (96, 192, 384, 768)}

SCALES: dict[str, dict[str, SReLUScale]] = {
    "vit": {
        "paper": SReLUScale(VIT_PAPER, 100, 20, None, None, (0, 1, 2), 256, "the paper's setup"),
        "cpu": SReLUScale({"dim": 48, "depth": 4, "heads": 2, "patch": 4}, 5, 1, 2000, 1000, (0, 1, 2),
                          128, "ViT-tiny shrunk to width 48, depth 4; 2,000 training / 1,000 validation "
                          "images of CIFAR-10 (JPEG mirror); 5 epochs (1 warmup) instead of 100 (20); "
                          "batch 128 instead of 256; no augmentation"),
        "smoke": SReLUScale({"dim": 16, "depth": 2, "heads": 2, "patch": 8}, 2, 1, 256, 128, (0,), 64,
                            "smoke"),
    },
    "convnext": {
        "paper": SReLUScale(CONVNEXT_PAPER, 100, 20, None, None, (0, 1, 2), 256, "the paper's setup"),
        "cpu": SReLUScale({"depths": (1, 1, 2, 1), "dims": (16, 32, 64, 128)}, 5, 1, 2000, 1000,
                          (0, 1, 2), 128,
                          "ConvNeXt-tiny shrunk to depths (1,1,2,1), widths (16,32,64,128); 2,000/1,000 "
                          "images of CIFAR-10 (JPEG mirror); 5 epochs (1 warmup) instead of 100; batch 128 "
                          "instead of 256; no augmentation"),
        "smoke": SReLUScale({"depths": (1, 1, 1, 1), "dims": (8, 8, 16, 16)}, 2, 1, 256, 128, (0,), 64,
                            "smoke"),
    },
}


def srelu_config(model: str, profile: str, activation: str, seed: int, delta: float = PAPER_DELTA,
                 experiment: str = "srelu_compare") -> TrainConfig:
    """One S-ReLU-paper run: ``model`` in {"vit", "convnext"} with ``activation`` on CIFAR-10."""
    if model not in SCALES:
        raise ValueError(f"model must be one of {tuple(SCALES)}, got {model!r}")
    scale = SCALES[model][current_profile(profile)]
    return TrainConfig(
        experiment=experiment,
        profile=profile,
        dataset="cifar10",
        model=model,
        activation=activation,
        activation_kwargs={"delta": delta} if activation == "srelu" else {},
        model_kwargs=dict(scale.model_kwargs),
        n_train=scale.n_train,
        n_val=scale.n_val,
        epochs=scale.epochs,
        batch_size=scale.batch_size,
        optimizer="adamw",
        lr=2.5e-4,
        weight_decay=0.05,
        schedule="warmup_cosine",
        warmup_epochs=scale.warmup_epochs,
        warmup_start_lr=1e-6,
        min_lr=1e-5,
        max_grad_norm=1.0,
        seed=seed,
        scale_note=scale.note,
    )


def delta_configs(profile: str) -> list[TrainConfig]:
    """Table 4: S-ReLU with each δ on ViT-tiny (CIFAR-10)."""
    seeds = SCALES["vit"][current_profile(profile)].seeds
    deltas = DELTAS if profile != "smoke" else DELTAS[:2]
    return [srelu_config("vit", profile, "srelu", s, delta=d) for d in deltas for s in seeds]


def compare_configs(profile: str, model: str | None = None) -> list[TrainConfig]:
    """Tables 1 (ViT-tiny) and 2 (ConvNeXt-tiny): every activation on CIFAR-10."""
    models = ("vit", "convnext") if model is None else (model,)
    activations = ACTIVATIONS if profile != "smoke" else ("gelu", "srelu")
    return [srelu_config(m, profile, a, s) for m in models for a in activations
            for s in SCALES[m][current_profile(profile)].seeds]


EXPERIMENTS = {"srelu_delta": delta_configs, "srelu_compare": compare_configs}

"""The S-ReLU paper's experiments (Appendix G Table 4; Tables 1 and 2) as run configs, and the
ConvNeXt pilot (retrain batch m) with the floor rerun it chose (batch p): their configs and, for the
benchmarks page, their committed runs.

Paper recipe (Appendix H): AdamW, weight decay 0.05, cosine schedule from 2.5e-4 to 1e-5 after
20 warmup epochs starting at 1e-6, gradient clipping 1.0, batch 256, 100 epochs, patch 4 on
32x32 inputs, width 192 (ViT-tiny), timm's standard augmentations, δ = 0.001 for S-ReLU.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from helpers.core.registry import display_name
from helpers.core.results_cache import load_result
from helpers.core.runs import TrainConfig
from helpers.core.runtime import current_profile
from helpers.core.scale import Scale
from helpers.srelu.paper import APPENDIX_H_DELTA, TABLE4_DELTAS

PAPER_LR = 2.5e-4  # peak learning rate of Appendix H (batch 256)
PAPER_WARMUP_START_LR = 1e-6
# Tables 1-2's activations, plus ReLU, which the paper leaves out although S-ReLU at δ = 0.001 is
# within 3δ/16 = 0.001·3/16 of it everywhere (Sec. 4.6).
ACTIVATIONS: tuple[str, ...] = ("gelu", "elu", "prelu", "celu", "silu", "mish", "srelu", "relu")


# The paper profile's architectures. App. H prints ViT-Tiny's width 192 and patch 4 only; depth 12
# and 3 heads are the standard ViT-Tiny's. The paper prints nothing of ConvNeXt-tiny's shape (App. H
# does not describe it): these are the standard ConvNeXt-T depths and widths.
VIT_PAPER = {"dim": 192, "depth": 12, "heads": 3, "patch": 4}
CONVNEXT_PAPER = {"depths": (3, 3, 9, 3), "dims": (96, 192, 384, 768)}

#: Batch (a)'s ConvNeXt scale: 5 activations × 5 seeds, 12 epochs, float32. Its GELU reached 62.8 %,
#: 12 points below the 75 % floor, hence the pilot (claim m) and :data:`CONVNEXT_FLOOR`; the page
#: compares its GELU with the floor scale's.
EARLIER_CONVNEXT_CPU = Scale(
    model_kwargs={"depths": (1, 1, 2, 1), "dims": (16, 32, 64, 128)},
    epochs=12,
    warmup_epochs=1,
    seeds=(0, 1, 2, 3, 4),
    batch_size=128,
    lr=2e-3,
    warmup_start_lr=2e-4,
    augment="crop_flip",
    activations=("gelu", "relu", "srelu", "elu", "silu"),
    note="ConvNeXt-tiny shrunk to depths (1,1,2,1), widths (16,32,64,128); all 50,000 training and 10,000 "
    "test images of CIFAR-10 (JPEG mirror), random crop + flip; 12 epochs (1 warmup from 2e-4) instead "
    "of 100 (20 from 1e-6); peak learning rate 2e-3 instead of 2.5e-4; batch 128 instead of 256; "
    "float32, one thread per run",
)

#: The pilot's choice: more epochs bought the most per core-hour (30 epochs: 72.0 % in 0.45
#: core-hours; twice the width: 72.5 % in 0.86; the 32×32 stem: 62.3 % in 0.53 after 12 epochs).
#: No CELU: at α = 1 it is ELU, bit for bit. bf16 + channels_last is about twice float32's speed on
#: AMX or AVX512-BF16 CPUs (the retrain skips bf16 runs elsewhere). About three points short of the
#: 75 % floor; more would exceed this part's 20 core-hours.
CONVNEXT_FLOOR = replace(
    EARLIER_CONVNEXT_CPU,
    epochs=30,
    activations=("gelu", "relu", "srelu", "elu", "prelu", "silu", "mish"),
    precision="bf16",
    channels_last=True,
    note="ConvNeXt-tiny shrunk to depths (1,1,2,1), widths (16,32,64,128); all 50,000 training and 10,000 "
    "test images of CIFAR-10 (JPEG mirror), random crop + flip; 30 epochs (1 warmup from 2e-4) instead "
    "of 100 (20 from 1e-6); peak learning rate 2e-3 instead of 2.5e-4; batch 128 instead of 256; "
    "bf16 autocast, channels_last, one thread per run",
)

#: The seeds of :data:`CONVNEXT_FLOOR` every activation has committed: seed 4 of five activations
#: awaits a CPU with native bf16; then this becomes ``CONVNEXT_FLOOR.seeds``.
CONVNEXT_FLOOR_SEEDS_ON_PAGE: tuple[int, ...] = (0, 1, 2, 3)


#: What the paper and the smoke scales of every model share: App. H's setup, and a run of the code path only.
_PAPER_SETUP = {"epochs": 100, "warmup_epochs": 20, "seeds": (0, 1, 2), "batch_size": 256, "note": "the paper's setup"}
_SMOKE_SETUP = {"epochs": 2, "warmup_epochs": 1, "n_train": 256, "n_val": 128, "seeds": (0,), "batch_size": 64}
_SMOKE_SETUP |= {"note": "smoke"}

#: Every scale of Tables 1, 2 and 4, per model and profile. cpu is the retrain's decisive scale
#: (:mod:`tools.batches`: (b), (g) for the ViT, (p) for ConvNeXt). Its peak learning rate is higher
#: than the paper's (2.5e-4 is tuned for 100 epochs) and its warmup starts at a tenth of it (from
#: 1e-6 the whole first epoch would train at ~1e-6).
SCALES: dict[str, dict[str, Scale]] = {
    "vit": {
        "paper": Scale(model_kwargs=VIT_PAPER, activations=ACTIVATIONS, **_PAPER_SETUP),
        "cpu": Scale(
            model_kwargs={"dim": 48, "depth": 4, "heads": 2, "patch": 4},
            epochs=10,
            warmup_epochs=1,
            seeds=(0, 1, 2),
            batch_size=128,
            lr=1e-3,
            warmup_start_lr=1e-4,
            augment="crop_flip",
            activations=("gelu", "prelu", "relu", "srelu"),
            note="ViT-tiny shrunk to width 48, depth 4; all 50,000 training and 10,000 test images of CIFAR-10 "
            "(JPEG mirror), random crop + flip; 10 epochs (1 warmup from 1e-4) instead of 100 (20 from 1e-6); "
            "peak learning rate 1e-3 instead of 2.5e-4; batch 128 instead of 256; float32, one thread per run",
        ),
        "smoke": Scale(
            model_kwargs={"dim": 16, "depth": 2, "heads": 2, "patch": 8}, activations=ACTIVATIONS, **_SMOKE_SETUP
        ),
    },
    "convnext": {
        "paper": Scale(model_kwargs=CONVNEXT_PAPER, activations=ACTIVATIONS, **_PAPER_SETUP),
        "cpu": replace(CONVNEXT_FLOOR, seeds=CONVNEXT_FLOOR_SEEDS_ON_PAGE),
        "smoke": Scale(
            model_kwargs={"depths": (1, 1, 1, 1), "dims": (8, 8, 16, 16)}, activations=ACTIVATIONS, **_SMOKE_SETUP
        ),
    },
}

#: A one-minute ViT scale for CI's rerun check (:func:`cheap_check_config`).
EARLIER_VIT_CPU = Scale(
    model_kwargs={"dim": 48, "depth": 4, "heads": 2, "patch": 4},
    epochs=5,
    warmup_epochs=1,
    n_train=2000,
    n_val=1000,
    seeds=(0, 1, 2),
    batch_size=128,
    activations=ACTIVATIONS,
    note="ViT-tiny shrunk to width 48, depth 4; 2,000 training / 1,000 validation images of CIFAR-10 (JPEG "
    "mirror); 5 epochs (1 warmup) instead of 100 (20); batch 128 instead of 256; no augmentation",
)

#: Table 4's radii per profile: the paper's eight; on cpu one per two decades from 0.001 to 10 (all
#: eight would cost ~10 more core-hours); two in smoke.
TABLE4_PROFILE_DELTAS: dict[str, tuple[float, ...]] = {
    "paper": TABLE4_DELTAS,
    "cpu": (0.001, 0.1, 1.0, 10.0),
    "smoke": TABLE4_DELTAS[:2],
}


#: The paper profile's note as displayed, per model (the stored note is part of the cache key).
PAPER_SETUP_DISPLAY: dict[str, str] = {
    "vit": "standard ViT-Tiny (depth 12, 3 heads; width 192 and patch 4 as App. H prints) with App. H's "
    "recipe, 100 epochs",
    "convnext": "standard ConvNeXt-T (depths (3,3,9,3), widths 96-768; the paper prints neither) with App. H's "
    "ViT recipe, which App. H does not state for ConvNeXt (our assumption), 100 epochs (Table 2)",
}


def scale_display(model: str, scale: Scale) -> str:
    """``scale.note`` as a page or claim shows it (:data:`PAPER_SETUP_DISPLAY` for the paper profile)."""
    if scale.note == "the paper's setup":
        return PAPER_SETUP_DISPLAY[model]
    return scale.note


def srelu_config(
    model: str,
    profile: str,
    activation: str,
    seed: int,
    delta: float = APPENDIX_H_DELTA,
    experiment: str = "srelu_compare",
    scale: Scale | None = None,
) -> TrainConfig:
    """One S-ReLU-paper run: ``model`` in {"vit", "convnext"} with ``activation`` on CIFAR-10, at
    ``profile``'s scale (or at ``scale``, e.g. a pilot's)."""
    if model not in SCALES:
        raise ValueError(f"model must be one of {tuple(SCALES)}, got {model!r}")
    if scale is None:
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
        lr=PAPER_LR if scale.lr is None else scale.lr,
        weight_decay=0.05,
        schedule="warmup_cosine",
        warmup_epochs=scale.warmup_epochs,
        warmup_start_lr=PAPER_WARMUP_START_LR if scale.warmup_start_lr is None else scale.warmup_start_lr,
        min_lr=1e-5,
        max_grad_norm=1.0,
        seed=seed,
        augment=scale.augment,
        precision=scale.precision,
        channels_last=scale.channels_last,
        scale_note=scale.note,
    )


def cheap_check_config() -> TrainConfig:
    """The S-ReLU run CI retrains and compares with its committed result (``tools.verify_rerun``):
    the paper's δ, seed 0, on :data:`EARLIER_VIT_CPU` (a decisive-scale run takes ~10 core-minutes)."""
    return srelu_config("vit", "cpu", "srelu", 0, scale=EARLIER_VIT_CPU)


def table4_scale(profile: str) -> Scale:
    """The ViT scale Table 4's δ sweep runs at in ``profile`` (Table 1's)."""
    return SCALES["vit"][current_profile(profile)]


def table4_deltas(profile: str) -> tuple[float, ...]:
    """The radii Table 4 runs in ``profile`` (:data:`TABLE4_PROFILE_DELTAS`)."""
    return TABLE4_PROFILE_DELTAS[current_profile(profile)]


def delta_configs(profile: str) -> list[TrainConfig]:
    """Table 4: S-ReLU with each δ on ViT-tiny (CIFAR-10)."""
    scale = table4_scale(profile)
    deltas = table4_deltas(profile)
    return [srelu_config("vit", profile, "srelu", s, delta=d, scale=scale) for d in deltas for s in scale.seeds]


def compare_configs(profile: str, model: str | None = None) -> list[TrainConfig]:
    """Tables 1 (ViT-tiny) and 2 (ConvNeXt-tiny): the scale's activations on CIFAR-10."""
    models = ("vit", "convnext") if model is None else (model,)
    configs = []
    for m in models:
        scale = SCALES[m][current_profile(profile)]
        activations = (scale.activations or ACTIVATIONS) if profile != "smoke" else ("gelu", "srelu")
        configs += [srelu_config(m, profile, a, s) for a in activations for s in scale.seeds]
    return configs


#: The ConvNeXt pilot's levers (model_kwargs, epochs), each trained once (GELU, seed 0) from
#: :data:`EARLIER_CONVNEXT_CPU`: more epochs, twice the width, and a 1×1-patchify stem so the first
#: stage sees all 32×32 positions (as CIFAR variants of ConvNeXt do).
PILOT_CANDIDATES: dict[str, tuple[dict, int]] = {
    "more epochs": ({"depths": (1, 1, 2, 1), "dims": (16, 32, 64, 128)}, 30),
    "twice the width": ({"depths": (1, 1, 2, 1), "dims": (32, 64, 128, 256)}, 20),
    "32×32 stem": ({"depths": (1, 1, 2, 1), "dims": (16, 32, 64, 128), "stem_patch": 1}, 12),
}


def convnext_pilot_configs() -> list[TrainConfig]:
    """GELU, seed 0, at each pilot scale (experiment ``srelu_convnext_pilot``): the decisive ConvNeXt
    scale with one lever of :data:`PILOT_CANDIDATES` changed."""
    configs = []
    for candidate, (model_kwargs, epochs) in PILOT_CANDIDATES.items():
        note = (
            f"ConvNeXt pilot ({candidate}): depths {model_kwargs['depths']}, widths {model_kwargs['dims']}, "
            f"stem patch {model_kwargs.get('stem_patch', 2)}; all of CIFAR-10 with random crop + flip; "
            f"{epochs} epochs (1 warmup from 2e-4), peak learning rate 2e-3, batch 128; float32, one thread"
        )
        scale = replace(
            EARLIER_CONVNEXT_CPU,
            model_kwargs=dict(model_kwargs),
            epochs=epochs,
            seeds=(0,),
            activations=("gelu",),
            note=note,
        )
        configs.append(srelu_config("convnext", "cpu", "gelu", 0, experiment="srelu_convnext_pilot", scale=scale))
    return configs


def convnext_configs(scale: Scale) -> list[TrainConfig]:
    """Table 2 at a cpu ConvNeXt ``scale``, seed-major: :data:`EARLIER_CONVNEXT_CPU` (batch a) or
    :data:`CONVNEXT_FLOOR` (batch p)."""
    return [srelu_config("convnext", "cpu", a, s, scale=scale) for s in scale.seeds for a in scale.activations]


# ---- The pilot's and the floor rerun's committed runs, as page 21 shows them
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
    configs = convnext_configs(CONVNEXT_FLOOR)
    seconds = [float(r["train_seconds"]) for cfg in configs if (r := load_result(cfg)) is not None]
    return len(seconds), len(configs), sum(seconds) / 3600


def earlier_gelu_accuracy() -> tuple[float, int]:
    """``(mean best validation accuracy in %, runs)`` of GELU at batch (a)'s 12-epoch scale, the
    network the pilot started from."""
    accs = [
        100 * float(r["best_val_metric"])
        for cfg in convnext_configs(EARLIER_CONVNEXT_CPU)
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
        for cfg in convnext_configs(CONVNEXT_FLOOR)
        if cfg.seed in missing and load_result(cfg) is None
    ]
    return missing, waiting


EXPERIMENTS = {"srelu_delta": delta_configs, "srelu_compare": compare_configs}

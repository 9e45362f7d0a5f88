"""S-ReLU Table 3 at our scale: pre-train a character GPT, then DPO, for GELU and S-ReLU.

One run (:class:`DPOConfig`, cached by :func:`helpers.core.results_cache.run_or_load`) is one
activation and one seed:

1. **Pre-training** (stands in for the paper's SFT of GPT-2): the book's GPT decoder on the
   training split of Tiny Shakespeare (the first 90 % of the text), AdamW with a cosine schedule,
   through the same :class:`~helpers.core.runs.TrainConfig` machinery as every other run. GELU and
   S-ReLU runs of one seed start from the same weights and see the same batches (the
   activations have no parameters), so the two models differ only by their activation.
2. **DPO** (:mod:`helpers.srelu.dpo`), once per rejected family of its preference pairs and
   β, each time from a fresh copy of the pre-trained model with a frozen copy as the reference.
   Preference pairs come from the *validation* text, which pre-training never trained on: its
   first half gives the DPO training pairs, its second half the validation pairs.

The result holds the pre-training history, and for each (family, β) the per-step DPO loss and
gradient norm (the paper argues from gradient stability) and Table 3's four metrics on the
validation pairs. Fine-tuning several times from one pre-training needs no stored weights.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from helpers.core import validation as v
from helpers.core.data import load_dataset
from helpers.core.provenance import note_steps
from helpers.core.results_cache import RunFailed
from helpers.core.runs import TrainConfig, build_run, checkpoint_key
from helpers.core.runtime import PROFILES, current_profile, seed_everything, training_threads
from helpers.core.train import evaluate, fit
from helpers.srelu.dpo import (
    REJECTION_FAMILIES,
    DPOBatch,
    DPOOutput,
    dpo_step_outputs,
    frozen_reference,
    preference_pairs,
    split_stream,
)
from helpers.srelu.paper import APPENDIX_H_DELTA

ACTIVATIONS: tuple[str, ...] = ("gelu", "srelu")
PAPER_BETAS: tuple[float, ...] = (0.1, 2.0, 5.0)


@dataclass(frozen=True)
class DPOConfig:
    """One (activation, seed): pre-training settings, then the DPO grid (families × betas)."""

    experiment: str = "srelu_dpo"
    profile: str = "cpu"
    activation: str = "gelu"
    activation_kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    model_kwargs: dict[str, Any] = field(default_factory=lambda: {"layers": 4, "dim": 64, "heads": 4, "block_size": 64})
    pretrain_epochs: int = 2
    pretrain_blocks: int | None = None  # training blocks of block_size characters; None: all
    pretrain_val_blocks: int | None = None
    pretrain_lr: float = 3e-3
    batch_size: int = 32
    betas: tuple[float, ...] = PAPER_BETAS
    families: tuple[str, ...] = REJECTION_FAMILIES
    prompt_len: int = 48
    continuation_len: int = 16
    n_corrupt: int = 2
    train_pairs: int = 400  # half the validation text holds 871 windows of 64 characters
    val_pairs: int = 400
    dpo_steps: int = 100
    dpo_batch: int = 16
    dpo_lr: float = 1e-4
    scale_note: str = ""

    def __post_init__(self) -> None:
        current_profile(self.profile)
        v.check_fields(self, DPO_CONFIG_RULES)
        block = self.model_kwargs.get("block_size", 64)
        if self.prompt_len + self.continuation_len - 1 > block:
            raise ValueError(
                f"prompt_len + continuation_len - 1 ({self.prompt_len + self.continuation_len - 1}) "
                f"exceeds the model's block_size ({block})"
            )
        if self.dpo_batch > self.train_pairs:
            raise ValueError(f"dpo_batch ({self.dpo_batch}) exceeds train_pairs ({self.train_pairs})")

    def pretrain_config(self):
        """The pre-training stage as a :class:`~helpers.core.runs.TrainConfig` (not cached on its
        own: its weights are needed, and results store no weights)."""

        return TrainConfig(
            experiment=self.experiment,
            dataset="tinyshakespeare",
            model="gpt",
            profile=self.profile,
            activation=self.activation,
            activation_kwargs=dict(self.activation_kwargs),
            model_kwargs=dict(self.model_kwargs),
            n_train=self.pretrain_blocks,
            n_val=self.pretrain_val_blocks,
            epochs=self.pretrain_epochs,
            batch_size=self.batch_size,
            optimizer="adamw",
            lr=self.pretrain_lr,
            weight_decay=0.1,
            schedule="cosine",
            min_lr=self.pretrain_lr / 10,
            seed=self.seed,
            max_grad_norm=1.0,
            block_size=self.model_kwargs.get("block_size", 64),
        )


#: Every field of :class:`DPOConfig`: kind, range, finiteness (:mod:`helpers.core.validation`).
DPO_CONFIG_RULES: dict[str, v.Rule] = {
    "experiment": v.path_name(),
    "profile": v.choice(PROFILES),
    "activation": v.choice(ACTIVATIONS),
    "activation_kwargs": v.mapping(),
    "seed": v.integer(0),
    "model_kwargs": v.mapping(),
    "pretrain_epochs": v.integer(1),
    "pretrain_blocks": v.integer(1, optional=True),
    "pretrain_val_blocks": v.integer(1, optional=True),
    "pretrain_lr": v.number(0, low_open=True),
    "batch_size": v.integer(1),
    "betas": v.number_tuple(0, low_open=True),
    "families": v.choice_tuple(REJECTION_FAMILIES),
    "prompt_len": v.integer(1),
    "continuation_len": v.integer(1),
    "n_corrupt": v.integer(1),
    "train_pairs": v.integer(1),
    "val_pairs": v.integer(1),
    "dpo_steps": v.integer(1),
    "dpo_batch": v.integer(1),
    "dpo_lr": v.number(0, low_open=True),
    "scale_note": v.text(),
}


def _subset(batch: DPOBatch, index: torch.Tensor) -> DPOBatch:
    return DPOBatch(prompt=batch.prompt[index], chosen=batch.chosen[index], rejected=batch.rejected[index])


def _evaluate(
    policy: torch.nn.Module, reference: torch.nn.Module, pairs: DPOBatch, beta: float, chunk: int = 128
) -> dict[str, float]:
    """Table 3's metrics over every validation pair (means of per-pair rewards)."""
    chosen, rejected = [], []
    policy.eval()
    with torch.no_grad():
        for start in range(0, pairs.prompt.shape[0], chunk):
            index = torch.arange(start, min(start + chunk, pairs.prompt.shape[0]))
            out = dpo_step_outputs(policy, reference, _subset(pairs, index), beta)
            chosen.append(out.chosen_rewards)
            rejected.append(out.rejected_rewards)
    c, r = torch.cat(chosen), torch.cat(rejected)
    loss = -torch.nn.functional.logsigmoid(c - r).mean()
    return {**DPOOutput(loss, c, r).metrics(), "n_pairs": int(c.numel())}


def _dpo(
    pretrained: torch.nn.Module,
    train: DPOBatch,
    val: DPOBatch,
    beta: float,
    cfg: DPOConfig,
    family_index: int,
    beta_index: int,
) -> dict[str, Any]:
    policy = copy.deepcopy(pretrained).train()
    reference = frozen_reference(pretrained)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=cfg.dpo_lr, weight_decay=0.0)
    # the same batch sequence for every activation of a seed (paired), new per (family, β)
    generator = torch.Generator().manual_seed(cfg.seed * 1_000 + family_index * 10 + beta_index)
    losses, grad_norms, margins = [], [], []
    for _ in range(cfg.dpo_steps):
        index = torch.randint(0, train.prompt.shape[0], (cfg.dpo_batch,), generator=generator)
        out = dpo_step_outputs(policy, reference, _subset(train, index), beta)
        optimizer.zero_grad(set_to_none=True)
        out.loss.backward()
        # the total gradient norm before clipping: the paper argues from gradient stability
        norm = torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        losses.append(float(out.loss.detach()))
        grad_norms.append(float(norm))
        margins.append(float((out.chosen_rewards - out.rejected_rewards).detach().mean()))
    if not all(math.isfinite(v) for v in losses + grad_norms):
        raise RunFailed(f"non-finite DPO loss or gradient (β={beta})")
    return {
        "train_loss": losses,
        "grad_norm": grad_norms,
        "train_margin": margins,
        "val": _evaluate(policy, reference, val, beta),
    }


def run_dpo(cfg: DPOConfig, workdir: Path) -> dict[str, Any]:
    """Pre-train, then DPO for every (family, β) of ``cfg``; returns the histories and metrics."""
    with training_threads():
        return _run(cfg, workdir)


def _run(cfg: DPOConfig, workdir: Path) -> dict[str, Any]:
    started, cpu_started = time.perf_counter(), time.process_time()
    pre = cfg.pretrain_config()
    seed_everything(cfg.seed)
    parts = build_run(pre)
    model = parts["model"]
    out = fit(
        model,
        parts["train_loader"],
        parts["val_loader"],
        optimizer=parts["optimizer"],
        scheduler=parts["scheduler"],
        epochs=pre.epochs,
        task="lm",
        hooks=parts["hooks"],
        checkpoint_path=workdir / "pretrain.ckpt",
        max_grad_norm=pre.max_grad_norm,
        run_key=checkpoint_key(cfg),
        desc=f"{cfg.experiment} {cfg.activation} s{cfg.seed} pre-training",
    )
    pretrain_val_loss = evaluate(model, parts["val_loader"], "lm")["val_loss"]
    text = load_dataset("tinyshakespeare")
    dpo_train_text, dpo_val_text = split_stream(text.val_tokens, 0.5)
    runs: dict[str, Any] = {}
    for fi, family in enumerate(cfg.families):
        pair_kw = dict(
            prompt_len=cfg.prompt_len,
            continuation_len=cfg.continuation_len,
            family=family,
            vocab_size=text.vocab_size,
            n_corrupt=cfg.n_corrupt,
        )
        # pairs depend on the family only, never on the seed: every run is judged on the same pairs
        train = preference_pairs(dpo_train_text, n_pairs=cfg.train_pairs, seed=fi, **pair_kw)
        val = preference_pairs(dpo_val_text, n_pairs=cfg.val_pairs, seed=100 + fi, **pair_kw)
        for bi, beta in enumerate(cfg.betas):
            runs[f"{family}/beta={beta:g}"] = _dpo(model, train, val, float(beta), cfg, fi, bi)
    # the run's length for its provenance: pre-training steps plus every DPO step
    note_steps(pre.epochs * len(parts["train_loader"]) + cfg.dpo_steps * len(runs))
    (workdir / "pretrain.ckpt").unlink(missing_ok=True)
    try:
        workdir.rmdir()
    except OSError:
        pass
    return {
        "pretrain_history": out["history"],
        "pretrain_val_loss": pretrain_val_loss,
        "dpo": runs,
        "n_params": sum(p.numel() for p in model.parameters()),
        "data_source": parts["source"],
        "train_seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu_started,
    }


PROFILE_SETTINGS: dict[str, dict[str, Any]] = {
    "smoke": dict(
        model_kwargs={"layers": 1, "dim": 32, "heads": 2, "block_size": 64},
        pretrain_epochs=1,
        pretrain_blocks=64,
        pretrain_val_blocks=16,
        prompt_len=48,
        continuation_len=16,
        train_pairs=32,
        val_pairs=32,
        dpo_steps=3,
        dpo_batch=8,
        scale_note="smoke: code path only",
    ),
    "cpu": dict(
        scale_note="character-level GPT (4 layers, width 64, 64-character context) pre-trained "
        "2 epochs on Tiny Shakespeare instead of GPT-2 + SFT; preference pairs (48-character "
        "prompt, 16-character continuations) built from unseen Shakespeare text instead of "
        "SHP/HH; 100 DPO steps of 16 pairs"
    ),
    "paper": dict(
        model_kwargs={"layers": 12, "dim": 768, "heads": 12, "block_size": 1024},
        pretrain_epochs=10,
        prompt_len=256,
        continuation_len=64,
        train_pairs=160,
        val_pairs=160,
        dpo_steps=2000,
        dpo_batch=64,
        scale_note="GPT-2-small shape on Tiny Shakespeare (GPT-2 weights and SHP/HH are not available offline)",
    ),
}


def dpo_configs(profile: str, seeds: tuple[int, ...] = (0, 1, 2)) -> list[DPOConfig]:
    """GELU and S-ReLU (δ = 0.001, the paper's) for each seed, paired by seed."""
    profile = current_profile(profile)
    settings = PROFILE_SETTINGS[profile]
    if profile == "smoke":
        seeds = seeds[:1]
    return [
        DPOConfig(
            profile=profile,
            activation=act,
            seed=seed,
            activation_kwargs={"delta": APPENDIX_H_DELTA} if act == "srelu" else {},
            **settings,
        )
        for seed in seeds
        for act in ACTIVATIONS
    ]

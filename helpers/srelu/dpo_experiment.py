"""S-ReLU Table 3 at our scale: pre-train a character GPT, then DPO, for GELU and S-ReLU.

One run is one activation and one seed, a :class:`~helpers.core.runs.TrainConfig` carrying
:class:`DPOOptions` (built by :func:`dpo_config`), run by :func:`helpers.core.runs.run_training`
like every other run:

1. **Pre-training** (stands in for the paper's SFT of GPT-2): the book's GPT decoder on the
   training split of Tiny Shakespeare (the first 90 % of the text), AdamW with a cosine schedule.
   GELU and S-ReLU runs of one seed start from the same weights and see the same batches (the
   activations have no parameters), so the two models differ only by their activation.
2. **DPO** (:mod:`helpers.srelu.dpo`, the run extension :class:`DPOGrid`), on the model of the
   last pre-training epoch, once per rejected family of its preference pairs and β, each time
   from a fresh copy of it with a frozen copy as the reference. Preference pairs come from the
   *validation* text, which pre-training never trained on: its first half gives the DPO training
   pairs, its second half the validation pairs.

The result holds the pre-training history (``history``, as every run's), and for each
(family, β) the per-step DPO loss and gradient norm (the paper argues from gradient stability)
and Table 3's four metrics on the validation pairs. Fine-tuning several times from one
pre-training needs no stored weights.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import nn

from helpers.core import validation as v
from helpers.core.data import load_dataset
from helpers.core.options import MethodOptions
from helpers.core.provenance import note_steps
from helpers.core.results_cache import RunFailed
from helpers.core.runs import RunExtension, TrainConfig
from helpers.core.runtime import current_profile
from helpers.core.train import evaluate
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
class DPOOptions(MethodOptions):
    """The DPO grid run after pre-training: one DPO run per family of rejected continuations
    (``families``) and β (``dpo_betas``; None: no DPO, the default), each ``dpo_steps`` AdamW steps of
    ``dpo_batch`` pairs at ``dpo_lr`` on ``train_pairs`` pairs, judged on ``val_pairs``; a pair is a
    ``prompt_len``-character prompt and two ``continuation_len``-character continuations
    (``n_corrupt`` characters changed in a corrupted one)."""

    dpo_betas: tuple[float, ...] | None = None
    families: tuple[str, ...] = REJECTION_FAMILIES
    prompt_len: int = 48
    continuation_len: int = 16
    n_corrupt: int = 2
    train_pairs: int = 400  # half the validation text holds 871 windows of 64 characters
    val_pairs: int = 400
    dpo_steps: int = 100
    dpo_batch: int = 16
    dpo_lr: float = 1e-4

    RULES: ClassVar[dict[str, v.Rule]] = {
        "dpo_betas": v.number_tuple(0, low_open=True, optional=True),
        "families": v.choice_tuple(REJECTION_FAMILIES),
        "prompt_len": v.integer(1),
        "continuation_len": v.integer(1),
        "n_corrupt": v.integer(1),
        "train_pairs": v.integer(1),
        "val_pairs": v.integer(1),
        "dpo_steps": v.integer(1),
        "dpo_batch": v.integer(1),
        "dpo_lr": v.number(0, low_open=True),
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        # a stored config holds lists; one spelling, so that equal runs are equal options
        object.__setattr__(self, "families", tuple(self.families))
        if self.dpo_betas is not None:
            object.__setattr__(self, "dpo_betas", tuple(self.dpo_betas))

    def check(self, config: Any) -> None:
        if self.dpo_betas is None:
            raise ValueError("DPOOptions without dpo_betas runs no DPO: give the β of each DPO run, or leave them out")
        if (config.dataset, config.model) != ("tinyshakespeare", "gpt"):
            raise ValueError(
                f"DPO fine-tunes the GPT pre-trained on tinyshakespeare (its pairs are that text), "
                f"not model {config.model!r} on {config.dataset!r}"
            )
        if config.activation not in ACTIVATIONS:
            raise ValueError(
                f"a DPO run compares {' and '.join(ACTIVATIONS)}: activation must be one of "
                f"{', '.join(ACTIVATIONS)}, got {config.activation!r}"
            )
        block = config.model_kwargs.get("block_size", config.block_size)
        if self.prompt_len + self.continuation_len - 1 > block:
            raise ValueError(
                f"prompt_len + continuation_len - 1 ({self.prompt_len + self.continuation_len - 1}) "
                f"exceeds the model's block_size ({block})"
            )
        if self.dpo_batch > self.train_pairs:
            raise ValueError(f"dpo_batch ({self.dpo_batch}) exceeds train_pairs ({self.train_pairs})")


def _subset(batch: DPOBatch, index: torch.Tensor) -> DPOBatch:
    return DPOBatch(prompt=batch.prompt[index], chosen=batch.chosen[index], rejected=batch.rejected[index])


def _evaluate(
    policy: nn.Module, reference: nn.Module, pairs: DPOBatch, beta: float, chunk: int = 128
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
    pretrained: nn.Module, train: DPOBatch, val: DPOBatch, beta: float, opts: DPOOptions, generator: torch.Generator
) -> dict[str, Any]:
    policy = copy.deepcopy(pretrained).train()
    reference = frozen_reference(pretrained)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=opts.dpo_lr, weight_decay=0.0)
    losses, grad_norms, margins = [], [], []
    for _ in range(opts.dpo_steps):
        index = torch.randint(0, train.prompt.shape[0], (opts.dpo_batch,), generator=generator)
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


def _on(batch: DPOBatch, device: torch.device) -> DPOBatch:
    return DPOBatch(prompt=batch.prompt.to(device), chosen=batch.chosen.to(device), rejected=batch.rejected.to(device))


class DPOGrid(RunExtension):
    """After pre-training: the validation loss of the last epoch's model (``pretrain_val_loss``), then
    DPO from that model for every (family, β) of the run's :class:`DPOOptions` (``dpo``)."""

    def final_record(
        self, model: nn.Module, cfg: TrainConfig, out: dict[str, Any], parts: dict[str, Any]
    ) -> dict[str, Any]:
        opts = cfg.option(DPOOptions)
        device = next(model.parameters()).device
        pretrain_val_loss = evaluate(model, parts["val_loader"], "lm")["val_loss"]
        text = load_dataset("tinyshakespeare")
        dpo_train_text, dpo_val_text = split_stream(text.val_tokens, 0.5)
        runs: dict[str, Any] = {}
        for fi, family in enumerate(opts.families):
            pair_kw = dict(
                prompt_len=opts.prompt_len,
                continuation_len=opts.continuation_len,
                family=family,
                vocab_size=text.vocab_size,
                n_corrupt=opts.n_corrupt,
            )
            # pairs depend on the family only, never on the seed: every run is judged on the same pairs
            train = _on(preference_pairs(dpo_train_text, n_pairs=opts.train_pairs, seed=fi, **pair_kw), device)
            val = _on(preference_pairs(dpo_val_text, n_pairs=opts.val_pairs, seed=100 + fi, **pair_kw), device)
            for bi, beta in enumerate(opts.dpo_betas):
                # the same batch sequence for every activation of a seed (paired), new per (family, β)
                generator = torch.Generator().manual_seed(cfg.seed * 1_000 + fi * 10 + bi)
                runs[f"{family}/beta={beta:g}"] = _dpo(model, train, val, float(beta), opts, generator)
        # the run's length for its provenance: pre-training steps plus every DPO step
        note_steps(cfg.epochs * len(parts["train_loader"]) + opts.dpo_steps * len(runs))
        return {"pretrain_val_loss": pretrain_val_loss, "dpo": runs}


RUN_EXTENSION = DPOGrid()

#: The GPT of the cpu profile (4 layers, width 64, 64-character context).
CPU_MODEL: dict[str, int] = {"layers": 4, "dim": 64, "heads": 4, "block_size": 64}


def dpo_config(
    profile: str,
    activation: str,
    seed: int,
    *,
    activation_kwargs: dict[str, Any] | None = None,
    model_kwargs: dict[str, Any] | None = None,
    epochs: int = 2,
    n_train: int | None = None,
    n_val: int | None = None,
    lr: float = 3e-3,
    batch_size: int = 32,
    scale_note: str = "",
    **dpo: Any,
) -> TrainConfig:
    """One DPO run: pre-training of ``activation`` (S-ReLU at the paper's δ = 0.001 unless
    ``activation_kwargs`` say otherwise), AdamW, cosine to ``lr``/10, gradients clipped at 1, then
    the DPO grid of ``dpo`` (:class:`DPOOptions` fields; ``dpo_betas``: the paper's by default)."""
    if activation_kwargs is None:
        activation_kwargs = {"delta": APPENDIX_H_DELTA} if activation == "srelu" else {}
    model_kwargs = dict(CPU_MODEL if model_kwargs is None else model_kwargs)
    return TrainConfig(
        experiment="srelu_dpo",
        dataset="tinyshakespeare",
        model="gpt",
        profile=profile,
        activation=activation,
        activation_kwargs=dict(activation_kwargs),
        model_kwargs=model_kwargs,
        n_train=n_train,
        n_val=n_val,
        epochs=epochs,
        batch_size=batch_size,
        optimizer="adamw",
        lr=lr,
        weight_decay=0.1,
        schedule="cosine",
        min_lr=lr / 10,
        seed=seed,
        max_grad_norm=1.0,
        block_size=model_kwargs.get("block_size", 64),
        scale_note=scale_note,
        options=(DPOOptions(**{"dpo_betas": PAPER_BETAS, **dpo}),),
    )


#: Each profile's arguments of :func:`dpo_config`.
PROFILE_SETTINGS: dict[str, dict[str, Any]] = {
    "smoke": dict(
        model_kwargs={"layers": 1, "dim": 32, "heads": 2, "block_size": 64},
        epochs=1,
        n_train=64,
        n_val=16,
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
        epochs=10,
        prompt_len=256,
        continuation_len=64,
        train_pairs=160,
        val_pairs=160,
        dpo_steps=2000,
        dpo_batch=64,
        scale_note="GPT-2-small shape on Tiny Shakespeare (GPT-2 weights and SHP/HH are not available offline)",
    ),
}


def dpo_configs(profile: str, seeds: tuple[int, ...] = (0, 1, 2)) -> list[TrainConfig]:
    """GELU and S-ReLU (δ = 0.001, the paper's) for each seed, paired by seed."""
    profile = current_profile(profile)
    if profile == "smoke":
        seeds = seeds[:1]
    return [dpo_config(profile, act, seed, **PROFILE_SETTINGS[profile]) for seed in seeds for act in ACTIVATIONS]

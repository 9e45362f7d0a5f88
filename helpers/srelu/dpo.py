"""Direct Preference Optimization (Rafailov et al., 2023) for the book's decoder language models.

The S-ReLU paper's Section 5 fine-tunes GPT-2 with DPO and reports four numbers per run
(Table 3): the chosen reward, the rejected reward, their margin, and the preference accuracy.
With a policy ``π_θ`` and a frozen reference ``π_ref``, for a prompt ``x``, a chosen
continuation ``y_w`` and a rejected one ``y_l``:

* implicit reward ``r(y) = β · (log π_θ(y|x) − log π_ref(y|x))``, the log-probabilities summed
  over the continuation's tokens;
* loss ``−log σ(r(y_w) − r(y_l))`` averaged over pairs;
* preference accuracy: the fraction of pairs with ``r(y_w) > r(y_l)``.

At initialisation (policy = reference) every reward is 0 and the loss is ``log 2``. The
reference is used under ``torch.no_grad`` and never receives a gradient.

Preference pairs are built deterministically from a token stream, for DPO on a character model.
The S-ReLU paper's DPO data (SHP, HH) and GPT-2 cannot be had offline, so the book builds the
closest stand-in it can check: text the pre-training never saw (the validation part of Tiny
Shakespeare) is cut into non-overlapping windows; each window gives a *prompt* (its first
``prompt_len`` characters) and a *chosen* continuation (the true next ``continuation_len``
characters). The *rejected* continuation comes from one of two families, of different
difficulty, and each is a real preference signal because the chosen text is what the author
wrote and the rejected one provably is not:

``swap`` (easy, global)
    the true continuation of *another* window of the play: fluent text that does not follow the
    prompt. Preferring the chosen one needs context beyond the next few characters.
``corrupt`` (hard, local)
    the true continuation with ``n_corrupt`` characters replaced by other characters of the
    vocabulary: almost the same string, wrong in a few places. Preferring the chosen one needs
    sharp character-level likelihoods.

Both continuations of a pair have the same length, so summed log-probabilities compare like
with like. Pairs come from :func:`preference_pairs`; :func:`split_stream` separates the DPO
training and validation windows, so no validation window overlaps a training one.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from helpers.core.validation import checked_arguments, choice, instance_of, integer, number


@dataclass(frozen=True)
class DPOBatch:
    """Preference pairs sharing one prompt length: ``prompt`` (N, P), ``chosen`` and
    ``rejected`` (N, C) token ids. Chosen and rejected continuations have the same length, so a
    difference in summed log-probability is not a difference in length."""

    prompt: torch.Tensor
    chosen: torch.Tensor
    rejected: torch.Tensor

    def __post_init__(self) -> None:
        for name in ("prompt", "chosen", "rejected"):
            value = getattr(self, name)
            if not isinstance(value, torch.Tensor) or value.dtype != torch.long or value.dim() != 2:
                raise TypeError(
                    f"{name} must be a 2-D tensor of token ids (torch.long), got "
                    f"{getattr(value, 'dtype', type(value).__name__)} of shape "
                    f"{tuple(getattr(value, 'shape', ()))}"
                )
        n, c = self.chosen.shape
        if self.prompt.shape[0] != n or self.rejected.shape != (n, c):
            raise ValueError(
                f"prompt {tuple(self.prompt.shape)}, chosen {tuple(self.chosen.shape)} and "
                f"rejected {tuple(self.rejected.shape)} must share N, and chosen/rejected C"
            )
        if n == 0 or c == 0 or self.prompt.shape[1] == 0:
            raise ValueError("a DPO batch needs at least one pair, one prompt token and one continuation token")


@dataclass(frozen=True)
class DPOOutput:
    """Per-pair rewards (shape (N,)) and the batch loss; :meth:`metrics` gives Table 3's numbers."""

    loss: torch.Tensor
    chosen_rewards: torch.Tensor
    rejected_rewards: torch.Tensor

    def metrics(self) -> dict[str, float]:
        """Means over the batch: chosen reward, rejected reward, margin, preference accuracy."""
        chosen, rejected = self.chosen_rewards.detach(), self.rejected_rewards.detach()
        return {
            "loss": float(self.loss.detach()),
            "chosen_reward": float(chosen.mean()),
            "rejected_reward": float(rejected.mean()),
            "reward_margin": float((chosen - rejected).mean()),
            "preference_accuracy": float((chosen > rejected).float().mean()),
        }


def continuation_logprob(model: nn.Module, prompt: torch.Tensor, continuation: torch.Tensor) -> torch.Tensor:
    """``log p(continuation | prompt)`` under a next-token model, summed over the continuation's
    tokens: shape (N,). ``model`` maps (N, T) token ids to (N, T, V) logits, position ``t``
    predicting token ``t + 1`` (the book's GPT decoder)."""
    tokens = torch.cat([prompt, continuation], dim=1)
    logits = model(tokens[:, :-1])
    if logits.dim() != 3 or logits.shape[:2] != tokens[:, :-1].shape:
        raise ValueError(f"model must return (N, T, V) logits for (N, T) tokens, got {tuple(logits.shape)}")
    start = prompt.shape[1] - 1  # logits at this position predict the first continuation token
    logp = F.log_softmax(logits[:, start:].float(), dim=-1)
    return logp.gather(-1, continuation.unsqueeze(-1)).squeeze(-1).sum(dim=1)


def dpo_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    reference_chosen: torch.Tensor,
    reference_rejected: torch.Tensor,
    beta: float,
) -> DPOOutput:
    """The DPO loss from summed log-probabilities (each shape (N,)) and ``β > 0``."""
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not (math.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be a positive finite number, got {beta!r}")
    shapes = {t.shape for t in (policy_chosen, policy_rejected, reference_chosen, reference_rejected)}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1:
        raise ValueError(
            f"log-probabilities must be four tensors of the same shape (N,), got {sorted(map(tuple, shapes))}"
        )
    chosen = beta * (policy_chosen - reference_chosen.detach())
    rejected = beta * (policy_rejected - reference_rejected.detach())
    loss = -F.logsigmoid(chosen - rejected).mean()  # logsigmoid: stable for large margins
    return DPOOutput(loss=loss, chosen_rewards=chosen, rejected_rewards=rejected)


def frozen_reference(model: nn.Module) -> nn.Module:
    """A copy of ``model`` in eval mode with every parameter frozen: DPO's ``π_ref``."""
    reference = copy.deepcopy(model).eval()
    for p in reference.parameters():
        p.requires_grad_(False)
    return reference


def dpo_step_outputs(policy: nn.Module, reference: nn.Module, batch: DPOBatch, beta: float) -> DPOOutput:
    """Forward both models on a batch and return the DPO loss and rewards (the policy's graph is
    kept for ``loss.backward()``; the reference runs without one)."""
    policy_chosen = continuation_logprob(policy, batch.prompt, batch.chosen)
    policy_rejected = continuation_logprob(policy, batch.prompt, batch.rejected)
    with torch.no_grad():
        reference_chosen = continuation_logprob(reference, batch.prompt, batch.chosen)
        reference_rejected = continuation_logprob(reference, batch.prompt, batch.rejected)
    return dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected, beta)


# ---- Preference pairs
REJECTION_FAMILIES: tuple[str, ...] = ("swap", "corrupt")


def _check_stream(tokens: torch.Tensor) -> None:
    if tokens.dim() != 1 or tokens.dtype != torch.long:
        raise TypeError("tokens must be a 1-D tensor of token ids (torch.long)")


_TOKENS = instance_of(torch.Tensor)


@checked_arguments({"tokens": _TOKENS, "train_fraction": number(0, 1, low_open=True, high_open=True)})
def split_stream(tokens: torch.Tensor, train_fraction: float = 0.5) -> tuple[torch.Tensor, torch.Tensor]:
    """The stream cut in two contiguous parts (DPO training, DPO validation)."""
    _check_stream(tokens)
    cut = int(train_fraction * tokens.numel())
    return tokens[:cut], tokens[cut:]


@checked_arguments(
    {"tokens": _TOKENS, "family": choice(REJECTION_FAMILIES), "seed": integer(0)}
    | dict.fromkeys(("n_pairs", "prompt_len", "continuation_len", "vocab_size", "n_corrupt"), integer(1))
)
def preference_pairs(
    tokens: torch.Tensor,
    *,
    n_pairs: int,
    prompt_len: int,
    continuation_len: int,
    family: str,
    vocab_size: int,
    seed: int,
    n_corrupt: int = 3,
) -> DPOBatch:
    """``n_pairs`` preference pairs from non-overlapping windows of ``tokens`` (see the module
    docstring for the two ``family`` values). Deterministic in ``seed``."""
    _check_stream(tokens)
    if family == "swap" and n_pairs < 2:
        raise ValueError("the 'swap' family needs n_pairs >= 2 (a rejected text comes from another window)")
    if family == "corrupt" and (n_corrupt > continuation_len or vocab_size < 2):
        raise ValueError(
            f"the 'corrupt' family needs n_corrupt <= continuation_len ({continuation_len}) "
            f"and vocab_size >= 2, got n_corrupt={n_corrupt}, vocab_size={vocab_size}"
        )
    if int(tokens.max()) >= vocab_size or int(tokens.min()) < 0:
        raise ValueError(f"token ids must lie in [0, {vocab_size}), got [{int(tokens.min())}, {int(tokens.max())}]")
    window = prompt_len + continuation_len
    slots = tokens.numel() // window
    if slots < n_pairs:
        raise ValueError(
            f"{tokens.numel():,} tokens hold only {slots} non-overlapping windows of "
            f"{window}; asked for n_pairs={n_pairs}"
        )
    generator = torch.Generator().manual_seed(seed)
    starts = torch.randperm(slots, generator=generator)[:n_pairs].sort().values * window
    windows = torch.stack([tokens[s : s + window] for s in starts.tolist()])
    prompt, chosen = windows[:, :prompt_len].clone(), windows[:, prompt_len:].clone()
    if family == "swap":
        rejected = chosen.roll(1, dims=0)  # each window gets its neighbour's continuation
        same = (rejected == chosen).all(dim=1)
        if bool(same.any()):
            raise ValueError(
                f"{int(same.sum())} windows share their neighbour's continuation; "
                "use longer continuations or another seed"
            )
    else:
        rejected = chosen.clone()
        for i in range(n_pairs):
            where = torch.randperm(continuation_len, generator=generator)[:n_corrupt]
            # a non-zero shift modulo the vocabulary: always a different character
            shift = torch.randint(1, vocab_size, (n_corrupt,), generator=generator)
            rejected[i, where] = (rejected[i, where] + shift) % vocab_size
    return DPOBatch(prompt=prompt, chosen=chosen, rejected=rejected)

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

Part of the core: knows nothing about any activation.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["DPOBatch", "DPOOutput", "continuation_logprob", "dpo_loss", "dpo_step_outputs", "frozen_reference"]


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

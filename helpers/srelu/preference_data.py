"""Preference pairs built deterministically from a token stream, for DPO on a character model.

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

import torch

from helpers.core.validation import checked_arguments, choice, instance_of, integer, number
from helpers.srelu.dpo import DPOBatch

__all__ = ["REJECTION_FAMILIES", "preference_pairs", "split_stream"]

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

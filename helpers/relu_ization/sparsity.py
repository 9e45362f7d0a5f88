"""Activation sparsity: the fraction of exact zeros after every activation site.

A ReLU writes an exact 0 for every negative input; GELU, λ-GELU and S-ReLU do so only where
their formula rounds to 0 or vanishes identically (S-ReLU for ``x <= −δ``; GELU for ``x`` and
λ-GELU for ``λx`` below about −5.5, where ``1 + erf(λx/√2)`` rounds to exactly 0 in float32:
:func:`float32_zero_threshold` measures the point). Counted with forward hooks on the
activation modules (:func:`helpers.models.activation_sites`), over every element of every batch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import nn

from helpers.core.models import activation_sites


def exact_zero_fraction(t: torch.Tensor) -> float:
    """Fraction of entries of ``t`` that are exactly 0 (``-0.0`` counts)."""
    if not isinstance(t, torch.Tensor) or t.numel() == 0:
        raise ValueError("need a non-empty tensor")
    return float((t == 0).sum()) / t.numel()


@torch.no_grad()
def float32_zero_threshold(activation: nn.Module, lowest: float = -1e4) -> float:
    """Where ``activation`` starts writing exact zeros in float32: the edge ``t`` of the half-line
    ``(−∞, t]`` of negative inputs on which it is 0 (GELU, λ-GELU, S-ReLU, ReLU), found by bisection
    on float32 inputs. Where the zeros come from rounding (GELU's ``1 + erf`` near −5.5) the edge is
    ragged over a few hundredths, and the bisection lands somewhere on it. Returns 0.0 when every
    negative input gives 0 (ReLU). Raises ``ValueError`` when ``activation(lowest)`` is not 0 (no
    exact zeros down there, e.g. ELU) or when ``lowest`` is not a finite negative number."""
    if not callable(activation):
        raise ValueError(f"need an activation module or function, got {type(activation).__name__}")
    if isinstance(lowest, bool) or not isinstance(lowest, (int, float)) or not math.isfinite(lowest) or lowest >= 0:
        raise ValueError(f"lowest must be a finite negative number (the bottom of the search), got {lowest!r}")
    if float(torch.tensor(lowest, dtype=torch.float32)) == -math.inf:
        raise ValueError(
            f"lowest = {lowest:g} overflows float32 (its range ends at {-torch.finfo(torch.float32).max:g})"
        )

    def is_zero(x: float) -> bool:
        return bool(activation(torch.tensor([x], dtype=torch.float32))[0] == 0)

    tiny = -float(torch.finfo(torch.float32).tiny)
    if not is_zero(lowest):
        raise ValueError(f"the activation is not exactly 0 at x = {lowest:g} in float32")
    if is_zero(tiny):
        return 0.0  # exactly 0 for every negative input (ReLU)
    lo, hi = lowest, tiny  # activation(lo) == 0, activation(hi) != 0
    for _ in range(200):
        mid = float(torch.tensor((lo + hi) / 2, dtype=torch.float32))
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if is_zero(mid) else (lo, mid)
    return lo


@torch.no_grad()
def zero_fractions(model: nn.Module, batches: Iterable) -> dict[str, list]:
    """``{"sites": names, "zero_fraction": [...], "n_values": [...]}`` over ``batches``.

    ``batches`` yields inputs or ``(inputs, targets)`` pairs; the model runs in eval mode (its
    mode is restored). Raises ``ValueError`` when the model has no activation site or no batch.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    sites = activation_sites(model)
    if not sites:
        raise ValueError("model has no activation site")
    modules = dict(model.named_modules())
    zeros = {s: 0 for s in sites}
    counts = {s: 0 for s in sites}

    def hook(name: str):
        def count(module: nn.Module, args: tuple, output: torch.Tensor) -> None:
            zeros[name] += int((output == 0).sum())
            counts[name] += output.numel()

        return count

    handles = [modules[s].register_forward_hook(hook(s)) for s in sites]
    was_training = model.training
    model.eval()
    try:
        seen = 0
        for batch in batches:
            inputs = batch[0] if isinstance(batch, (tuple, list)) else batch
            model(inputs)
            seen += 1
        if not seen:
            raise ValueError("batches is empty")
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    return {
        "sites": sites,
        "zero_fraction": [zeros[s] / counts[s] for s in sites],
        "n_values": [counts[s] for s in sites],
    }

"""Flex-Act's gradient-norm regulariser (Eqs. 1-4 of the paper). Readings we chose where the paper is
ambiguous or inconsistent (the notebook lists them too):

1. ``p`` in Eq. (4) is ``softmax(θ)``, the distribution the Gumbel sample is drawn from, not the noisy
   sample itself: a hard sample would make ``log p = -inf`` and the KL infinite, and a soft sample
   would make the target of the regulariser random.
2. The KL direction is the one written, ``KL(p̃ ‖ p) = Σ_k p̃_k log(p̃_k / p_k)`` (p̃ is the target), so
   ``∂(α KL)/∂θ = α (softmax(θ) − p̃)``; ``direction="reverse"`` gives ``KL(p ‖ p̃)`` for the synthetic
   study's readings sweep.
3. "Gradient norm" (Eq. 1): the text says "with respect to the input" of the activation and writes
   ``∇_x φ_i(h)``; we differentiate w.r.t. the pre-activation ``h`` (not the network input ``x``). As
   ``φ_i`` acts elementwise, ``g_{i,n} = ‖φ_i'(h_n)‖₂`` over the features of sample ``n`` and ``ḡ_i`` is
   its batch mean (Eq. 2). The L2 norm grows like ``sqrt(width)``, so a good ``λ`` depends on the layer
   width; the paper gives no value of ``λ``.
4. ``ḡ`` is detached by default (``p̃`` is called a *pseudo-label*, a target): the regulariser then
   trains only the logits; ``detach=False`` lets it act on the weights that produce ``h`` (through ``φ''``).
5. The outer sum of Eq. (4) runs over the ``N`` Flex-Act layers (``i`` is the candidate index in
   Eqs. 1-2 and the layer index in Eq. 4): :class:`~helpers.flexact.hook.FlexActHook` sums ``α·KL``
   over every Flex-Act module of a model.

For basis candidates on large float32 CPU tensors, :func:`mean_gradient_norms` runs one fused pass
(:mod:`helpers.flexact.kernels`) instead of one derivative and one norm per candidate.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from helpers.core.validation import check_value, choice, number
from helpers.flexact.kernels import GRAD_NORM_SUMS
from helpers.flexact.mixture import _fused

#: Directions of the KL of Eq. (4): ``"forward"`` = ``KL(p̃ ‖ p)`` as written, ``"reverse"`` = ``KL(p ‖ p̃)``.
KL_DIRECTIONS: tuple[str, ...] = ("forward", "reverse")


#: The regulariser's hyperparameters, checked where they enter (:class:`~helpers.flexact.hook.FlexActHook`
#: checks the same rules once for a whole training run).
RULES = {"alpha": number(0), "lam": number(0, low_open=True), "kl_direction": choice(KL_DIRECTIONS)}


def _check(owner: str, **values: object) -> None:
    for name, value in values.items():
        check_value(owner, name, value, RULES[name])


# Regulariser (Eqs. 1-4)


def _closed_form_derivative(candidate: nn.Module, h: torch.Tensor) -> torch.Tensor | None:
    """``φ'(h)`` for the built-in basis candidates (same convention as autograd: relu'(0) = 0,
    leaky_relu'(0) = k), or None for any other module."""
    kind = type(candidate)
    if kind is nn.ReLU:
        return (h > 0).to(h.dtype)
    if kind is nn.LeakyReLU:
        k = float(candidate.negative_slope)
        return torch.where(h > 0, torch.ones_like(h), torch.full_like(h, k))
    if kind is nn.Sigmoid:
        s = torch.sigmoid(h)
        return s * (1 - s)
    if kind is nn.Tanh:
        return 1 - torch.tanh(h).square()
    if kind is nn.Identity:
        return torch.ones_like(h)
    return None


def _elementwise_derivative(candidate: nn.Module, h: torch.Tensor, *, detach: bool) -> torch.Tensor:
    """``φ'(h)`` elementwise: closed form for the basis candidates, autograd for any other
    elementwise module (exact either way)."""
    closed = _closed_form_derivative(candidate, h.detach() if detach else h)
    if closed is not None:
        return closed
    with torch.enable_grad():
        if detach or not h.requires_grad:
            x = h.detach().requires_grad_(True)
            (d,) = torch.autograd.grad(candidate(x), x, torch.ones_like(x))
            return d.detach()
        (d,) = torch.autograd.grad(candidate(h), h, torch.ones_like(h), create_graph=True)
        return d


_NORM_TYPES = (nn.ReLU, nn.LeakyReLU, nn.Sigmoid, nn.Tanh, nn.Identity)


def _fused_gradient_norms(h: torch.Tensor, candidates: Sequence[nn.Module] | nn.ModuleList) -> torch.Tensor | None:
    """:func:`mean_gradient_norms` from one pass of the fused kernel when every candidate is a
    basis candidate (else None): ``‖relu'‖² = #{h > 0}``, ``‖leaky_k'‖² = #{h > 0} + k²·#{h ≤ 0}``,
    ``‖id'‖² = D`` and the kernel's sums of ``σ'²`` and ``tanh'²`` (per sample, float64)."""
    if not all(type(c) in _NORM_TYPES for c in candidates):
        return None
    rows = h.shape[0]
    cols = h.numel() // rows
    sums = GRAD_NORM_SUMS(h.detach().reshape(rows, cols))  # (rows, 3) float64
    npos = sums[:, 0]
    norms = []
    for cand in candidates:
        kind = type(cand)
        if kind is nn.ReLU:
            sq = npos
        elif kind is nn.LeakyReLU:
            k = float(cand.negative_slope)
            sq = npos + (k * k) * (cols - npos)
        elif kind is nn.Sigmoid:
            sq = sums[:, 1]
        elif kind is nn.Tanh:
            sq = sums[:, 2]
        else:  # identity
            sq = torch.full_like(npos, float(cols))
        norms.append(sq.sqrt().mean())
    return torch.stack(norms).to(h.dtype)


def mean_gradient_norms(
    pre_activations: torch.Tensor,
    candidates: Sequence[nn.Module] | nn.ModuleList,
    *,
    detach: bool = True,
) -> torch.Tensor:
    """``ḡ_i``: batch mean of ``‖φ_i'(h_n)‖₂`` for each candidate ``φ_i`` (Eqs. 1-2).

    ``pre_activations`` has the batch on dim 0; the norm runs over all other dims of a sample
    (a 1-D tensor is a batch of scalars, so the norm is ``|φ_i'(h_n)|``). Returns shape ``(K,)``.
    """
    if not isinstance(pre_activations, torch.Tensor):
        raise TypeError(f"pre_activations must be a tensor, got {type(pre_activations).__name__}")
    if pre_activations.numel() == 0:
        raise ValueError("pre_activations is empty; run a forward pass on a non-empty batch first")
    if len(candidates) == 0:
        raise ValueError("need at least one candidate activation")
    h = pre_activations if pre_activations.dim() > 0 else pre_activations.reshape(1)
    if (detach or not h.requires_grad) and _fused(h):
        fused = _fused_gradient_norms(h, candidates)
        if fused is not None:
            return fused
    norms = []
    for candidate in candidates:
        d = _elementwise_derivative(candidate, h, detach=detach)
        norms.append(d.reshape(d.shape[0], -1).norm(dim=1).mean())
    return torch.stack(norms)


def pseudo_probabilities(mean_grad_norms: torch.Tensor, lam: float) -> torch.Tensor:
    """Eq. (2): ``p̃ = softmax(−ḡ/λ)``; larger gradients get smaller pseudo-probabilities."""
    _check("pseudo_probabilities", lam=lam)
    return torch.softmax(-mean_grad_norms / float(lam), dim=-1)


def kl_to_pseudo_probabilities(
    mean_grad_norms: torch.Tensor, logits: torch.Tensor, lam: float, *, direction: str = "forward"
) -> torch.Tensor:
    """Eq. (4) for one layer, in either direction (``p = softmax(logits)``, ``p̃`` of Eq. 2):

    * ``"forward"`` (as written in the paper, the default): ``KL(p̃ ‖ p) = Σ_k p̃_k (log p̃_k − log p_k)``,
      whose gradient in the logits is ``p − p̃``;
    * ``"reverse"``: ``KL(p ‖ p̃) = Σ_k p_k (log p_k − log p̃_k)``, whose gradient in the logits is
      ``p ⊙ (log p − log p̃ − KL)``; it vanishes where ``p_k → 0``, so it lets ``p`` commit to
      one candidate (mode-seeking) where the forward direction keeps every ``p_k`` near ``p̃_k``.

    Computed from log-probabilities (``log_target``), so it stays finite when some ``p̃_k`` or
    ``p_k`` underflow to zero.
    """
    _check("kl_to_pseudo_probabilities", lam=lam, kl_direction=direction)
    if mean_grad_norms.shape != logits.shape or logits.dim() != 1:
        raise ValueError(
            f"need one gradient norm per logit (1-D, same length); got {tuple(mean_grad_norms.shape)} "
            f"and {tuple(logits.shape)}"
        )
    return _kl(mean_grad_norms, logits, float(lam), direction)


def _kl(mean_grad_norms: torch.Tensor, logits: torch.Tensor, lam: float, direction: str) -> torch.Tensor:
    """:func:`kl_to_pseudo_probabilities` of arguments already checked where they entered."""
    log_p_tilde = torch.log_softmax(-mean_grad_norms.to(logits.dtype) / lam, dim=-1)
    log_p = torch.log_softmax(logits, dim=-1)
    if direction == "reverse":
        return F.kl_div(log_p_tilde, log_p, reduction="sum", log_target=True)
    return F.kl_div(log_p, log_p_tilde, reduction="sum", log_target=True)


def gradient_norm_regularizer(
    pre_activations: torch.Tensor,
    candidates: Sequence[nn.Module] | nn.ModuleList,
    logits: torch.Tensor,
    alpha: float,
    lam: float,
    *,
    detach: bool = True,
    direction: str = "forward",
) -> torch.Tensor:
    """``α · KL(p̃ ‖ softmax(logits))`` of one layer (Eqs. 1-4; readings in the module docstring);
    ``direction="reverse"``: ``α · KL(softmax(logits) ‖ p̃)`` (see :func:`kl_to_pseudo_probabilities`).

    ``alpha == 0`` returns an exact zero without evaluating anything (the regulariser is off).
    """
    _check("gradient_norm_regularizer", alpha=alpha, lam=lam, kl_direction=direction)
    if not isinstance(logits, torch.Tensor) or logits.dim() != 1 or logits.numel() != len(candidates):
        raise ValueError(f"logits must be a 1-D tensor with one entry per candidate ({len(candidates)})")
    return _layer_regularizer(pre_activations, candidates, logits, alpha, lam, detach=detach, direction=direction)


def _layer_regularizer(
    pre_activations: torch.Tensor,
    candidates: Sequence[nn.Module] | nn.ModuleList,
    logits: torch.Tensor,
    alpha: float,
    lam: float,
    *,
    detach: bool,
    direction: str,
) -> torch.Tensor:
    """:func:`gradient_norm_regularizer` without its checks, for a training step: the arguments were
    checked where they entered (:class:`~helpers.flexact.hook.FlexActHook`, for the whole run, and
    :class:`~helpers.flexact.activation.FlexAct`, one logit per candidate)."""
    alpha = float(alpha)
    if alpha == 0.0:
        return logits.new_zeros(())
    g_bar = mean_gradient_norms(pre_activations, candidates, detach=detach)
    return alpha * _kl(g_bar, logits, float(lam), direction)

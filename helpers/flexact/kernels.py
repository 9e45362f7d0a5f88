"""Flex-Act's basis mixture and its regulariser's derivative norms as fused kernels.

Every built-in candidate is a combination of the basis ``{relu, sigmoid, tanh, identity}``
(:func:`helpers.flexact.mixture.basis_split`), so a layer's output is
``c_relu·relu(h) + c_sig·σ(h) + c_tanh·tanh(h) + c_id·h`` with four coefficients ``c`` (a float32
tensor, so that a new Gumbel sample does not recompile). The formulas below run through
:class:`helpers.core.kernels.FusedKernel`: TorchInductor fuses each into one loop for large float32
tensors (``auto``), and the eager ATen version of :mod:`helpers.flexact.mixture` runs otherwise.
The four sums ``Σ g·b_r(h)`` that the logits' gradient needs are accumulated in float64.
"""

from __future__ import annotations

import torch

from helpers.core.kernels import FusedKernel


def _sigmoid_parts(h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``σ(h)``, ``σ'(h)`` and ``tanh'(h)``, relative-accurate in both tails: from ``e = exp(-|h|)``,
    which never overflows (``1 - σ`` and ``1 - tanh²`` would round to 0 for ``|h|`` > 17 or 9)."""
    e = torch.exp(-h.abs())
    inv = 1.0 / (1.0 + e)
    sig = torch.where(h >= 0, inv, e * inv)
    dsig = e * inv * inv
    q = 2.0 * e / (1.0 + e * e)
    return sig, dsig, q * q


def _term(c: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``c·b``, and exactly 0 for an unused basis function (no ``0·∞`` at ``h = ±∞``)."""
    return torch.where(c != 0, c * b, 0.0)


def _linear_part(h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """``c_relu·relu(h) + c_id·h`` as one slope per side (``c_relu + c_id`` for ``h > 0``, ``c_id``
    below), so a leaky slope > 1 (``c_relu < 0``) gives ``∞``, not ``∞ − ∞``, at ``h = ∞``."""
    return torch.where(h > 0, _term(c[0] + c[3], h), _term(c[3], h))


def _mix(h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    sig, _, _ = _sigmoid_parts(h)
    out = _linear_part(h, c) + _term(c[1], sig) + _term(c[2], torch.tanh(h))
    return torch.where(torch.isnan(h), h, out)  # NaN in, NaN out, whichever candidates are used


def _mix_derivative(h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """``Σ c_r b_r'(h)`` with relu'(0) = 0 as autograd has it, and NaN where ``h`` is NaN."""
    _, dsig, dtanh = _sigmoid_parts(h)
    d = torch.where(h > 0, c[0] + c[3], c[3]) + c[1] * dsig + c[2] * dtanh
    return torch.where(torch.isnan(h), h, d)


def _grad_h(g: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return g * _mix_derivative(h, c)


def _grad_h_and_sums(g: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    sig, _, _ = _sigmoid_parts(h)
    gd = g.double()
    sums = torch.stack(
        [
            (gd * torch.relu(h).double()).sum(),
            (gd * sig.double()).sum(),
            (gd * torch.tanh(h).double()).sum(),
            (gd * h.double()).sum(),
        ]
    )
    return g * _mix_derivative(h, c), sums


def _grad_norm_sums(h: torch.Tensor) -> torch.Tensor:
    """Per row of a 2-D ``h``: ``#{h > 0}``, ``Σ σ'(h)²`` and ``Σ tanh'(h)²`` (float64)."""
    _, dsig, dtanh = _sigmoid_parts(h)
    ds, dt = dsig.double(), dtanh.double()
    return torch.stack([(h > 0).double().sum(1), (ds * ds).sum(1), (dt * dt).sum(1)], dim=1)


MIX_FORWARD = FusedKernel("flexact", _mix)
MIX_GRAD_H = FusedKernel("flexact", _grad_h)
MIX_GRAD_H_SUMS = FusedKernel("flexact", _grad_h_and_sums)
GRAD_NORM_SUMS = FusedKernel("flexact", _grad_norm_sums)

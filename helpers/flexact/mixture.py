"""Flex-Act's candidates (:func:`resolve_candidates`) and their mixture ``Σ_j w_j φ_j(h)`` as one autograd node.

Every built-in candidate is a combination of the basis ``{relu, sigmoid, tanh, identity}``
(``leaky_relu_k = (1-k)·relu + k·identity``), so the mixture needs the four basis coefficients
only, whatever the number of candidates. :class:`_BasisMixture` mixes with given weights;
:class:`_SampledMixture` also draws the Gumbel-softmax sample inside the node. Large float32 CPU
tensors run the fused kernels of
:mod:`helpers.flexact.kernels` (one pass forward, one backward, only ``h`` saved), everything else
the eager ATen code below; the two agree to float32 rounding, not bit for bit (float64, e.g. for
``gradcheck``, other devices, small tensors and ``REPRO_KERNELS=eager`` run eager). Other candidates
(``lambda_gelu``, ``srelu``, any ``nn.Module``) are added by :meth:`FlexAct.mix` the ordinary way;
``benchmarks/activations.py`` measures the cost.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable

from helpers.core.provenance import note_backend
from helpers.core.registry import get_activation
from helpers.flexact.kernels import MIX_FORWARD, MIX_GRAD_H, MIX_GRAD_H_SUMS

# Basis of the fused path: every built-in candidate is a linear combination of these.
BASIS_ROWS: tuple[str, ...] = ("relu", "sigmoid", "tanh", "identity")


def resolve_candidates(
    candidates: Sequence[str | nn.Module] | Mapping[str, str | nn.Module],
) -> tuple[tuple[str, ...], list[nn.Module]]:
    """Names and modules of the candidate set (names resolved by the activation registry)."""
    if isinstance(candidates, (str, nn.Module)):
        raise TypeError(
            "candidates must be a sequence (or name->activation mapping) of activation names or "
            f"modules, got a single {type(candidates).__name__}; wrap it in a tuple"
        )
    items = list(candidates.items()) if isinstance(candidates, Mapping) else [(None, c) for c in candidates]
    if not items:
        raise ValueError("FlexAct needs at least one candidate activation, got an empty set")
    names: list[str] = []
    modules: list[nn.Module] = []
    for key, cand in items:
        if isinstance(cand, str):
            module = get_activation(cand)  # ValueError naming the registered ones if unknown
            if cand != cand.lower():  # "RELU" builds ReLU too, but would key another run
                raise ValueError(f"FlexAct candidate {cand!r} is not a registered name; use {cand.lower()!r}")
            name = cand
        elif isinstance(cand, nn.Module):
            module, name = cand, type(cand).__name__.lower()
        else:
            raise TypeError(f"a candidate must be an activation name or an nn.Module, got {type(cand).__name__}")
        if key is not None:
            if not isinstance(key, str) or not key:
                raise TypeError(f"candidate names must be non-empty strings, got {key!r}")
            name = key
        if getattr(module, "inplace", False):  # the candidates share one input tensor
            raise ValueError(f"candidate {name!r} is in-place; build it with inplace=False")
        names.append(name)
        modules.append(module)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(
            f"duplicate candidate names {duplicates}; pass a mapping such as "
            "{'srelu_0.1': SReLU(0.1), 'srelu_0.01': SReLU(0.01)} to name them apart"
        )
    return tuple(names), modules


def _basis_coordinates(module: nn.Module) -> dict[str, float] | None:
    """Coordinates of a candidate in :data:`BASIS_ROWS`, or None (exact types only: a subclass may
    change the function)."""
    kind = type(module)
    if kind is nn.LeakyReLU:
        k = float(module.negative_slope)
        return {"relu": 1.0 - k, "identity": k}  # max(h,0) + k·min(h,0) = (1-k)·relu(h) + k·h
    return {
        nn.ReLU: {"relu": 1.0},
        nn.Sigmoid: {"sigmoid": 1.0},
        nn.Tanh: {"tanh": 1.0},
        nn.Identity: {"identity": 1.0},
    }.get(kind)


def basis_split(
    modules: Sequence[nn.Module],
) -> tuple[tuple[int, ...], tuple[str, ...], tuple[tuple[float, ...], ...]]:
    """The indices of the candidates mixed the ordinary way, the basis rows the others use, and the
    ``(rows, K)`` map from selection weights to basis coefficients as exact Python floats (the
    mixture forms the coefficients on the host: fewer tiny tensor ops per call)."""
    coords = [_basis_coordinates(m) for m in modules]
    generic = tuple(i for i, c in enumerate(coords) if c is None)
    rows = tuple(r for r in BASIS_ROWS if any(c is not None and r in c for c in coords))
    basis = tuple(tuple(0.0 if c is None else c.get(r, 0.0) for c in coords) for r in rows)
    return generic, rows, basis


# Fused mixture of basis functions


def _flat(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(-1)


def _fused(h: torch.Tensor) -> bool:
    """Whether ``h`` goes through the fused kernels of :mod:`helpers.flexact.kernels` (large
    float32 CPU tensors; see :mod:`helpers.core.kernels`); the eager ATen code below otherwise."""
    fused = MIX_FORWARD.compiles(h.detach())
    if not fused:
        note_backend("flexact", "eager")  # the result's provenance (the kernels note their own)
    return fused


@functools.lru_cache(maxsize=64)
def _sparse_basis(
    basis: tuple[tuple[float, ...], ...],
) -> tuple[tuple[tuple[tuple[int, float], ...], ...], tuple[tuple[tuple[int, float], ...], ...]]:
    """The non-zero entries of ``basis`` by row ``(j, value)`` and by column ``(r, value)``."""
    by_row = tuple(tuple((j, b) for j, b in enumerate(row) if b != 0.0) for row in basis)
    by_col = tuple(tuple((r, row[j]) for r, row in enumerate(basis) if row[j] != 0.0) for j in range(len(basis[0])))
    return by_row, by_col


def _sparse_sums(entries: Sequence[Sequence[tuple[int, float]]], values: Sequence[float]) -> list[float]:
    """Per list of entries ``(i, b)``: ``Σ b·values[i]`` in Python floats (float64), skipping the zero
    entries (so an infinite value that an entry does not use cannot turn its sum into ``0·∞``)."""
    out = []
    for nonzero in entries:
        acc = 0.0
        for i, b in nonzero:
            acc += b * values[i]
        out.append(acc)
    return out


def _coefficients(basis: tuple[tuple[float, ...], ...], rows: tuple[str, ...], w: Sequence[float]) -> dict[str, float]:
    """Basis coefficients ``c_r = Σ_j basis[r][j]·w_j``."""
    return dict(zip(rows, _sparse_sums(_sparse_basis(basis)[0], w)))


def _weight_gradient(basis: tuple[tuple[float, ...], ...], sums: Sequence[float]) -> list[float]:
    """``∂L/∂w_j = Σ_r basis[r][j]·Σ g·b_r(h)``."""
    return _sparse_sums(_sparse_basis(basis)[1], sums)


def _mix_forward(ctx: Any, h: torch.Tensor, c: dict[str, float]) -> torch.Tensor:
    """``Σ_r c_r·b_r(h)``; saves what :func:`_mix_backward` needs on ``ctx``.

    Native (float32 CPU): one fused pass, saves ``h`` only. Eager: ``sigmoid``, ``tanh`` and
    ``leaky_relu`` kernels combined with in-place scaled adds, saves ``h``, ``σ(h)``, ``tanh(h)``.
    """
    ctx.coeffs = c
    if _fused(h):
        coeffs = (c.get("relu", 0.0), c.get("sigmoid", 0.0), c.get("tanh", 0.0), c.get("identity", 0.0))
        # a tensor (a new sample does not recompile) on h's device: a CPU tensor handed to the
        # kernel compiled for a GPU fails to launch ("CUDA driver error: invalid argument")
        ctx.native = torch.tensor(coeffs, dtype=h.dtype, device=h.device)
        ctx.save_for_backward(h)
        return MIX_FORWARD(h, ctx.native)
    ctx.native = None
    out: torch.Tensor | None = None
    s = t = None
    if "sigmoid" in c:
        s = torch.sigmoid(h)
        out = s * c["sigmoid"]
    if "tanh" in c:
        t = torch.tanh(h)
        out = t * c["tanh"] if out is None else out.add_(t, alpha=c["tanh"])
    cr, ci = c.get("relu", 0.0), c.get("identity", 0.0)
    if cr > 0 and ci > 0:
        # cr·relu(h) + ci·h = (cr+ci)·leaky_relu(h, ci/(cr+ci)): one kernel for both terms
        # (slope in [0, 1], so no cancellation)
        a = cr + ci
        piece = F.leaky_relu(h, ci / a)
        out = piece.mul_(a) if out is None else out.add_(piece, alpha=a)
    else:  # zero coefficients (hard samples) or negative ones (a leaky slope > 1)
        if cr != 0:
            out = torch.relu(h) * cr if out is None else out.add_(torch.relu(h), alpha=cr)
        if ci != 0:
            out = h * ci if out is None else out.add_(h, alpha=ci)
    if out is None:  # every coefficient is zero
        out = torch.zeros_like(h)
    ctx.save_for_backward(h, s, t)
    return out


def _mix_backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor | None, list[float] | list[torch.Tensor] | None]:
    """``∂L/∂h`` and the sums ``Σ g·b_r(h)`` in ``ctx.rows`` order (floats from the fused kernel,
    0-dim tensors from the eager path), each None where the node's first two inputs need none."""
    need_h, need_sums = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
    c: dict[str, float] = ctx.coeffs
    rows: tuple[str, ...] = ctx.rows
    if ctx.native is not None:
        (h,) = ctx.saved_tensors
        if not need_sums:
            return (MIX_GRAD_H(g, h, ctx.native) if need_h else None), None
        grad_h, sums = MIX_GRAD_H_SUMS(g, h, ctx.native)
        by_row = dict(zip(BASIS_ROWS, sums.tolist()))
        return (grad_h if need_h else None), [by_row[r] for r in rows]
    h, s, t = ctx.saved_tensors
    aten = torch.ops.aten
    grad_h: torch.Tensor | None = None
    sums: dict[str, torch.Tensor] = {}

    def accumulate(term: torch.Tensor, coef: float) -> None:
        nonlocal grad_h
        grad_h = term.mul_(coef) if grad_h is None else grad_h.add_(term, alpha=coef)

    if "sigmoid" in c:
        if need_sums:
            sums["sigmoid"] = torch.dot(_flat(g), _flat(s))  # ∂L/∂c = Σ g·σ(h)
        if need_h:
            accumulate(aten.sigmoid_backward(g, s), c["sigmoid"])
    if "tanh" in c:
        if need_sums:
            sums["tanh"] = torch.dot(_flat(g), _flat(t))
        if need_h:
            accumulate(aten.tanh_backward(g, t), c["tanh"])
    if "relu" in c:
        q = aten.threshold_backward(g, h, 0)  # g·[h > 0]
        if need_sums:
            sums["relu"] = torch.dot(_flat(q), _flat(h))  # Σ g·relu(h)
        if need_h:
            accumulate(q, c["relu"])
    if "identity" in c:
        if need_sums:
            sums["identity"] = torch.dot(_flat(g), _flat(h))
        if need_h:
            grad_h = g * c["identity"] if grad_h is None else grad_h.add_(g, alpha=c["identity"])
    if need_h and grad_h is None:
        grad_h = torch.zeros_like(h)
    return (grad_h if need_h else None), ([sums[r] for r in rows] if need_sums else None)


def _weight_gradient_tensor(
    basis: tuple[tuple[float, ...], ...],
    sums: list[float] | list[torch.Tensor],
    dtype: torch.dtype,
    device: torch.device,
) -> torch.Tensor:
    """:func:`_weight_gradient` as a tensor of ``dtype`` on ``device``."""
    if not isinstance(sums[0], torch.Tensor):
        return torch.tensor(_weight_gradient(basis, sums), dtype=dtype, device=device)  # type: ignore[arg-type]
    grad_c = torch.stack(sums)  # type: ignore[arg-type]
    b = torch.tensor(basis, dtype=grad_c.dtype, device=grad_c.device)  # (rows, K)
    return torch.where(b != 0, b * grad_c[:, None], 0.0).sum(0).to(dtype)  # no 0·∞


class _BasisMixture(torch.autograd.Function):
    """``out = Σ_r c_r·b_r(h)``, ``c = basis @ weights``, ``b_r`` in {relu, sigmoid, tanh, identity}.

    One autograd node instead of one per candidate. ``basis`` is a tuple of rows (one per entry of
    ``rows``, exact float64 values); the coefficients are formed in Python floats (one host sync).
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx, h: torch.Tensor, weights: torch.Tensor, basis: tuple[tuple[float, ...], ...], rows: tuple[str, ...]
    ) -> torch.Tensor:
        ctx.rows, ctx.basis = rows, basis
        ctx.w_dtype, ctx.w_device = weights.dtype, weights.device
        w = weights.detach().tolist()  # a host sync on GPU; this path is tuned for the CPU
        return _mix_forward(ctx, h, _coefficients(basis, rows, w))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out: torch.Tensor):  # type: ignore[override]
        grad_h, sums = _mix_backward(ctx, grad_out)
        grad_w = None if sums is None else _weight_gradient_tensor(ctx.basis, sums, ctx.w_dtype, ctx.w_device)
        return grad_h, grad_w, None, None


class _SampledMixture(torch.autograd.Function):
    """One Gumbel-softmax sample of the weights and the basis mixture in one autograd node.

    The noise is drawn exactly as :func:`torch.nn.functional.gumbel_softmax` draws it (same
    generator calls), the softmax over the few candidates is done in Python floats (float64),
    and ``∂L/∂logits = y ⊙ (∂L/∂w − ⟨y, ∂L/∂w⟩)/τ`` with the soft sample ``y`` (also for
    ``hard=True``: the straight-through estimator). This saves the dozen tiny tensor ops of a
    separate sampling graph, which cost as much as the mixture itself for 10^4-10^5 elements.
    ``box`` receives the weights used in the forward pass (for :attr:`FlexAct.last_weights`).
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx,
        h: torch.Tensor,
        logits: torch.Tensor,
        tau: float,
        hard: bool,
        basis: tuple[tuple[float, ...], ...],
        rows: tuple[str, ...],
        box: list,
    ) -> torch.Tensor:
        draws = torch.empty_like(logits, memory_format=torch.legacy_contiguous_format).exponential_().tolist()
        z = [(lg + (-math.log(e) if e > 0.0 else math.inf)) / tau for lg, e in zip(logits.tolist(), draws)]
        top = max(z)
        ex = [math.exp(v - top) for v in z]
        total = sum(ex)
        y = [v / total for v in ex]
        if hard:
            k = max(range(len(y)), key=y.__getitem__)  # first maximum, as torch's argmax
            w = [0.0] * len(y)
            w[k] = 1.0
        else:
            w = y
        box.append(w)
        ctx.rows, ctx.basis, ctx.y, ctx.tau = rows, basis, y, tau
        ctx.l_dtype, ctx.l_device = logits.dtype, logits.device
        return _mix_forward(ctx, h, _coefficients(basis, rows, w))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out: torch.Tensor):  # type: ignore[override]
        grad_h, sums = _mix_backward(ctx, grad_out)
        grad_l = None
        if sums is not None:
            y, tau = ctx.y, ctx.tau
            if isinstance(sums[0], torch.Tensor):
                gw = _weight_gradient_tensor(ctx.basis, sums, ctx.l_dtype, ctx.l_device)
                yt = torch.tensor(y, dtype=gw.dtype, device=gw.device)
                grad_l = yt * (gw - (yt * gw).sum()) / tau
            else:
                gw = _weight_gradient(ctx.basis, sums)
                mean = sum(a * b for a, b in zip(y, gw))
                grad_l = torch.tensor(
                    [a * (b - mean) / tau for a, b in zip(y, gw)], dtype=ctx.l_dtype, device=ctx.l_device
                )
        return grad_h, grad_l, None, None, None, None, None

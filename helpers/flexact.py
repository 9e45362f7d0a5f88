"""Flex-Act: a layer that picks its activation from a candidate set with the Gumbel-softmax trick.

Paper: ``shared/papers/flex-act.txt`` (Flex-Act), Sections 3.2-3.3. The layer holds one vector
of trainable logits ``θ`` (one entry per candidate); during training it draws **one**
Gumbel-softmax sample ``y ~ GumbelSoftmax(θ, τ)`` per forward pass (shared by every element of the
batch, as in Section 3.2, where ``p_i`` belongs to the layer, not to a sample) and returns the
convex combination ``Σ_j y_j φ_j(h)``. With ``hard=True`` the sample is one-hot in the forward pass
and the soft sample's gradient is used in the backward pass (straight-through estimator).

In ``model.eval()`` the layer is deterministic: ``eval_mode="argmax"`` (default) applies only the
most probable candidate ``φ_{argmax θ}`` (this is what "the chosen activation" means and what the
reported test errors measure); ``eval_mode="expected"`` applies ``Σ_j softmax(θ)_j φ_j(h)``.

The gradient-norm regulariser (Eqs. 1-4) is :func:`gradient_norm_regularizer`; a layer exposes it
as :meth:`FlexAct.regularizer`, computed from the pre-activations of its last training forward pass.
Readings we chose where the paper is ambiguous or inconsistent (the notebook lists them too):

1. ``p`` in Eq. (4) is ``softmax(θ)``, the distribution the Gumbel sample is drawn from, not the
   noisy sample itself: a hard (one-hot) sample would make ``log p = -inf`` and the KL infinite,
   and a soft sample would make the target of the regulariser random.
2. The KL direction is the one written, ``KL(p̃ ‖ p) = Σ_k p̃_k log(p̃_k / p_k)`` (p̃ is the
   target), so ``∂(α KL)/∂θ = α (softmax(θ) − p̃)``.
3. "Gradient norm" (Eq. 1): the text says "with respect to the input" of the activation and the
   formula writes ``∇_x φ_i(h)``; we differentiate w.r.t. the pre-activation ``h`` (not the
   network input ``x``). Because ``φ_i`` acts elementwise, that gradient is the vector
   ``φ_i'(h_n)`` of sample ``n``; ``g_{i,n} = ‖φ_i'(h_n)‖₂`` over the features of the sample and
   ``ḡ_i`` is its mean over the batch (Eq. 2's "average gradient norm over the batch"). The L2
   norm grows like ``sqrt(width)``, so a good ``λ`` depends on the layer width; the paper gives
   no value of ``λ``.
4. ``ḡ`` is detached by default (``p̃`` is called a *pseudo-label*, i.e. a target): the
   regulariser then trains only the logits. ``detach=False`` lets it also act on the weights
   that produce ``h`` (through ``φ''``).
5. The outer sum of Eq. (4) runs over the ``N`` Flex-Act layers (the index ``i`` is overloaded:
   candidate index in Eqs. 1-2, layer index in Eq. 4; ``K`` and ``p`` both name the number of
   candidates). :class:`FlexActHook` sums ``α·KL`` over every Flex-Act module of a model.
6. Section 3.1 treats ``π`` as probabilities (samples use ``log π``), Section 3.2 calls ``π``
   "the logits" and still writes ``GumbelSoftmax(log π, τ)``. We train unconstrained logits
   ``θ``; since softmax is shift-invariant, ``θ = log π + const`` and both readings agree.

Speed: the candidates ``relu``, ``leaky_relu``, ``sigmoid``, ``tanh`` and ``identity`` are spanned
by the basis ``{relu, sigmoid, tanh, identity}`` (``leaky_relu_k = (1-k)·relu + k·identity``), so the
mixture is one custom autograd node instead of one autograd graph per candidate; adding a
candidate that maps onto the basis costs nothing extra. In training, when every candidate maps
onto the basis, the Gumbel-softmax sample is drawn inside that node too (:class:`_SampledMixture`:
same noise draws as ``F.gumbel_softmax``, softmax over the few candidates in Python floats), which
saves a dozen tiny tensor ops per call. Float32 CPU tensors go through fused kernels compiled on
first use (:mod:`helpers._native_flexact`: one pass forward, one pass backward for ``∂L/∂h`` and
the four basis sums, only ``h`` saved; sums deterministic for any thread count), as does the
regulariser's :func:`mean_gradient_norms` for basis candidates (one pass instead of one derivative
and one norm per candidate). Everything else (float64, e.g. for ``gradcheck``; other devices; no C
compiler) uses eager ATen kernels. Choose with :func:`set_backend` or the environment variable
``REPRO_FLEXACT_BACKEND`` = ``auto`` (default) | ``native`` | ``eager``; the two backends agree to
float32 rounding (a few ulp against float64), not bit for bit. Other candidates (``lambda_gelu``,
``srelu``, any ``nn.Module``) are added to the basis mixture the ordinary way. In eval/argmax mode
only the chosen candidate runs. Measured with ``benchmarks/activations.py`` (training-mode
forward+backward of the default set, sampling included, vs ``nn.GELU``, float32, 2 threads, on
this project's 2-core CPU at load 0.5; the record is ``benchmarks/activations_measured.txt``):
1.29x at 4·10^6 elements and 1.48x at 65 536 (under load 2-3 from two training processes:
1.2-1.45x and 1.9-2.0x); the eager ATen version measured 5.9x and 3.3x. At 65 536 elements about
40% of the time is the Python and autograd overhead of the custom node (two leaves: ``h`` and
the logits), not the kernels. The fused :func:`mean_gradient_norms` of a 128×256 batch took about
80 µs against 355 µs for the per-candidate version (same load).

``helpers.activations`` imports this module, so ``get_activation`` is imported lazily inside
functions here (a top-level import would be circular).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.function import once_differentiable

from helpers import _native_flexact as _native
from helpers.provenance import note_backend
from helpers.train import TrainHook

__all__ = [
    "DEFAULT_CANDIDATES",
    "FlexAct",
    "FlexActHook",
    "TemperatureSchedule",
    "flexact_modules",
    "get_backend",
    "gradient_norm_regularizer",
    "kl_to_pseudo_probabilities",
    "mean_gradient_norms",
    "pseudo_probabilities",
    "set_backend",
]

DEFAULT_CANDIDATES: tuple[str, ...] = ("relu", "sigmoid", "tanh", "leaky_relu", "identity")
EvalMode = Literal["argmax", "expected"]
_EVAL_MODES: tuple[str, ...] = ("argmax", "expected")

# Basis of the fused path: every built-in candidate is a linear combination of these.
_BASIS_ROWS: tuple[str, ...] = ("relu", "sigmoid", "tanh", "identity")

Backend = Literal["auto", "native", "eager"]
_BACKENDS: tuple[str, ...] = ("auto", "native", "eager")
_backend: str = os.environ.get("REPRO_FLEXACT_BACKEND", "auto").strip().lower() or "auto"
if _backend not in _BACKENDS:
    raise ValueError(f"REPRO_FLEXACT_BACKEND must be one of {_BACKENDS}, got {_backend!r}")


def set_backend(name: Backend) -> None:
    """Choose the kernels of the basis mixture: ``"native"`` (compiled, float32 CPU; error if
    unavailable), ``"eager"`` (ATen ops only) or ``"auto"`` (native when it loads, else eager)."""
    global _backend
    if name not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {name!r}")
    if name == "native" and not _native.available():
        raise RuntimeError(f"native Flex-Act kernel unavailable: {_native.unavailable_reason()}")
    _backend = name


def get_backend() -> str:
    """The backend float32 CPU tensors will use now: ``"native"`` or ``"eager"``."""
    if _backend == "eager":
        return "eager"
    return "native" if _native.available() else "eager"


# --------------------------------------------------------------------------------------------
# Input validation shared by the module, the functional regulariser and the hook
# --------------------------------------------------------------------------------------------


def _check_positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _check_alpha(alpha: object) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}")
    if not math.isfinite(alpha) or alpha < 0:
        raise ValueError(f"alpha (weight of the KL term) must be finite and >= 0, got {alpha!r}")
    return float(alpha)


def _resolve_candidates(
    candidates: Sequence[str | nn.Module] | Mapping[str, str | nn.Module],
) -> tuple[tuple[str, ...], list[nn.Module]]:
    """Names and modules of the candidate set (names resolved by the activation registry)."""
    from helpers.activations import get_activation  # lazy: helpers.activations imports us

    if isinstance(candidates, (str, nn.Module)):
        raise TypeError(
            "candidates must be a sequence (or name->activation mapping) of activation names or "
            f"modules, got a single {type(candidates).__name__}; wrap it in a tuple"
        )
    if isinstance(candidates, Mapping):
        items = list(candidates.items())
    elif isinstance(candidates, Iterable):
        items = [(None, c) for c in candidates]
    else:
        raise TypeError(f"candidates must be a sequence or mapping, got {type(candidates).__name__}")
    if not items:
        raise ValueError("FlexAct needs at least one candidate activation, got an empty set")
    names: list[str] = []
    modules: list[nn.Module] = []
    for key, cand in items:
        if isinstance(cand, str):
            module = get_activation(cand)  # ValueError naming the registered ones if unknown
            name = cand.lower()
        elif isinstance(cand, nn.Module):
            module = cand
            name = type(cand).__name__.lower()
        else:
            raise TypeError(
                f"a candidate must be an activation name or an nn.Module, got {type(cand).__name__}"
            )
        if key is not None:
            if not isinstance(key, str) or not key:
                raise TypeError(f"candidate names must be non-empty strings, got {key!r}")
            name = key
        if getattr(module, "inplace", False):
            # The candidates share one input tensor; an in-place one would overwrite it.
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
    """Coordinates of a candidate in the basis {relu, sigmoid, tanh, identity}, or None.

    Exact types only: a subclass may change the function.
    """
    kind = type(module)
    if kind is nn.ReLU:
        return {"relu": 1.0}
    if kind is nn.Sigmoid:
        return {"sigmoid": 1.0}
    if kind is nn.Tanh:
        return {"tanh": 1.0}
    if kind is nn.Identity:
        return {"identity": 1.0}
    if kind is nn.LeakyReLU:
        k = float(module.negative_slope)
        return {"relu": 1.0 - k, "identity": k}  # max(h,0) + k·min(h,0) = (1-k)·relu(h) + k·h
    return None


# --------------------------------------------------------------------------------------------
# Fused mixture of basis functions
# --------------------------------------------------------------------------------------------


def _flat(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(-1)


def _use_native(h: torch.Tensor) -> bool:
    """Whether ``h`` goes through the compiled kernels (float32 CPU, backend not ``eager``)."""
    native = (_backend != "eager" and h.dtype == torch.float32 and h.device.type == "cpu"
              and h.numel() > 0 and _native.available())
    note_backend("flexact", "native" if native else "eager")  # the result's provenance
    return native


@functools.lru_cache(maxsize=64)
def _sparse_basis(basis: tuple[tuple[float, ...], ...]) -> tuple[tuple[tuple[tuple[int, float], ...], ...],
                                                                 tuple[tuple[tuple[int, float], ...], ...]]:
    """The non-zero entries of ``basis`` by row ``(j, value)`` and by column ``(r, value)``."""
    by_row = tuple(tuple((j, b) for j, b in enumerate(row) if b != 0.0) for row in basis)
    by_col = tuple(tuple((r, row[j]) for r, row in enumerate(basis) if row[j] != 0.0) for j in range(len(basis[0])))
    return by_row, by_col


def _coefficients(basis: tuple[tuple[float, ...], ...], rows: tuple[str, ...], w: Sequence[float]) -> dict[str, float]:
    """Basis coefficients ``c_r = Σ_j basis[r][j]·w_j`` as Python floats (float64 arithmetic)."""
    out = {}
    for r, nonzero in zip(rows, _sparse_basis(basis)[0]):
        acc = 0.0
        for j, b in nonzero:
            acc += b * w[j]
        out[r] = acc
    return out


def _weight_gradient(basis: tuple[tuple[float, ...], ...], sums: Sequence[float]) -> list[float]:
    """``∂L/∂w_j = Σ_r basis[r][j]·Σ g·b_r(h)``, skipping zero entries (so an infinite sum of
    a basis function that candidate ``j`` does not use cannot turn its gradient into ``0·∞``)."""
    out = []
    for nonzero in _sparse_basis(basis)[1]:
        acc = 0.0
        for r, b in nonzero:
            acc += b * sums[r]
        out.append(acc)
    return out


def _mix_forward(ctx: Any, h: torch.Tensor, c: dict[str, float]) -> torch.Tensor:
    """``Σ_r c_r·b_r(h)``; saves what :func:`_mix_backward` needs on ``ctx``.

    Native (float32 CPU): one fused pass, saves ``h`` only. Eager: ``sigmoid``, ``tanh`` and
    ``leaky_relu`` kernels combined with in-place scaled adds, saves ``h``, ``σ(h)``, ``tanh(h)``.
    """
    ctx.coeffs = c
    if _use_native(h):
        h = h.contiguous()
        coeffs = (c.get("relu", 0.0), c.get("sigmoid", 0.0), c.get("tanh", 0.0), c.get("identity", 0.0))
        ctx.native = coeffs
        ctx.save_for_backward(h)
        return _native.forward(h, coeffs)
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


def _mix_backward(ctx: Any, g: torch.Tensor, rows: tuple[str, ...], need_h: bool, need_sums: bool
                  ) -> tuple[torch.Tensor | None, list[float] | list[torch.Tensor] | None]:
    """``∂L/∂h`` and the sums ``Σ g·b_r(h)`` in ``rows`` order (floats from the native kernel,
    0-dim tensors from the eager path)."""
    c: dict[str, float] = ctx.coeffs
    if ctx.native is not None:
        (h,) = ctx.saved_tensors
        grad_h, all_sums = _native.backward(g, h, ctx.native, need_sums)
        if not need_sums:
            return grad_h, None
        assert all_sums is not None
        by_row = dict(zip(_BASIS_ROWS, all_sums))
        return grad_h, [by_row[r] for r in rows]
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
    return grad_h, ([sums[r] for r in rows] if need_sums else None)


def _weight_gradient_tensor(basis: tuple[tuple[float, ...], ...], sums: list[float] | list[torch.Tensor],
                            dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """:func:`_weight_gradient` as a tensor of ``dtype`` on ``device``."""
    if not isinstance(sums[0], torch.Tensor):
        return torch.tensor(_weight_gradient(basis, sums), dtype=dtype, device=device)  # type: ignore[arg-type]
    grad_c = torch.stack(sums)  # type: ignore[arg-type]
    b = torch.tensor(basis, dtype=grad_c.dtype, device=grad_c.device)  # (rows, K)
    return torch.where(b != 0, b * grad_c[:, None], 0.0).sum(0).to(dtype)  # no 0·∞


class _BasisMixture(torch.autograd.Function):
    """``out = Σ_r c_r·b_r(h)``, ``c = basis @ weights``, ``b_r`` in {relu, sigmoid, tanh, identity}.

    One autograd node instead of one per candidate; the cost does not grow with the number of
    candidates that map onto the basis. ``basis`` is a tuple of rows (one per entry of ``rows``,
    exact float64 values); the coefficients are formed in Python floats (one host sync).
    Float32 CPU tensors use the fused kernels of :mod:`helpers._native_flexact`, everything else
    eager ATen kernels (:func:`_mix_forward`).
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
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        grad_h, sums = _mix_backward(ctx, grad_out, ctx.rows, need_h, need_w)
        grad_w = _weight_gradient_tensor(ctx.basis, sums, ctx.w_dtype, ctx.w_device) if need_w else None
        return (grad_h if need_h else None), grad_w, None, None


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
        ctx, h: torch.Tensor, logits: torch.Tensor, tau: float, hard: bool,
        basis: tuple[tuple[float, ...], ...], rows: tuple[str, ...], box: list,
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
        need_h, need_l = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        grad_h, sums = _mix_backward(ctx, grad_out, ctx.rows, need_h, need_l)
        grad_l = None
        if need_l:
            y, tau = ctx.y, ctx.tau
            if isinstance(sums[0], torch.Tensor):
                gw = _weight_gradient_tensor(ctx.basis, sums, ctx.l_dtype, ctx.l_device)
                yt = torch.tensor(y, dtype=gw.dtype, device=gw.device)
                grad_l = yt * (gw - (yt * gw).sum()) / tau
            else:
                gw = _weight_gradient(ctx.basis, sums)
                mean = sum(a * b for a, b in zip(y, gw))
                grad_l = torch.tensor([a * (b - mean) / tau for a, b in zip(y, gw)],
                                      dtype=ctx.l_dtype, device=ctx.l_device)
        return (grad_h if need_h else None), grad_l, None, None, None, None, None


# --------------------------------------------------------------------------------------------
# Regulariser (Eqs. 1-4)
# --------------------------------------------------------------------------------------------


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


def _elementwise_derivative(
    candidate: nn.Module, h: torch.Tensor, *, detach: bool
) -> torch.Tensor:
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
    """:func:`mean_gradient_norms` from one pass of the native kernel when every candidate is a
    basis candidate (else None): ``‖relu'‖² = #{h > 0}``, ``‖leaky_k'‖² = #{h > 0} + k²·#{h ≤ 0}``,
    ``‖id'‖² = D`` and the kernel's sums of ``σ'²`` and ``tanh'²`` (per sample, float64)."""
    if not all(type(c) in _NORM_TYPES for c in candidates):
        return None
    rows = h.shape[0]
    cols = h.numel() // rows
    sums = _native.grad_norm_sums(h.detach().contiguous(), rows)  # (rows, 3) float64
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
    if (detach or not h.requires_grad) and _use_native(h):
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
    lam = _check_positive("lam (λ, the softmax scale of Eq. 2)", lam)
    return torch.softmax(-mean_grad_norms / lam, dim=-1)


def kl_to_pseudo_probabilities(
    mean_grad_norms: torch.Tensor, logits: torch.Tensor, lam: float
) -> torch.Tensor:
    """Eq. (4) for one layer: ``KL(p̃ ‖ softmax(logits)) = Σ_k p̃_k (log p̃_k − log p_k)``.

    Computed from log-probabilities (``log_target``), so it stays finite when some ``p̃_k`` or
    ``p_k`` underflow to zero.
    """
    lam = _check_positive("lam (λ, the softmax scale of Eq. 2)", lam)
    if mean_grad_norms.shape != logits.shape or logits.dim() != 1:
        raise ValueError(
            f"need one gradient norm per logit (1-D, same length); got {tuple(mean_grad_norms.shape)} "
            f"and {tuple(logits.shape)}"
        )
    log_p_tilde = torch.log_softmax(-mean_grad_norms.to(logits.dtype) / lam, dim=-1)
    log_p = torch.log_softmax(logits, dim=-1)
    return F.kl_div(log_p, log_p_tilde, reduction="sum", log_target=True)


def gradient_norm_regularizer(
    pre_activations: torch.Tensor,
    candidates: Sequence[nn.Module] | nn.ModuleList,
    logits: torch.Tensor,
    alpha: float,
    lam: float,
    *,
    detach: bool = True,
) -> torch.Tensor:
    """``α · KL(p̃ ‖ softmax(logits))`` of one layer (Eqs. 1-4; readings in the module docstring).

    ``alpha == 0`` returns an exact zero without evaluating anything (the regulariser is off).
    """
    alpha = _check_alpha(alpha)
    _check_positive("lam (λ, the softmax scale of Eq. 2)", lam)
    if not isinstance(logits, torch.Tensor) or logits.dim() != 1 or logits.numel() != len(candidates):
        raise ValueError(f"logits must be a 1-D tensor with one entry per candidate ({len(candidates)})")
    if alpha == 0.0:
        return logits.new_zeros(())
    g_bar = mean_gradient_norms(pre_activations, candidates, detach=detach)
    return alpha * kl_to_pseudo_probabilities(g_bar, logits, lam)


# --------------------------------------------------------------------------------------------
# The module
# --------------------------------------------------------------------------------------------


class FlexAct(nn.Module):
    """Activation chosen among ``candidates`` by trainable logits and Gumbel-softmax sampling.

    Args:
        candidates: activation names of :func:`helpers.activations.get_activation` (e.g. ``"relu"``,
            ``"lambda_gelu"``, ``"srelu"``), ``nn.Module`` instances, or a ``{name: name_or_module}``
            mapping. Default: ReLU, Sigmoid, Tanh, LeakyReLU (slope 0.01), Identity (Section 3).
        tau: Gumbel-softmax temperature (> 0); a :class:`TemperatureSchedule` driven by
            :class:`FlexActHook` anneals it during training.
        hard: straight-through one-hot samples in training (forward uses a single candidate).
        eval_mode: ``"argmax"`` (default, apply only the most probable candidate) or
            ``"expected"`` (mix with ``softmax(logits)``) when the module is in eval mode.
        init_logits: optional initial logits (default zeros: uniform selection probabilities).

    After training, :meth:`probabilities` and :attr:`chosen_activation` say what was picked.
    """

    def __init__(
        self,
        candidates: Sequence[str | nn.Module] | Mapping[str, str | nn.Module] = DEFAULT_CANDIDATES,
        tau: float = 1.0,
        hard: bool = False,
        eval_mode: EvalMode = "argmax",
        init_logits: Sequence[float] | torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        names, modules = _resolve_candidates(candidates)
        if not isinstance(hard, bool):
            raise TypeError(f"hard must be a bool, got {type(hard).__name__}")
        self.names: tuple[str, ...] = names
        self.candidates = nn.ModuleList(modules)
        self.hard = hard
        self.eval_mode = eval_mode  # validated by the property setters
        self.tau = tau
        k = len(names)
        if init_logits is None:
            init = torch.zeros(k)
        else:
            init = torch.as_tensor(init_logits, dtype=torch.get_default_dtype()).clone()
            if init.shape != (k,) or not torch.isfinite(init).all():
                raise ValueError(f"init_logits must be {k} finite numbers, got {init_logits!r}")
        self.logits = nn.Parameter(init)

        # Split candidates into the fused basis part and the generic rest.
        coords = [_basis_coordinates(m) for m in modules]
        self._generic: tuple[int, ...] = tuple(i for i, c in enumerate(coords) if c is None)
        fused = [i for i, c in enumerate(coords) if c is not None]
        rows = tuple(r for r in _BASIS_ROWS if any(r in coords[i] for i in fused))
        self._rows: tuple[str, ...] = rows
        # (len(rows), K) map from selection weights to basis coefficients, as exact Python floats
        # (the mixture forms the coefficients on the host: fewer tiny tensor ops per call).
        basis = [[0.0] * k for _ in rows]
        for i in fused:
            for name, value in coords[i].items():
                basis[rows.index(name)][i] = value
        self._basis: tuple[tuple[float, ...], ...] = tuple(tuple(row) for row in basis)
        self._has_fused = bool(fused)
        self._last_pre_activations: torch.Tensor | None = None
        self._last_weights: torch.Tensor | list[float] | None = None

    # -- temperature ------------------------------------------------------------------------
    @property
    def tau(self) -> float:
        """Gumbel-softmax temperature (> 0)."""
        return self._tau

    @tau.setter
    def tau(self, value: float) -> None:
        self._tau = _check_positive("tau (Gumbel-softmax temperature)", value)

    @property
    def eval_mode(self) -> str:
        """What eval mode applies: ``"argmax"`` (the chosen candidate) or ``"expected"``."""
        return self._eval_mode

    @eval_mode.setter
    def eval_mode(self, value: str) -> None:
        if value not in _EVAL_MODES:
            raise ValueError(f"eval_mode must be one of {_EVAL_MODES}, got {value!r}")
        self._eval_mode = value

    # -- selection --------------------------------------------------------------------------
    def probabilities(self) -> torch.Tensor:
        """Selection probabilities ``softmax(logits)`` (detached)."""
        return torch.softmax(self.logits.detach(), dim=-1)

    def probabilities_dict(self) -> dict[str, float]:
        """``{candidate name: selection probability}``."""
        return dict(zip(self.names, self.probabilities().tolist()))

    @property
    def chosen_index(self) -> int:
        """Index of the most probable candidate (ties: the first)."""
        return int(torch.argmax(self.logits.detach()))

    @property
    def chosen_activation(self) -> str:
        """Name of the most probable candidate: what this layer has picked."""
        return self.names[self.chosen_index]

    def sample_weights(self) -> torch.Tensor:
        """One Gumbel-softmax sample of the mixing weights (torch's global RNG)."""
        return F.gumbel_softmax(self.logits, tau=self._tau, hard=self.hard)

    # -- forward ----------------------------------------------------------------------------
    def mix(self, h: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """``Σ_j weights_j · φ_j(h)`` (fused for basis candidates, autograd for the rest)."""
        out = None
        if self._has_fused:
            out = _BasisMixture.apply(h, weights, self._basis, self._rows)
        for i in self._generic:
            term = weights[i].to(h.dtype) * self.candidates[i](h)
            out = term if out is None else out + term
        return out

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if not isinstance(h, torch.Tensor):
            raise TypeError(f"FlexAct expects a tensor, got {type(h).__name__}")
        if not h.is_floating_point():
            raise TypeError(
                f"FlexAct expects a floating-point tensor, got {h.dtype} (the mixture of "
                "activations is not defined for integer tensors; convert with h.float())"
            )
        if h.dtype not in (torch.float32, torch.float64):
            # half precision: the mixing weights and candidates run in float32, and only the
            # output is cast back (a float16 weight has 3 significant digits)
            return self.forward(h.to(torch.float32)).to(h.dtype)
        if not self.training:
            if self.eval_mode == "argmax":
                return self.candidates[self.chosen_index](h)
            weights = torch.softmax(self.logits, dim=-1)
        else:
            # Kept for the regulariser, which needs the training batch's pre-activations
            # (evaluation passes do not overwrite it). Plain attributes are written through
            # __dict__: nn.Module.__setattr__ costs microseconds, which count at 10^4 elements.
            self.__dict__["_last_pre_activations"] = h
            if self._has_fused and not self._generic:
                # sampling and mixing in one autograd node (see _SampledMixture)
                box: list[list[float]] = []
                out = _SampledMixture.apply(h, self.logits, self._tau, self.hard, self._basis, self._rows, box)
                self.__dict__["_last_weights"] = box[0]  # made a tensor when asked for
                return out
            weights = self.sample_weights()
        self.__dict__["_last_weights"] = weights.detach()
        return self.mix(h, weights)

    @property
    def last_weights(self) -> torch.Tensor | None:
        """The mixing weights of the last forward pass (detached; one-hot for ``hard=True`` in
        training), or None before the first one."""
        w = self._last_weights
        if isinstance(w, list):
            w = torch.tensor(w, dtype=self.logits.dtype, device=self.logits.device)
            self.__dict__["_last_weights"] = w
        return w

    # -- regulariser ------------------------------------------------------------------------
    @property
    def last_pre_activations(self) -> torch.Tensor | None:
        """The input of the last *training* forward pass (kept for the regulariser), or None."""
        return self._last_pre_activations

    def mean_gradient_norms(self, *, detach: bool = True) -> torch.Tensor:
        """``ḡ`` (Eq. 2) at the last forward's pre-activations."""
        return mean_gradient_norms(self._require_pre_activations(), self.candidates, detach=detach)

    def pseudo_probabilities(self, lam: float) -> torch.Tensor:
        """``p̃ = softmax(−ḡ/λ)`` (Eq. 2) at the last forward's pre-activations (detached)."""
        return pseudo_probabilities(self.mean_gradient_norms(), lam)

    def regularizer(self, alpha: float, lam: float, *, detach: bool = True) -> torch.Tensor:
        """``α·KL(p̃ ‖ softmax(logits))`` (Eqs. 3-4) at the last forward's pre-activations."""
        alpha = _check_alpha(alpha)
        _check_positive("lam (λ, the softmax scale of Eq. 2)", lam)
        if alpha == 0.0:
            return self.logits.new_zeros(())
        return gradient_norm_regularizer(
            self._require_pre_activations(), self.candidates, self.logits, alpha, lam, detach=detach
        )

    def _require_pre_activations(self) -> torch.Tensor:
        if self._last_pre_activations is None:
            raise RuntimeError(
                "FlexAct has no stored pre-activations: run a forward pass before asking for the "
                "regulariser or gradient norms"
            )
        return self._last_pre_activations

    def clear_pre_activations(self) -> None:
        """Drop the stored input (frees memory; the next forward stores a new one)."""
        self._last_pre_activations = None

    # -- copying / printing -----------------------------------------------------------------
    def __getstate__(self) -> dict:
        # A stored non-leaf tensor cannot be deep-copied or pickled; it is scratch state anyway.
        state = super().__getstate__()
        state["_last_pre_activations"] = None
        return state

    def extra_repr(self) -> str:
        return (
            f"candidates={list(self.names)}, tau={self._tau:g}, hard={self.hard}, "
            f"eval_mode={self.eval_mode!r}"
        )


def flexact_modules(model: nn.Module) -> dict[str, FlexAct]:
    """Every :class:`FlexAct` in ``model`` by qualified name (``"flexact"`` for the model itself)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    return {(name or "flexact"): m for name, m in model.named_modules() if isinstance(m, FlexAct)}


# --------------------------------------------------------------------------------------------
# Temperature schedule and training hook
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemperatureSchedule:
    """``τ(t)`` from ``tau_start`` to ``tau_min`` over ``total`` units (steps or epochs), then flat.

    ``kind``: ``"exponential"`` (``τ_start·(τ_min/τ_start)^(t/total)``), ``"linear"``, or
    ``"constant"`` (always ``tau_start``). The paper only says "as τ is annealed".
    """

    tau_start: float = 1.0
    tau_min: float = 0.1
    total: int = 1
    kind: Literal["exponential", "linear", "constant"] = "exponential"

    def __post_init__(self) -> None:
        _check_positive("tau_start", self.tau_start)
        _check_positive("tau_min", self.tau_min)
        if self.tau_min > self.tau_start:
            raise ValueError(f"tau_min ({self.tau_min}) must not exceed tau_start ({self.tau_start})")
        if isinstance(self.total, bool) or not isinstance(self.total, int) or self.total < 1:
            raise ValueError(f"total (number of steps/epochs to anneal over) must be an int >= 1, got {self.total!r}")
        if self.kind not in ("exponential", "linear", "constant"):
            raise ValueError(f"kind must be 'exponential', 'linear' or 'constant', got {self.kind!r}")

    def __call__(self, t: int) -> float:
        if isinstance(t, bool) or not isinstance(t, int) or t < 0:
            raise ValueError(f"schedule position must be an int >= 0, got {t!r}")
        frac = min(t / self.total, 1.0)
        if self.kind == "constant":
            return self.tau_start
        if self.kind == "linear":
            return self.tau_start + (self.tau_min - self.tau_start) * frac
        return self.tau_start * (self.tau_min / self.tau_start) ** frac


class FlexActHook(TrainHook):
    """Training hook (:class:`helpers.train.TrainHook`) for models with Flex-Act layers.

    * sets ``tau`` of every Flex-Act module from ``temperature_schedule`` before each step
      (``unit="step"``, 0-based global step) or each epoch (``unit="epoch"``, epoch 1 -> 0);
      without a schedule the modules keep their own ``tau``;
    * ``extra_loss``: ``α·Σ_layers KL(p̃ ‖ p)`` (Eqs. 3-4) at the batch just seen; ``None`` when
      ``alpha == 0``, so the regulariser is off and costs nothing;
    * ``epoch_record``: ``{"tau": τ, "flexact": {layer: row}}`` where ``row`` holds ``probs``
      (selection probabilities ``softmax(θ)`` at the end of the epoch), and ``grad_norms`` (ḡ),
      ``pseudo_probs`` (p̃) and ``kl`` at the epoch's last training batch (recorded for
      ``α = 0`` too, as a diagnostic), plus ``kl_mean`` over the epoch's steps when ``α > 0``.
    """

    def __init__(
        self,
        alpha: float,
        lam: float,
        temperature_schedule: TemperatureSchedule | None = None,
        *,
        unit: Literal["step", "epoch"] = "step",
        detach: bool = True,
    ) -> None:
        self.alpha = _check_alpha(alpha)
        self.lam = _check_positive("lam (λ, the softmax scale of Eq. 2)", lam)
        if temperature_schedule is not None and not isinstance(temperature_schedule, TemperatureSchedule):
            raise TypeError(
                f"temperature_schedule must be a TemperatureSchedule or None, got {type(temperature_schedule).__name__}"
            )
        if unit not in ("step", "epoch"):
            raise ValueError(f"unit must be 'step' or 'epoch', got {unit!r}")
        if not isinstance(detach, bool):
            raise TypeError(f"detach must be a bool, got {type(detach).__name__}")
        self.schedule = temperature_schedule
        self.unit = unit
        self.detach = detach
        self.tau: float | None = None
        self._kl_sum: dict[str, float] = {}
        self._kl_steps = 0
        self._cached_model: nn.Module | None = None
        self._cached_modules: dict[str, FlexAct] = {}

    def _modules(self, model: nn.Module) -> dict[str, FlexAct]:
        # Walking the module tree every step costs more than the step itself for tiny models;
        # the tree does not change during training, so walk it once per model.
        if self._cached_model is not model:
            self._cached_model, self._cached_modules = model, flexact_modules(model)
        return self._cached_modules

    def _set_tau(self, t: int, model: nn.Module) -> None:
        if self.schedule is None:
            return
        self.tau = self.schedule(t)
        for module in self._modules(model).values():
            module.tau = self.tau

    def on_epoch_start(self, epoch: int, model: nn.Module) -> None:
        self._kl_sum, self._kl_steps = {}, 0
        if self.unit == "epoch":
            self._set_tau(max(epoch - 1, 0), model)

    def on_step(self, step: int, model: nn.Module) -> None:
        if self.unit == "step":
            self._set_tau(step, model)

    def extra_loss(self, model: nn.Module) -> torch.Tensor | None:
        if self.alpha == 0.0:
            return None
        total: torch.Tensor | None = None
        for name, module in self._modules(model).items():
            if module.last_pre_activations is None:
                continue
            term = module.regularizer(self.alpha, self.lam, detach=self.detach)
            self._kl_sum[name] = self._kl_sum.get(name, 0.0) + float(term.detach()) / self.alpha
            total = term if total is None else total + term
        self._kl_steps += 1
        return total

    def epoch_record(self, model: nn.Module) -> dict[str, Any]:
        layers: dict[str, dict[str, Any]] = {}
        for name, module in self._modules(model).items():
            row: dict[str, Any] = {"probs": module.probabilities().tolist()}
            h = module.last_pre_activations
            if h is not None and h.numel():
                g_bar = mean_gradient_norms(h.detach(), module.candidates)
                row["grad_norms"] = g_bar.tolist()
                row["pseudo_probs"] = pseudo_probabilities(g_bar, self.lam).tolist()
                row["kl"] = float(kl_to_pseudo_probabilities(g_bar, module.logits.detach(), self.lam))
            if self._kl_steps and name in self._kl_sum:
                row["kl_mean"] = self._kl_sum[name] / self._kl_steps
            layers[name] = row
        tau = self.tau
        if tau is None and layers:
            tau = next(iter(self._modules(model).values())).tau
        return {"tau": tau, "flexact": layers}

    def state_dict(self) -> dict[str, Any]:
        return {"tau": self.tau}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.tau = state.get("tau")

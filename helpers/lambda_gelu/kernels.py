"""λ-GELU's forward and closed-form backward, and the autograd function that runs them.

``a(x; λ) = x Φ(λx)`` with

* ``∂a/∂x = Φ(λx) + λx φ(λx) = GELU'(λx)``,
* ``∂a/∂λ = x² φ(λx)``.

Each formula exists twice, with the same values to float32 rounding
(:class:`helpers.core.kernels.FusedKernel` picks one per call):

* the *fused* formula in plain torch ops, which TorchInductor compiles into one loop forward and
  one backward (``Φ`` through ``erf``, as ATen's GELU computes it; ``erfc`` would be exact deeper in
  the left tail, but Inductor does not vectorise it and it costs 3x);
* the *eager* formula through ATen's own GELU kernels, ``GELU(λx)/λ`` forward and
  ``gelu_backward(g, λx)`` for ``∂L/∂x``, the fewest passes over memory for small tensors, where
  every extra ATen call costs more than its arithmetic. There ``Σ g x² φ(λx)`` is formed as
  ``Σ (x/λ)·(∂L/∂x − g Φ(λx))``, which reuses ``∂L/∂x``.

Large λ. Nothing overflows for ``|λx|`` up to float32's range (~3e38): the gate saturates to
exactly 0 or 1 and ``x φ(λx)`` underflows to 0 (formed as ``x·φ``, never ``λx·φ`` = ∞·0); past it the
fused formula still gives ``x·Φ(±∞)``. ATen's vectorised GELU can overflow from ``|λx|`` ≈ 1.7e38
(seen: GELU(3e38) = inf for 3 or more elements on an AMD EPYC with AVX-512), so the eager one takes
``x·Φ(±∞)`` wherever ``|λx|`` ≥ :data:`GATE_SATURATED`.

The autograd function saves ``x`` and λ's parameter only and folds ``λ = 1 + softplus(s/t)`` in, in
Python floats when λ is one number (the paper's layerwise case).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from helpers.core.kernels import FusedKernel

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)

#: Beyond ``|z|`` = 5, float32 ``erf(z)`` is exactly ±1 (it is from 3.83 on, checked for every float32
#: in [2, 24) and both signs, eager and TorchInductor), so clamping there leaves the gate unchanged.
ERF_SATURATED: float = 5.0

#: ``φ(u) = exp(−u²/2)/√(2π)`` is below float32's smallest normal number (2^-126 ≈ 1.18e-38) from
#: ``u²`` ≈ 172.83 on; from this ``u²`` (φ < 3e-38) the fused formulas take ``φ(u)`` as 0 (see
#: :func:`_x_phi`), so that neither the exp nor the product with 1/√(2π) is subnormal.
PHI_FLUSH_U2: float = 172.8

#: From this ``|λx|`` on, the eager path takes ``Φ(λx)`` as exactly 0 or 1 instead of asking ATen's
#: GELU, whose vectorised kernel overflows from ~1.7e38 (float32 max / 2) on some CPUs.
GATE_SATURATED: float = 2.0**125


# ------------------------------------------------------------------------- fused formulas
def _gate(u: torch.Tensor) -> torch.Tensor:
    """``Φ(u)``, erf's argument clamped to ±:data:`ERF_SATURATED` (the same gate bit for bit) so that
    erf never forms a subnormal ``exp(−z²)``: subnormal arithmetic is ~10x slower on x86 (7 ms against
    2 ms a call on 2 M floats at λ = 160, Sapphire Rapids, one thread)."""
    return 0.5 + 0.5 * torch.erf((u * _INV_SQRT2).clamp(-ERF_SATURATED, ERF_SATURATED))


def _finite(x: torch.Tensor) -> torch.Tensor:
    """``x`` with ±∞ moved to the ends of its dtype's range, every finite value (and NaN) unchanged
    bit for bit: the factor ``x`` of a term whose other factor is 0 there (``x·φ(λx)``, ``x²φ(λx)``),
    so that ``x = ±∞`` gives that term's limit 0, never ``∞·0`` = NaN."""
    top = torch.finfo(x.dtype).max
    return x.clamp(-top, top)


def _x_phi(x: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """``x·φ(λx)``: 0 where ``λx`` or ``x`` is infinite (never ``∞·0``), and 0 from ``u² ≥``
    :data:`PHI_FLUSH_U2` (|u| ≳ 13.1), where φ would be subnormal."""
    u2 = u * u
    tail = torch.where(u2 >= PHI_FLUSH_U2, 0.0, torch.exp(-0.5 * u2.clamp(max=PHI_FLUSH_U2)))
    return _finite(x) * (tail * _INV_SQRT_2PI)


def _fused_forward(x: torch.Tensor, lam: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``x Φ(λx)`` and the gate ``Φ(λx)`` itself, saved for backward: the erf is the costly part
    of both passes (Inductor's is slower than ATen's GELU), so backward then needs only an exp."""
    gate = _gate(x * lam)
    return x.clamp(min=torch.finfo(x.dtype).min) * gate, gate  # x = −∞: the limit 0, not −∞·0


def _gated_grad_x(grad: torch.Tensor, x: torch.Tensor, lam: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    return grad * (gate + lam * _x_phi(x, x * lam))


def _gated_grad_x_lam(grad: torch.Tensor, x: torch.Tensor, lam: torch.Tensor, gate: torch.Tensor):
    xphi = _x_phi(x, x * lam)
    return grad * (gate + lam * xphi), (grad * _finite(x) * xphi).sum_to_size(lam.shape)


def _fused_grad_x(grad: torch.Tensor, x: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    u = x * lam
    return grad * (_gate(u) + lam * _x_phi(x, u))


def _fused_grad_x_lam(grad: torch.Tensor, x: torch.Tensor, lam: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    u = x * lam
    xphi = _x_phi(x, u)
    return grad * (_gate(u) + lam * xphi), (grad * _finite(x) * xphi).sum_to_size(lam.shape)


# ------------------------------------------------------------------------- eager formulas
def host_readable(t: torch.Tensor) -> bool:
    """Whether reading ``t``'s value in Python is cheap and allowed: on the CPU, outside
    ``torch.compile``. Reading a value off a GPU waits for its queue, and inside a compiled model
    it would break the graph (Dynamo cannot trace a Python float taken from a tensor)."""
    return t.device.type == "cpu" and not torch.compiler.is_compiling()


def _as_number(lam: torch.Tensor) -> float | torch.Tensor:
    """A one-element λ as a Python number where it can be read (a scalar operand costs no
    broadcast), else λ itself."""
    return float(lam) if lam.numel() == 1 and host_readable(lam) else lam


def _needs_overflow_fix(x: torch.Tensor, lam: float | torch.Tensor) -> bool:
    """Whether ``|λx|`` may reach :data:`GATE_SATURATED`: from one min/max pass over ``x`` on the CPU
    (for every λ: at λ = 5 an ``x`` of 1e38 already overflows); always assumed on other devices and in
    a compiled model (two more elementwise ops rather than a read of λ and x)."""
    if not host_readable(x):
        return True
    if x.numel() == 0:
        return False
    top = float(lam) if isinstance(lam, float) else float(lam.max())
    lo, hi = torch.aminmax(x)
    return not bool(torch.maximum(hi, -lo) * top < GATE_SATURATED)  # a NaN in x: assume it may


def _overflowed(x: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Where ``|λx|`` reached :data:`GATE_SATURATED` or overflowed, ``x = ±∞`` included: there
    ``Φ(λx)`` is exactly 0 or 1, so λ-GELU is ``relu(x)`` (its limits ∞ and 0 at ``x = ±∞``) with
    gradient 1 or 0. A NaN ``x`` is not included: it stays NaN."""
    return torch.abs(u) >= GATE_SATURATED


def _eager_forward_and_no_gate(x: torch.Tensor, lam: torch.Tensor) -> tuple[torch.Tensor, None]:
    return _eager_forward(x, lam), None  # eager backward recomputes what it needs from x


def _eager_forward(x: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    lam_v = _as_number(lam)
    u = x * lam_v
    y = F.gelu(u).div_(lam_v)
    if _needs_overflow_fix(x, lam_v):
        y = torch.where(_overflowed(x, u), torch.relu(x), y)
    return y


def _eager_grads(grad: torch.Tensor, x: torch.Tensor, lam: torch.Tensor, need_lam: bool):
    lam_v = _as_number(lam)
    u = x * lam_v
    gx = torch.ops.aten.gelu_backward(grad, u)  # grad·GELU'(λx)
    bad = _overflowed(x, u) if _needs_overflow_fix(x, lam_v) else None
    if bad is not None:  # GELU'(±∞) is 1 or 0; ATen returns ∞·0 = NaN there
        gx = torch.where(bad, grad * (u > 0).to(grad.dtype), gx)
    if not need_lam:
        return gx, None
    z = torch.addcmul(gx, grad, torch.special.ndtr(u), value=-1.0)  # = grad·λxφ(λx), from ∂L/∂x
    if bad is not None:  # x²φ(λx) is 0 there; x = ±∞ must not make it ∞·0
        z = torch.where(bad, 0.0, z)
        x = torch.where(bad, 0.0, x)
    if lam.numel() == 1:  # Σ x·z in one pass
        return gx, torch.vdot(z.reshape(-1), x.reshape(-1)).reshape(lam.shape) / lam
    return gx, (z * x).sum_to_size(lam.shape) / lam


def _eager_grad_x(grad: torch.Tensor, x: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    return _eager_grads(grad, x, lam, False)[0]


def _eager_grad_x_lam(grad: torch.Tensor, x: torch.Tensor, lam: torch.Tensor):
    return _eager_grads(grad, x, lam, True)


FORWARD = FusedKernel("lambda_gelu", _fused_forward, _eager_forward_and_no_gate)
GATED_GRAD_X = FusedKernel("lambda_gelu", _gated_grad_x)
GATED_GRAD_X_LAM = FusedKernel("lambda_gelu", _gated_grad_x_lam)
GRAD_X = FusedKernel("lambda_gelu", _fused_grad_x, _eager_grad_x)
GRAD_X_LAM = FusedKernel("lambda_gelu", _fused_grad_x_lam, _eager_grad_x_lam)


def _differentiable_grads(grad: torch.Tensor, x: torch.Tensor, lam: torch.Tensor, need_lam: bool):
    """Both gradients as differentiable torch ops (double backward, ``create_graph=True``)."""
    u = x * lam  # the exact formulas, unclamped: these run in float64 too (gradcheck)
    xphi = torch.where(torch.isinf(u), 0.0, x * (torch.exp(-0.5 * u * u) * _INV_SQRT_2PI))
    gx = grad * ((0.5 + 0.5 * torch.erf(u * _INV_SQRT2)) + lam * xphi)
    return gx, ((grad * _finite(x) * xphi).sum_to_size(lam.shape) if need_lam else None)


# ------------------------------------------------------------------------- autograd function
def _lambda_of(p: torch.Tensor, t: float | None, view: tuple[int, ...]) -> torch.Tensor:
    lam = p if t is None else 1.0 + F.softplus(p / t)
    return lam if lam.shape == view else lam.reshape(view)


def _lambda_value(p: torch.Tensor, t: float | None, view: tuple[int, ...]) -> torch.Tensor:
    """λ detached, for the kernels; one learnable λ is mapped in Python floats (three tensor ops on one
    number cost more than a small activation)."""
    if t is not None and p.numel() == 1 and host_readable(p):
        z = float(p) / t
        lam = 1.0 + (z if z > 20.0 else math.log1p(math.exp(z)))  # torch's softplus threshold
        return torch.tensor(lam, dtype=p.dtype).reshape(view)
    return _lambda_of(p, t, view).detach()


class _LambdaGELUFunction(torch.autograd.Function):
    """``x Φ(λx)`` with ``λ = p`` (``t is None``) or ``λ = 1 + softplus(p/t)`` (``p`` is ``s``);
    ``view`` is the shape λ takes to broadcast against ``x``."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, p: torch.Tensor, view: tuple[int, ...], t: float | None):  # type: ignore[override]
        ctx.view, ctx.t = view, t
        y, gate = FORWARD(x, _lambda_value(p, t, view))
        ctx.gated = gate is not None
        ctx.save_for_backward(x, p, *((gate,) if ctx.gated else ()))
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        x, p, *gate = ctx.saved_tensors
        need_x, need_p = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        t = ctx.t
        if torch.is_grad_enabled():  # create_graph=True: keep every op differentiable
            lam = _lambda_of(p, t, ctx.view)
            gx, glam = _differentiable_grads(grad, x, lam, need_p)
        else:
            lam = _lambda_value(p, t, ctx.view)
            if gate and need_p:
                gx, glam = GATED_GRAD_X_LAM(grad, x, lam, gate[0])
            elif gate:
                gx, glam = GATED_GRAD_X(grad, x, lam, gate[0]), None
            elif need_p:
                gx, glam = GRAD_X_LAM(grad, x, lam)
            else:
                gx, glam = GRAD_X(grad, x, lam), None
        if glam is not None:
            glam = glam.reshape(p.shape)
            if t is not None and p.numel() == 1 and host_readable(p) and not torch.is_grad_enabled():
                z = float(p) / t
                sig = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
                glam = glam * (sig / t)  # ∂λ/∂s = σ(s/t)/t, in Python floats for one λ
            elif t is not None:
                glam = glam * (torch.sigmoid(p / t) / t)
        return (gx if need_x else None), glam, None, None


def apply_lambda_gelu(x: torch.Tensor, p: torch.Tensor, view: tuple[int, ...], t: float | None = None) -> torch.Tensor:
    """``x Φ(λx)`` through the autograd function (inputs already checked by the caller)."""
    return _LambdaGELUFunction.apply(x, p, view, t)


# ------------------------------------------------- the tensor arguments the activation accepts
# (numbers are checked by the activation's @checked_arguments tables; these are what a table cannot
# check: a tensor's dtype, device, shape and values)
def check_x(x: object, where: str, tensor: bool = False) -> None:
    """``x`` is a floating-point tensor (``tensor=True``: a tensor, which a table rule checked)."""
    if not (tensor or isinstance(x, torch.Tensor)) or not x.is_floating_point():
        got = f"a {x.dtype} tensor" if isinstance(x, torch.Tensor) else type(x).__name__
        raise TypeError(
            f"{where}: x must be a floating-point torch.Tensor, got {got} (like torch.nn.functional.gelu, "
            "λ-GELU is not defined for integer or complex tensors; convert with x.float())"
        )


def real_tensor(value: object, name: str, meta_ok: bool = False) -> None:
    """A clear error for a bool, complex or (unless ``meta_ok``) meta tensor λ or s."""
    if isinstance(value, torch.Tensor) and value.device.type == "meta" and not meta_ok:
        raise ValueError(f"{name} is a meta tensor, which holds no values; give a tensor on a real device")
    if isinstance(value, torch.Tensor) and (value.dtype == torch.bool or value.is_complex()):
        raise TypeError(f"{name} must be a real number or a real tensor, got a {value.dtype} tensor")


def same_device(lam: torch.Tensor, x: torch.Tensor, name: str) -> None:
    """λ on ``x``'s device (or one value on the CPU, which is read as a number)."""
    if lam.device != x.device and not (lam.device.type == "cpu" and lam.numel() == 1):
        raise ValueError(f"λ ({name}) is on {lam.device} but x on {x.device}; move them to one device")


def check_lambda_tensor(lam: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A tensor λ of :func:`lambda_gelu`: real, on x's device, broadcasting to ``x`` without enlarging
    it, finite and ``>= 1`` everywhere (one pass); returned in x's dtype."""
    real_tensor(lam, "lambda_gelu: lam", meta_ok=True)  # a meta λ with a meta x: shapes only
    same_device(lam, x, "lam")
    try:
        fits = torch.broadcast_shapes(x.shape, lam.shape) == x.shape
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(f"lam of shape {tuple(lam.shape)} does not broadcast to x of shape {tuple(x.shape)}")
    lam_x, top = lam.to(x.dtype), torch.finfo(x.dtype).max
    d = lam_x.detach()
    if d.device.type != "meta" and d.numel() and not bool(torch.all((d >= 1) & (d <= top))):  # also NaN
        bad = float("nan") if torch.isnan(d).any() else (d.min().item() if d.min() < 1 else d.max().item())
        raise ValueError(
            f"λ-GELU needs a finite lam >= 1 everywhere (at most {top:.4g}, the largest {x.dtype}), got "
            f"{bad:.6g}; beyond that maximum λ-GELU is ReLU to {x.dtype} precision: use relu"
        )
    return lam_x


def lambda_view(
    x: torch.Tensor, granularity: str, shape: tuple[int, ...], channel_dim: int, who: str
) -> tuple[int, ...]:
    """The shape λ (of parameter shape ``shape``) takes to broadcast against ``x``, or a clear error."""
    n, k = x.dim(), len(shape)
    dim = channel_dim + n if channel_dim < 0 else channel_dim
    if granularity == "channel" and 0 <= dim < n and x.shape[dim] == shape[0]:
        return shape + (1,) * (n - dim - 1)
    if granularity == "layer" or (granularity == "neuron" and x.shape[n - k :] == shape):
        return shape
    raise ValueError(f"{who} got input of shape {tuple(x.shape)}")


def lambda_gelu_reference(x: torch.Tensor, lam: float | torch.Tensor) -> torch.Tensor:
    """The naive form ``x · ½(1 + erf(λx/√2))`` differentiated by autograd (tests, benchmarks)."""
    return x * (0.5 * (1.0 + torch.erf(lam * x * (1.0 / math.sqrt(2.0)))))


def fit_shape(value: torch.Tensor, shape: tuple[int, ...], name: str) -> torch.Tensor:
    """``value`` broadcast to λ's parameter shape (a copy), or a clear ``ValueError``."""
    try:
        return torch.broadcast_to(value, shape).clone()
    except RuntimeError as err:
        raise ValueError(f"{name} of shape {tuple(value.shape)} does not fit λ's shape {shape}") from err


def checked_lambda(value: float | torch.Tensor, shape: tuple[int, ...], name: str) -> torch.Tensor:
    """A constant λ (a fixed λ, an override) as float32 of λ's parameter shape: finite and ``>= 1``."""
    real_tensor(value, name)
    lam = torch.as_tensor(value, dtype=torch.float32).detach()
    if not bool(torch.all(lam >= 1)) or not bool(torch.all(torch.isfinite(lam))):
        top = torch.finfo(torch.float32).max
        raise ValueError(f"{name} must be finite and >= 1 (at most {top:.4g}, the largest float32), got {value!r}")
    return fit_shape(lam, shape, name)


def checked_s(s: torch.Tensor, t: float, given: str) -> torch.Tensor:
    """``s`` if it and ``λ = 1 + softplus(s/t)`` are finite in its dtype."""
    if not bool(torch.all(torch.isfinite(s))) or not bool(torch.all(torch.isfinite(1.0 + F.softplus(s / t)))):
        raise ValueError(
            f"{given} is too large for t={t} (or not finite): s/t or λ = 1 + softplus(s/t) overflows "
            f"{str(s.dtype).removeprefix('torch.')}; use fixed_lambda (set_fixed_lambda) for a huge constant λ"
        )
    return s

"""S-ReLU: ReLU mollified by the Epanechnikov kernel of radius δ (the ``s-relu`` paper).

The paper's closed form (its Sec. 4.6, re-derived by sympy in :mod:`helpers.srelu.theory`)
is a quartic on ``(-δ, δ)``, ``0`` left of it and ``x`` right of it. Written with the clamped,
scaled input ``t = clamp(x/δ, -1, 1)`` every piece collapses into one branch-free expression:

    quartic(x) = δ·g(t),   g(t) = (1 + t)³ (3 - t) / 16          (g(-1) = 0, g(1) = 1)
    S-ReLU(x)  = ReLU(x) - δ·[ReLU(t) - g(t)]
    S-ReLU'(x) = (1 + t)² (2 - t) / 4                              (a smoothstep in (x+δ)/2δ)
    S-ReLU''(x) = 3 (1 - t²) / (4δ)
    ∂S-ReLU/∂δ = 3 (1 - t²)² / 16

Outside the band ``t = ±1`` and the bracket is exactly ``0`` (``1 - 1`` or ``0 - 0`` in floating
point too), so S-ReLU returns ReLU bit for bit there, and every derivative above is exactly 0 or 1;
no ``torch.where`` and no quartic of a large ``x`` is ever formed. (The paper's Appendix D form
evaluates ``x**4/(16δ³)`` for every input and discards it outside the band; in float32 that
intermediate is infinite for ``|x| ≳ 3e5`` when δ = 1e-6, and its backward returns NaN for
``|x| ≳ 7e12`` whatever δ, from ``0·∞`` in the discarded branch.)

Speed: the paper's ``torch.where`` form makes about ten full passes over memory and computes
``x**4`` for every element. Here a custom :class:`torch.autograd.Function` saves only ``x`` (and a
tensor δ) and runs the formulas above through :class:`helpers.core.kernels.FusedKernel`: fused by
TorchInductor into one loop forward and one backward for large float32 tensors, as torch ops
otherwise (and always for double backward). ``REPRO_KERNELS`` chooses for every activation at
once; the two agree to float rounding and each is deterministic.
"""

from __future__ import annotations

import functools
import math
import numbers

import torch
from torch import nn

from helpers.core.kernels import FusedKernel
from helpers.core.registry import register_activation_type
from helpers.core.validation import boolean, checked_arguments, instance_of, number

__all__ = [
    "srelu",
    "srelu_derivative",
    "srelu_second_derivative",
    "srelu_paper_reference",
    "SReLU",
    "SReLUPaperReference",
]

Delta = float | torch.Tensor

# One table line per argument (helpers.core.validation); the dtype range of δ is checked after.
_X = instance_of(torch.Tensor)
_DELTA = number(0, low_open=True, also=(torch.Tensor,))  # a tensor δ is checked elementwise
_FUNCTION_RULES = {"x": _X, "delta": _DELTA}


# --------------------------------------------------------------------------------------------
# Input checks: a wrong argument fails here with a message, never deep inside torch.
# --------------------------------------------------------------------------------------------
def _check_x(x: object, fn: str) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{fn}: x must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{fn}: x must have a floating dtype, got {x.dtype}")


def _compute_dtype(x: torch.Tensor | None) -> torch.dtype:
    """float64 for float64 inputs, else float32: δ, 1/δ and the quartic are never formed in half
    precision (where δ = 1e-5 is subnormal and 1/δ overflows)."""
    return torch.float64 if x is not None and x.dtype == torch.float64 else torch.float32


def delta_range(dtype: torch.dtype = torch.float32) -> tuple[float, float]:
    """The radii S-ReLU accepts when computing in ``dtype``: the normal range of the dtype.

    Below the smallest normal number ``1/δ`` overflows (``x·(1/δ)`` is then ``0·∞ = NaN`` at
    ``x = 0``); such a radius is ReLU to the dtype's precision anyway. Above the largest finite
    number δ itself is infinite.
    """
    info = torch.finfo(dtype)
    return float(info.tiny), float(info.max)


def _check_delta_range(low: float, high: float, dtype: torch.dtype, fn: str, shown: object) -> None:
    lo, hi = delta_range(dtype)
    if low < lo or high > hi:
        raise ValueError(
            f"{fn}: delta must lie in [{lo:.4g}, {hi:.4g}] (the normal {dtype} range S-ReLU is "
            f"computed in), got {shown!r}; below the floor S-ReLU is ReLU to {dtype} precision"
        )


def _check_delta_shape(delta: torch.Tensor, x: torch.Tensor | None, fn: str) -> torch.Tensor:
    """``delta`` broadcasts to ``x`` without enlarging it (when ``x`` is given); returns it."""
    if x is not None:
        try:
            shape = torch.broadcast_shapes(x.shape, delta.shape)
        except RuntimeError as err:
            raise ValueError(
                f"{fn}: delta of shape {tuple(delta.shape)} does not broadcast to x of shape {tuple(x.shape)}"
            ) from err
        if shape != x.shape:
            raise ValueError(
                f"{fn}: delta of shape {tuple(delta.shape)} would enlarge x of shape "
                f"{tuple(x.shape)}; it must broadcast to x's shape"
            )
    return delta


def _check_delta(delta: object, x: torch.Tensor | None, fn: str) -> Delta:
    """Return δ as a Python float or a floating tensor; raise for anything that is not a δ > 0
    within :func:`delta_range` of the dtype S-ReLU is computed in for ``x``."""
    if isinstance(delta, bool) or not isinstance(delta, (numbers.Real, torch.Tensor)):
        raise TypeError(
            f"{fn}: delta must be a positive real number or a floating tensor, got {type(delta).__name__} ({delta!r})"
        )
    if isinstance(delta, torch.Tensor):
        if not delta.is_floating_point():
            raise TypeError(f"{fn}: delta tensor must have a floating dtype, got {delta.dtype}")
        if delta.device.type == "meta" and (x is None or x.device.type != "meta"):
            where = f"x on {x.device}" if x is not None else "a value must be read"
            raise ValueError(
                f"{fn}: delta is on device meta (no values) but {where}; move them to one device "
                "or give delta as a number"
            )
        if delta.device.type == "meta":  # x is on "meta" too: no values to check, only the shape
            return _check_delta_shape(delta, x, fn)
        with torch.no_grad():
            ok = bool(torch.all(torch.isfinite(delta) & (delta > 0)))
        if not ok:
            raise ValueError(f"{fn}: delta must be finite and > 0 everywhere, got {delta}")
        if delta.numel():
            with torch.no_grad():
                low, high = float(delta.min()), float(delta.max())
            _check_delta_range(low, high, _compute_dtype(x), fn, low if low < 1 else high)
        return _check_delta_shape(delta, x, fn)
    value = float(delta)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{fn}: delta must be finite and > 0, got {delta!r}")
    _check_delta_range(value, value, _compute_dtype(x), fn, delta)
    return value


# --------------------------------------------------------------------------------------------
# The formulas as torch ops: compiled into fused loops or run eagerly (helpers.core.kernels).
# --------------------------------------------------------------------------------------------
def _forward_kernel(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    t = torch.clamp(x / delta, -1.0, 1.0)
    s = t + 1.0  # exact near t = -1 (Sterbenz), so the left tail keeps relative accuracy
    g = s * s * s * (4.0 - s) * 0.0625
    return torch.relu(x) - delta * (torch.relu(t) - g)


def _backward_x_kernel(x: torch.Tensor, delta: Delta, grad: torch.Tensor) -> torch.Tensor:
    t = torch.clamp(x / delta, -1.0, 1.0)
    s = t + 1.0
    return grad * (s * s * (3.0 - s) * 0.25)


def _backward_x_delta_kernel(
    x: torch.Tensor, delta: torch.Tensor, grad: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    t = torch.clamp(x / delta, -1.0, 1.0)
    s = t + 1.0
    one_minus_t2 = 1.0 - t * t
    return grad * (s * s * (3.0 - s) * 0.25), grad * (0.1875 * one_minus_t2 * one_minus_t2)


def _backward_x_only(grad: torch.Tensor, x: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
    return _backward_x_kernel(x, delta, grad)


def _backward_x_delta(grad: torch.Tensor, x: torch.Tensor, delta: torch.Tensor):
    grad_x, grad_delta = _backward_x_delta_kernel(x, delta, grad)
    return grad_x, grad_delta.sum_to_size(delta.shape)


# δ reaches the kernels as a tensor: a Python float would be compiled in as a constant, once per δ
FORWARD = FusedKernel("srelu", _forward_kernel)
GRAD_X = FusedKernel("srelu", _backward_x_only)
GRAD_X_DELTA = FusedKernel("srelu", _backward_x_delta)


def _delta_tensor(delta: Delta, x: torch.Tensor) -> torch.Tensor:
    if isinstance(delta, torch.Tensor):
        return delta.detach()
    if x.device.type == "cpu":
        return torch.tensor(delta, dtype=x.dtype)
    return _device_constant(delta, x.dtype, x.device)


@functools.lru_cache(maxsize=256)
def _device_constant(value: float, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """``value`` as a 0-dim tensor on an accelerator, made once: ``torch.tensor(value, device=...)``
    copies from host memory and waits for the device's queue, which on a GPU stalled every call."""
    return torch.tensor(value, dtype=dtype, device=device)


class _SReLUFunction(torch.autograd.Function):
    """Forward/backward saving only x (and δ when δ is a tensor)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, delta: Delta) -> torch.Tensor:  # type: ignore[override]
        if isinstance(delta, torch.Tensor):
            ctx.save_for_backward(x, delta)
            ctx.delta = None
        else:
            ctx.save_for_backward(x)
            ctx.delta = delta
        return FORWARD(x, _delta_tensor(delta, x))

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        if ctx.delta is None:
            x, delta = ctx.saved_tensors
        else:
            (x,) = ctx.saved_tensors
            delta = ctx.delta
        need_x, need_delta = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        if torch.is_grad_enabled():
            # torch ops kept differentiable, so create_graph=True (double backward) works
            if need_delta:
                grad_x, grad_delta = _backward_x_delta_kernel(x, delta, grad)
                return (grad_x if need_x else None), grad_delta.sum_to_size(delta.shape)
            return (_backward_x_kernel(x, delta, grad) if need_x else None), None
        d = _delta_tensor(delta, x)
        if need_delta:
            grad_x, grad_delta = GRAD_X_DELTA(grad, x, d)
            return (grad_x if need_x else None), grad_delta
        return GRAD_X(grad, x, d), None


# --------------------------------------------------------------------------------------------
# Public functional API
# --------------------------------------------------------------------------------------------
@checked_arguments(_FUNCTION_RULES)
def srelu(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """S-ReLU of ``x`` with Epanechnikov radius ``delta`` (> 0): ``(ReLU * φ_δ)(x)``.

    ``delta`` is a positive real number or a positive floating tensor broadcastable to ``x``
    (then it receives a gradient when it requires one). Branch-free; see the module docstring.
    Raises ``TypeError`` for a non-tensor/non-floating ``x`` or a non-real ``delta`` and
    ``ValueError`` for ``delta <= 0``, NaN or infinite.
    """
    _check_x(x, "srelu")
    if x.dtype not in (torch.float32, torch.float64):  # half precision: compute in float32
        return srelu(x.to(torch.float32), delta).to(x.dtype)
    d = _check_delta(delta, x, "srelu")
    if isinstance(d, torch.Tensor) and d.dtype != x.dtype:
        d = d.to(x.dtype)
    return _SReLUFunction.apply(x, d)


@checked_arguments(_FUNCTION_RULES)
def srelu_derivative(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """``S-ReLU'(x) = (1 + t)²(2 - t)/4`` with ``t = clamp(x/δ, -1, 1)``: 0 left of the band,
    1 right of it, a cubic smoothstep inside."""
    _check_x(x, "srelu_derivative")
    if x.dtype not in (torch.float32, torch.float64):
        return srelu_derivative(x.to(torch.float32), delta).to(x.dtype)
    d = _check_delta(delta, x, "srelu_derivative")
    return _backward_x_kernel(x, d, torch.ones_like(x))


@checked_arguments(_FUNCTION_RULES)
def srelu_second_derivative(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """``S-ReLU''(x) = 3(1 - t²)/(4δ)``: the Epanechnikov density itself, 0 outside ``(-δ, δ)``."""
    _check_x(x, "srelu_second_derivative")
    if x.dtype not in (torch.float32, torch.float64):
        return srelu_second_derivative(x.to(torch.float32), delta).to(x.dtype)
    d = _check_delta(delta, x, "srelu_second_derivative")
    t = torch.clamp(x / d, -1.0, 1.0)
    return 0.75 * (1.0 - t * t) / d


@checked_arguments(_FUNCTION_RULES)
def srelu_paper_reference(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """The paper's Appendix D pseudocode, verbatim except that its hard-coded ``a = 0.01``
    becomes the argument ``delta`` (the peer that :func:`srelu` is tested and timed against).

    Half-precision inputs (float16, bfloat16) are computed in float32 and the result cast back,
    as :func:`srelu` does: verbatim in float16, ``16·a³`` underflows to 0 for the paper's
    ``a = 1e-3``, which made the output and the gradient at ``x = 0`` NaN (``0/0``). float32 and
    float64 inputs run the pseudocode with one change: the quartic branch is evaluated at ``x``
    only inside ``(−a, a)`` (at 0 elsewhere). Verbatim, ``x⁴`` overflows for ``|x|`` ≳ 1e10 and
    its infinite derivative reaches the gradient as ``0·∞`` = NaN through the unused branch of
    ``torch.where``, and ``x = ±∞`` gave a NaN gradient everywhere."""
    _check_x(x, "srelu_paper_reference")
    if x.dtype not in (torch.float32, torch.float64):
        return srelu_paper_reference(x.to(torch.float32), delta).to(x.dtype)
    a = _check_delta(delta, x, "srelu_paper_reference")
    condition1 = x <= -a
    condition2 = (x > -a) & (x < a)
    p1 = torch.zeros_like(x)
    inner = torch.where(condition2, x, 0.0)  # not in the pseudocode: see the docstring
    p2 = inner / 2.0 + 3.0 * inner**2 / (8.0 * a) + 3.0 * a / 16.0 - inner**4 / (16.0 * a**3)
    p3 = x
    output = torch.where(condition1, p1, torch.where(condition2, p2, p3))
    return output


# --------------------------------------------------------------------------------------------
# Modules
# --------------------------------------------------------------------------------------------
@register_activation_type
class SReLU(nn.Module):
    """S-ReLU activation module.

    ``delta`` (> 0, default 0.001 as in the paper's experiments, its Appendix H) is the
    Epanechnikov radius. With ``learnable=True`` δ is trained through the parameter
    ``log_delta`` (δ = exp(log_delta)): δ stays positive by construction, and a step on
    ``log_delta`` changes δ by a *relative* amount, which suits a quantity whose useful values
    span orders of magnitude (the paper's sweep goes from 1e-3 to 10). The gradient reaching
    ``log_delta`` is ``δ·∂S-ReLU/∂δ = 3δ(1 - t²)²/16``, bounded by ``3δ/16``.
    """

    #: Spelled out in a run's key even at its default (helpers.core.registry.canonical_kwargs).
    KEYED_DEFAULTS = ("delta",)

    @checked_arguments({"delta": number(0, low_open=True), "learnable": boolean()})
    def __init__(self, delta: float = 0.001, learnable: bool = False) -> None:
        super().__init__()
        value = _check_delta(delta, None, "SReLU")
        self.learnable = learnable
        if learnable:
            self.log_delta = nn.Parameter(torch.tensor(math.log(value)))
            self._delta: float | None = None
        else:
            self._delta = float(value)

    @property
    def delta(self) -> float:
        """Current δ as a Python float (detached)."""
        if self._delta is not None:
            return self._delta
        return float(self.log_delta.detach().exp())

    def set_delta(self, delta: float) -> None:
        """Change a fixed δ in place (δ annealing, :mod:`helpers.srelu.training`); a learnable δ
        is changed through ``log_delta`` instead."""
        if self.learnable:
            raise ValueError("SReLU.set_delta changes a fixed delta; this module learns log_delta")
        if isinstance(delta, torch.Tensor):
            raise TypeError("SReLU.set_delta: pass delta as a Python number")
        self._delta = float(_check_delta(delta, None, "SReLU.set_delta"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_x(x, "SReLU")
        if x.dtype not in (torch.float32, torch.float64):  # half precision: compute in float32
            return self.forward(x.to(torch.float32)).to(x.dtype)
        if self._delta is not None:
            return _SReLUFunction.apply(x, self._delta)
        delta = self.log_delta.exp().to(x.dtype)
        lo, hi = delta_range(x.dtype)
        if not torch.compiler.is_compiling() and not (lo <= float(delta.detach()) <= hi):
            raise ValueError(
                f"SReLU: learned delta = exp({float(self.log_delta):.4g}) is outside "
                f"[{lo:.4g}, {hi:.4g}], the normal range of {x.dtype}; log_delta has diverged"
            )
        return _SReLUFunction.apply(x, delta)

    def extra_repr(self) -> str:
        return f"delta={self.delta:.6g}, learnable={self.learnable}"


@register_activation_type
class SReLUPaperReference(nn.Module):
    """Module around :func:`srelu_paper_reference` (for benchmarks and substitution tests)."""

    @checked_arguments({"delta": number(0, low_open=True)})
    def __init__(self, delta: float = 0.001) -> None:
        super().__init__()
        self.delta = float(_check_delta(delta, None, "SReLUPaperReference"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return srelu_paper_reference(x, self.delta)

    def extra_repr(self) -> str:
        return f"delta={self.delta:.6g}"

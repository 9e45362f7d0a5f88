"""S-ReLU: ReLU mollified by the Epanechnikov kernel of radius δ (the ``s-relu`` paper).

The paper's quartic on ``(-δ, δ)`` (its Sec. 4.6, re-derived by sympy in :mod:`helpers.srelu.theory`),
``0`` left of it and ``x`` right of it, is one branch-free expression in ``t = clamp(x/δ, -1, 1)``:

    S-ReLU(x)  = ReLU(x) - δ·[ReLU(t) - g(t)],   g(t) = (1 + t)³ (3 - t) / 16   (g(-1) = 0, g(1) = 1)
    S-ReLU'(x) = (1 + t)² (2 - t) / 4,   S-ReLU''(x) = 3 (1 - t²) / (4δ),   ∂S-ReLU/∂δ = 3 (1 - t²)² / 16

Outside the band the bracket is exactly 0: S-ReLU is ReLU bit for bit there and no ``x⁴`` is formed
(the paper's Appendix D form is infinite in float32 for ``|x| ≳ 3e5`` when δ = 1e-6, and its gradient
NaN for ``|x| ≳ 7e12``). The formulas run as :class:`helpers.core.kernels.FusedKernel` loops.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from helpers.core.kernels import FusedKernel
from helpers.core.validation import boolean, check_value, checked_arguments
from helpers.srelu.radius import POSITIVE, Delta, checked, checked_delta, delta_range, delta_tensor, module_input

__all__ = ["srelu", "srelu_derivative", "srelu_second_derivative", "srelu_paper_reference"]
__all__ += ["SReLU", "SReLUPaperReference", "delta_range"]


# The formulas as torch ops, compiled into fused loops or run eagerly (helpers.core.kernels).
def _forward(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    t = torch.clamp(x / delta, -1.0, 1.0)
    s = t + 1.0  # exact near t = -1 (Sterbenz), so the left tail keeps relative accuracy
    return torch.relu(x) - delta * (torch.relu(t) - s * s * s * (4.0 - s) * 0.0625)


def _grad_x(grad: torch.Tensor, x: torch.Tensor, delta: Delta) -> torch.Tensor:
    s = torch.clamp(x / delta, -1.0, 1.0) + 1.0
    return grad * (s * s * (3.0 - s) * 0.25)


def _grad_x_delta(grad: torch.Tensor, x: torch.Tensor, delta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    t = torch.clamp(x / delta, -1.0, 1.0)
    s, u = t + 1.0, 1.0 - t * t
    return grad * (s * s * (3.0 - s) * 0.25), (grad * (0.1875 * u * u)).sum_to_size(delta.shape)


FORWARD, GRAD_X, GRAD_X_DELTA = (FusedKernel("srelu", f) for f in (_forward, _grad_x, _grad_x_delta))


class _SReLUFunction(torch.autograd.Function):
    """Forward/backward saving only x (and δ when δ is a tensor)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, delta: Delta) -> torch.Tensor:  # type: ignore[override]
        tensor = isinstance(delta, torch.Tensor)
        ctx.save_for_backward(*((x, delta) if tensor else (x,)))
        ctx.delta = None if tensor else delta
        return FORWARD(x, delta_tensor(delta, x))

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        x, *saved = ctx.saved_tensors
        delta = saved[0] if saved else ctx.delta
        need_x, need_delta = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        eager = torch.is_grad_enabled()  # torch ops kept differentiable: double backward works
        if need_delta:
            grad_x, grad_delta = _grad_x_delta(grad, x, delta) if eager else GRAD_X_DELTA(grad, x, delta.detach())
            return (grad_x if need_x else None), grad_delta
        if eager:
            return (_grad_x(grad, x, delta) if need_x else None), None
        return GRAD_X(grad, x, delta_tensor(delta, x)), None


@checked
def srelu(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """S-ReLU ``(ReLU * φ_δ)(x)``; ``delta`` > 0 is a number or a floating tensor broadcastable to
    ``x`` (which then receives a gradient when it requires one)."""
    return _SReLUFunction.apply(x, delta.to(x.dtype) if isinstance(delta, torch.Tensor) else delta)


@checked
def srelu_derivative(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """``S-ReLU'(x)``: 0 left of the band, 1 right of it, a cubic smoothstep inside."""
    return _grad_x(torch.ones_like(x), x, delta)


@checked
def srelu_second_derivative(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """``S-ReLU''(x) = 3(1 - t²)/(4δ)``: the Epanechnikov density itself, 0 outside ``(-δ, δ)``."""
    t = torch.clamp(x / delta, -1.0, 1.0)
    return 0.75 * (1.0 - t * t) / delta


@checked
def srelu_paper_reference(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """The paper's Appendix D pseudocode, its hard-coded ``a = 0.01`` the argument ``delta``, with
    one change: the quartic is evaluated at ``x`` only inside ``(−a, a)`` (verbatim, ``x⁴``
    overflows for ``|x|`` ≳ 1e10 and its infinite derivative gave ``0·∞`` = NaN gradients)."""
    a = delta
    condition1, condition2 = x <= -a, (x > -a) & (x < a)
    inner = torch.where(condition2, x, 0.0)  # not in the pseudocode: see the docstring
    p2 = inner / 2.0 + 3.0 * inner**2 / (8.0 * a) + 3.0 * a / 16.0 - inner**4 / (16.0 * a**3)
    return torch.where(condition1, torch.zeros_like(x), torch.where(condition2, p2, x))


class SReLU(nn.Module):
    """S-ReLU with radius ``delta`` (default 0.001, the paper's Appendix H). With ``learnable=True``
    δ = exp(``log_delta``) is trained: positive by construction, changed by *relative* steps, which
    suits values spanning orders of magnitude (the paper's sweep: 1e-3 to 10)."""

    #: Spelled out in a run's key even at its default (helpers.core.registry.canonical_kwargs).
    KEYED_DEFAULTS = ("delta",)

    @checked_arguments({"delta": POSITIVE, "learnable": boolean()})
    def __init__(self, delta: float = 0.001, learnable: bool = False) -> None:
        super().__init__()
        value = checked_delta(delta, None, "SReLU")
        self.learnable = learnable
        self._delta: float | None = None if learnable else value
        if learnable:
            self.log_delta = nn.Parameter(torch.tensor(math.log(value)))

    @property
    def delta(self) -> float:
        """Current δ as a Python float (detached)."""
        return self._delta if self._delta is not None else float(self.log_delta.detach().exp())

    def set_delta(self, delta: float) -> None:
        """Change a fixed δ in place (δ annealing, :mod:`helpers.srelu.training`)."""
        if self.learnable:
            raise ValueError("SReLU.set_delta changes a fixed delta; this module learns log_delta")
        check_value("SReLU.set_delta", "delta", delta, POSITIVE)
        self._delta = checked_delta(delta, None, "SReLU.set_delta")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        work = module_input(x, "SReLU")
        if self._delta is not None:
            out = _SReLUFunction.apply(work, self._delta)
        else:
            delta = self.log_delta.exp().to(work.dtype)
            lo, hi = delta_range(work.dtype)
            if not torch.compiler.is_compiling() and not (lo <= float(delta.detach()) <= hi):
                raise ValueError(
                    f"SReLU: learned delta = exp({float(self.log_delta):.4g}) is outside "
                    f"[{lo:.4g}, {hi:.4g}], the normal range of {work.dtype}; log_delta has diverged"
                )
            out = _SReLUFunction.apply(work, delta)
        return out if work is x else out.to(x.dtype)

    def extra_repr(self) -> str:
        return f"delta={self.delta:.6g}, learnable={self.learnable}"


class SReLUPaperReference(nn.Module):
    """Module around :func:`srelu_paper_reference` (for benchmarks and substitution tests)."""

    @checked_arguments({"delta": POSITIVE})
    def __init__(self, delta: float = 0.001) -> None:
        super().__init__()
        self.delta = checked_delta(delta, None, "SReLUPaperReference")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        work = module_input(x, "SReLUPaperReference")
        out = srelu_paper_reference.unchecked(work, self.delta)  # δ: checked once, in __init__
        return out if work is x else out.to(x.dtype)

    def extra_repr(self) -> str:
        return f"delta={self.delta:.6g}"

"""SmeLU: ReLU mollified by the box kernel, in closed form.

Averaging ReLU over a window ``[x − β, x + β]`` (the box kernel of half-width β,
:class:`helpers.srelu.mollify.BoxKernel`) gives

    SmeLU_β(x) = 0 for x ≤ −β,   (x + β)² / (4β) for |x| ≤ β,   x for x ≥ β,

the Smooth ReLU that Shamir, Lin & Coviello introduced ("Smooth Activations and Reproducibility in
Deep Networks", arXiv 2010.09931, October 2020) to reduce the prediction churn of ReLU networks,
and that Shamir & Lin's "Real World Large Scale Recommendation Systems Reproducibility and Smooth
Activations" (arXiv 2202.06499, February 2022) reports in production recommendation systems.
Its derivative ``clamp((x + β)/(2β), 0, 1)`` is continuous, its second derivative jumps by
``1/(2β)`` at ``±β``: SmeLU is C¹, not C². Its largest distance from ReLU is ``β/4``, at ``x = 0``.
"""

from __future__ import annotations

import torch
from torch import nn

from helpers.core.validation import checked_arguments, instance_of, number

#: Where SmeLU was introduced (the book names its box-kernel mollified ReLU after it).
SMELU_REFERENCE = (
    'Shamir, Lin & Coviello, "Smooth Activations and Reproducibility in Deep Networks", arXiv 2010.09931 (October 2020)'
)


#: The half-width β, bounded to the open interval (1e-18, 1e18): there β², 4β², 2β and 4β are finite,
#: normal float32 numbers; outside, float32 gives NaN (β = 1e38: inf/inf; β = 1e-46: 0/0) or a zero
#: gradient where it is 1/2. Open, because 1e18 + 1 is 1e18 again in floating point.
BETA_RANGE: tuple[float, float] = (1e-18, 1e18)
_BETA = number(*BETA_RANGE, low_open=True, high_open=True)


def _tensor(x: torch.Tensor) -> torch.Tensor:
    if not x.is_floating_point():
        raise TypeError(f"SmeLU takes a floating-point tensor, got dtype {x.dtype}")
    return x


def _working(x: torch.Tensor) -> torch.Tensor:
    """``x`` in the precision SmeLU is computed in: float16 and bfloat16 in float32, since x + β,
    (x + β)² and 4β overflow float16 long before the result does (β = 7e4 gave inf at x = 0, where
    SmeLU is 17500); float32 and float64 as they are, so their results stay bit for bit the same."""
    return x.float() if torch.finfo(x.dtype).bits < 32 else x


def _smelu(x: torch.Tensor, beta: float) -> torch.Tensor:
    # The quadratic only where it is used (x < β): a large x never squares to inf, whose backward
    # (0·∞ in the unused branch) is NaN.
    work = _working(x)
    linear = work >= beta
    quadratic = torch.clamp(torch.where(linear, 0.0, work + beta), min=0.0) ** 2 / (4 * beta)
    return torch.where(linear, work, quadratic).to(x.dtype)  # one rounding back to a half dtype


@checked_arguments({"x": instance_of(torch.Tensor), "beta": _BETA})
def smelu(x: torch.Tensor, beta: float = 1.0) -> torch.Tensor:
    """SmeLU_β(x), elementwise; differentiable by autograd (the unused branch gets a zero gradient)."""
    return _smelu(_tensor(x), float(beta))


@checked_arguments({"x": instance_of(torch.Tensor), "beta": _BETA})
def smelu_grad(x: torch.Tensor, beta: float = 1.0) -> torch.Tensor:
    """dSmeLU_β/dx = clamp((x + β)/(2β), 0, 1)."""
    x, beta = _tensor(x), float(beta)
    return torch.clamp((_working(x) + beta) / (2 * beta), 0.0, 1.0).to(x.dtype)


class SmeLU(nn.Module):
    """SmeLU with a fixed half-width ``beta`` (the smoothing width is the knob)."""

    #: Spelled out in a run's key even at its default (helpers.core.registry.canonical_kwargs).
    KEYED_DEFAULTS = ("beta",)

    @checked_arguments({"beta": _BETA})
    def __init__(self, beta: float = 1.0) -> None:
        super().__init__()
        self.beta = float(beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"SmeLU takes a torch.Tensor, got {type(x).__name__}")
        return _smelu(_tensor(x), self.beta)

    def extra_repr(self) -> str:
        return f"beta={self.beta}"

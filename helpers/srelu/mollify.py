"""Numeric mollification: smooth any activation with any kernel, by quadrature.

``mollify(f, kernel, x)`` computes ``(f * φ_s)(x) = ∫ f(x - y) φ_s(y) dy`` for a torch or numpy
callable ``f`` and a :class:`MollifierKernel` (Epanechnikov, bump, Gaussian, box), optionally its first or
second derivative, and :class:`MollifiedActivation` wraps the result as an ``nn.Module`` that can be
registered with :func:`helpers.core.registry.register_activation`.

Quadrature. In the kernel's unit variable ``v = y/s`` the integral is ``∫ f(x - s v) φ(v) dv``.

* Compact kernels (Epanechnikov, bump, box) use Gauss-Legendre on ``[-1, 1]``. A kink of ``f``
  at a *breakpoint* ``b`` (ReLU: ``b = 0``) sits at ``v = (x - b)/s``; splitting the interval
  there keeps each piece smooth, so the rule converges at its full rate (for ReLU with the
  Epanechnikov kernel each piece is a cubic and the result is exact to rounding).
* The Gaussian uses Gauss-Hermite when no breakpoint is given (exact for polynomial × Gaussian,
  excellent for smooth ``f``), else piecewise Gauss-Legendre on ``[-tail, tail]`` (tail mass
  below 1e-30 for the default ``tail = 12``).

Derivatives put every derivative on the kernel (the paper's Sec. 4.3 formula
``f_δ^(k) = f * φ_δ^(k)``), so ``f`` need not be differentiable: ``d/dx (f*φ_s) =
(1/s)[∫ f(x - s v) φ'(v) dv + φ(-1⁺) f(x + s) - φ(1⁻) f(x - s)]``, where the last two terms are
the jumps of ``φ`` at its support ends (nonzero only for the box kernel), and likewise for the
second derivative with ``φ''`` and the jumps of ``φ'`` (the Epanechnikov kernel's ``φ'`` jumps by
``±3/2`` there), which needs ``φ`` itself continuous.
"""

from __future__ import annotations

import functools
import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from helpers.core.validation import checked_arguments, choice, instance_of, integer, number, text
from helpers.srelu.theory import bump_normaliser

ArrayLike = np.ndarray | torch.Tensor | float


#: The scales a kernel accepts: within them ``s²`` (the second derivative divides by it), ``1/s``
#: and ``s·tail`` are finite, normal float64 numbers (``GaussianKernel(1e308)`` put the quadrature
#: nodes at ±∞ and returned NaN; ``EpanechnikovKernel(1e-320)`` overflowed ``1/s``).
SCALE_RANGE: tuple[float, float] = (1e-150, 1e150)


class MollifierKernel(ABC):
    """A normalised, even mollifier ``φ_s(y) = φ(y/s)/s`` built from a unit kernel ``φ``.

    Subclasses give the unit kernel (``pdf``) and its first two derivatives on the open support,
    ``radius`` (1 for the compact kernels, ``inf`` for the Gaussian), and the one-sided values
    of ``φ`` and ``φ'`` just inside the support ends (``edge_values``).
    """

    name: str = "kernel"
    radius: float = 1.0

    @checked_arguments({"scale": number(0, low_open=True)})
    def __init__(self, scale: float) -> None:
        lo, hi = SCALE_RANGE
        if not lo <= float(scale) <= hi:
            raise ValueError(
                f"{type(self).__name__}: scale must lie in [{lo:g}, {hi:g}] (where s², 1/s and the "
                f"quadrature nodes x ± s·v stay finite), got {scale!r}"
            )
        self.scale = float(scale)

    @abstractmethod
    def derivative(self, v: np.ndarray, k: int) -> np.ndarray:
        """``φ^(k)(v)`` for float64 ``v`` (``k`` = 0, 1, 2; 0 outside the support)."""

    def pdf(self, v: ArrayLike) -> np.ndarray:
        """Unit kernel ``φ(v)`` (float64; 0 outside the support)."""
        return self.derivative(np.asarray(v, dtype=np.float64), 0)

    def edge_values(self, order: int) -> tuple[float, float]:
        """``(φ^(order)(-R⁺), φ^(order)(R⁻))`` at the support ends ``±R`` (0 for the Gaussian)."""
        return (0.0, 0.0)

    @property
    def compact(self) -> bool:
        return math.isfinite(self.radius)

    @property
    def support(self) -> tuple[float, float]:
        """Support of the scaled kernel, ``(-s·R, s·R)``."""
        return (-self.scale * self.radius, self.scale * self.radius)

    def density(self, y: ArrayLike) -> np.ndarray:
        """The scaled, normalised density ``φ_s(y) = φ(y/s)/s``."""
        y = np.asarray(y, dtype=np.float64)
        return self.pdf(y / self.scale) / self.scale

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.scale:g})"


class EpanechnikovKernel(MollifierKernel):
    """``φ(v) = 3/4 (1 - v²)`` on ``[-1, 1]``; radius δ = ``scale`` (the paper's S-ReLU kernel)."""

    name = "epanechnikov"

    def derivative(self, v: np.ndarray, k: int) -> np.ndarray:
        if k == 0:
            return np.where(np.abs(v) <= 1, 0.75 * (1 - v * v), 0.0)
        return np.where(np.abs(v) < 1, -1.5 * v if k == 1 else -1.5, 0.0)

    def edge_values(self, order: int) -> tuple[float, float]:
        return {0: (0.0, 0.0), 1: (1.5, -1.5)}[order]


@functools.lru_cache(maxsize=1)
def _bump_normaliser() -> float:
    return float(bump_normaliser(30))


class BumpKernel(MollifierKernel):
    """The C^∞ bump of the paper's Definition 1, ``φ(v) = A·exp(1/(v² - 1))`` on ``(-1, 1)``."""

    name = "bump"

    def derivative(self, v: np.ndarray, k: int) -> np.ndarray:
        inside = np.abs(v) < 1
        q = np.where(inside, v * v - 1, -1.0)  # safe denominator outside
        phi = np.where(inside, _bump_normaliser() * np.exp(1 / q), 0.0)
        if k == 0:
            return phi
        return phi * (-2 * v / q**2 if k == 1 else 4 * v * v / q**4 - 2 / q**2 + 8 * v * v / q**3)


class GaussianKernel(MollifierKernel):
    """Standard normal density; ``scale`` is σ (infinite support)."""

    name = "gaussian"
    radius = math.inf

    def derivative(self, v: np.ndarray, k: int) -> np.ndarray:
        pdf = np.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)
        return pdf if k == 0 else (-v if k == 1 else v * v - 1) * pdf


class BoxKernel(MollifierKernel):
    """Uniform density ``1/2`` on ``[-1, 1]`` (a moving average of width ``2·scale``).

    ReLU mollified by it is SmeLU, the Smooth ReLU of Shamir, Lin & Coviello (arXiv 2010.09931,
    2020), with ``β = scale`` (closed form in :mod:`helpers.srelu.smelu`)."""

    name = "box"

    def derivative(self, v: np.ndarray, k: int) -> np.ndarray:
        return np.where(np.abs(v) <= 1, 0.5, 0.0) if k == 0 else np.zeros_like(v)

    def edge_values(self, order: int) -> tuple[float, float]:
        return {0: (0.5, 0.5), 1: (0.0, 0.0)}[order]


_KERNELS: dict[str, type[MollifierKernel]] = {
    k.name: k for k in (EpanechnikovKernel, BumpKernel, GaussianKernel, BoxKernel)
} | {"uniform": BoxKernel}
KERNEL_NAMES: tuple[str, ...] = tuple(_KERNELS)


def make_kernel(name: str, scale: float) -> MollifierKernel:
    """MollifierKernel by name (``epanechnikov``, ``bump``, ``gaussian``, ``box``/``uniform``)."""
    if not isinstance(name, str) or name.lower() not in _KERNELS:
        raise ValueError(f"unknown kernel {name!r}; choose one of {', '.join(KERNEL_NAMES)}")
    return _KERNELS[name.lower()](scale)


# ------------------------------------------------------------------------------------------
# Quadrature
# ------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def _legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(n)


@functools.lru_cache(maxsize=16)
def _hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = np.polynomial.hermite_e.hermegauss(n)  # weight exp(-v²/2)
    return nodes, weights / math.sqrt(2 * math.pi)  # ∫ h φ ≈ Σ w h(v)


def _nodes_and_weights(
    kernel: MollifierKernel,
    x: np.ndarray,
    breakpoints: Sequence[float],
    order: int,
    derivative: int,
    tail: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Unit-variable nodes ``v`` and weights (kernel factor included), shape ``x.shape + (m,)``."""
    if not kernel.compact and not breakpoints:
        v, w = _hermite(order)
        factor = (np.ones_like(v), -v, v * v - 1)[derivative]  # φ^(k)/φ for the Gaussian
        shape = x.shape + (order,)
        return np.broadcast_to(v, shape), np.broadcast_to(w * factor, shape)
    r = kernel.radius if kernel.compact else tail
    xi, omega = _legendre(order)
    cuts = [np.clip((x - b) / kernel.scale, -r, r) for b in breakpoints]
    ends = np.sort(np.stack([np.full_like(x, -r), *cuts, np.full_like(x, r)], axis=-1), axis=-1)
    lo, hi = ends[..., :-1, None], ends[..., 1:, None]  # pieces, shape x.shape + (K+1, 1)
    half, mid = (hi - lo) / 2, (hi + lo) / 2
    v = mid + half * xi
    w = half * omega * kernel.derivative(v, derivative)
    m = (len(breakpoints) + 1) * order
    return v.reshape(x.shape + (m,)), w.reshape(x.shape + (m,))


def _breakpoints(breakpoints: object) -> tuple[float, ...]:
    if isinstance(breakpoints, (str, bytes)) or not isinstance(breakpoints, Sequence):
        raise TypeError("breakpoints must be a sequence of real numbers, e.g. (0.0,)")
    for b in breakpoints:
        if isinstance(b, bool) or not isinstance(b, numbers.Real) or not math.isfinite(b):
            raise ValueError(f"breakpoints must be finite real numbers, got {b!r}")
    return tuple(float(b) for b in breakpoints)


def _check_reach(kernel: MollifierKernel, v: np.ndarray, dtype: torch.dtype) -> None:
    """The nodes ``s·v`` and the derivative's ``1/s^k`` are finite and normal in ``dtype`` (a
    float32 ``x`` with ``GaussianKernel(1e38)`` put nodes at ±∞ and gave NaN)."""
    info = torch.finfo(dtype)
    reach = kernel.scale * float(np.max(np.abs(v), initial=1.0))
    if not (kernel.scale >= info.tiny and reach <= info.max):
        raise ValueError(
            f"{kernel!r} is out of range for {dtype} inputs: its scale must be at least {info.tiny:.4g} "
            f"and scale × the farthest quadrature node ({reach:.4g}) at most {info.max:.4g}; use a "
            "float64 x or a moderate scale"
        )


def _edge_terms(f: Callable, kernel: MollifierKernel, x: ArrayLike, derivative: int):
    """Jump terms of the kernel's (derivative-1)-th derivative at its support ends."""
    left, right = kernel.edge_values(derivative - 1)
    reach = kernel.scale * kernel.radius
    out = 0.0 + left * f(x + reach) if left else 0.0
    return out - right * f(x - reach) if right else out


@checked_arguments(
    {
        "f": instance_of(Callable),
        "kernel": instance_of(MollifierKernel),
        "x": instance_of(object),  # a tensor, or anything numpy makes an array of
        "derivative": choice((0, 1, 2)),
        "breakpoints": instance_of(object),  # each a finite real number: _breakpoints
        "order": integer(2),
        "tail": number(0, low_open=True),
    }
)
def mollify(
    f: Callable,
    kernel: MollifierKernel,
    x: ArrayLike,
    *,
    derivative: int = 0,
    breakpoints: Sequence[float] = (),
    order: int = 64,
    tail: float = 12.0,
) -> np.ndarray | torch.Tensor:
    """``(f * φ_s)^(derivative)(x)`` by quadrature (see the module docstring).

    ``f`` is applied elementwise to arrays of the same kind as ``x``: a torch tensor ``x`` gives a
    tensor (``f`` a torch function, gradients flow to ``x`` through ``f``), anything else is
    converted to a float64 numpy array (``f`` a numpy function). ``breakpoints`` lists where ``f``
    is not smooth (ReLU: ``(0.0,)``); ``order`` is the number of nodes per piece.
    """
    if derivative == 2 and kernel.edge_values(0) != (0.0, 0.0):
        raise ValueError(
            f"the second derivative needs a continuous kernel; {kernel.name} jumps at its "
            "support ends (differentiate the first derivative's f-terms by hand instead)"
        )
    return _mollify(f, kernel, x, _breakpoints(breakpoints), order, derivative, tail)


def _mollify(
    f: Callable,
    kernel: MollifierKernel,
    x: ArrayLike,
    points: tuple[float, ...],
    order: int,
    derivative: int = 0,
    tail: float = 12.0,
) -> np.ndarray | torch.Tensor:
    """:func:`mollify` of arguments checked where they entered (there, or in :class:`MollifiedActivation`)."""
    if isinstance(x, torch.Tensor):
        if not x.is_floating_point():
            raise TypeError(f"x must have a floating dtype, got {x.dtype}")
        x_np = x.detach().cpu().double().numpy()
        v, w = _nodes_and_weights(kernel, x_np, points, order, derivative, tail)
        _check_reach(kernel, v, x.dtype)
        v_t = torch.as_tensor(np.ascontiguousarray(v), dtype=x.dtype, device=x.device)
        w_t = torch.as_tensor(np.ascontiguousarray(w), dtype=x.dtype, device=x.device)
        values = f(x.unsqueeze(-1) - kernel.scale * v_t)
        # a piece of zero width (every cut clipped to one end, as at x = ±∞) weighs 0 even where f is ∞
        out = torch.where(w_t != 0, values * w_t, 0.0).sum(dim=-1)
    else:
        x_arr = np.asarray(x, dtype=np.float64)
        v, w = _nodes_and_weights(kernel, x_arr, points, order, derivative, tail)
        _check_reach(kernel, v, torch.float64)
        values = np.asarray(f(x_arr[..., None] - kernel.scale * v), dtype=np.float64)
        with np.errstate(invalid="ignore"):
            out = np.sum(np.where(w != 0, values * w, 0.0), axis=-1)
        x = x_arr
    if derivative and kernel.compact:
        out = out + _edge_terms(f, kernel, x, derivative)
    return out / kernel.scale**derivative


class MollifiedActivation(nn.Module):
    """``x ↦ (f * φ_s)(x)`` as a module (quadrature per call; memory ``numel × nodes``, so it
    processes large inputs in chunks). Use it to try a smoothing before deriving its closed form, e.g.
    ``register_activation("relu_gauss", lambda: MollifiedActivation(torch.relu, GaussianKernel(0.5),
    breakpoints=(0.0,)))``."""

    # each breakpoint is checked by _breakpoints (a real number, finite)
    @checked_arguments(
        {
            "f": instance_of(Callable),
            "kernel": instance_of(MollifierKernel),
            "breakpoints": instance_of(tuple, list),
            "order": integer(2),
            "chunk": integer(1),
            "name": text(optional=True, non_empty=True),
        }
    )
    def __init__(
        self,
        f: Callable,
        kernel: MollifierKernel,
        *,
        breakpoints: Sequence[float] = (),
        order: int = 64,
        chunk: int = 1 << 16,
        name: str | None = None,
    ) -> None:
        super().__init__()
        self.breakpoints = _breakpoints(breakpoints)
        self.f, self.kernel, self.order, self.chunk = f, kernel, order, chunk
        self.label = name or f"{getattr(f, '__name__', 'f')}*{kernel.name}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
        flat = x.reshape(-1)
        parts = [_mollify(self.f, self.kernel, part, self.breakpoints, self.order) for part in flat.split(self.chunk)]
        return (torch.cat(parts) if parts else flat.clone()).reshape(x.shape)

    def extra_repr(self) -> str:
        return f"{self.label}, kernel={self.kernel!r}, order={self.order}"

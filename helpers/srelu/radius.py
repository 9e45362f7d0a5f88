"""S-ReLU's radius δ as it enters: the range accepted per dtype, the checks of ``x`` and δ (a number
or a tensor), and δ as the 0-dim tensor the fused kernels take."""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from helpers.core.validation import checked_arguments, instance_of, number

Delta = float | torch.Tensor

# One table line per argument; a tensor δ and the range of δ are checked by checked_delta (needs x).
POSITIVE = number(0, low_open=True)
_RULES = {"x": instance_of(torch.Tensor), "delta": number(0, low_open=True, also=(torch.Tensor,))}


def module_input(x: object, fn: str) -> torch.Tensor:
    """:func:`working` for a module's ``forward``, whose ``x`` no table rule has checked."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{fn}: x must be a torch.Tensor, got {type(x).__name__}")
    return working(x, fn)


def working(x: torch.Tensor, fn: str) -> torch.Tensor:
    """``x`` (a tensor: its table rule or :func:`module_input` checked that) as computed: half
    precision in float32 (there δ = 1e-5 is subnormal and 1/δ overflows)."""
    if not x.is_floating_point():
        raise TypeError(f"{fn}: x must have a floating dtype, got {x.dtype}")
    return x if x.dtype in (torch.float32, torch.float64) else x.to(torch.float32)


def delta_range(dtype: torch.dtype = torch.float32) -> tuple[float, float]:
    """The radii S-ReLU accepts computing in ``dtype``, its normal range: below it ``1/δ``
    overflows (``0·∞ = NaN`` at ``x = 0``) and S-ReLU is ReLU to that precision anyway."""
    return float(torch.finfo(dtype).tiny), float(torch.finfo(dtype).max)


def checked_delta(delta: Delta, x: torch.Tensor | None, fn: str) -> Delta:
    """δ, which its table rule accepted, within :func:`delta_range` for ``x`` (a working tensor,
    or None: float32); a tensor δ also floating, finite, > 0, and broadcasting to ``x``."""
    dtype = torch.float32 if x is None else x.dtype
    (lo, hi), tensor = delta_range(dtype), isinstance(delta, torch.Tensor)
    low = high = shown = delta
    if tensor:
        if not delta.is_floating_point():
            raise TypeError(f"{fn}: delta tensor must have a floating dtype, got {delta.dtype}")
        if delta.device.type == "meta" and x.device.type != "meta":
            raise ValueError(f"{fn}: delta is on device meta (no values) but x on {x.device}; move them to one device")
        low, high = lo, hi  # on "meta" (x too) there are no values, only the shape
        if delta.device.type != "meta" and delta.numel():
            with torch.no_grad():
                if not bool(torch.all(torch.isfinite(delta) & (delta > 0))):
                    raise ValueError(f"{fn}: delta must be finite and > 0 everywhere, got {delta}")
                low, high = float(delta.min()), float(delta.max())
            shown = low if low < 1 else high
    if low < lo or high > hi:
        raise ValueError(
            f"{fn}: delta must lie in [{lo:.4g}, {hi:.4g}] (the normal {dtype} range S-ReLU is "
            f"computed in), got {shown!r}; below the floor S-ReLU is ReLU to {dtype} precision"
        )
    if not tensor:
        return float(delta)
    if delta.dim() > x.dim() or any(d not in (1, n) for d, n in zip(reversed(delta.shape), reversed(x.shape))):
        shapes = f"delta of shape {tuple(delta.shape)}, x of shape {tuple(x.shape)}"
        raise ValueError(f"{fn}: delta must broadcast to x's shape, not enlarge it; got {shapes}")
    return delta


def checked(body: Callable[[torch.Tensor, Delta], torch.Tensor]) -> Callable[[torch.Tensor, Delta], torch.Tensor]:
    """``body`` behind its table rules, :func:`working` and :func:`checked_delta` (``.unchecked``:
    ``body`` alone, for a module whose ``__init__`` checked δ once)."""

    @functools.wraps(body)
    def call(x: torch.Tensor, delta: Delta) -> torch.Tensor:
        work = working(x, body.__name__)
        out = body(work, checked_delta(delta, work, body.__name__))
        return out if work is x else out.to(x.dtype)

    call.unchecked = body  # type: ignore[attr-defined]
    return checked_arguments(_RULES)(call)


@functools.lru_cache(maxsize=256)
def _constant(value: float, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """``value`` as a 0-dim tensor on an accelerator, made once: ``torch.tensor(value, device=...)``
    copies from host memory and waits for the device's queue, which on a GPU stalled every call."""
    return torch.tensor(value, dtype=dtype, device=device)


def delta_tensor(delta: Delta, x: torch.Tensor) -> torch.Tensor:
    """δ as a tensor for the kernels: a Python float would be compiled in as a constant, once per δ."""
    if isinstance(delta, torch.Tensor):
        return delta.detach()
    return torch.tensor(delta, dtype=x.dtype) if x.device.type == "cpu" else _constant(delta, x.dtype, x.device)

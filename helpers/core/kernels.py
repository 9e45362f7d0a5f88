"""Elementwise activation kernels: one formula in plain torch ops, run fused or eagerly.

Every activation (λ-GELU, S-ReLU, Flex-Act's mixture) is a custom :class:`torch.autograd.Function`
whose forward and closed-form backward are written once in plain torch ops (:class:`FusedKernel`).
The *backend* (``REPRO_KERNELS`` or :func:`set_kernel_backend`):

* ``compiled``: :func:`torch.compile` (Inductor: one fused, vectorised C++ loop, or Triton on CUDA;
  one memory pass instead of one per op), per kind of input, with dynamic shapes and an on-disk cache.
* ``eager``: plain ATen calls; differentiable again, used for float64 (gradcheck), other devices,
  and below :data:`COMPILE_MIN_NUMEL` elements (where the compiled wrapper costs more than it saves).
* ``auto`` (default): ``compiled`` where it applies and works, else ``eager``.

Both are deterministic for a thread count and agree to float32 rounding, not bit for bit, so each
result records the backends used (:func:`helpers.core.provenance.note_backend`). A kernel that fails
to compile warns once and runs eagerly on that device type; the others keep compiling
(:func:`compile_unavailable_reason` repeats the failures).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Literal

import torch

from helpers.core.provenance import note_backend

KernelBackend = Literal["auto", "compiled", "eager"]
KERNEL_BACKENDS: tuple[str, ...] = ("auto", "compiled", "eager")

#: Below this many elements a formula runs eagerly in ``auto`` mode: a compiled call costs 70-120 µs
#: of Python and guards, about three ATen passes over 64k floats (AMD EPYC, AVX2, one thread;
#: ``benchmarks/training_step.py``).
COMPILE_MIN_NUMEL: int = 1 << 16

# Where a formula is compiled, by device type: on the CPU Inductor emits C++ loops (float32 only:
# bf16 autocast keeps activations in float32 on the CPU, and float64 is for gradcheck); on CUDA
# it emits Triton kernels, also for the bf16/fp16 tensors autocast gives there. Other devices
# (MPS, "meta") run the eager formula.
_COMPILED_DTYPES: dict[str, tuple[torch.dtype, ...]] = {
    "cpu": (torch.float32,),
    "cuda": (torch.float32, torch.bfloat16, torch.float16),
}

# Dynamo keeps at most this many compiled variants per formula (rank x layout x gradients needed
# stay well below it); past it, it silently runs the formula eagerly, which is still correct.
_RECOMPILE_LIMIT = 64


def _backend_from_env() -> str:
    value = os.environ.get("REPRO_KERNELS", "auto").strip().lower() or "auto"
    if value not in KERNEL_BACKENDS:
        raise ValueError(f"REPRO_KERNELS must be one of {KERNEL_BACKENDS}, got {value!r}")
    return value


_backend: str = _backend_from_env()
# (kernel, device type) -> why its compilation failed there; that kernel runs eagerly there.
_compile_errors: dict[tuple[int, str], str] = {}


def set_kernel_backend(name: KernelBackend) -> None:
    """``"compiled"`` (TorchInductor; an error later if it cannot compile), ``"eager"`` or ``"auto"``."""
    global _backend
    if name not in KERNEL_BACKENDS:
        raise ValueError(f"kernel backend must be one of {KERNEL_BACKENDS}, got {name!r}")
    _backend = name


def kernel_backend() -> str:
    """The backend setting now: ``auto``, ``compiled`` or ``eager``."""
    return _backend


def compile_unavailable_reason() -> str | None:
    """Why compiled kernels failed in this process, one line per failure (None while they work)."""
    return "\n".join(dict.fromkeys(_compile_errors.values())) or None


def _raise_recompile_limit() -> None:
    import torch._dynamo.config as dynamo_config

    for name in ("recompile_limit", "cache_size_limit"):
        if getattr(dynamo_config, name, _RECOMPILE_LIMIT) < _RECOMPILE_LIMIT:
            setattr(dynamo_config, name, _RECOMPILE_LIMIT)


class FusedKernel:
    """A formula ``fn(*tensors) -> tensor(s)`` in plain torch ops, run compiled or eagerly.

    ``eager``: the same values in fewer ATen passes (e.g. ATen's ``gelu``); ``activation``: the
    name provenance records. The first tensor decides whether the compiled version applies.
    Pass numbers as tensors: a changing Python number compiles as a constant, once per value.
    """

    def __init__(self, activation: str, fn: Callable[..., object], eager: Callable[..., object] | None = None) -> None:
        self.activation = activation
        self.fn = fn
        self.eager = fn if eager is None else eager
        self._compiled: Callable[..., object] | None = None

    def compiles(self, *tensors: torch.Tensor) -> bool:
        """Whether a call with these tensors would run the compiled formula."""
        x = tensors[0]
        if _backend == "eager":
            return False
        failure = _compile_errors.get((id(self), x.device.type))
        if failure is not None:
            if _backend == "compiled":
                raise RuntimeError(f"compiled kernels unavailable: {failure}")
            return False
        if torch.compiler.is_compiling():
            return False  # inside a user's torch.compile: it traces and fuses the formula itself
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            return False  # double backward: keep every op differentiable
        if x.numel() == 0 or x.dtype not in _COMPILED_DTYPES.get(x.device.type, ()):
            return False
        return _backend == "compiled" or x.numel() >= COMPILE_MIN_NUMEL

    def __call__(self, *tensors: torch.Tensor):
        if self.compiles(*tensors):
            try:
                if self._compiled is None:
                    _raise_recompile_limit()
                    self._compiled = torch.compile(self.fn, dynamic=True, fullgraph=True)
                out = self._compiled(*tensors)
            except Exception as err:  # noqa: BLE001 (any compiler failure: fall back, say why once)
                if _backend == "compiled":
                    raise
                device = tensors[0].device.type
                failure = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
                _compile_errors[(id(self), device)] = failure
                warnings.warn(
                    f"torch.compile failed for {self.activation} on {device} ({failure}); that kernel "
                    "runs as eager torch ops there from now on (same formula, slower). "
                    "Set REPRO_KERNELS=eager to silence this.",
                    RuntimeWarning,
                    stacklevel=2,
                )
            else:
                note_backend(self.activation, "compiled")
                return out
        note_backend(self.activation, "eager")
        return self.eager(*tensors)

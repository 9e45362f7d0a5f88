"""S-ReLU: ReLU mollified by the Epanechnikov kernel of radius δ (the ``s-relu`` paper).

The paper's closed form (its Sec. 4.6, re-derived by sympy in :mod:`helpers.symbolic.mollification`)
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
tensor δ) and runs one loop forward and one backward: a few lines of C (:data:`_NATIVE_SOURCE`)
compiled once with the system compiler into the cache folder and called through ``ctypes``
(threads for large tensors; elementwise, so results do not depend on the thread count). Where it
cannot be used (no compiler, CUDA, half precision, a per-element δ, double backward, or inside a
user's ``torch.compile``, which then fuses the torch formulas itself) the same formulas run as
torch ops. ``REPRO_SRELU_BACKEND`` (``auto`` (default), ``native``, ``eager``) or
:func:`set_srelu_backend` choose. Native and eager agree to float rounding; each is deterministic.
"""

from __future__ import annotations

import ctypes
import math
import numbers
import os
import warnings

import torch
from torch import nn

from helpers.provenance import note_backend

__all__ = [
    "srelu",
    "srelu_derivative",
    "srelu_second_derivative",
    "srelu_paper_reference",
    "SReLU",
    "SReLUPaperReference",
    "set_srelu_backend",
    "srelu_backend",
]

Delta = float | torch.Tensor

BACKENDS: tuple[str, ...] = ("auto", "native", "eager")


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


def _check_delta(delta: object, x: torch.Tensor | None, fn: str) -> Delta:
    """Return δ as a Python float or a floating tensor; raise for anything that is not a δ > 0
    within :func:`delta_range` of the dtype S-ReLU is computed in for ``x``."""
    if isinstance(delta, bool) or not isinstance(delta, (numbers.Real, torch.Tensor)):
        raise TypeError(
            f"{fn}: delta must be a positive real number or a floating tensor, "
            f"got {type(delta).__name__} ({delta!r})"
        )
    if isinstance(delta, torch.Tensor):
        if not delta.is_floating_point():
            raise TypeError(f"{fn}: delta tensor must have a floating dtype, got {delta.dtype}")
        with torch.no_grad():
            ok = bool(torch.all(torch.isfinite(delta) & (delta > 0)))
        if not ok:
            raise ValueError(f"{fn}: delta must be finite and > 0 everywhere, got {delta}")
        if delta.numel():
            with torch.no_grad():
                low, high = float(delta.min()), float(delta.max())
            _check_delta_range(low, high, _compute_dtype(x), fn, low if low < 1 else high)
        if x is not None:
            try:
                shape = torch.broadcast_shapes(x.shape, delta.shape)
            except RuntimeError as err:
                raise ValueError(
                    f"{fn}: delta of shape {tuple(delta.shape)} does not broadcast to x of "
                    f"shape {tuple(x.shape)}"
                ) from err
            if shape != x.shape:
                raise ValueError(
                    f"{fn}: delta of shape {tuple(delta.shape)} would enlarge x of shape "
                    f"{tuple(x.shape)}; it must broadcast to x's shape"
                )
        return delta
    value = float(delta)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{fn}: delta must be finite and > 0, got {delta!r}")
    _check_delta_range(value, value, _compute_dtype(x), fn, delta)
    return value


# --------------------------------------------------------------------------------------------
# The formulas as torch ops (the eager backend; the C kernels below are the same formulas).
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


# --------------------------------------------------------------------------------------------
# Native backend: the same formulas as one C loop each, built once with the system C compiler
# and called through ctypes. Why not torch.compile: its runtime wrappers cost ~20 µs per call,
# which alone doubles forward+backward for tensors below ~64k elements; a ctypes call costs ~1 µs.
# --------------------------------------------------------------------------------------------
_NATIVE_SOURCE = r"""
#include <stddef.h>

/* t = clamp(x/d, -1, 1) is formed as x*(1/d). Only branch-free selects, so gcc vectorises the
   loops (-fno-trapping-math lets it if-convert the comparisons). relu keeps NaN like torch. */
#define KERNELS(T, SUF)                                                                   \
static void fwd_##SUF(const T *restrict x, T *restrict y, size_t n, T d) {               \
  const T inv = (T)1 / d;                                                                 \
  for (size_t i = 0; i < n; ++i) {                                                        \
    T xi = x[i], t = xi * inv;                                                            \
    t = t > (T)1 ? (T)1 : t;                                                              \
    t = t < (T)-1 ? (T)-1 : t;                                                            \
    T s = t + (T)1;                                                                       \
    T g = s * s * s * ((T)4 - s) * (T)0.0625;                                             \
    T rt = t > (T)0 ? t : (T)0;                                                           \
    T r = xi < (T)0 ? (T)0 : xi;                                                          \
    y[i] = r - d * (rt - g);                                                              \
  }                                                                                       \
}                                                                                         \
static void bwd_##SUF(const T *restrict x, const T *restrict g, T *restrict gx,          \
                      size_t n, T d) {                                                    \
  const T inv = (T)1 / d;                                                                 \
  for (size_t i = 0; i < n; ++i) {                                                        \
    T t = x[i] * inv;                                                                     \
    t = t > (T)1 ? (T)1 : t;                                                              \
    t = t < (T)-1 ? (T)-1 : t;                                                            \
    T s = t + (T)1;                                                                       \
    gx[i] = g[i] * (s * s * ((T)3 - s) * (T)0.25);                                        \
  }                                                                                       \
}                                                                                         \
static void bwdd_##SUF(const T *restrict x, const T *restrict g, T *restrict gx,         \
                       T *restrict gd, size_t n, T d) {                                   \
  const T inv = (T)1 / d;                                                                 \
  for (size_t i = 0; i < n; ++i) {                                                        \
    T t = x[i] * inv;                                                                     \
    t = t > (T)1 ? (T)1 : t;                                                              \
    t = t < (T)-1 ? (T)-1 : t;                                                            \
    T s = t + (T)1, u = (T)1 - t * t;                                                     \
    gx[i] = g[i] * (s * s * ((T)3 - s) * (T)0.25);                                        \
    gd[i] = g[i] * ((T)0.1875 * u * u);                                                   \
  }                                                                                       \
}

KERNELS(float, f32)
KERNELS(double, f64)

typedef struct { int op; const char *x, *g; char *y, *gd; size_t n; double d; } job_t;

static void run_job(const job_t *j) {
  switch (j->op) {
  case 0: fwd_f32((const float *)j->x, (float *)j->y, j->n, (float)j->d); break;
  case 1: bwd_f32((const float *)j->x, (const float *)j->g, (float *)j->y, j->n, (float)j->d); break;
  case 2: bwdd_f32((const float *)j->x, (const float *)j->g, (float *)j->y, (float *)j->gd, j->n,
                   (float)j->d); break;
  case 3: fwd_f64((const double *)j->x, (double *)j->y, j->n, j->d); break;
  case 4: bwd_f64((const double *)j->x, (const double *)j->g, (double *)j->y, j->n, j->d); break;
  case 5: bwdd_f64((const double *)j->x, (const double *)j->g, (double *)j->y, (double *)j->gd,
                   j->n, j->d); break;
  }
}

#define MAX_THREADS 64
#define MIN_PER_THREAD 32768 /* below this a thread costs more than it saves */

/* Elementwise, so splitting the range over threads gives bit-identical results. With -fopenmp
   the pragma binds to the libgomp torch has already loaded, i.e. torch's own thread pool. */
void srelu_run(int op, const void *x, const void *g, void *y, void *gd, size_t n, double d,
               int nthreads) {
  size_t esz = op < 3 ? sizeof(float) : sizeof(double);
  if ((size_t)nthreads > n / MIN_PER_THREAD) nthreads = (int)(n / MIN_PER_THREAD);
  if (nthreads > MAX_THREADS) nthreads = MAX_THREADS;
  if (nthreads < 1) nthreads = 1;
  size_t per = (n / (size_t)nthreads + 63) & ~(size_t)63;
#pragma omp parallel for num_threads(nthreads) schedule(static, 1) if (nthreads > 1)
  for (int k = 0; k < nthreads; ++k) {
    size_t lo = (size_t)k * per, hi = lo + per;
    if (lo > n) lo = n;
    if (hi > n || k == nthreads - 1) hi = n;
    job_t job;
    job.op = op;
    job.x = (const char *)x + lo * esz;
    job.g = g ? (const char *)g + lo * esz : NULL;
    job.y = (char *)y + lo * esz;
    job.gd = gd ? (char *)gd + lo * esz : NULL;
    job.n = hi - lo;
    job.d = d;
    run_job(&job);
  }
}
"""

_OPS: dict[tuple[str, torch.dtype], int] = {
    ("fwd", torch.float32): 0,
    ("bwd", torch.float32): 1,
    ("bwdd", torch.float32): 2,
    ("fwd", torch.float64): 3,
    ("bwd", torch.float64): 4,
    ("bwdd", torch.float64): 5,
}

_state: dict[str, object] = {
    "backend": os.environ.get("REPRO_SRELU_BACKEND", "auto").strip().lower() or "auto",
    "lib": None,  # the loaded ctypes library once built
    "broken": False,  # building failed once under "auto": stay eager
}
if _state["backend"] not in BACKENDS:
    raise ValueError(
        f"REPRO_SRELU_BACKEND={_state['backend']!r} is not one of {', '.join(BACKENDS)}"
    )


def set_srelu_backend(name: str) -> None:
    """Choose how S-ReLU's CPU kernels run: ``"auto"`` (native, eager if it cannot be built),
    ``"native"`` (fail loudly if it cannot be built) or ``"eager"`` (torch ops only)."""
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {name!r}")
    _state["backend"] = name
    _state["broken"] = False


def srelu_backend() -> str:
    """``"native"`` or ``"eager"``: what float32/float64 CPU tensors use now."""
    if _state["backend"] == "eager" or _state["broken"]:
        return "eager"
    return "native" if _native_library() is not None else "eager"


def _build_native() -> ctypes.CDLL:
    """Compile :data:`_NATIVE_SOURCE` once per (source, compiler, flags) into the cache folder
    (:func:`helpers._cbuild.build_library`)."""
    from helpers._cbuild import build_library

    # No -march=native here: the kernel needs AVX2 at most, and fixed flags keep its float32
    # rounding (and so the committed S-ReLU results) the same on every x86-64 machine with AVX2.
    base = ["-O3", "-fno-trapping-math", "-ffp-contract=off", "-fPIC", "-shared"]
    if torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"):
        base.append("-mavx2")
    errors = []
    # With OpenMP first (threads for large tensors); a compiler without it still gives the
    # single-threaded kernel (the pragma is then ignored).
    for flags in ([*base, "-fopenmp"], base):
        try:
            lib = build_library("srelu", _NATIVE_SOURCE, flags=flags, libs=())
            break
        except RuntimeError as err:
            errors.append(str(err)[:300])
    else:
        raise RuntimeError("; ".join(errors))
    lib.srelu_run.argtypes = [
        ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_size_t, ctypes.c_double, ctypes.c_int,
    ]
    lib.srelu_run.restype = None
    return lib


def _native_library() -> ctypes.CDLL | None:
    if _state["backend"] == "eager" or _state["broken"]:
        return None
    if _state["lib"] is None:
        try:
            _state["lib"] = _build_native()
        except Exception as err:  # noqa: BLE001 - any build failure means "no native kernel"
            if _state["backend"] == "native":
                raise RuntimeError(f"S-ReLU native kernel unavailable: {err}") from err
            _state["broken"] = True
            warnings.warn(
                f"S-ReLU: native kernel unavailable ({err}); using torch ops (same values, "
                "slower)",
                RuntimeWarning,
                stacklevel=4,
            )
            return None
    return _state["lib"]  # type: ignore[return-value]


def _use_native(x: torch.Tensor, delta: Delta) -> bool:
    native = _native_applies(x, delta)
    note_backend("srelu", "native" if native else "eager")  # the result's provenance
    return native


def _native_applies(x: torch.Tensor, delta: Delta) -> bool:
    if x.device.type != "cpu" or x.dtype not in (torch.float32, torch.float64):
        return False
    if isinstance(delta, torch.Tensor) and (delta.numel() != 1 or delta.device.type != "cpu"):
        return False
    if torch.compiler.is_compiling() or torch.jit.is_scripting():
        return False  # inside a user's torch.compile: let dynamo trace (and fuse) the torch ops
    return _native_library() is not None


def _scalar(delta: Delta) -> float:
    return float(delta.detach()) if isinstance(delta, torch.Tensor) else delta


def _dense(x: torch.Tensor) -> torch.Tensor:
    """``x`` itself when its storage holds exactly its elements (any standard layout)."""
    if x.is_contiguous():
        return x
    if x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last):
        return x
    if x.dim() == 5 and x.is_contiguous(memory_format=torch.channels_last_3d):
        return x
    return x.contiguous()


class _SReLUFunction(torch.autograd.Function):
    """Forward/backward saving only x (and δ when δ is a tensor)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, delta: Delta) -> torch.Tensor:  # type: ignore[override]
        native = _use_native(x, delta)
        if native:
            x = _dense(x)
        if isinstance(delta, torch.Tensor):
            ctx.save_for_backward(x, delta)
            ctx.delta = None
        else:
            ctx.save_for_backward(x)
            ctx.delta = delta
        if not native:
            return _forward_kernel(x, delta)
        y = torch.empty_like(x)
        _state["lib"].srelu_run(  # type: ignore[union-attr]
            _OPS["fwd", x.dtype], x.data_ptr(), None, y.data_ptr(), None, x.numel(),
            _scalar(delta), torch.get_num_threads(),
        )
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        if ctx.delta is None:
            x, delta = ctx.saved_tensors
        else:
            (x,) = ctx.saved_tensors
            delta = ctx.delta
        need_x, need_delta = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        if torch.is_grad_enabled() or not _use_native(x, delta):
            # Eager torch ops; differentiable, so create_graph=True (double backward) works.
            if need_delta:
                grad_x, grad_delta = _backward_x_delta_kernel(x, delta, grad)
                return (grad_x if need_x else None), grad_delta.sum_to_size(delta.shape)
            return (_backward_x_kernel(x, delta, grad) if need_x else None), None
        if grad.stride() != x.stride() or grad.dtype != x.dtype:
            grad = torch.empty_like(x).copy_(grad)  # same dense layout as x, element for element
        lib = _state["lib"]
        grad_x = torch.empty_like(x)
        threads = torch.get_num_threads()
        if need_delta:
            grad_delta = torch.empty_like(x)
            lib.srelu_run(  # type: ignore[union-attr]
                _OPS["bwdd", x.dtype], x.data_ptr(), grad.data_ptr(), grad_x.data_ptr(),
                grad_delta.data_ptr(), x.numel(), _scalar(delta), threads,
            )
            return (grad_x if need_x else None), grad_delta.sum().reshape(delta.shape)
        lib.srelu_run(  # type: ignore[union-attr]
            _OPS["bwd", x.dtype], x.data_ptr(), grad.data_ptr(), grad_x.data_ptr(), None,
            x.numel(), _scalar(delta), threads,
        )
        return grad_x, None


# --------------------------------------------------------------------------------------------
# Public functional API
# --------------------------------------------------------------------------------------------
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


def srelu_derivative(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """``S-ReLU'(x) = (1 + t)²(2 - t)/4`` with ``t = clamp(x/δ, -1, 1)``: 0 left of the band,
    1 right of it, a cubic smoothstep inside."""
    _check_x(x, "srelu_derivative")
    if x.dtype not in (torch.float32, torch.float64):
        return srelu_derivative(x.to(torch.float32), delta).to(x.dtype)
    d = _check_delta(delta, x, "srelu_derivative")
    return _backward_x_kernel(x, d, torch.ones_like(x))


def srelu_second_derivative(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """``S-ReLU''(x) = 3(1 - t²)/(4δ)``: the Epanechnikov density itself, 0 outside ``(-δ, δ)``."""
    _check_x(x, "srelu_second_derivative")
    if x.dtype not in (torch.float32, torch.float64):
        return srelu_second_derivative(x.to(torch.float32), delta).to(x.dtype)
    d = _check_delta(delta, x, "srelu_second_derivative")
    t = torch.clamp(x / d, -1.0, 1.0)
    return 0.75 * (1.0 - t * t) / d


def srelu_paper_reference(x: torch.Tensor, delta: Delta) -> torch.Tensor:
    """The paper's Appendix D pseudocode, verbatim except that its hard-coded ``a = 0.01``
    becomes the argument ``delta`` (the peer that :func:`srelu` is tested and timed against)."""
    _check_x(x, "srelu_paper_reference")
    a = _check_delta(delta, x, "srelu_paper_reference")
    condition1 = x <= -a
    condition2 = (x > -a) & (x < a)
    p1 = torch.zeros_like(x)
    p2 = x / 2.0 + 3.0 * x**2 / (8.0 * a) + 3.0 * a / 16.0 - x**4 / (16.0 * a**3)
    p3 = x
    output = torch.where(condition1, p1, torch.where(condition2, p2, p3))
    return output


# --------------------------------------------------------------------------------------------
# Modules
# --------------------------------------------------------------------------------------------
class SReLU(nn.Module):
    """S-ReLU activation module.

    ``delta`` (> 0, default 0.001 as in the paper's experiments, its Appendix H) is the
    Epanechnikov radius. With ``learnable=True`` δ is trained through the parameter
    ``log_delta`` (δ = exp(log_delta)): δ stays positive by construction, and a step on
    ``log_delta`` changes δ by a *relative* amount, which suits a quantity whose useful values
    span orders of magnitude (the paper's sweep goes from 1e-3 to 10). The gradient reaching
    ``log_delta`` is ``δ·∂S-ReLU/∂δ = 3δ(1 - t²)²/16``, bounded by ``3δ/16``.
    """

    def __init__(self, delta: float = 0.001, learnable: bool = False) -> None:
        super().__init__()
        if isinstance(delta, torch.Tensor):
            raise TypeError("SReLU: pass delta as a Python number (use learnable=True to train it)")
        value = _check_delta(delta, None, "SReLU")
        if not isinstance(learnable, bool):
            raise TypeError(f"SReLU: learnable must be a bool, got {type(learnable).__name__}")
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


class SReLUPaperReference(nn.Module):
    """Module around :func:`srelu_paper_reference` (for benchmarks and substitution tests)."""

    def __init__(self, delta: float = 0.001) -> None:
        super().__init__()
        self.delta = float(_check_delta(delta, None, "SReLUPaperReference"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return srelu_paper_reference(x, self.delta)

    def extra_repr(self) -> str:
        return f"delta={self.delta:.6g}"

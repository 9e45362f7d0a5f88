"""Fused CPU kernels for λ-GELU in float32, compiled on first use; eager PyTorch is the fallback.

Why a kernel of our own: written with ATen ops, λ-GELU needs a multiply by λ, GELU, a divide
and, in the backward pass, a recomputation plus five more passes for ∂L/∂λ; on this project's
CPU that measured 4-6x the time of ``nn.GELU`` (forward+backward, learnable λ). One fused pass
per direction (``y = x Φ(λx)``; ``∂L/∂x`` and the per-λ sum of ``g x² φ(λx)``) brings it to
``nn.GELU``'s time: 0.97x at 4·10^6 elements and 1.08x at 65 536 for a learnable layerwise λ,
1.09x and 1.21x for a fixed λ (``benchmarks/activations.py``, record in
``benchmarks/activations_measured.txt``). (``torch.compile`` was tried first: its
fused kernels use a slower erf than the oneDNN one behind ``nn.GELU`` and measured ~2x.)

Accuracy: Φ and φ come from one inlined ``exp`` and a degree-8 polynomial (see the C comment of
``gate_and_pdf``): measured against float64, ``xΦ(λx)`` is within 1.4e-6 *relative* for |λx| < 5 and
7e-6 relative wherever it exceeds 1e-30,
including the far negative tail, where ``nn.GELU``'s own erf is off by up to ~38% relative
(< 1.5e-7 absolute). A first version called glibc's vectorised ``erfcf``/``expf`` (libmvec) and
measured 1.4-2.3x ``nn.GELU``: the calls spill every vector register and erfcf is costly. The
current kernel needs only a C compiler with OpenMP.

How: a small C file is compiled with the system ``gcc`` (``-O3 -march=native -fopenmp``, see
:mod:`helpers._cbuild`) into ``<cache_root>/kernels/`` and loaded with :mod:`ctypes`. Before
first use the kernels are checked against a float64 reference on edge cases; any failure (no
compiler, wrong result) disables them with a one-time warning, and :mod:`helpers.lambda_gelu`
falls back to eager PyTorch. The OpenMP runtime is the one PyTorch already loaded, and the
thread count is passed explicitly (``torch.get_num_threads()``).

Results depend on this kernel's float32 rounding: every committed λ-GELU run under
``results/lgelu_*`` was trained with it, and ``python -m helpers.verify_rerun`` retrains one and
compares bit for bit.

Determinism: work is cut into fixed segments that do not depend on the thread count, each
segment's partial sum of ∂L/∂λ is stored separately and the partials are added in a fixed order,
so results are bit-identical run to run and for any number of threads. They differ from the eager
path at float32 rounding level (a different erf implementation), which is why the backend is
recorded by :func:`helpers.lambda_gelu.get_backend`.

Layout: ``x`` (contiguous) is viewed as ``(outer, C, inner)`` with one λ per ``C`` index. A
layerwise λ is ``(1, 1, N)``; a per-channel λ of an ``N×C×H×W`` tensor is ``(N, C, H·W)``;
a λ varying along the last dimension (channels-last or per-neuron) has ``inner == 1`` and is
vectorised along ``C`` instead.
"""

from __future__ import annotations

import ctypes
import functools

import torch

from helpers._cbuild import KernelLibrary

__all__ = ["available", "unavailable_reason", "forward", "backward", "layout"]

_SOURCE = r"""
#include <stdint.h>
#include <math.h>

/* exp(a) for a <= 0, inlined so the vectorised loops keep everything in registers (a call to
   libmvec spills every vector register): Cody-Waite reduction a = n ln2 + r, |r| <= ln2/2,
   Cephes' degree-6 polynomial (about 1 ulp), and 2^n built in the exponent bits. Results below
   float32's smallest normal number are flushed to 0 (they only ever multiply other factors). */
static inline float exp_nonpos(float a) {
    float n = __builtin_rintf(a * 1.44269504088896341f);
    float r = fmaf(n, -0.693359375f, a);
    r = fmaf(n, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = fmaf(p * r, r, r) + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    __builtin_memcpy(&scale, &bits, sizeof scale);
    return a < -87.0f ? 0.0f : p * scale;
}

#define SQRT1_2 0.70710678118654752440f
#define INV_SQRT_2PI 0.39894228040143267794f
#define SEG 16384          /* elements per task: fixed, so partial sums do not depend on threads */
#define ROWBLOCK 64        /* rows per task when lambda varies along the contiguous dimension */
#define PAR_MIN 32768      /* below this many elements one thread is faster */

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Phi(u) and phi(u) with one exp.  For z = |u|/sqrt2 and t = 1/(1 + 0.4 z),
   erfc(z) = t R(t) exp(-z^2), where R is a degree-8 polynomial fitted (minimax in relative error,
   Lawson iterations in float64) to erfcx(z)/t on t in (0, 1]: with float32 arithmetic R gives
   erfcx to 4.2e-7 relative for every z, so Phi stays relative-accurate deep in the negative tail
   (nn.GELU's Abramowitz-Stegun erf is off by ~38% relative there, though by < 1.5e-7 absolute).
   exp(-u^2/2) carries the rounding of u^2 (relative error ~ (u^2/2) 6e-8: 8e-7 at |u| = 5,
   5e-6 where Phi reaches float32's smallest normal number).  The same exp gives
   phi(u) = exp(-u^2/2)/sqrt(2 pi).  Limits: |u| = inf gives t = 0, exp = 0, Phi = 0 or 1;
   NaN propagates. */
static inline float gate_and_pdf(float u, float* pdf) {
    float z = SQRT1_2 * fabsf(u);
    float t = 1.0f / (1.0f + 0.4f * z);
    float r = 0.0502624586224556f;
    r = fmaf(r, t, -0.1829027235507965f);
    r = fmaf(r, t, 0.16908736526966095f);
    r = fmaf(r, t, -0.0056090508587658405f);
    r = fmaf(r, t, 0.14143209159374237f);
    r = fmaf(r, t, 0.1685418337583542f);
    r = fmaf(r, t, 0.20784270763397217f);
    r = fmaf(r, t, 0.22566959261894226f);
    r = fmaf(r, t, 0.22567586600780487f);
    float sq = u * u;
    float e = exp_nonpos(-0.5f * sq);
    float tail = 0.5f * (t * r) * e;          /* Phi(-|u|) = erfc(z)/2 */
    *pdf = INV_SQRT_2PI * e;
    return u < 0.0f ? tail : 1.0f - tail;
}

static inline float lg_value(float xi, float l) {
    float pdf;
    return xi * gate_and_pdf(l * xi, &pdf);
}

/* gx = g (Phi(u) + u phi(u)); *dl = g x^2 phi(u), x^2 formed as x (x phi) so it cannot overflow
   before the multiplication by phi = 0 */
static inline float lg_grad(float xi, float gi, float l, float* dl) {
    float pdf, u = l * xi;
    float cdf = gate_and_pdf(u, &pdf);
    float upd = (u < 64.0f && u > -64.0f) ? u * pdf : 0.0f;   /* phi(64) = 0 in float32; avoids inf*0 */
    *dl = gi * xi * (xi * pdf);
    return gi * (cdf + upd);
}

/* y = x * Phi(lam x) */
void lg_forward(const float* restrict x, float* restrict y, const float* restrict lam,
                int64_t outer, int64_t C, int64_t inner, int nthreads) {
    int64_t n = outer * C * inner;
    if (inner == 1 && C > 1) {
        int64_t nblk = (outer + ROWBLOCK - 1) / ROWBLOCK;
        #pragma omp parallel for schedule(static) num_threads(nthreads) if(n > PAR_MIN)
        for (int64_t b = 0; b < nblk; ++b) {
            for (int64_t o = b * ROWBLOCK; o < min64((b + 1) * ROWBLOCK, outer); ++o) {
                const float* xr = x + o * C;
                float* yr = y + o * C;
                #pragma omp simd
                for (int64_t c = 0; c < C; ++c) yr[c] = lg_value(xr[c], lam[c]);
            }
        }
    } else {
        int64_t rows = outer * C, nseg = (inner + SEG - 1) / SEG, ntask = rows * nseg;
        #pragma omp parallel for schedule(static) num_threads(nthreads) if(n > PAR_MIN)
        for (int64_t k = 0; k < ntask; ++k) {
            int64_t r = k / nseg, i0 = (k % nseg) * SEG, i1 = min64(i0 + SEG, inner);
            float l = lam[r % C];
            const float* xr = x + r * inner;
            float* yr = y + r * inner;
            #pragma omp simd
            for (int64_t i = i0; i < i1; ++i) yr[i] = lg_value(xr[i], l);
        }
    }
}

/* gx = g * (Phi(u) + u phi(u)),  dlam[c] = sum g x^2 phi(u)  (u = lam x).
   partial: scratch of ntask (rows mode) or nblk*C (trailing mode) doubles. */
void lg_backward(const float* restrict g, const float* restrict x, const float* restrict lam,
                 float* restrict gx, double* restrict partial, double* restrict dlam,
                 int64_t outer, int64_t C, int64_t inner, int need_lam, int nthreads) {
    int64_t n = outer * C * inner;
    if (inner == 1 && C > 1) {
        int64_t nblk = (outer + ROWBLOCK - 1) / ROWBLOCK;
        #pragma omp parallel for schedule(static) num_threads(nthreads) if(n > PAR_MIN)
        for (int64_t b = 0; b < nblk; ++b) {
            double* pb = partial + b * C;
            if (need_lam) for (int64_t c = 0; c < C; ++c) pb[c] = 0.0;
            for (int64_t o = b * ROWBLOCK; o < min64((b + 1) * ROWBLOCK, outer); ++o) {
                const float* xr = x + o * C;
                const float* gr = g + o * C;
                float* gxr = gx + o * C;
                if (need_lam) {
                    #pragma omp simd
                    for (int64_t c = 0; c < C; ++c) {
                        float dl;
                        gxr[c] = lg_grad(xr[c], gr[c], lam[c], &dl);
                        pb[c] += (double)dl;
                    }
                } else {
                    #pragma omp simd
                    for (int64_t c = 0; c < C; ++c) {
                        float dl;
                        gxr[c] = lg_grad(xr[c], gr[c], lam[c], &dl);
                    }
                }
            }
        }
        if (need_lam) {
            for (int64_t c = 0; c < C; ++c) dlam[c] = 0.0;
            for (int64_t b = 0; b < nblk; ++b)
                for (int64_t c = 0; c < C; ++c) dlam[c] += partial[b * C + c];
        }
    } else {
        int64_t rows = outer * C, nseg = (inner + SEG - 1) / SEG, ntask = rows * nseg;
        #pragma omp parallel for schedule(static) num_threads(nthreads) if(n > PAR_MIN)
        for (int64_t k = 0; k < ntask; ++k) {
            int64_t r = k / nseg, i0 = (k % nseg) * SEG, i1 = min64(i0 + SEG, inner);
            float l = lam[r % C];
            const float* xr = x + r * inner;
            const float* gr = g + r * inner;
            float* gxr = gx + r * inner;
            if (need_lam) {
                float acc = 0.0f;
                #pragma omp simd reduction(+:acc)
                for (int64_t i = i0; i < i1; ++i) {
                    float dl;
                    gxr[i] = lg_grad(xr[i], gr[i], l, &dl);
                    acc += dl;
                }
                partial[k] = (double)acc;
            } else {
                #pragma omp simd
                for (int64_t i = i0; i < i1; ++i) {
                    float dl;
                    gxr[i] = lg_grad(xr[i], gr[i], l, &dl);
                }
            }
        }
        if (need_lam) {
            for (int64_t c = 0; c < C; ++c) dlam[c] = 0.0;
            for (int64_t k = 0; k < ntask; ++k) dlam[(k / nseg) % C] += partial[k];
        }
    }
}
"""

_SEG = 16384
_ROWBLOCK = 64

def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    p, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    lib.lg_forward.argtypes = [p, p, p, i64, i64, i64, i32]
    lib.lg_forward.restype = None
    lib.lg_backward.argtypes = [p, p, p, p, p, p, i64, i64, i64, i32, i32]  # partial/dlam: ctypes arrays
    lib.lg_backward.restype = None
    return lib


_KERNELS = KernelLibrary("lambda_gelu", _SOURCE, declare=_declare, self_test=lambda lib: _self_test(lib),
                         env_var="REPRO_LAMBDA_GELU_BACKEND", label="λ-GELU", libs=("-lm",))
available = _KERNELS.available
unavailable_reason = _KERNELS.unavailable_reason


@functools.lru_cache(maxsize=512)
def layout(shape: torch.Size, lam_shape: torch.Size) -> tuple[int, int, int] | None:
    """``(outer, C, inner)`` for ``x`` of ``shape`` and λ of ``lam_shape`` (right-aligned
    broadcasting), or ``None`` when λ's non-singleton dims are not one contiguous block."""
    ndim = len(shape)
    if len(lam_shape) > ndim:
        return None
    padded = (1,) * (ndim - len(lam_shape)) + tuple(lam_shape)
    varying = [d for d, size in enumerate(padded) if size != 1]
    if not varying:
        return 1, 1, int(torch.Size(shape).numel())
    d0, d1 = varying[0], varying[-1] + 1
    if any(padded[d] != shape[d] for d in range(d0, d1)):
        return None
    prod = lambda dims: int(torch.Size(dims).numel())  # noqa: E731
    return prod(shape[:d0]), prod(shape[d0:d1]), prod(shape[d1:])


def _lambda_pointer(lam: torch.Tensor | float) -> tuple[object, object]:
    """A pointer argument to λ's ``C`` float32 values, and the object that must stay alive."""
    if isinstance(lam, float):
        buf = (ctypes.c_float * 1)(lam)
        return buf, buf
    lam_c = lam.detach().to(torch.float32).contiguous()  # C values in layout order
    return lam_c.data_ptr(), lam_c


def _run_forward(lib: ctypes.CDLL, x: torch.Tensor, lam: torch.Tensor | float, lay: tuple[int, int, int],
                 nthreads: int) -> torch.Tensor:
    ptr, _keep = _lambda_pointer(lam)
    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    lib.lg_forward(x.data_ptr(), y.data_ptr(), ptr, *lay, nthreads)
    return y


def _run_backward(lib: ctypes.CDLL, g: torch.Tensor, x: torch.Tensor, lam: torch.Tensor | float,
                  lay: tuple[int, int, int], need_lam: bool, nthreads: int
                  ) -> tuple[torch.Tensor, torch.Tensor | float | None]:
    outer, channels, inner = lay
    g = g.contiguous()  # e.g. the expanded ones of ``y.sum().backward()``
    ptr, _keep = _lambda_pointer(lam)
    gx = torch.empty_like(x, memory_format=torch.contiguous_format)
    if inner == 1 and channels > 1:
        scratch = -(-outer // _ROWBLOCK) * channels
    else:
        scratch = outer * channels * -(-inner // _SEG)
    # scratch and result as ctypes arrays: cheaper than tensors for the common tiny case
    partial = (ctypes.c_double * (scratch if need_lam else 1))()
    dlam = (ctypes.c_double * channels)()
    lib.lg_backward(g.data_ptr(), x.data_ptr(), ptr, gx.data_ptr(), partial, dlam,
                    outer, channels, inner, int(need_lam), nthreads)
    if not need_lam:
        return gx, None
    if isinstance(lam, float):
        return gx, dlam[0]
    return gx, torch.frombuffer(dlam, dtype=torch.float64).clone()


def forward(x: torch.Tensor, lam: torch.Tensor | float, lay: tuple[int, int, int]) -> torch.Tensor:
    """``x Φ(λx)`` for contiguous float32 ``x``; ``lam`` is a float (one λ) or holds the ``C``
    values of λ in layout order."""
    lib = _KERNELS.require()
    return _run_forward(lib, x, lam, lay, torch.get_num_threads())


def backward(
    g: torch.Tensor, x: torch.Tensor, lam: torch.Tensor | float, lay: tuple[int, int, int], need_lam: bool
) -> tuple[torch.Tensor, torch.Tensor | float | None]:
    """``(∂L/∂x, ∂L/∂λ)``; ``∂L/∂λ`` is a float for a float ``lam``, else a float64 tensor of
    ``C`` entries (sums accumulated in float64; the caller casts)."""
    lib = _KERNELS.require()
    return _run_backward(lib, g, x, lam, lay, need_lam, torch.get_num_threads())


def _self_test(lib: ctypes.CDLL) -> None:
    """Compare with a float64 reference on edge cases for all three layouts; raise on mismatch.

    Runs with 2 threads so the parallel code path is exercised too.
    """
    gen = torch.Generator().manual_seed(0)
    edge = torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e4, -1e4, 40.0, -40.0, 3.0, -3.0])
    cases = [
        (torch.cat([edge, torch.randn(70_000, generator=gen) * 3]), torch.tensor(2.5)),  # layer
        (torch.randn(3, 4, 5, 6, generator=gen) * 3, torch.tensor([1.0, 2.0, 160.0, 1e4]).view(4, 1, 1)),
        (torch.randn(70, 9, generator=gen) * 3, torch.linspace(1.0, 50.0, 9)),  # λ along the last dim
    ]
    for x, lam in cases:
        lay = layout(x.shape, lam.shape)
        if lay is None:
            raise RuntimeError("self-test layout")
        g = torch.randn(x.shape, generator=gen)
        xd, ld, gd = x.double(), lam.double(), g.double()
        u = xd * ld
        pdf = torch.exp(-0.5 * u * u) / (2 * torch.pi) ** 0.5
        y_ref = xd * torch.special.ndtr(u)
        gx_ref = gd * (torch.special.ndtr(u) + u * pdf)
        dl_ref = (gd * xd * xd * pdf).sum_to_size(lam.shape).reshape(-1)
        y = _run_forward(lib, x, lam, lay, 2)
        gx, dl = _run_backward(lib, g, x, lam, lay, True, 2)
        assert isinstance(dl, torch.Tensor)
        if not torch.all((y.double() - y_ref).abs() <= 1e-6 * xd.abs().clamp_min(1.0)):
            raise RuntimeError(f"forward self-test failed for layout {lay}")
        if not torch.all((gx.double() - gx_ref).abs() <= 1e-6 * gd.abs().clamp_min(1.0)):
            raise RuntimeError(f"backward (x) self-test failed for layout {lay}")
        if not torch.allclose(dl, dl_ref, rtol=1e-4, atol=1e-6 * float(gd.abs().sum())):
            raise RuntimeError(f"backward (λ) self-test failed for layout {lay}")

"""Fused CPU kernels for Flex-Act's basis mixture in float32, compiled on first use.

What they compute (:class:`helpers.flexact._BasisMixture`): with the basis coefficients
``c_relu, c_sig, c_tanh, c_id`` of one Gumbel-softmax sample,

* forward ``y = c_relu·relu(h) + c_sig·σ(h) + c_tanh·tanh(h) + c_id·h``, in one pass;
* backward, in one pass reading ``g`` and ``h`` only (σ and tanh are recomputed, which is
  cheaper than saving and reading them back): ``∂L/∂h = g·(s(h) + c_sig·σ'(h) + c_tanh·tanh'(h))``
  and the four basis sums ``Σ g·b_r(h)`` from which the caller forms ∂L/∂weights;
* for the regulariser (:func:`helpers.flexact.mean_gradient_norms`), per sample in one pass:
  ``#{h > 0}``, ``Σ σ'(h)²`` and ``Σ tanh'(h)²``, from which the L2 norms of the derivatives of
  relu, leaky_relu, sigmoid, tanh and identity follow.

Why: written with ATen ops the mixture needs three transcendental passes forward and seven
passes backward (three ``*_backward`` kernels, four dot products); on this project's CPU that
measured 5.9x (4·10^6 elements) and 3.3x (65 536) the forward+backward time of ``nn.GELU``
(``benchmarks/activations.py``, training mode, including the Gumbel-softmax sampling).

Numerics (float32, checked against float64 by :func:`_self_test` on every first load):

* one libmvec call per element, ``e = exp(-|h|)`` (glibc's ``libmvec``, a few ulp), plus
  ``m = expm1(-|h|)`` from a degree-9 Taylor polynomial for ``|h| < 0.5`` and ``e - 1`` beyond
  (no harmful cancellation there), give everything: ``σ(|h|) = 1/(1+e)``, ``σ(-|h|) = e/(1+e)``
  (relative-accurate in the tail), ``σ' = e/(1+e)²``, ``tanh|h| = -m(1+e)/(1+e²)``
  (``1-e² = -m(1+e)`` has no cancellation near 0, so tanh is relative-accurate for tiny ``h``)
  and ``tanh' = (2e/(1+e²))²`` (relative-accurate for large ``|h|``, unlike ``1 - tanh²``); one
  division gives both ``1/(1+e)`` and ``1/(1+e²)``. Measured against float64: within about 3 ulp
  for σ and tanh, 4-6 ulp for their derivatives (subnormal results excepted);
* the piecewise-linear part ``c_relu·relu(h) + c_id·h`` is ``s(h)·h`` with slope
  ``s = c_relu + c_id`` for ``h > 0`` and ``c_id`` otherwise (``relu'(0) = 0``, as autograd), and
  a zero slope contributes an exact 0, so ``h = ±∞`` gives the right limits for one-hot samples
  (``0·∞`` is never formed) and for leaky slopes > 1 (negative ``c_relu``);
* NaN propagates (``exp(NaN)`` is NaN in the σ and tanh terms, which are always added, also
  with a zero coefficient).

Determinism: the flat input is cut into fixed segments of :data:`SEG` elements, independent of
the thread count; each segment's four partial sums are accumulated in float32 (a fixed SIMD
order) and stored, then added in segment order in float64. Results are bit-identical run to
run and for any ``torch.get_num_threads()`` (passed to the kernel explicitly).

Fallback: no compiler, a failed build or a failed self-test disables the kernels with a one-time
``RuntimeWarning``, and :mod:`helpers.flexact` uses its eager ATen path; so does
``REPRO_FLEXACT_BACKEND=eager``. The library is built by :func:`helpers._cbuild.build_library`.
"""

from __future__ import annotations

import ctypes

import torch

from helpers._cbuild import KernelLibrary

__all__ = ["available", "unavailable_reason", "forward", "backward", "grad_norm_sums", "SEG"]

_SOURCE = r"""
#include <stdint.h>

/* glibc's libmvec has SIMD versions of these; the attribute lets gcc call them from the
   vectorised loops below without -ffast-math (which would also drop NaN/Inf semantics). */
__attribute__((simd("notinbranch"))) float expf(float);
float fabsf(float);
float copysignf(float, float);

#define SEG 16384          /* elements per task: fixed, so partial sums do not depend on threads */
#define PAR_MIN 32768      /* below this many elements one thread is faster */

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* expm1(y) for -0.5 <= y <= 0: Taylor series to y^9/9! (truncation < 1e-9 relative), about
   1 ulp in float32. Cheaper than a second libmvec call; for |y| >= 0.5, exp(y) - 1 has no
   harmful cancellation (|expm1| >= 0.39). */
static inline float expm1_small(float y) {
    float p = 1.0f / 362880.0f;
    p = p * y + 1.0f / 40320.0f;
    p = p * y + 1.0f / 5040.0f;
    p = p * y + 1.0f / 720.0f;
    p = p * y + 1.0f / 120.0f;
    p = p * y + 1.0f / 24.0f;
    p = p * y + 1.0f / 6.0f;
    p = p * y + 0.5f;
    p = p * y + 1.0f;
    return p * y;
}

/* Shared per-element work: e = exp(-|x|), m = expm1(-|x|), q = 1/(1+e^2), r = 1/(1+e). */
#define FA_BASIS(x)                                                          \
    float ax = fabsf(x);                                                     \
    float e = expf(-ax);                                                     \
    float m = (ax < 0.5f) ? expm1_small(-ax) : e - 1.0f;  /* expm1(-|x|) */   \
    float pe = 1.0f + e, pq = 1.0f + e * e, d = 1.0f / (pe * pq);            \
    float r = pq * d, q = pe * d;              /* 1/(1+e), 1/(1+e^2): one divide */ \
    float sg = (x > 0.0f) ? r : e * r;                  /* sigmoid(x) */     \
    float th = copysignf((-m) * (1.0f + e) * q, x);     /* tanh(x) */        \
    float sl = (x > 0.0f) ? a : b;                      /* slope of the linear part */

/* y = s(x) x + cs sigmoid(x) + ct tanh(x); a = c_relu + c_id, b = c_id. */
void fa_forward(const float* restrict h, float* restrict y, int64_t n,
                float a, float b, float cs, float ct, int nthreads) {
    int64_t ntask = (n + SEG - 1) / SEG;
    #pragma omp parallel for schedule(static) num_threads(nthreads) if(n > PAR_MIN)
    for (int64_t k = 0; k < ntask; ++k) {
        int64_t i1 = min64((k + 1) * SEG, n);
        #pragma omp simd
        for (int64_t i = k * SEG; i < i1; ++i) {
            float x = h[i];
            FA_BASIS(x)
            float lin = (sl == 0.0f) ? 0.0f : sl * x;  /* never 0*inf */
            y[i] = lin + cs * sg + ct * th;
        }
    }
}

/* gh = g (s(x) + cs sigmoid'(x) + ct tanh'(x)); if need_sums, partial[4k + j] holds segment k's
   sum of g*relu(x), g*sigmoid(x), g*tanh(x), g*x, and sums[0..3] their totals in segment order. */
void fa_backward(const float* restrict g, const float* restrict h, float* restrict gh,
                 double* restrict partial, double* restrict sums, int64_t n,
                 float a, float b, float cs, float ct, int need_sums, int nthreads) {
    int64_t ntask = (n + SEG - 1) / SEG;
    #pragma omp parallel for schedule(static) num_threads(nthreads) if(n > PAR_MIN)
    for (int64_t k = 0; k < ntask; ++k) {
        int64_t i1 = min64((k + 1) * SEG, n);
        if (need_sums) {
            float sr = 0.0f, ss = 0.0f, st = 0.0f, si = 0.0f;
            #pragma omp simd reduction(+:sr, ss, st, si)
            for (int64_t i = k * SEG; i < i1; ++i) {
                float x = h[i], gi = g[i];
                FA_BASIS(x)
                float ds = e * r * r;              /* sigmoid' = sigmoid(|x|) sigmoid(-|x|) */
                float u = 2.0f * e * q, dt = u * u; /* tanh' = sech^2 */
                gh[i] = gi * (sl + cs * ds + ct * dt);
                sr += gi * ((x < 0.0f) ? 0.0f : x);
                ss += gi * sg;
                st += gi * th;
                si += gi * x;
            }
            partial[4 * k] = (double)sr;
            partial[4 * k + 1] = (double)ss;
            partial[4 * k + 2] = (double)st;
            partial[4 * k + 3] = (double)si;
        } else {
            #pragma omp simd
            for (int64_t i = k * SEG; i < i1; ++i) {
                float x = h[i], gi = g[i];
                FA_BASIS(x)
                float ds = e * r * r;
                float u = 2.0f * e * q, dt = u * u;
                (void)sg; (void)th;
                gh[i] = gi * (sl + cs * ds + ct * dt);
            }
        }
    }
    if (need_sums) {
        for (int j = 0; j < 4; ++j) sums[j] = 0.0;
        for (int64_t k = 0; k < ntask; ++k)
            for (int j = 0; j < 4; ++j) sums[j] += partial[4 * k + j];
    }
}

/* Per row r of an (rows x cols) matrix: out[3r] = #{x > 0}, out[3r+1] = sum sigmoid'(x)^2,
   out[3r+2] = sum tanh'(x)^2 (the squared L2 norms of the candidates' derivatives). A row is
   summed by one thread in a fixed order (float32 within a segment, float64 across segments). */
void fa_grad_norms(const float* restrict h, double* restrict out, int64_t rows, int64_t cols,
                   int nthreads) {
    const float a = 0.0f, b = 0.0f;  /* unused slopes of FA_BASIS */
    #pragma omp parallel for schedule(static) num_threads(nthreads) if(rows * cols > PAR_MIN)
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = h + r * cols;
        double npos = 0.0, s2 = 0.0, t2 = 0.0;
        for (int64_t i0 = 0; i0 < cols; i0 += SEG) {
            int64_t i1 = min64(i0 + SEG, cols);
            float cp = 0.0f, cs = 0.0f, ct = 0.0f;
            #pragma omp simd reduction(+:cp, cs, ct)
            for (int64_t i = i0; i < i1; ++i) {
                float x = xr[i];
                FA_BASIS(x)
                (void)sg; (void)th; (void)sl;
                float ds = e * r * r;
                float u = 2.0f * e * q, dt = u * u;
                cp += (x > 0.0f) ? 1.0f : 0.0f;
                cs += ds * ds;
                ct += dt * dt;
            }
            npos += (double)cp; s2 += (double)cs; t2 += (double)ct;
        }
        out[3 * r] = npos; out[3 * r + 1] = s2; out[3 * r + 2] = t2;
    }
}
"""

#: Elements per segment of the deterministic reduction (must match ``SEG`` in the C source).
SEG = 16384

def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    p, i64, i32, f32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_float
    lib.fa_forward.argtypes = [p, p, i64, f32, f32, f32, f32, i32]
    lib.fa_forward.restype = None
    lib.fa_backward.argtypes = [p, p, p, p, p, i64, f32, f32, f32, f32, i32, i32]
    lib.fa_backward.restype = None
    lib.fa_grad_norms.argtypes = [p, p, i64, i64, i32]
    lib.fa_grad_norms.restype = None
    return lib


_KERNELS = KernelLibrary("flexact", _SOURCE, declare=_declare, self_test=lambda lib: _self_test(lib),
                         env_var="REPRO_FLEXACT_BACKEND", label="Flex-Act")
available = _KERNELS.available
unavailable_reason = _KERNELS.unavailable_reason


def _slopes(coeffs: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """``(a, b, c_sig, c_tanh)`` from ``(c_relu, c_sig, c_tanh, c_id)``: slope ``a`` for ``h > 0``
    (summed in float64 before the kernel rounds it to float32), ``b`` for ``h <= 0``."""
    cr, cs, ct, ci = coeffs
    return cr + ci, ci, cs, ct


def _run_forward(lib: ctypes.CDLL, h: torch.Tensor, coeffs: tuple[float, float, float, float],
                 nthreads: int) -> torch.Tensor:
    y = torch.empty_like(h, memory_format=torch.contiguous_format)
    lib.fa_forward(h.data_ptr(), y.data_ptr(), h.numel(), *_slopes(coeffs), nthreads)
    return y


def _run_backward(lib: ctypes.CDLL, g: torch.Tensor, h: torch.Tensor, coeffs: tuple[float, float, float, float],
                  need_sums: bool, nthreads: int) -> tuple[torch.Tensor, tuple[float, float, float, float] | None]:
    g = g.contiguous()  # e.g. the expanded ones of ``y.sum().backward()``
    n = h.numel()
    gh = torch.empty_like(h, memory_format=torch.contiguous_format)
    ntask = -(-n // SEG)
    # scratch and result as ctypes arrays: cheaper than tensors for the common small case
    partial = (ctypes.c_double * (4 * ntask if need_sums else 1))()
    sums = (ctypes.c_double * 4)()
    lib.fa_backward(g.data_ptr(), h.data_ptr(), gh.data_ptr(), partial, sums, n, *_slopes(coeffs),
                    int(need_sums), nthreads)
    return gh, (tuple(sums) if need_sums else None)  # type: ignore[return-value]


def forward(h: torch.Tensor, coeffs: tuple[float, float, float, float]) -> torch.Tensor:
    """``c_relu·relu(h) + c_sig·σ(h) + c_tanh·tanh(h) + c_id·h`` for contiguous float32 CPU ``h``;
    ``coeffs = (c_relu, c_sig, c_tanh, c_id)``."""
    lib = _KERNELS.require()
    return _run_forward(lib, h, coeffs, torch.get_num_threads())


def backward(g: torch.Tensor, h: torch.Tensor, coeffs: tuple[float, float, float, float], need_sums: bool
             ) -> tuple[torch.Tensor, tuple[float, float, float, float] | None]:
    """``(∂L/∂h, (Σ g·relu(h), Σ g·σ(h), Σ g·tanh(h), Σ g·h))``; the sums (accumulated in float64)
    are ``None`` unless ``need_sums``."""
    lib = _KERNELS.require()
    return _run_backward(lib, g, h, coeffs, need_sums, torch.get_num_threads())


def _run_grad_norms(lib: ctypes.CDLL, h: torch.Tensor, rows: int, nthreads: int) -> torch.Tensor:
    out = torch.empty(rows, 3, dtype=torch.float64)
    lib.fa_grad_norms(h.data_ptr(), out.data_ptr(), rows, h.numel() // rows, nthreads)
    return out


def grad_norm_sums(h: torch.Tensor, rows: int) -> torch.Tensor:
    """``(rows, 3)`` float64: per row of contiguous float32 ``h`` viewed as ``rows × cols``, the
    count of ``h > 0``, ``Σ σ'(h)²`` and ``Σ tanh'(h)²`` (squared norms of the derivatives)."""
    lib = _KERNELS.require()
    return _run_grad_norms(lib, h, rows, torch.get_num_threads())


def _self_test(lib: ctypes.CDLL) -> None:
    """Compare with a float64 reference on edge cases; raise on mismatch.

    Runs with 2 threads and more than one segment, so the parallel path and the ordered
    reduction are exercised; infinities are checked for their limits, NaN for propagation.
    """
    gen = torch.Generator().manual_seed(0)
    edge = torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 0.3, -0.3, 1.0, -1.0, 9.0, -9.0,
                         20.0, -20.0, 60.0, -60.0, 1e4, -1e4, 3e38, -3e38])
    h = torch.cat([edge, torch.randn(70_000, generator=gen) * 4])
    g = torch.randn(h.shape, generator=gen)
    hd, gd = h.double(), g.double()

    def close(got: torch.Tensor, want: torch.Tensor, scale: torch.Tensor) -> bool:
        # 8 float32 ulp of the terms' magnitude, a floor for float32 underflow, and exact
        # agreement where the float64 value overflows float32
        ok = (got - want).abs() <= 8 * 2.0**-23 * scale + 1e-37 * scale.clamp_max(1.0)
        return bool(torch.all(ok | (got == want.float().double())))

    for coeffs in [(0.3, 0.2, 0.15, 0.35), (1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0),
                   (-1.0, 0.0, 0.0, 2.0), (0.0, 0.0, 0.0, 1.0)]:
        c = tuple(float(torch.tensor(v, dtype=torch.float32)) for v in coeffs)
        y = _run_forward(lib, h, c, 2).double()
        gh, sums = _run_backward(lib, g, h, c, True, 2)
        assert sums is not None
        y_ref, dy_ref, bases = _reference_terms(hd, c)
        if not close(y, y_ref, sum(abs(cj) * bj.abs() for cj, bj in zip(c, bases))):
            raise RuntimeError(f"forward self-test failed for coefficients {c}")
        if not close(gh.double(), gd * dy_ref, gd.abs() * _derivative_scale(hd, c)):
            raise RuntimeError(f"backward (h) self-test failed for coefficients {c}")
        for j in range(4):
            terms = gd * bases[j]
            if abs(sums[j] - float(terms.sum())) > 1e-5 * float(terms.abs().sum()) + 1e-30:
                raise RuntimeError(f"backward (sum {j}) self-test failed for coefficients {c}")
    sums = _run_grad_norms(lib, h[:70_000], 7, 2)
    e = torch.exp(-hd[:70_000].abs()).view(7, -1)
    want = torch.stack([(hd[:70_000] > 0).view(7, -1).sum(1).double(), ((e / (1 + e) ** 2) ** 2).sum(1),
                        ((2 * e / (1 + e * e)) ** 4).sum(1)], 1)
    if not torch.allclose(sums, want, rtol=1e-5, atol=0):
        raise RuntimeError("gradient-norm self-test failed")
    special = torch.tensor([float("inf"), float("-inf"), float("nan")])
    for c in [(0.3, 0.2, 0.15, 0.35), (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0), (1.0, 0.0, 0.0, 0.0),
              (-1.0, 0.0, 0.0, 2.0)]:
        y = _run_forward(lib, special, c, 1).double()
        y_ref, _, _ = _reference_terms(special.double(), c)
        if not (torch.equal(y[:2], y_ref[:2]) and bool(y[2].isnan())):
            raise RuntimeError(f"forward self-test failed at ±inf/NaN for coefficients {c}: {y.tolist()}")
        gs = torch.tensor([1.5, -2.0, 1.0])
        gh, _ = _run_backward(lib, gs, special, c, True, 1)
        want = gs[:2] * torch.tensor([c[0] + c[3], c[3]], dtype=torch.float32)  # g times the slope
        if not (torch.equal(gh[:2], want) and bool(gh[2].isnan())):
            raise RuntimeError(f"backward self-test failed at ±inf/NaN for coefficients {c}: {gh.tolist()}")


def _reference_terms(hd: torch.Tensor, c: tuple[float, float, float, float]
                     ) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """Float64 ``(y, y', [relu, σ, tanh, id](h))`` for coefficients ``c``; a zero coefficient
    contributes an exact 0 and the linear part is one piecewise-linear term, so ``±∞`` gives
    the mathematical limits."""
    e = torch.exp(-hd.abs())
    bases = [torch.relu(hd), torch.sigmoid(hd), torch.tanh(hd), hd]
    d_sig = e / (1 + e) ** 2
    d_tanh = (2 * e / (1 + e * e)) ** 2
    a, b = c[0] + c[3], c[3]
    slope = torch.where(hd > 0, torch.full_like(hd, a), torch.full_like(hd, b))
    lin = torch.where(slope == 0, torch.zeros_like(hd), slope * hd)
    y = lin + c[1] * bases[1] + c[2] * bases[2]
    dy = slope + c[1] * d_sig + c[2] * d_tanh
    return y, dy, bases


def _derivative_scale(hd: torch.Tensor, c: tuple[float, float, float, float]) -> torch.Tensor:
    e = torch.exp(-hd.abs())
    a, b = c[0] + c[3], c[3]
    slope = torch.where(hd > 0, torch.full_like(hd, abs(a)), torch.full_like(hd, abs(b)))
    return slope + abs(c[1]) * e / (1 + e) ** 2 + abs(c[2]) * (2 * e / (1 + e * e)) ** 2

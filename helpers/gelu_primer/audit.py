"""The GELU primer read against itself: claims its own definitions, tables or other sections contradict or qualify.

Each function below checks one statement of the post (its words are in
:data:`helpers.gelu_primer.paper.AUDIT_QUOTES`) against the post's own definitions, computed here
(sympy/mpmath at 40 digits, or PyTorch where the claim is about floating point). Findings the
primer's page already has (the GELU' column, the minimum, the tanh error, BERT's layers) are not
repeated. The page is ``notebooks/91_audit_gelu_primer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import mpmath
import numpy as np
import sympy as sp
import torch
from scipy import special

from helpers.core.claim import Claim, audit_rows
from helpers.gelu_primer import theory as g
from helpers.gelu_primer.paper import AUDIT_QUOTES, POST_CODE, QUOTES, SOURCE, TABLES

NOTEBOOK = "notebooks/91_audit_gelu_primer"
#: The findings, in page order: each key (after ``gelu-audit-``), the page section that shows it
#: and where the source says it.
FINDINGS: dict[str, tuple[str, str]] = {
    "elu": ("gelu-audit-elu-bounded", "section 'Comparison: ReLU vs ELU vs GELU'"),
    "sign": (
        "gelu-audit-gradient-sign",
        "section 'Test Your Understanding', question 5, against section 'Why the Gradient Matters'",
    ),
    "damping": ("gelu-audit-damping", "opening paragraph"),
    "float": ("gelu-audit-float-dead-zone", "sections 'Why the Gradient Matters' and 'Transformer FFN Block'"),
    "baselines": ("gelu-audit-baselines", "sections 'Transformer FFN Block' and 'Code'"),
    "centring": ("gelu-audit-centring", "section 'Honest Limitations'"),
}
PROFILE = "any"
SCALE = "exact (sympy/mpmath, 40 digits); floating point where the claim is about it"
#: One finding of this audit, exact unless a row says it rests on the source's numbers.
_row = audit_rows("gelu-audit", FINDINGS, source=SOURCE, notebook=NOTEBOOK, profile=PROFILE, scale=SCALE)


def _f(value: object, digits: int = 4) -> str:
    return f"{float(value):.{digits}f}"  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- ELU: bounded or not
def elu_bounds() -> dict[str, sp.Expr]:
    """The infimum of ELU (α = 1) and of GELU over the real line: ELU is increasing, so its
    infimum is its limit at −∞; GELU's is its minimum at the root of GELU'."""
    return {"elu_inf": g.limit_at_minus_infinity(g.elu_expr(g.z)), "gelu_min": g.gelu_minimum()[1]}


def _elu_claim() -> Claim:
    b = elu_bounds()
    gelu_limit = g.limit_at_minus_infinity(g.gelu_expr(g.z))
    # the contrast the post draws: a negative output that stays (saturating at −α) against one that returns to 0
    contrast = bool(b["elu_inf"] < 0 and gelu_limit == 0)
    bounded = bool(b["elu_inf"].is_finite)  # then "unbounded" is a wording error
    return _row(
        "elu",
        claim="ELU is the choice for unbounded negative output, GELU for near-zero negative output",
        paper_value=(AUDIT_QUOTES["elu_unbounded"], AUDIT_QUOTES["elu_saturates"]),
        our_value=f"as z → −∞ ELU → {sp.sstr(b['elu_inf'])} (−α) and GELU → {sp.sstr(gelu_limit)}: the contrast "
        f"holds; but ELU ≥ {sp.sstr(b['elu_inf'])} (its infimum) and GELU ≥ {_f(b['gelu_min'])}, both bounded "
        "below, so 'unbounded' is a wording error",
        verdict=("confirmed with a caveat" if bounded else "confirmed") if contrast else "contradicted",
        note="Caveat: 'unbounded' is wrong as written, but the post's own previous sentence says ELU saturates "
        "to −α (and its table prints ELU(−3) = −0.9502), so the intended contrast is a negative output that "
        "saturates at −α against one that returns to 0, and that holds. What differs is the size of the bound "
        "(1 against 0.17) and the limit (−1 against 0), not boundedness.",
        basis="source",
    )


# ------------------------------------------------------------------------- GELU' > 0 for all z?
def _sign_claim() -> Claim:
    root = g.gelu_prime_root()
    z_min, slope_min = g.gelu_prime_extrema()["min"]
    return _row(
        "sign",
        claim="Q5's premise (GELU'(z) > 0 for all z) is false, and a full answer to the exercise must reject it",
        paper_value=(AUDIT_QUOTES["team_positive"], QUOTES["positive_above"]),
        our_value=f"GELU' < 0 for every z < {_f(root)}, down to {_f(slope_min)} at z = {_f(z_min)} (−√2)",
        verdict="confirmed" if float(slope_min) < 0 else "contradicted",
        note="The premise is a hypothetical team's, which question 5 asks the reader to critique; the post's "
        "derivative section itself bounds positivity to z > −0.75 'or so'. GELU' is negative on the whole "
        "interval left of z₀, so a full answer rejects the premise, not only the conclusion drawn from it. "
        "The primer's page shows the sign error of the printed GELU' column.",
        basis="source",
    )


# ------------------------------------------------------------------------------ "slightly damped"
def gate_at(at: str) -> sp.Float:
    """Φ(z) at an exact decimal ``z``: the fraction of the input GELU passes (GELU(z) = Φ(z)·z)."""
    return g.evaluate(g.Phi(g.z), at)


def _damping_claim() -> Claim:
    gate, half = gate_at("-0.1"), gate_at("0")
    output = g.evaluate(g.gelu_expr(g.z), "-0.1")
    removed = 1 - float(gate)
    passes, slight = float(output) != 0, float(gate) >= float(half)
    return _row(
        "damping",
        claim="z = −0.1 passes through slightly damped",
        paper_value=(AUDIT_QUOTES["slightly_damped"], AUDIT_QUOTES["half_open"]),
        our_value=f"GELU(−0.1) = Φ(−0.1)·(−0.1) = {_f(output)}: passed, not erased, but with gain "
        f"Φ(−0.1) = {_f(gate)}, more than halved ({removed:.0%} of the input is removed)",
        verdict=("confirmed" if slight else "confirmed with a caveat") if passes else "contradicted",
        note=f"Caveat: 'slightly' overstates. The contrast with ReLU, which erases the input, holds; but by the "
        f"post's own scale the gate at z = 0, Φ(0) = {_f(half, 1)}, is 'half-open', and at z = −0.1 it is less "
        "than half open, so more than half the signal is taken away.",
    )


# --------------------------------------------------------------------- dead zone in floating point
@dataclass(frozen=True)
class FloatZero:
    """Where a GELU implementation gives exactly 0 on the negative side: every grid point at or left
    of ``below`` gives 0 (the start of the first non-zero value, scanning from ``lo``)."""

    form: str
    dtype: str
    quantity: str
    below: float


def float_zero_threshold(
    approximate: Literal["none", "tanh"],
    dtype: torch.dtype,
    quantity: Literal["output", "gradient"],
    lo: float = -40.0,
    points: int = 400_001,
) -> FloatZero:
    """The largest grid point ``z`` such that PyTorch's ``F.gelu`` (or its gradient) is exactly 0 at
    ``z`` and at every grid point left of it, in ``dtype`` (grid spacing ``-lo/(points-1)``)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    if quantity not in ("output", "gradient"):
        raise ValueError(f"quantity must be 'output' or 'gradient', got {quantity!r}")
    if not lo < 0 or points < 3:
        raise ValueError(f"need lo < 0 and at least 3 points, got lo={lo!r}, points={points!r}")
    x = torch.linspace(lo, 0.0, points, dtype=torch.float64).to(dtype).requires_grad_(quantity == "gradient")
    y = torch.nn.functional.gelu(x, approximate=approximate)
    if quantity == "gradient":
        (y,) = torch.autograd.grad(y.sum(), x)
    below = _zero_run_end(x.detach().double().numpy(), (y != 0).numpy())
    return FloatZero("tanh" if approximate == "tanh" else "exact", str(dtype).replace("torch.", ""), quantity, below)


def _zero_run_end(grid: np.ndarray, nonzero: np.ndarray) -> float:
    """The last point of ``grid`` in the run of exact zeros at its left end (NaN: no such run)."""
    return float("nan") if nonzero[0] else float(grid[int(np.argmax(nonzero)) - 1])


def post_code_zero_threshold(lo: float = -40.0, points: int = 400_001) -> float:
    """The same for the post's own ``gelu_approx`` (NumPy, float64), run from :data:`POST_CODE`."""
    namespace: dict[str, object] = {}
    exec(compile(POST_CODE.split("z_vals")[0], "<gelu-blog code>", "exec"), namespace)  # noqa: S102
    zz = np.linspace(lo, 0.0, points)
    return _zero_run_end(zz, namespace["gelu_approx"](zz) != 0)  # type: ignore[operator]


def _float_claim() -> Claim:
    tanh32 = float_zero_threshold("tanh", torch.float32, "gradient")
    tanh16 = float_zero_threshold("tanh", torch.bfloat16, "gradient")
    exact32 = float_zero_threshold("none", torch.float32, "gradient")
    post = post_code_zero_threshold()
    dead = all(np.isfinite(v.below) for v in (tanh32, tanh16, exact32))
    return _row(
        "float",
        claim="GELU has no dead zone: its gradient is non-zero even for negative pre-activations",
        paper_value=(QUOTES["positive_above"], AUDIT_QUOTES["keeps_gradients"], AUDIT_QUOTES["production"]),
        our_value=f"PyTorch float32: the tanh form's output and gradient are exactly 0 for z ≤ {tanh32.below:.2f} "
        f"(bfloat16: {tanh16.below:.2f}); the exact form's gradient for z ≤ {exact32.below:.2f}; the post's "
        f"own gelu_approx (float64) returns 0 for z ≤ {post:.2f}",
        verdict="confirmed with a caveat" if dead else "confirmed",
        note="True of the real function (the primer's page: one zero of GELU', no dead interval). Caveat: not "
        "of its floating-point forms, as every erf/tanh/exp activation underflows somewhere: 1 + tanh(u) "
        "rounds to 0 once tanh(u) rounds to −1, and the exact form's gradient underflows. The form the post "
        "recommends for production, in the precisions networks train in, has a dead interval far left; "
        "its anchors (|z| ≤ 3) lie outside it.",
    )


# ------------------------------------------------------------------ the gradient against each baseline
def negative_side_gradients(points: tuple[str, ...] = ("-3", "-1", "-0.5")) -> dict[str, dict[str, float]]:
    """ReLU', ELU' (α = 1) and GELU' at negative ``points`` (exact decimals), at 40 digits."""
    prime = g.gelu_prime_closed_form()
    out = {}
    for at in points:
        value = sp.Rational(at)
        if value >= 0:
            raise ValueError(f"points must be negative, got {at!r}")
        out[at] = {"ReLU'": 0.0, "ELU'": float(sp.exp(value).evalf(20)), "GELU'": float(g.evaluate(prime, at))}
    return out


def gradient_ratio_sup(lo: float = -12.0, points: int = 24_001) -> tuple[float, float]:
    """``(z, r)``: the largest ratio ``r = |GELU'(z)| / ELU'(z)`` over z < 0 and where it is reached
    (a float64 grid on ``[lo, 0)`` to start from, refined at mpmath's precision by its root finder
    on the ratio's derivative)."""
    mpmath.mp.dps = g.DIGITS

    def ratio(v: mpmath.mpf) -> mpmath.mpf:
        return abs(mpmath.ncdf(v) + v * mpmath.npdf(v)) / mpmath.exp(v)

    grid = np.linspace(lo, 0.0, points, endpoint=False)
    values = np.abs(special.ndtr(grid) + grid * np.exp(-grid * grid / 2) / np.sqrt(2 * np.pi)) / np.exp(grid)
    start = mpmath.mpf(grid[int(np.argmax(values))])
    z_star = mpmath.findroot(lambda v: mpmath.diff(ratio, v), start)
    return float(z_star), float(ratio(z_star))


def _baselines_claim() -> Claim:
    grads = negative_side_gradients()
    z_star, r_star = gradient_ratio_sup()
    elu, gelu = "ELU'", "GELU'"
    at = "; ".join(f"z = {z}: ReLU' 0, ELU' {v[elu]:.4f}, GELU' {v[gelu]:+.4f}" for z, v in grads.items())
    vs_relu = all(v["GELU'"] != 0 for v in grads.values())
    return _row(
        "baselines",
        claim="GELU is chosen over ReLU for the dead-neuron problem: it keeps a gradient on negative "
        "pre-activations (checked against each baseline the post tabulates: ReLU, ELU)",
        paper_value=(AUDIT_QUOTES["design_choice"], AUDIT_QUOTES["gradient_column"], AUDIT_QUOTES["elu_differently"]),
        our_value=f"{at}; over all z < 0, |GELU'| ≤ {r_star:.3f}·ELU' (largest at z = {z_star:.3f})",
        verdict="confirmed" if vs_relu else "contradicted",
        note="Holds against ReLU, the baseline the post names. It is no advantage over ELU, the post's other "
        "baseline: on every z < 0 ELU' = e^z is positive and larger than |GELU'|, which is negative "
        "left of −0.75. The post's own anchors show it (z = −3: 0.0498 against GELU's −0.0119).",
    )


# ------------------------------------------------------------------------------------ centring
def output_moments() -> dict[str, dict[str, sp.Expr]]:
    """For a standard normal input: the mean output and the probability of a negative output of
    ReLU, ELU (α = 1) and GELU, in closed form (sympy)."""
    u = sp.Symbol("u", real=True)
    density = sp.exp(-(u**2) / 2) / sp.sqrt(2 * sp.pi)
    neg = sp.Rational(1, 2)  # ELU and GELU are negative exactly on z < 0
    positive = sp.integrate(u * density, (u, 0, sp.oo))  # ReLU's mean, and ELU's on z > 0
    means = {
        "ReLU": positive,
        "ELU": positive + sp.integrate((sp.exp(u) - 1) * density, (u, -sp.oo, 0)),
        "GELU": sp.integrate(u * (1 + sp.erf(u / sp.sqrt(2))) / 2 * density, (u, -sp.oo, sp.oo)),
    }
    return {k: {"mean": sp.simplify(m), "p_negative": sp.Integer(0) if k == "ReLU" else neg} for k, m in means.items()}


def _centring_claim() -> Claim:
    m = output_moments()
    relu, gelu, elu = (float(m[k]["mean"]) for k in ("ReLU", "GELU", "ELU"))
    return _row(
        "centring",
        claim="GELU features are not zero-centred, which causes the same upstream weight-update bias as ReLU",
        paper_value=AUDIT_QUOTES["not_centred"],
        our_value=f"for z ~ N(0, 1): mean output ReLU {relu:.4f} ({sp.sstr(m['ReLU']['mean'])}), GELU {gelu:.4f} "
        f"({sp.sstr(m['GELU']['mean'])}), ELU {elu:.4f}; negative outputs: ReLU never, GELU and ELU "
        f"with probability {sp.sstr(m['GELU']['p_negative'])}",
        verdict="contradicted" if gelu < relu and m["GELU"]["p_negative"] > 0 else "confirmed",
        note=f"Not zero-centred: confirmed. 'The same bias as ReLU', read as ReLU's mechanism: no. The sign "
        f"argument (all inputs of the next layer positive, so all its weight updates share a sign) needs "
        f"outputs ≥ 0, which ReLU's are and GELU's are not for any z < 0. Under the weaker reading (a non-zero "
        f"mean output) it holds: GELU's mean output on N(0, 1) is {gelu:.3f}, {gelu / relu:.0%} of ReLU's "
        f"{relu:.3f}, so the mean-shift bias is there, somewhat smaller.",
        reading="'the same upstream weight-update bias' read as ReLU's same-sign mechanism (all outputs ≥ 0)",
    )


# ------------------------------------------------------------------------- the extraction of the tables
def printed_rows_joined() -> dict[str, dict[str, str]]:
    """Each printed table's rows as the extraction writes them: z and the cells joined with no
    separator, minus signs as U+2212 (the post's). A test compares them with the source text, so
    the transcription is shown to lose and add no cell."""
    out: dict[str, dict[str, str]] = {}
    for spec in TABLES:
        if spec.key == "code":  # printed as text with separators, not as a table
            continue
        out[spec.key] = {at: (at + "".join(spec.rows[at])).replace("-", "\u2212") for at in spec.rows}
    return out


def claims() -> list[Claim]:
    """The audit's rows: each a statement of the post checked against its own definitions or sections,
    which contradict it, qualify it (a caveat) or confirm it."""
    return [_elu_claim(), _sign_claim(), _damping_claim(), _float_claim(), _baselines_claim(), _centring_claim()]

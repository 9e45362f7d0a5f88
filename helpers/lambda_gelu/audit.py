"""The λ-GELU paper read against itself: claims its own formulas or tables contradict, and checks of
its baselines and of the comparisons it draws.

The paper's words are in :data:`helpers.lambda_gelu.paper.AUDIT_QUOTES`, its tables in
:func:`~helpers.lambda_gelu.paper.table_i` and :func:`~helpers.lambda_gelu.paper.table_ii`.
Findings the book already has as rows (E∞, λ_target, Eq. (3), the t-rescaling, Table II's GELU
"Original" against Table I) are not repeated. The page is ``notebooks/92_audit_lambda_gelu``.
"""

from __future__ import annotations

import math

import pandas as pd
import sympy as sp

from helpers.core.attribution import Derived
from helpers.core.claim import Claim, audit_rows
from helpers.lambda_gelu.activation import LAMBDA_NEAR_ONE
from helpers.lambda_gelu.audit_computations import (
    expected_gate_error,
    gate_error_closed_form_holds,
    gelu_gap_sup,
    lambda_image,
    s_signal,
    s_signal_peak,
    s_signal_ratio_limits,
    scale_meeting_tolerance,
    sigmoid_gate_l1,
    swish_gap,
)
from helpers.lambda_gelu.hardness import LAMBDA_INIT_MAX
from helpers.lambda_gelu.paper import (
    AUDIT_QUOTES,
    EPS_PAPER,
    INIT_RANGE_PAPER,
    LAMBDA_TARGET_PAPER,
    SOURCE,
    table_i,
    table_ii,
)

# the computations are re-exported: the page and the tests read them here, beside the rows they decide
__all__ = ["NOTEBOOK", "FINDINGS", "uniform_drift_rank", "drift_against_net_change", "relu_baseline_against_annealed"]
__all__ += ["same_function_table", "claims", "s_signal"]

NOTEBOOK = "notebooks/92_audit_lambda_gelu"
#: The findings, in page order: each key (after ``lambda-gelu-audit-``), the page section that shows it
#: and where the source says it.
FINDINGS: dict[str, tuple[str, str]] = {
    "range": ("lgelu-audit-range", "Abstract, Sections II and III"),
    "init": ("lgelu-audit-init-signal", "Section IV-A"),
    "tolerance": ("lgelu-audit-tolerance", "Sections IV-C and V"),
    "drift": (
        "lgelu-audit-drift-definition",
        "Section IV-A formula of V_λ against the captions of Fig. 1 and Fig. 2 and of Table I",
    ),
    "retrain": ("lgelu-audit-relu-baseline", "Section IV-C and Algorithm 1; Tables I and II for the caveat"),
    "same": ("lgelu-audit-same-function", "Table I"),
    "swish": ("lgelu-audit-swish", "Section II"),
}
PROFILE = "any"
SCALE = "exact (sympy) or the paper's printed tables"
#: One finding of this audit, exact unless a row says it rests on the source's numbers.
_row = audit_rows("lambda-gelu-audit", FINDINGS, source=SOURCE, notebook=NOTEBOOK, profile=PROFILE, scale=SCALE)


# ------------------------------------------------------------------------------- the range of λ
def _range_claim() -> Claim:
    img = lambda_image()
    never = img["solutions of λ(s) = 1"] == sp.S.EmptySet
    grounded = img["at -oo"] == 1  # λ ≥ 1 holds and GELU (λ = 1) is the family's limit
    return _row(
        "range",
        claim="λ ∈ [1, ∞), and λ ≥ 1 enforced by construction grounds the family at standard GELU",
        paper_value=(AUDIT_QUOTES["lambda_range"], AUDIT_QUOTES["enforced"], AUDIT_QUOTES["map_above_one"]),
        our_value=f"λ(s) = 1 + softplus(s/t) ranges over (1, ∞): → {img['at -oo']} as s → −∞, λ(s) = 1 has "
        f"{'no' if never else 'a'} real solution",
        verdict=("confirmed with a caveat" if never else "confirmed") if grounded else "contradicted",
        note="λ ≥ 1 holds: the softplus map covers λ > 1 (Section III itself says so), and GELU (λ = 1) is its "
        "limit as s → −∞, so the family is still grounded at GELU. The caveat: GELU itself is approached, "
        "never reached. No parameter s gives λ = 1, and the 'λ ≈ 1' start of the uniform mode must sit "
        "strictly above it (the theory page notes this in words). The next row shows why the gap matters.",
    )


# ------------------------------------------------------------------ the learning signal of s at init
def uniform_drift_rank() -> pd.DataFrame:
    """Table I: per dataset, the drift of the uniform mode against the other two modes."""
    t1 = table_i()
    lam_rows = t1[t1["act"] == "λ-GELU"].pivot(index="dataset", columns="mode", values="drift")
    lam_rows["uni smallest"] = lam_rows["uni"] < lam_rows[["dec", "inc"]].min(axis=1)
    return lam_rows.reindex(t1["dataset"].unique())


def _init_claim() -> Claim:
    peak, _ = s_signal_peak(1.0)
    r = s_signal_ratio_limits()
    rank = uniform_drift_rank()
    wiki = rank.loc["WikiText-2"]
    uniform_start = Derived(
        f"'λ ≈ 1' read as λ = {LAMBDA_NEAR_ONE} (the book's uniform start; λ = 1 is unreachable)",
        "our reading of the uniform mode",
        (AUDIT_QUOTES["uniform_start"],),
    )
    lo, hi = INIT_RANGE_PAPER
    return _row(
        "init",
        claim="Initial λ is kept near 1 because larger initial values would attenuate the learning signal for λ",
        paper_value=(AUDIT_QUOTES["init_attenuation"], AUDIT_QUOTES["uniform_default"]),
        our_value=f"the signal that trains the learned parameter s, E[∂a/∂s] for x ~ N(0, σ²), is 0 at λ = 1 and "
        f"peaks at λ = {peak:.2f} (σ = 1); from λ = {LAMBDA_NEAR_ONE} to λ = {LAMBDA_INIT_MAX:g} it grows "
        f"{r['sigma=1']:.0f}× at σ = 1 and at least {r['sigma->oo']:.1f}× at any σ; under Adam λ moves "
        f"{r['dlambda/ds']:.0f}× faster per step on s",
        verdict="contradicted" if r["sigma->oo"] > 1 else "confirmed",
        note=f"True of ∂a/∂λ, which falls with λ; but s is what is learned, and ∂λ/∂s = (1 − e^(1−λ))/t vanishes "
        f"at λ = 1. So the start the paper recommends as 'initialization-neutral' is where λ learns slowest. "
        f"Table I agrees: the uniform mode has the smallest drift in {int(rank['uni smallest'].sum())} of "
        f"{len(rank)} benchmarks, and on GPT-2/WikiText-2 it moves {wiki['uni']:g} against {wiki['dec']:g} "
        f"and {wiki['inc']:g}. The uniform start's value: {uniform_start.display()}.",
        reading=f"'larger initial values' read as {LAMBDA_INIT_MAX:g} against {LAMBDA_NEAR_ONE:g}, both inside "
        f"the paper's starting range [{lo:g}, {hi:g}]",
    )


# ------------------------------------------------------- "uniform tolerance, independent of statistics"
def _tolerance_claim() -> Claim:
    sig_min = scale_meeting_tolerance()
    errors = {v: expected_gate_error(LAMBDA_TARGET_PAPER, v) for v in (1.0, 0.1)}
    needed_unit = 1.0 / math.tan(math.pi * EPS_PAPER)
    ok = gate_error_closed_form_holds()
    return _row(
        "tolerance",
        claim="λ_target is distribution-agnostic: it guarantees a uniform gate-approximation tolerance "
        "independently of the pre-activation statistics",
        paper_value=(AUDIT_QUOTES["distribution_agnostic"], AUDIT_QUOTES["uniform_tolerance"]),
        our_value=f"at λ = {LAMBDA_TARGET_PAPER:g}, the expected gate error arctan(1/(λσ))/π is {errors[1.0]:.2e} at "
        f"σ = 1 and {errors[0.1]:.2e} at σ = 0.1; it is within ε = {EPS_PAPER:g} only for σ ≥ "
        f"{sig_min:.3f}; the pointwise error is 1/2 next to 0 for every λ",
        verdict="contradicted" if ok and errors[0.1] > EPS_PAPER else "confirmed",
        note=f"E∞ is an integral over x with unit weight, so it carries the units of x: for pre-activations of "
        f"scale σ the same λ gives an error that grows like 1/σ. 'Conservative for normalized "
        f"architectures' holds for σ = 1 (λ = {needed_unit:.1f} would do) and fails below σ = {sig_min:.2f}. "
        "The closed form is checked by quadrature; the ReLU-ization page uses it for per-layer targets.",
        reading="the tolerance read as the expected gate error on a layer's inputs, not the paper's global "
        "bound E∞ ≤ ε (distribution-free by construction)",
    )


# ------------------------------------------------------------------------ Δλ: average or sum?
def drift_against_net_change() -> pd.DataFrame:
    """Table I's λ-GELU rows: the printed drift beside the net change of λ̄ from its mode's start
    (the paper's: λ ≈ 1 for uniform, the middle of its range [1, 2] for increasing and decreasing).

    A sum of |epoch-to-epoch changes| is at least the net change it adds up to (up to the first
    epoch's step, which the formula leaves out); an average over the epochs of a path that does not
    turn back is the net change divided by their number. ``drift ≥ net`` says which the numbers are;
    ``path if an average`` is what an average would imply the hardness travelled (drift times the
    Ep − 1 steps up to the BVS epoch, a lower bound: T ≥ Ep)."""
    t1 = table_i()
    lam_rows = t1[t1["act"] == "λ-GELU"]
    lo, hi = INIT_RANGE_PAPER
    start = lam_rows["mode"].map({"uni": lo, "inc": (lo + hi) / 2, "dec": (lo + hi) / 2})
    out = pd.DataFrame(
        {
            "dataset": lam_rows["dataset"],
            "mode": lam_rows["mode"],
            "λ̄": lam_rows["lam_mean"],
            "start": start,
            "net change": (lam_rows["lam_mean"] - start).abs(),
            "drift": lam_rows["drift"],
            "Ep.": lam_rows["epoch"],
        }
    ).reset_index(drop=True)
    # two printed decimals: λ̄ is known to ±0.005
    out["drift ≥ net"] = out["drift"] >= out["net change"] - 0.005
    out["path if an average"] = out["drift"] * (out["Ep."] - 1)
    return out


def _drift_claim() -> Claim:
    T, e, ell, L = sp.symbols("T e ell L", positive=True, integer=True)
    step = sp.Symbol("d", positive=True)  # a constant epoch-to-epoch change, to compare the two readings
    formula = sp.summation(sp.summation(step, (e, 1, T - 1)), (ell, 1, L)) / L
    caption = step
    factor = sp.simplify(formula / caption)
    net = drift_against_net_change()
    moved = net[net["net change"] > 0.005]  # rows whose λ̄ moved beyond the printed rounding
    ratio = moved["drift"] / moved["net change"]
    smallest = moved.loc[ratio.idxmin()]
    table_sums = bool(net["drift ≥ net"].all())
    # a sum over epochs, as the formula and Table I's numbers say: the captions' "average" needs a caveat
    verdict = "confirmed" if factor == 1 else ("confirmed with a caveat" if table_sums else "contradicted")
    return _row(
        "drift",
        claim="Δλ is the average absolute epoch-to-epoch change of the layerwise hardness",
        paper_value=(AUDIT_QUOTES["drift_caption"], AUDIT_QUOTES["drift_formula"], AUDIT_QUOTES["drift_table"]),
        our_value=f"V_λ = (1/L) Σ_ℓ Σ_(e=1)^(T−1) |Δλ| is a sum over epochs: for a constant change d per epoch it is "
        f"{sp.sstr(formula)}, the captions' average times {sp.sstr(factor)}",
        verdict=verdict,
        note="'Average' can mean over layers, seeds and init modes: the formula's 1/L and its expectations "
        "E_r E_m, and Table I's 'mean drift across seeds and layers'. The formula sums over the T − 1 epoch "
        f"steps, and Table I's numbers agree with a sum: its drift is at least the net change of λ̄ from its "
        f"mode's start in {int(net['drift ≥ net'].sum())} of {len(net)} λ-GELU rows ({ratio.min():.2f} to "
        f"{ratio.max():.1f} times it where λ̄ moved; smallest: {smallest['dataset']} {smallest['mode']}), as a sum "
        "of the steps would be, whereas an average over the epochs would mean the hardness travelled "
        f"{(moved['path if an average'] / moved['net change']).min():.1f} to "
        f"{(moved['path if an average'] / moved['net change']).max():.0f} times its net change. The caveat: the "
        "captions' 'average absolute epoch-to-epoch change' also reads as an average over epochs, which "
        "differs from the formula by T − 1, and the paper never states T. The grid page reads V_λ as the sum, "
        "as the formula says.",
        basis="source",
    )


# ---------------------------------------------------------- the ReLU network the protocol delivers
def relu_baseline_against_annealed() -> pd.DataFrame:
    """Per dataset of Table II: the annealed λ-GELU network after its ReLU swap (Table II) against
    the ReLU network trained from scratch in the same setup (Table I's ReLU BVS and its spread)."""
    t1 = table_i()
    relu = t1[t1["act"] == "ReLU"].set_index("dataset")
    t2 = table_ii()
    annealed = t2[t2["mode"] == "λ-GELU"].set_index("dataset")
    out = pd.DataFrame(
        {
            "ReLU from scratch (Table I)": relu.loc[annealed.index, "bvs"],
            "its spread": relu.loc[annealed.index, "bvs_std"],
            "annealed, then ReLU (Table II)": annealed["substituted"],
        }
    )
    out["difference"] = (out["annealed, then ReLU (Table II)"] - out["ReLU from scratch (Table I)"]).round(4)
    # two values printed to 2 decimals: their difference is known to ±0.01
    out["below beyond rounding"] = out["difference"] < -0.01 - 1e-12
    out["above beyond rounding"] = out["difference"] > 0.01 + 1e-12
    return out


def _retrain_claim() -> Claim:
    d = relu_baseline_against_annealed()
    below, above = d[d["below beyond rounding"]], d[d["above beyond rounding"]]
    text = "; ".join(
        f"{k}: {r['annealed, then ReLU (Table II)']:.2f} vs {r['ReLU from scratch (Table I)']:.2f}"
        for k, r in d.iterrows()
    )
    return _row(
        "retrain",
        claim="The route to a ReLU network is to progressively sharpen the learned gates (anneal λ, then swap "
        "to ReLU) rather than retrain a ReLU network from scratch or swap hard mid-training",
        paper_value=AUDIT_QUOTES["rather_than_retrain"],
        our_value="the route is Algorithm 1 (learn λ, anneal it linearly to λ_target, swap at the best checkpoint); "
        f"against ReLU from scratch, a comparison the paper does not draw, the delivered ReLU network is below it "
        f"beyond the printed rounding in {len(below)} of {len(d)} benchmarks "
        f"({', '.join(f'{k} {v:+.2f}' for k, v in below['difference'].items()) or 'none'}), above it in "
        f"{len(above)}, within ±0.01 elsewhere ({text})",
        verdict="confirmed with a caveat" if len(below) else "confirmed",
        note="The paper states its chosen route and its aim; it claims no comparison with a ReLU network "
        "trained from scratch (Table II compares only with a direct GELU swap). The caveat is the book's: "
        "against that baseline, which Table I trains (the same model, data and epochs), the annealed route "
        "never does better beyond the rounding of two printed decimals, and on Adult it ends "
        f"{-d.loc['Adult', 'difference']:.2f} lower, "
        f"{-d.loc['Adult', 'difference'] / d.loc['Adult', 'its spread']:.0f} times Table I's ReLU spread. "
        "It does not save training either: Algorithm 1 trains all T epochs.",
        basis="source",
    )


# ---------------------------------------------------- two arms that are (nearly) the same function
def same_function_table() -> pd.DataFrame:
    """Table I's λ-GELU rows: λ̄, the sup distance to GELU of λ-GELU at λ̄, and the printed BVS
    difference to GELU beside the larger of the two printed spreads."""
    t1 = table_i()
    gelu = t1[t1["act"] == "GELU"].set_index("dataset")
    rows = []
    for r in t1[t1["act"] == "λ-GELU"].itertuples():
        g_row = gelu.loc[r.dataset]
        rows.append(
            {
                "dataset": r.dataset,
                "mode": r.mode,
                "λ̄": r.lam_mean,
                "sup |λ-GELU − GELU| at λ̄": gelu_gap_sup(max(r.lam_mean + 0.005, 1.0)),
                "BVS − GELU": round(r.bvs - g_row["bvs"], 4),
                "larger spread": max(r.bvs_std, g_row["bvs_std"]),
            }
        )
    return pd.DataFrame(rows)


def _same_claim() -> Claim:
    t = same_function_table()
    row = t[(t["dataset"] == "WikiText-2") & (t["mode"] == "uni")].iloc[0]
    bound = 2 * float(sp.exp(-1) / sp.sqrt(2 * sp.pi)) * 0.005  # (λ̄ − 1)·max x²φ(x) with λ̄ < 1.005
    within = abs(row["BVS − GELU"]) <= row["larger spread"] + 1e-12
    others = t[(t["dataset"] == "WikiText-2") & (t["mode"] != "uni")].set_index("mode")
    return _row(
        "same",
        claim="GPT-2/WikiText-2: λ-GELU (uniform) and GELU, the same function there, print the same BVS "
        "within the printed spread",
        paper_value=Derived(
            f"λ̄ = {row['λ̄']:.2f}; BVS difference {row['BVS − GELU']:+.2f}, spreads ≤ {row['larger spread']:g}",
            "Table I's printed λ̄, BVS and spreads, differenced by us",
        ),
        our_value=f"with λ̄ < 1.005 the two activations differ by at most {bound:.1e} per unit (mean over layers; "
        f"{row['sup |λ-GELU − GELU| at λ̄']:.1e} computed at λ = 1.005), and |ΔBVS| = "
        f"{abs(row['BVS − GELU']):.2f} ≤ {row['larger spread']:g}",
        verdict="confirmed" if within else "contradicted",
        note="The one pair of Table I arms that are the same function agree as they must. The dec and inc arms "
        f"of the same benchmark (λ̄ = {others.loc['dec', 'λ̄']:.2f} each) lie "
        f"{others.loc['dec', 'BVS − GELU']:.2f} and {others.loc['inc', 'BVS − GELU']:.2f} perplexity from "
        f"GELU, {others.loc['dec', 'BVS − GELU'] / others.loc['dec', 'larger spread']:.0f} and "
        f"{others.loc['inc', 'BVS − GELU'] / others.loc['inc', 'larger spread']:.0f} times the larger printed "
        "spread; the page lists every arm's distance to GELU.",
        basis="source",
    )


# ---------------------------------------------------------------------------- Swish, the closest
def _swish_claim() -> Claim:
    ratio, gap1 = swish_gap(1.0)
    _, gap_t = swish_gap(LAMBDA_TARGET_PAPER)
    l1 = sigmoid_gate_l1()
    beta = sorted(l1.free_symbols, key=lambda v: v.name)[0]
    beta_target = float(sp.solve(sp.Eq(l1, EPS_PAPER), beta)[0])
    return _row(
        "swish",
        claim="Learnable-β Swish is the closest formulation; λ-GELU differs from it by (ii) a closed-form "
        "ℓ1 annealing target",
        paper_value=(AUDIT_QUOTES["swish_closest"], AUDIT_QUOTES["target_difference"]),
        our_value=f"xΦ(λx) is within {gap1:.4f}/λ of xσ(βx) at β = {ratio:.3f}λ for every λ ({gap_t:.1e} at λ = "
        f"{LAMBDA_TARGET_PAPER:g}); the sigmoid gate has the closed form ∫|H − σ(βx)|dx = {sp.sstr(l1)}, so "
        f"ε = {EPS_PAPER:g} gives β ≥ {beta_target:.1f} (= {beta_target / ratio:.0f}λ-equivalent)",
        verdict="confirmed" if gap1 < 0.05 else "contradicted",
        note=f"Closest indeed: the two families coincide up to a rescaling of the hardness, to {gap1:.1%} of a "
        "unit at λ = 1. Difference (ii) is of the protocol, not of the family: the same closed-form target "
        f"exists for Swish, and after the rescaling it is {beta_target / ratio:.0f} against the paper's "
        f"{LAMBDA_TARGET_PAPER:g}.",
    )


def claims() -> list[Claim]:
    """The audit's rows, in the page's order."""
    rows = (_range_claim, _init_claim, _tolerance_claim, _drift_claim, _retrain_claim, _same_claim, _swish_claim)
    return [row() for row in rows]

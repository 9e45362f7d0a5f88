"""How a claim gets its verdict: run-based claims (:func:`run_verdict`, through :func:`judge`),
claims of several parts (:func:`intersection_union`, :func:`family_verdict`), counts, numbers a
source prints (:func:`numeric_verdict`), and the row fields behind a verdict
(:func:`comparison_fields`). ``notebooks/90_report.ipynb`` states each rule once."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from helpers.core.claim import RunClaim, RunDesign, Verdict
from helpers.core.comparison import detectable_margin, exact_text, number_text
from helpers.core.statistics import (
    ALPHA,
    InsufficientData,
    Proportion,
    non_inferiority,
    one_sided_p,
    tost,
)

if TYPE_CHECKING:
    from helpers.core.statistics import Comparison


#: The smallest effect of interest of a test accuracy, in points (a direction claim's ``negligible``).
NEGLIGIBLE_ACCURACY_POINTS: float = 0.5


def comparison_fields(
    comparison: Comparison,
    *,
    digits: int = 2,
    unit: str = "",
    test_extra: str = "",
    claim: RunClaim = "direction",
    alpha: float = ALPHA,
) -> dict[str, str]:
    """The ``effect, ci, n, test, mde`` strings of a :class:`Claim` from a comparison
    (``test_extra``, e.g. the TOST result, appended to the test). Intervals carry their level; an
    equivalence or non-inferiority claim shows its 90 % interval first; an exact comparison shows
    the count of identical seeds instead."""
    u = f" {unit}" if unit else ""
    test = comparison.test_text() + (f"; {test_extra}" if test_extra else "")
    effect = f"{number_text(comparison.effect, digits, spec='+.{d}f')}{u}"
    if comparison.exact:
        if comparison.test.startswith("Welch"):
            same = f"no spread in either arm ({comparison.n_a} vs {comparison.n_b} runs)"
        elif comparison.effect == 0:
            same = exact_text(comparison.n) if comparison.paired else f"exactly 0 on all {comparison.n} seeds"
        else:
            same = f"the same difference on all {comparison.n} seeds"
        return {
            "effect": effect,
            "ci": f"none: exact, {same}",
            "n": comparison.n_text(),
            "mde": "none (exact)",
            "test": f"{comparison.test}: no spread, {same} (effect exactly "
            f"{comparison.effect:+.{digits}f}{u})" + (f"; {test_extra}" if test_extra else ""),
        }
    ci = f"{_level_text(comparison.confidence)} {comparison.ci_text(digits)}"
    if claim in ("equivalence", "non-inferiority"):
        level = 1 - 2 * alpha
        ci = f"{_level_text(level)} (the {claim} test's) {comparison.ci_text(digits, level)}; {ci}"
    return {
        "effect": effect,
        "ci": ci,
        "n": comparison.n_text(),
        "test": test,
        "mde": power_text(comparison, claim, digits, unit),
    }


#: An accuracy difference of fewer test examples than this is named as a count in its row.
FEW_EXAMPLES: int = 50


def _level_text(level: float) -> str:
    """``95%``; a spent level keeps its first decimal (``98.3%``)."""
    return f"{level:.0%}" if round(level * 100, 1).is_integer() else f"{level:.1%}"


def spent(comparison: Comparison, looks: int) -> Comparison:
    """``comparison`` with its interval at the level one of ``looks`` looks may spend (Bonferroni:
    ``1 − (1 − level)/looks``), for a scale whose seed count was chosen after looking at its rows."""
    if not isinstance(looks, int) or isinstance(looks, bool) or looks < 1:
        raise ValueError(f"looks must be a positive int, got {looks!r}")
    return comparison if looks == 1 else _at_level(comparison, 1 - (1 - comparison.confidence) / looks)


def _at_level(comparison: Comparison, level: float) -> Comparison:
    low, high = comparison.interval(level)
    return replace(comparison, ci_low=low, ci_high=high, confidence=level)


def power_text(comparison: Comparison, claim: RunClaim = "direction", digits: int = 2, unit: str = "") -> str:
    """The row's power figure (the report page's rule "power"): the two-sided MDE, or the margin TOST
    or non-inferiority would show with 80 % power at a true difference of 0 (:func:`detectable_margin`)."""
    u = f" {unit}" if unit else ""
    if comparison.exact:
        return "none (exact)"
    if claim in ("equivalence", "non-inferiority"):
        if comparison.bootstrap or not (math.isfinite(comparison.se) and math.isfinite(comparison.df)):
            return "n/a (no t test)"
        margin = detectable_margin(comparison.se, comparison.df, claim)
        sign = "±" if claim == "equivalence" else ""
        test = "TOST" if claim == "equivalence" else "non-inferiority"
        return f"margin {sign}{number_text(margin, digits)}{u} for 80 % {test} power"
    return "n/a (no t test)" if not math.isfinite(comparison.mde) else f"{number_text(comparison.mde, digits)}{u}"


def proportion_verdict(rate: Proportion, threshold: float, *, direction: int = 1) -> Verdict:
    """The verdict of a count claim ("at least ``threshold`` of runs", ``direction=1``; "at most",
    ``-1``) by its exact binomial interval's side of ``threshold`` (the report page's rule "count")."""
    if direction not in (1, -1):
        raise ValueError(f"direction must be ±1, got {direction!r}")
    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be a rate in [0, 1], got {threshold!r}")
    lo, hi = (rate.ci_low, rate.ci_high) if direction == 1 else (-rate.ci_high, -rate.ci_low)
    t = threshold * direction
    return "confirmed" if lo > t else "contradicted" if hi < t else "inconclusive"


def claim_p(design: RunDesign) -> float:
    """The one-sided p of one part in its claim's direction: against ``effect ≤ 0`` on the claimed
    side for a direction or size claim, TOST's p for equivalence, the one-sided p for
    non-inferiority. Small is strong support; 1 when there is no interval. A bootstrap interval
    has no one-sided test: half its two-sided p on the claimed side, one minus that on the other."""
    comp = design.comparison
    if comp is None:
        return 1.0
    if design.claim in ("equivalence", "non-inferiority"):
        test = tost if design.claim == "equivalence" else non_inferiority
        p = test(comp, design.margin).p  # type: ignore[arg-type]
        if math.isfinite(p):
            return p
        return 0.0 if test(comp, design.margin).equivalent else 1.0  # type: ignore[arg-type]
    claimed = design.claimed_effect
    sign = (1 if claimed > 0 else -1) if claimed else (design.direction or 1)
    if comp.bootstrap and not comp.exact:
        half = comp.p / 2 if math.isfinite(comp.p) else 0.5
        return half if sign * comp.effect > 0 else 1 - half
    return one_sided_p(comp, 0.0, "greater" if sign > 0 else "less")


def _contradicted_at(design: RunDesign, level: float) -> bool:
    """The part is contradicted by :func:`run_verdict`'s rule with its interval at ``level``."""
    comp = design.comparison
    if comp is None or design.verdict != "contradicted":  # a wider interval contradicts no more
        return False
    rule = {"claim": design.claim, "margin": design.margin, "direction": design.direction}
    return run_verdict(_at_level(comp, level), design.claimed_effect, **rule) == "contradicted"


def holm_level(parts: int) -> float:
    """The interval level at which one of ``parts`` contradicts its family: Holm's first step,
    ``1 − α/k`` (the family is contradicted exactly when the smallest p is below ``α/k``)."""
    return 1 - ALPHA / max(parts, 1)


def family_verdict(designs: Sequence[RunDesign]) -> Verdict:
    """The verdict of a claim about every level or competitor: confirmed when every part is at its own
    95 % (intersection-union needs no adjustment); contradicted when some part is at
    :func:`holm_level` (one of k parts at 95 % would contradict a true family far more often than
    5 %); inconclusive otherwise."""
    if confirmed := _all_confirmed([d.verdict for d in designs]):
        return confirmed
    level = holm_level(len(designs))
    return "contradicted" if any(_contradicted_at(d, level) for d in designs) else "inconclusive"


def intersection_union(
    parts: Mapping[str, tuple[str, Mapping[str, str], Comparison | None]], *, what: str = "parts"
) -> tuple[Verdict, dict[str, Any]]:
    """A claim about every level or competitor from each part's :func:`judge` result, decided by
    :func:`family_verdict`. The row shows the weakest part (largest :func:`claim_p`; a part
    contradicted at the Holm level first) and the largest power figure (the family is no more
    powerful than its weakest part); the test lists every part's verdict."""
    if not parts:
        return "inconclusive", {"n": f"no {what}", "test": "no interval"}
    every = tuple(replace(d, label=d.label or name) for name, (_, f, _) in parts.items() for d in f.get("design", ()))
    designs = {name: f["design"][0] for name, (_, f, _) in parts.items() if f.get("design")}
    verdict = family_verdict(every)
    level = holm_level(len(every))

    def weakness(name: str) -> tuple:
        v, _, comp = parts[name]
        d = designs.get(name)
        return (d is not None and _contradicted_at(d, level), v != "confirmed", comp is None, claim_p(d) if d else 1.0)

    key = max(parts, key=weakness)
    fields = dict(parts[key][1])
    fields["design"] = every
    if fields.get("effect") and not fields["effect"].startswith(f"{key}:"):
        fields["effect"] = f"{key}: {fields['effect']}"
    limiting = max(
        (n for n, (_, _, c) in parts.items() if c is not None and not c.exact and math.isfinite(c.se)),
        key=lambda n: _power_scale(parts[n][2], designs.get(n)),  # type: ignore[arg-type]
        default=None,
    )
    if limiting is not None and limiting != key and parts[limiting][1].get("mde"):
        fields["mde"] = f"{limiting}: {parts[limiting][1]['mde']} (the part that limits the power)"
    listed = ", ".join(f"{name} {v}" for name, (v, _, _) in parts.items())
    holm = f"; a part contradicts the family at the Holm level {level:.1%}" if len(parts) > 1 else ""
    fields["test"] = (
        fields.get("test", "") + f"; intersection-union over {len(parts)} {what}, each must pass "
        f"(shown: {key}, the weakest in the claim's direction){holm}: {listed}"
    ).lstrip("; ")
    return verdict, fields


def _power_scale(comp: Comparison, design: RunDesign | None) -> float:
    """A part's power figure in the claim's own units (larger: less power)."""
    claim = design.claim if design is not None else "direction"
    if claim in ("equivalence", "non-inferiority") and not comp.bootstrap:
        return detectable_margin(comp.se, comp.df, claim)
    return comp.mde if math.isfinite(comp.mde) else -math.inf


def judge(
    make: Callable[[], Comparison],
    claimed_effect: float | None = None,
    *,
    claim: RunClaim = "direction",
    margin: float | None = None,
    direction: int | None = None,
    digits: int = 2,
    unit: str = "",
    label: str = "",
    negligible: float | None = None,
    looks: int = 1,
    examples: int | None = None,
) -> tuple[Verdict, dict[str, Any], Comparison | None]:
    """``(verdict, claim fields, comparison)`` of a run-based claim: ``make()``'s comparison decided by
    :func:`run_verdict`, shown by :func:`comparison_fields` (with its :class:`RunDesign`). Too few
    runs for an interval (the smoke profile) give ``inconclusive``. ``label`` prefixes the effect;
    ``looks``: every test runs at ``0.05/looks`` (:func:`spent`); ``examples``: the test set's size,
    an effect of fewer than :data:`FEW_EXAMPLES` of them says so (its interval covers other seeds,
    not another test set)."""
    try:
        comp = make()
    except InsufficientData as err:
        design = RunDesign(None, claim, claimed_effect, margin, direction, "inconclusive", label, negligible)
        return "inconclusive", {"n": "too few runs", "test": f"no interval: {err}", "design": (design,)}, None
    if examples is not None and (not isinstance(examples, int) or isinstance(examples, bool) or examples < 1):
        raise ValueError(f"examples must be a positive int (the test set's size) or None, got {examples!r}")
    alpha = ALPHA / looks
    comp = spent(comp, looks)
    verdict = run_verdict(
        comp, claimed_effect, claim=claim, margin=margin, direction=direction, negligible=negligible, alpha=alpha
    )
    extra = []
    if claim == "equivalence":
        extra.append(tost(comp, margin, alpha=alpha).describe())  # type: ignore[arg-type]
    elif claim == "non-inferiority":
        extra.append(non_inferiority(comp, margin, alpha=alpha).describe())  # type: ignore[arg-type]
    elif negligible is not None:
        extra.append(f"smallest effect of interest {number_text(negligible, digits)}{f' {unit}' if unit else ''}")
    count = abs(comp.effect) * (examples or 0) / 100
    if claim in ("direction", "size") and unit == "points" and 0.5 <= count < FEW_EXAMPLES:
        extra.append(
            f"the effect is {count:.0f} of the {examples:,} test examples: its interval covers other seeds "
            "on this test set, not another test set"
        )
    if looks > 1:
        extra.append(f"α spent over {looks} looks at these seeds (Bonferroni): each test at {alpha:.3g}")
    test_extra = "; ".join(extra)
    fields: dict = comparison_fields(comp, digits=digits, unit=unit, test_extra=test_extra, claim=claim, alpha=alpha)
    if label:
        fields["effect"] = f"{label}: {fields['effect']}"
    fields["design"] = (RunDesign(comp, claim, claimed_effect, margin, direction, verdict, label, negligible),)
    return verdict, fields, comp


def _all_confirmed(verdicts: Sequence[str]) -> Verdict | None:
    """``confirmed``, ``confirmed but negligible`` (every part one of the two), else None."""
    if verdicts and all(v == "confirmed" for v in verdicts):
        return "confirmed"
    if verdicts and all(v in ("confirmed", "confirmed but negligible") for v in verdicts):
        return "confirmed but negligible"
    return None


def merge_fields(parts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The claim fields of several parts in one row: ``"ViT: +0.1; ConvNeXt: +0.0"`` per field, and
    every part's :class:`RunDesign` (labelled with its part's name)."""
    keys = ("effect", "ci", "n", "test", "mde")
    merged: dict = {k: "; ".join(f"{name}: {f[k]}" for name, f in parts.items() if f.get(k)) for k in keys}
    merged["design"] = tuple(
        replace(d, label=d.label or name) for name, f in parts.items() for d in f.get("design", ())
    )
    return merged


def run_verdict(
    comparison: Comparison,
    claimed_effect: float | None = None,
    *,
    claim: RunClaim = "direction",
    margin: float | None = None,
    direction: int | None = None,
    negligible: float | None = None,
    alpha: float = ALPHA,
) -> Verdict:
    """The verdict of a run-based claim from a comparison's interval, by the rule
    ``notebooks/90_report.ipynb`` states per ``claim``: ``direction`` (the sign of ``claimed_effect``,
    or ``direction`` = ±1; a CI containing 0 but excluding ``claimed_effect`` contradicts it;
    ``negligible``: the smallest effect of interest), ``size``, ``equivalence`` and
    ``non-inferiority`` (within the claim's ``margin``; no difference found is not agreement).
    ``alpha``: the one-sided level, spent over looks by :func:`judge`. Contradictions are "at our scale"."""

    lo, hi = comparison.ci_low, comparison.ci_high
    if claim in ("direction", "size"):
        if claimed_effect is not None:
            if not math.isfinite(claimed_effect) or claimed_effect == 0:
                raise ValueError(f"claimed_effect must be finite and nonzero, got {claimed_effect!r}")
            sign = 1 if claimed_effect > 0 else -1
        elif direction in (1, -1) and claim == "direction":
            sign = direction
        else:
            raise ValueError(
                "a direction claim needs claimed_effect or direction=±1; a size claim needs claimed_effect"
            )
        s_lo, s_hi = sorted((sign * lo, sign * hi))  # the CI on the claimed side's scale
        if claim == "direction":
            if negligible is not None and not (math.isfinite(negligible) and negligible > 0):
                raise ValueError(
                    f"negligible must be a positive number (the smallest effect of interest), got {negligible!r}"
                )
            if s_lo > 0:
                return "confirmed but negligible" if negligible is not None and s_hi < negligible else "confirmed"
            if s_hi < 0:
                return "contradicted"
            if claimed_effect is not None and not comparison.contains(claimed_effect):
                return "contradicted"
            return "inconclusive"
        target = abs(claimed_effect)  # type: ignore[arg-type]
        if s_lo > 0 and s_hi >= target:
            return "confirmed"
        if s_hi < target:
            return "contradicted"
        return "inconclusive"
    if claim in ("equivalence", "non-inferiority"):
        if margin is None:
            raise ValueError(f"a {claim} claim needs the margin it states")
        if claim == "equivalence":
            if tost(comparison, margin, alpha=alpha).equivalent:
                return "confirmed"
            return "contradicted" if (lo >= margin or hi <= -margin) else "inconclusive"
        if non_inferiority(comparison, margin, alpha=alpha).equivalent:
            return "confirmed"
        return "contradicted" if hi < -margin else "inconclusive"
    raise ValueError(f"claim must be one of direction, size, equivalence, non-inferiority; got {claim!r}")


def numeric_verdict(paper: float, ours: float, *, rel_tol: float = 0.0, abs_tol: float = 0.0) -> Verdict:
    """``confirmed`` when ``ours`` matches ``paper`` within the tolerances, else ``contradicted``: for
    exact statements, where a mismatch beyond the printed digits' rounding is not a scale effect."""
    if not (math.isfinite(paper) and math.isfinite(ours)):
        return "contradicted"
    return "confirmed" if math.isclose(paper, ours, rel_tol=rel_tol, abs_tol=abs_tol) else "contradicted"


def rounds_to(value: float, printed: float, decimals: int) -> bool:
    """True when ``value`` rounded to ``decimals`` places gives the printed number."""
    return round(value, decimals) == round(printed, decimals) or math.isclose(
        round(value, decimals), printed, abs_tol=10 ** (-decimals) / 2
    )

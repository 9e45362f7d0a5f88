"""A seed plan from the data: for each inconclusive run-based row of the report, how many seeds
would make its minimal detectable effect smaller than what it must detect, and what they cost.

For a row (:class:`~helpers.core.claim.Claim`) the numbers come from its ``design``
(:class:`~helpers.core.claim.RunDesign`, one per part the row is judged in), assuming the
observed spread stays the same:

* what the row must detect (``target``): the margin of an equivalence or non-inferiority claim
  (compared with the margin those tests show with 80 % power, not with the two-sided MDE), the
  claimed effect of a size claim or of a direction claim that states one, else the observed effect
  (a bare "a beats b" is decided once an effect of its observed size is detectable);
* the power figure at ``n`` seeds (:func:`mde_at`: the two-sided MDE of
  :func:`~helpers.core.comparison.minimal_detectable_effect` for a difference, the margin of
  :func:`~helpers.core.comparison.detectable_margin` for TOST or non-inferiority): paired t or
  one-sample t with ``se = sd/√n``, ``df = n − 1``; Welch with ``n`` runs per arm,
  ``se = √((s_a² + s_b²)/n)`` and Welch-Satterthwaite ``df``;
* ``n needed``: the smallest ``n`` whose MDE is below the target; a row in several parts needs the
  largest ``n`` of its undecided parts (every part must be decided);
* the outcome at that ``n`` if the observed effect and spread stay: the report's own rule
  (:func:`~helpers.core.verdicts.run_verdict`) on data of that mean and SD;
* every test at the level of the look the added seeds make (:func:`next_look`): seeds added after
  looking are one more look, and the report spends α over a scale's looks (``Scale.looks``), so a
  row decided at ``k`` looks is planned at ``0.05/(k + 1)``;
* the cost: extra seeds × arms × mean training seconds of one run of the row's run set
  (:class:`RunCost`, from the committed results' ``train_seconds``), and the CPU it needs (a bf16
  run needs AMX or AVX512-BF16).

A row without a t design (a count, a bootstrap median of timing rounds, units that are not seeds)
is "not a seed question"; a row whose ``n`` exceeds ``max_seeds`` or whose cost exceeds the budget
is "out of reach".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from helpers.core.claim import Claim, RunClaim, RunDesign
from helpers.core.comparison import detectable_margin, minimal_detectable_effect
from helpers.core.results_cache import load_result
from helpers.core.statistics import (
    ALPHA,
    Comparison,
    one_sample,
    paired_comparison,
    welch_comparison,
)
from helpers.core.verdicts import run_verdict, spent

#: More seeds than this is not an affordable plan on a CPU budget.
MAX_SEEDS: int = 30
#: Where the search for ``n`` stops (an MDE that never falls below the target: none found).
_SEARCH_LIMIT: int = 4096
BF16_CPU = "native bf16 (AMX or AVX512-BF16)"
ANY_CPU = "any x86 (float32)"

#: Columns of :func:`plan_frame`, in display order.
PLAN_COLUMNS: tuple[str, ...] = (
    "key",
    "claim",
    "source",
    "page",
    "rule",
    "target",
    "target is",
    "n",
    "spread",
    "MDE now",
    "n needed",
    "parts",
    "if the effect stays",
    "extra seeds",
    "arms",
    "core-hours",
    "core-hours (every arm of the set)",
    "CPU",
    "cost basis",
    "status",
    "bought by",  # the retrain batch training the seeds (filled by the caller that knows the batches)
)


@dataclass(frozen=True)
class RunCost:
    """What one seed of one arm of a row's run set costs, from its committed results."""

    seconds_per_run: float  # mean training seconds of one run (one arm, one seed), one thread
    runs_per_seed: int  # the arms of the run set (a page switches when every arm has the new seeds)
    bf16: bool  # some run of the set trains in bf16: it needs AMX or AVX512-BF16
    basis: str  # how the estimate was made, in words
    cpus: tuple[str, ...] = ()  # the CPUs the times were recorded on

    @property
    def cpu(self) -> str:
        return BF16_CPU if self.bf16 else ANY_CPU


@dataclass(frozen=True)
class RowRuns:
    """The runs behind report rows: rows of page ``notebook`` (its docname's last part) whose claim
    contains ``keyword`` rest on ``configs()``; ``configs=None`` says the rows are not a seed
    question, and ``why`` says why."""

    notebook: str
    keyword: str
    name: str
    configs: Callable[[], list] | None
    why: str = ""

    def matches(self, claim: Claim) -> bool:
        return claim.notebook.rsplit("/", 1)[-1] == self.notebook and self.keyword in claim.claim


def _run_seconds(config, result: dict) -> float:
    """Training seconds of one run; a ReLU-ization arm that reused a committed run's weights
    recorded only its analysis, so that run's training is added (a new seed trains it)."""
    seconds = float(result["train_seconds"])
    if (result.get("reproduces") or {}).get("reused_weights") and hasattr(config, "train_config"):
        trained = load_result(config.train_config())
        if trained is not None:
            seconds += float(trained["train_seconds"])
    return seconds


def run_cost(configs: Sequence, name: str) -> RunCost | None:
    """:class:`RunCost` of the run set ``configs`` from its committed results (``None``: none)."""
    seconds: list[float] = []
    cpus: set[str] = set()
    for cfg in configs:
        result = load_result(cfg)
        if result is not None:
            seconds.append(_run_seconds(cfg, result))
            cpus.add(str((result.get("provenance") or {}).get("cpu_model", "unknown CPU")))
    if not seconds:
        return None
    seeds = {getattr(c, "seed", None) for c in configs}
    per_seed = max(1, round(len(configs) / max(1, len(seeds))))
    bf16 = any(getattr(c, "precision", "float32") == "bf16" for c in configs)
    mean = sum(seconds) / len(seconds)
    basis = (
        f"{name}: mean train_seconds of its {len(seconds)} committed runs ({mean / 60:.1f} min per run), "
        f"{per_seed} arms per seed"
    )
    return RunCost(mean, per_seed, bf16, basis, tuple(sorted(cpus)))


# --------------------------------------------------------------------------------------------
# Seeds from a design
# --------------------------------------------------------------------------------------------


def _arm_sds(comp: Comparison) -> tuple[float, float]:
    return float(np.std(comp.values_a, ddof=1)), float(np.std(comp.values_b, ddof=1))


#: The designs the plan can carry to another n with the observed spread; others (the jackknife
#: over replicas of a U-statistic, bootstrap medians, counts) are not seed questions here.
PLANNED_TESTS: tuple[str, ...] = ("paired t", "one-sample t", "Welch t")


def next_look(comp: Comparison) -> int:
    """The look that adding seeds to ``comp``'s row makes: one more than the looks its interval was
    spent over (a 95 % interval: one look, so more seeds are the second)."""
    return round(ALPHA / (1 - comp.confidence)) + 1


def mde_at(comp: Comparison, n: int, claim: RunClaim = "direction") -> float:
    """The power figure of ``comp``'s design at ``n`` seeds (pairs, values, or runs per arm for
    Welch), with its observed spread, for the test ``claim`` uses: the two-sided MDE of a
    difference, or the margin TOST or non-inferiority shows with 80 % power
    (:func:`~helpers.core.comparison.detectable_margin`), as the report's rows state it."""
    if n < 2:
        raise ValueError(f"n must be at least 2 (one seed gives no spread), got {n!r}")
    if comp.test == "Welch t":
        va, vb = (s * s for s in _arm_sds(comp))
        se = math.sqrt((va + vb) / n)
        df = (va + vb) ** 2 * (n - 1) / (va * va + vb * vb) if va + vb > 0 else 2.0 * (n - 1)
    elif comp.test in ("paired t", "one-sample t"):
        se, df = comp.sd / math.sqrt(n), n - 1
    else:
        raise ValueError(f"no seed plan for a {comp.test!r} comparison (not a t design)")
    alpha = ALPHA / next_look(comp)
    if claim in ("equivalence", "non-inferiority"):
        return detectable_margin(se, df, claim, alpha=alpha)
    return minimal_detectable_effect(se, df, alpha=alpha)


def current_n(comp: Comparison) -> int:
    """Seeds of the design now (runs per arm for Welch: the smaller arm)."""
    return min(comp.n_a, comp.n_b) if comp.test == "Welch t" else comp.n


def target(design: RunDesign) -> tuple[float, str]:
    """``(effect the part must detect, what it is)``: the margin, the claimed effect, or the
    observed effect of a bare direction claim."""
    if design.claim in ("equivalence", "non-inferiority"):
        return float(design.margin), "margin"  # type: ignore[arg-type]
    if design.claimed_effect is not None:
        return abs(float(design.claimed_effect)), "claimed effect"
    return abs(design.comparison.effect), "observed effect"  # type: ignore[union-attr]


def seeds_needed(design: RunDesign, *, limit: int = _SEARCH_LIMIT) -> int | None:
    """The smallest ``n`` at which the part's MDE is below its :func:`target` (the current ``n``
    when it already is); ``None`` when no ``n`` up to ``limit`` reaches it."""
    comp = design.comparison
    if comp is None:
        raise ValueError("a part with too few runs has no spread to plan from")
    goal, _ = target(design)
    lo = current_n(comp)
    if mde_at(comp, lo, design.claim) < goal:
        return lo
    if goal <= 0 or mde_at(comp, limit, design.claim) >= goal:
        return None
    hi = limit
    while hi - lo > 1:  # the MDE falls as n grows: bisect for the first n below the goal
        mid = (lo + hi) // 2
        if mde_at(comp, mid, design.claim) < goal:
            hi = mid
        else:
            lo = mid
    return hi


def _standard(n: int) -> np.ndarray:
    """``n`` values with mean exactly 0 and SD exactly 1 (ddof = 1)."""
    z = np.linspace(-1.0, 1.0, n)
    return (z - z.mean()) / z.std(ddof=1)


def outcome_at(design: RunDesign, n: int) -> str:
    """The report's verdict (:func:`run_verdict`) at ``n`` seeds if the observed effect and spread
    stay: the rule applied to data of exactly that mean and SD."""
    comp = design.comparison
    if comp is None:
        raise ValueError("a part with too few runs has no effect to carry forward")
    z = _standard(n)
    if comp.test == "paired t":
        future = paired_comparison(comp.effect + comp.sd * z, np.zeros(n))
    elif comp.test == "one-sample t":
        future = one_sample(comp.effect + comp.sd * z, 0.0)
    elif comp.test == "Welch t":
        sa, sb = _arm_sds(comp)
        future = welch_comparison(comp.effect + sa * z, sb * z)
    else:
        raise ValueError(f"no seed plan for a {comp.test!r} comparison (not a t design)")
    look = next_look(comp)
    return run_verdict(
        spent(future, look),
        design.claimed_effect,
        claim=design.claim,
        margin=design.margin,
        direction=design.direction,
        negligible=design.negligible,
        alpha=ALPHA / look,
    )


def combine_verdicts(verdicts: Sequence[str]) -> str:
    """A claim made of several run-based parts: confirmed when all are (confirmed but negligible when
    all are confirmed and some only negligibly); contradicted when any is; inconclusive otherwise."""
    if verdicts and set(verdicts) <= {"confirmed", "confirmed but negligible"}:
        return "confirmed" if set(verdicts) == {"confirmed"} else "confirmed but negligible"
    return "contradicted" if "contradicted" in verdicts else "inconclusive"


def _spread(comp: Comparison) -> str:
    if comp.test == "Welch t":
        sa, sb = _arm_sds(comp)
        return f"arm SDs {sa:.3g} / {sb:.3g}"
    return f"SD of {'paired differences' if comp.paired else 'values'} {comp.sd:.3g}"


def _arms(designs: Sequence[RunDesign]) -> int:
    """Distinct arms the parts compare (an arm shared by two parts, e.g. the tested activation
    against each competitor, has the same per-seed values and counts once)."""
    arms = {
        tuple(np.round(v, 12))
        for d in designs
        if d.comparison is not None
        for v in (d.comparison.values_a, d.comparison.values_b)
        if len(v)
    }
    return max(1, len(arms))


def _not_a_seed_question(claim: Claim) -> str:
    """Why a row without a t design gets no plan."""
    parts = [d.comparison for d in claim.design]
    if any(c is not None and c.bootstrap for c in parts):
        return "not a seed question: a bootstrap median of timing rounds of one network per arm"
    if "binomial" in claim.test:
        return "not a seed question: a count (exact binomial interval), not a t design"
    if any(c is not None and c.test not in PLANNED_TESTS for c in parts):
        tests = sorted({c.test for c in parts if c is not None and c.test not in PLANNED_TESTS})
        return (
            f"not a seed question: no seed plan for a {', '.join(tests)} comparison (a paired, Welch or one-sample t)"
        )
    return "not a seed question: no t design recorded for this row"


def plan_row(
    claim: Claim, runs: RowRuns | None, cost: RunCost | None, *, max_seeds: int, budget_core_hours: float
) -> dict:
    """One row of the plan (:data:`PLAN_COLUMNS`) for an inconclusive run-based ``claim``."""
    row: dict = {
        "key": claim.key,
        "claim": claim.claim,
        "source": claim.source,
        "page": claim.notebook.rsplit("/", 1)[-1],
    }
    open_parts = [d for d in claim.design if d.verdict == "inconclusive"]
    if runs is not None and runs.configs is None:
        return {**row, "status": f"not a seed question: {runs.why}"}
    if not open_parts or any(
        d.comparison is not None and (d.comparison.bootstrap or d.comparison.test not in PLANNED_TESTS)
        for d in open_parts
    ):
        return {**row, "status": _not_a_seed_question(claim)}
    if any(d.comparison is None for d in open_parts):
        return {
            **row,
            "rule": open_parts[0].claim,
            "n": 1,
            "status": "fewer than 2 seeds: no spread to plan from; a second seed comes first",
        }
    needs = [seeds_needed(d) for d in open_parts]
    i = max(range(len(needs)), key=lambda k: math.inf if needs[k] is None else needs[k])
    binding, n_needed = open_parts[i], needs[i]
    comp = binding.comparison
    goal, goal_kind = target(binding)
    n_now = current_n(comp)  # type: ignore[arg-type]
    row.update(
        {
            "rule": binding.claim,
            "target": goal,
            "target is": goal_kind,
            "n": n_now,
            "spread": _spread(comp),
            "MDE now": mde_at(comp, n_now, binding.claim),
            "n needed": n_needed,  # type: ignore[arg-type, union-attr]
            "parts": "; ".join(
                f"{d.label or f'part {k + 1}'}: n {'> ' + str(_SEARCH_LIMIT) if v is None else v}"
                for k, (d, v) in enumerate(zip(open_parts, needs))
            )
            if len(needs) > 1
            else "",
        }
    )
    if n_needed is None:
        return {**row, "status": f"out of reach: no n up to {_SEARCH_LIMIT} brings the MDE below the {goal_kind}"}
    decided = [d.verdict for d in claim.design if d.verdict != "inconclusive"]
    row["if the effect stays"] = combine_verdicts(
        decided + [outcome_at(d, max(n_needed, current_n(d.comparison))) for d in open_parts]
    )  # type: ignore[arg-type]
    extra = n_needed - n_now
    row["extra seeds"] = extra
    if cost is None:
        status = "out of reach" if n_needed > max_seeds else "reachable in seeds"
        return {
            **row,
            "cost basis": "no run set with committed results is known for this row",
            "status": f"{status}; cost unknown",
        }
    arms = min(_arms(claim.design), cost.runs_per_seed)
    hours = extra * arms * cost.seconds_per_run / 3600
    row.update(
        {
            "arms": arms,
            "core-hours": hours,
            "core-hours (every arm of the set)": extra * cost.runs_per_seed * cost.seconds_per_run / 3600,
            "CPU": cost.cpu,
            "cost basis": f"{cost.basis}; times recorded on {', '.join(cost.cpus)}",
        }
    )
    if n_needed > max_seeds:
        row["status"] = f"out of reach: {n_needed} seeds > {max_seeds}"
    elif hours > budget_core_hours:
        row["status"] = f"out of reach: {hours:.1f} core-hours > the {budget_core_hours:g} budget"
    elif extra == 0:
        row["status"] = f"MDE already below the {goal_kind}: more seeds only narrow the interval around the effect"
    else:
        row["status"] = "reachable"
    return row


def plan_frame(
    claims: Sequence[Claim], sources: Sequence[RowRuns], *, budget_core_hours: float, max_seeds: int = MAX_SEEDS
) -> pd.DataFrame:
    """The seed plan of every inconclusive run-based row of ``claims`` (:data:`PLAN_COLUMNS`),
    reachable rows first, cheapest first. ``sources`` say which runs each row rests on (the first
    that :meth:`RowRuns.matches` a row); a row no source matches gets no cost."""
    if not (isinstance(max_seeds, int) and max_seeds >= 2):
        raise ValueError(f"max_seeds must be an int >= 2, got {max_seeds!r}")
    if not (math.isfinite(budget_core_hours) and budget_core_hours > 0):
        raise ValueError(f"budget_core_hours must be a positive number, got {budget_core_hours!r}")
    costs: dict[str, RunCost | None] = {}
    rows = []
    for claim in claims:
        if claim.basis != "runs" or claim.verdict != "inconclusive":
            continue
        runs = next((s for s in sources if s.matches(claim)), None)
        if runs is not None and runs.configs is not None and runs.name not in costs:
            costs[runs.name] = run_cost(runs.configs(), runs.name)
        cost = costs.get(runs.name) if runs is not None else None
        rows.append(plan_row(claim, runs, cost, max_seeds=max_seeds, budget_core_hours=budget_core_hours))
    frame = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
    for column in ("n", "n needed", "extra seeds", "arms"):  # counts stay integers beside the missing ones
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
    frame["bought by"] = frame["bought by"].astype(object)  # text, though every cell starts missing
    order = frame["status"].map(
        lambda s: (
            0 if s == "reachable" else 1 if str(s).startswith("MDE") else 2 if str(s).startswith("out of reach") else 3
        )
    )
    return (
        frame.assign(_order=order)
        .sort_values(["_order", "core-hours"], kind="stable", na_position="last")
        .drop(columns="_order")
        .reset_index(drop=True)
    )


def plan_text(frame: pd.DataFrame) -> str:
    """The plan as plain text for the terminal: one block per row."""
    lines = []
    for d in frame.to_dict("records"):
        lines.append(f"- {d['claim']}  [{d['page']}]")
        if isinstance(d["target"], float) and math.isfinite(d["target"]):
            lines.append(
                f"    {d['rule']}: {d['target is']} {d['target']:.4g}; n {d['n']}, {d['spread']}, "
                f"MDE now {d['MDE now']:.4g}; n needed "
                f"{f'none up to {_SEARCH_LIMIT}' if pd.isna(d['n needed']) else d['n needed']}"
                + (f" ({d['parts']})" if d["parts"] else "")
            )
        if isinstance(d["core-hours"], float) and math.isfinite(d["core-hours"]):
            lines.append(
                f"    +{d['extra seeds']} seeds × {d['arms']} arms: {d['core-hours']:.2f} core-hours "
                f"({d['core-hours (every arm of the set)']:.2f} for every arm of the set), {d['CPU']}; "
                f"if the effect stays: {d['if the effect stays']}"
            )
            lines.append(f"    cost: {d['cost basis']}")
        lines.append(f"    {d['status']}")
        if isinstance(d.get("bought by"), str) and d["bought by"]:
            lines.append(f"    bought by {d['bought by']}")
    reachable = frame[frame["status"] == "reachable"]
    lines.append(
        f"{len(reachable)} of {len(frame)} rows reachable, {reachable['core-hours'].sum():.1f} core-hours "
        "for all of them (each row's arms; rows on the same run set share seeds, so this is an upper bound)"
    )
    return "\n".join(lines)

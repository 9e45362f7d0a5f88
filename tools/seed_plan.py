"""A seed plan from the data: for each inconclusive run-based row of the report, how many seeds
would make its minimal detectable effect smaller than what it must detect, and what they cost.

For a row (:class:`~helpers.core.claim.Claim`) the numbers come from its ``design``
(:class:`~helpers.core.claim.RunDesign`, one per part the row is judged in), assuming the
observed spread stays the same (:mod:`tools.seed_design`: the target, the MDE at ``n`` seeds,
the ``n`` needed and the outcome there, each test at the level of the look the seeds make):

* a row in several parts needs the largest ``n`` of its undecided parts (every part must be decided);
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

from helpers.core.claim import Claim, RunDesign
from helpers.core.results_cache import load_result
from helpers.core.statistics import Comparison
from tools.seed_design import (
    PLANNED_TESTS,
    SEARCH_LIMIT,
    arm_sds,
    combine_verdicts,
    current_n,
    mde_at,
    outcome_at,
    seeds_needed,
    target,
)

#: More seeds than this is not an affordable plan on a CPU budget.
MAX_SEEDS: int = 30
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


def _spread(comp: Comparison) -> str:
    if comp.test == "Welch t":
        sa, sb = arm_sds(comp)
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
                f"{d.label or f'part {k + 1}'}: n {'> ' + str(SEARCH_LIMIT) if v is None else v}"
                for k, (d, v) in enumerate(zip(open_parts, needs))
            )
            if len(needs) > 1
            else "",
        }
    )
    if n_needed is None:
        return {**row, "status": f"out of reach: no n up to {SEARCH_LIMIT} brings the MDE below the {goal_kind}"}
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
                f"{f'none up to {SEARCH_LIMIT}' if pd.isna(d['n needed']) else d['n needed']}"
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

"""How far along the retrain of :mod:`tools.batches` is: runs done and the core-hours they took per
batch, an estimate of the rest, and per issue the runs it paid for against its budget
(``python -m tools.retrain --status``, and the table of the status page)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pandas as pd

from helpers.core.results_cache import config_hash, load_result
from helpers.core.runs import TrainConfig
from helpers.lambda_gelu.options import LambdaGeluOptions
from tools.batches import BATCHES, ISSUES, Batch


@dataclass(frozen=True)
class BatchStatus:
    key: str
    title: str
    done: int
    total: int
    core_hours: float  # training time of the finished runs (one thread each)
    hours_left: float | None = None  # estimate for the missing runs (None: no finished run to go by)


def _train_config(cfg) -> TrainConfig:
    """The TrainConfig behind ``cfg`` (a ReLU-ization run trains one)."""
    return cfg.train_config() if hasattr(cfg, "train_config") else cfg


def _run_kinds(cfg) -> tuple[tuple, tuple]:
    """Two keys for runs that cost about the same: the same arm (experiment, activation, annealing
    and penultimate activation) at the same scale; failing that, any arm at the same scale (model,
    data and length at the same precision). One experiment can run at two scales (the DeiT pair's
    runs take 1-2 minutes, the ReLU-ization ViT's with the same experiment name 10-20), so the
    scale is part of both keys."""
    t = _train_config(cfg)
    scale = (t.model, repr(sorted(t.model_kwargs.items())), t.dataset, t.n_train, t.epochs, t.precision)
    arm = (t.experiment, t.activation, t.option(LambdaGeluOptions).anneals, t.penultimate_activation)
    return (arm + scale, scale)


@functools.cache
def _runs(claim: Batch) -> tuple[tuple[object, str], ...]:
    """``claim``'s configs with their hashes, built once per process: the status reads them four
    times over, and building and hashing the ~13,000 configs of all claims takes ~10 s."""
    return tuple((cfg, config_hash(cfg)) for cfg in claim.configs())


def finished_seconds() -> dict[tuple, list[float]]:
    """Training seconds of every finished run of every claim, under both of its kinds."""
    seen: set[str] = set()
    out: dict[tuple, list[float]] = {}
    for claim in BATCHES.values():
        for cfg, h in _runs(claim):
            if h in seen:
                continue
            seen.add(h)
            result = load_result(cfg)
            if result is not None:
                for kind in _run_kinds(cfg):
                    out.setdefault(kind, []).append(float(result["train_seconds"]))
    return out


def batch_status(claim: Batch, finished: dict[tuple, list[float]] | None = None) -> BatchStatus:
    """How many of ``claim``'s runs have a result file, the core-hours they took, and an estimate
    of the rest: each missing run costs the mean of the finished runs of its kind, in any claim
    (:func:`_run_kinds`: the same arm, else the same model and scale); ``None`` when a missing
    run has neither."""
    finished = finished_seconds() if finished is None else finished
    configs = [cfg for cfg, _ in _runs(claim)]
    seconds, done = 0.0, 0
    left: float | None = 0.0
    for cfg in configs:
        result = load_result(cfg)  # verified: a corrupt file raises, naming it
        if result is not None:
            done += 1
            seconds += float(result["train_seconds"])
            continue
        times = next((finished[k] for k in _run_kinds(cfg) if finished.get(k)), None)
        left = None if left is None or times is None else left + sum(times) / len(times)
    return BatchStatus(
        claim.key, claim.title, done, len(configs), seconds / 3600, None if left is None else left / 3600
    )


def total_core_hours(keys: list[str] | None = None) -> tuple[int, float]:
    """Distinct finished runs of the claims ``keys`` (default: all) and their training core-hours;
    a run two claims share (batch (g)'s δ = 0.001 is batch (b)'s S-ReLU arm) counts once."""
    seconds: dict[str, float] = {}
    for key in keys or list(BATCHES):
        for cfg, h in _runs(BATCHES[key]):
            if h not in seconds:
                result = load_result(cfg)
                if result is not None:
                    seconds[h] = float(result["train_seconds"])
    return len(seconds), sum(seconds.values()) / 3600


def issue_core_hours(issue: str) -> tuple[int, float]:
    """Distinct finished runs an issue paid for and their training core-hours: the runs of its
    claims that no claim listed before them (in :data:`BATCHES` order) belongs to another issue,
    less those trained before the retrain (:attr:`Batch.seeds_trained_before`).

    A claim that adds seeds to a set counts its new seeds only: batch (u)'s seeds 0-2 are claims
    (c)/(d)'s runs, trained under "Decisive scale", and do not spend the "CPU budget"."""
    results = _issue_results(issue)
    return len(results), _wall_hours(results)


def _wall_hours(results: list[dict]) -> float:
    return sum(float(r["train_seconds"]) for r in results) / 3600


def _issue_results(issue: str) -> list[dict]:
    """The result of every finished run ``issue`` paid for (:func:`issue_core_hours`)."""
    if issue not in ISSUES:
        raise ValueError(f"unknown issue {issue!r}; the issues are {', '.join(ISSUES)}")
    first: dict[str, tuple[str, object]] = {}  # run -> (issue of the first claim listing it, config)
    for claim in BATCHES.values():
        for cfg, h in _runs(claim):
            paid = "" if cfg.seed in claim.seeds_trained_before else claim.issue
            first.setdefault(h, (paid, cfg))
    return [r for owner, cfg in first.values() if owner == issue and (r := load_result(cfg)) is not None]


def off_cpu_hours(results: list[dict]) -> tuple[int, float]:
    """Of an issue's runs, those that record their CPU time (``cpu_seconds``, recorded by the runs
    trained after batch (t)) and the hours of wall time they spent off the CPU: paused (SIGSTOP
    while CI ran), waiting on I/O or on a device. The budget counts wall time, so these hours are
    counted though no core was spent; runs older than the field cannot say."""
    timed = [r for r in results if "cpu_seconds" in r]
    off = sum(max(0.0, float(r["train_seconds"]) - float(r["cpu_seconds"])) for r in timed)
    return len(timed), off / 3600


def _issue_line(issue: str) -> str:
    """One line of ``--status`` per issue: the runs it added, their core-hours against its budget,
    and how much of that wall time the runs that record their CPU time spent off the CPU."""
    results = _issue_results(issue)  # loaded once: both counts below read them
    budget = ISSUES[issue]
    spent = f"{_wall_hours(results):.2f}" + ("" if budget is None else f" of its {budget:g}")
    line = f'issue "{issue}": {len(results)} runs it added, {spent} core-hours'
    line += " (a run an earlier issue trained counts there)"
    timed, off = off_cpu_hours(results)
    if timed:
        line += f"; {timed} of them record their CPU time, and {off:.2f} of their hours were spent off the CPU"
    return line


def status_table() -> pd.DataFrame:
    """Progress of every batch of the retrain as a table (the status page shows it): runs done,
    core-hours spent, an estimate of the core-hours left (:func:`batch_status`), and per issue a
    total against its budget."""
    rows = []
    left_by_issue: dict[str, float | None] = {issue: 0.0 for issue in ISSUES}
    finished = finished_seconds()
    for batch in BATCHES.values():
        st = batch_status(batch, finished)
        rows.append(
            {
                "batch": f"({st.key}) {st.title}",
                "issue": batch.issue,
                "runs done": f"{st.done}/{st.total}",
                "complete": st.done == st.total,
                "core-hours so far": round(st.core_hours, 2),
                "core-hours left (est.)": None if st.hours_left is None else round(st.hours_left, 2),
            }
        )
        so_far = left_by_issue[batch.issue]
        left_by_issue[batch.issue] = None if so_far is None or st.hours_left is None else so_far + st.hours_left
    for issue, budget in ISSUES.items():
        runs, hours = issue_core_hours(issue)
        left = left_by_issue[issue]
        label = f'issue "{issue}": the runs it added (a run an earlier issue trained counts there)'
        if budget is not None:
            label += f"; budget {budget:g} core-hours"
        rows.append(
            {
                "batch": label,
                "issue": issue,
                "runs done": f"{runs}",
                "complete": all(r["complete"] for r in rows if r["issue"] == issue),
                "core-hours so far": round(hours, 2),
                "core-hours left (est.)": None if left is None else round(left, 2),
            }
        )
    runs, hours = total_core_hours()
    rows.append(
        {
            "batch": "all batches (a run two batches share counts once)",
            "issue": "",
            "runs done": f"{runs}",
            "complete": all(r["complete"] for r in rows if r["issue"]),
            "core-hours so far": round(hours, 2),
            "core-hours left (est.)": None,
        }
    )
    return pd.DataFrame(rows).set_index("batch")


def status_lines(keys: list[str]) -> list[str]:
    """``--status`` for the batches ``keys``: a line per batch, their total, and a line per issue."""
    finished = finished_seconds()
    lines = []
    for key in keys:
        st = batch_status(BATCHES[key], finished)
        left = (
            ""
            if st.done == st.total
            else (", left: unknown" if st.hours_left is None else f", about {st.hours_left:.1f} left")
        )
        lines.append(f"({st.key}) {st.title}: {st.done}/{st.total} runs, {st.core_hours:.2f} core-hours{left}")
    runs, hours = total_core_hours(keys)
    lines.append(f"total: {runs} distinct runs done, {hours:.2f} core-hours (a run shared by two claims counts once)")
    lines += [_issue_line(issue) for issue in dict.fromkeys(BATCHES[k].issue for k in keys)]
    return lines

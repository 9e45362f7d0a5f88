"""The retrain of the cpu profile: trains the runs of :mod:`tools.batches`, in
their order, and says how far along they are and what more seeds would decide.

    python -m tools.retrain --status            # runs done and core-hours, per batch
    python -m tools.retrain --plan              # seeds that would decide each inconclusive row
    nohup python -m tools.retrain a b --workers 2 > retrain.log 2>&1 &

Training resumes from the per-epoch checkpoint of an interrupted run (see
:func:`helpers.core.train.fit`), so the same command continues after a kill. Runs configured for
bf16 are skipped, with a message, where the device they would train on lacks native bf16 (a CPU
without AMX or AVX512-BF16, where they would take 10-17x longer); a machine with AMX, AVX512-BF16 or
a bf16 GPU (``REPRO_DEVICE``, by default the GPU where there is one) trains them. With
``--executor slurm`` each job checks on its own node.
"""

from __future__ import annotations

import argparse
import functools
import os
from dataclasses import dataclass

import pandas as pd
import torch

from helpers.claims import report_claims
from helpers.core import provenance
from helpers.core.device import bf16_is_native_on, resolve_device
from helpers.core.env import bool_env
from helpers.core.results_cache import config_hash, load_result, run_many
from helpers.core.runs import KEEP_FINAL_WEIGHTS_ENV, TrainConfig
from helpers.lambda_gelu import protocol as lgelu
from helpers.lambda_gelu.options import LambdaGeluOptions
from helpers.relu_ization.experiment import reluization_configs
from helpers.srelu.dpo_experiment import dpo_configs
from tools import cluster_args, paper_plan
from tools.batches import BATCHES, ISSUES, Batch, gelu_and_annealed
from tools.cli import ArgumentParser, positive_int_arg
from tools.seed_plan import RowRuns, plan_frame, plan_text

#: Which runs each inconclusive report row rests on (:func:`seed_plan`), by page and a word of
#: the claim: the run set whose committed ``train_seconds`` price one more seed of its arms.
PLAN_SOURCES: tuple[RowRuns, ...] = (
    RowRuns(
        "10_lambda_gelu_tc_grid", "", "λ-GELU Fig. 2 c sweep (ResNet-18, cpu)", lambda: lgelu.c_sweep_configs("cpu")
    ),
    RowRuns(
        "11_lambda_gelu_profiles",
        "transformer",
        "λ-GELU Table I across pairs",
        None,
        why="its units are model–data pairs (MLP/CNN vs transformer), not seeds: more seeds do not add pairs",
    ),
    RowRuns(
        "11_lambda_gelu_profiles",
        "ResNet",
        "retrain (c)+(d), ResNet-18/CIFAR-10",
        lambda: [c for k in ("c", "d") for c in BATCHES[k].configs() if c.dataset == "cifar10"],
    ),
    RowRuns(
        "12_lambda_gelu_annealing",
        "DeiT",
        "λ-GELU Table II, DeiT-tiny pair (cpu)",
        lambda: gelu_and_annealed("tinyimagenet_deit"),
    ),
    RowRuns("21_srelu_benchmarks", "ViT", "retrain (b), S-ReLU Table 1 (ViT)", lambda: BATCHES["b"].configs()),
    RowRuns(
        "21_srelu_benchmarks", "ConvNeXt", "retrain (p), S-ReLU Table 2 (ConvNeXt)", lambda: BATCHES["p"].configs()
    ),
    RowRuns("22_srelu_dpo", "", "S-ReLU Table 3 stand-in, DPO (cpu)", lambda: dpo_configs("cpu")),
    RowRuns("31_flexact_cifar", "", "retrain (f), Flex-Act Table 2", lambda: BATCHES["f"].configs()),
    RowRuns(
        "40_reluization_mlp", "", "retrain (h)+(q), ReLU-ization MLP", lambda: reluization_configs("fmnist", "cpu")
    ),
    RowRuns("41_reluization_pairs", "ResNet", "retrain (j), ReLU-ization ResNet-18", lambda: BATCHES["j"].configs()),
    RowRuns("41_reluization_pairs", "ViT", "retrain (k), ReLU-ization ViT", lambda: BATCHES["k"].configs()),
    RowRuns(
        "41_reluization_pairs", "GPT", "retrain (l)+(s), ReLU-ization GPT", lambda: reluization_configs("gpt", "cpu")
    ),
)


def seed_plan() -> pd.DataFrame:
    """The seed plan of the report's inconclusive run-based rows (:func:`seed_plan.plan_frame`)
    against the "CPU budget" issue's budget, costed from :data:`PLAN_SOURCES`, each row with the
    retrain claim that buys its seeds, if one does (:attr:`Batch.decides`)."""
    frame = plan_frame(list(report_claims()), PLAN_SOURCES, budget_core_hours=ISSUES["CPU budget"])  # type: ignore[arg-type]
    finished = _finished_seconds()
    for claim in BATCHES.values():
        if claim.decides:
            st = batch_status(claim, finished)
            frame.loc[frame["key"].isin(claim.decides), "bought by"] = (
                f"batch ({claim.key}) of the retrain: {st.done}/{st.total} runs committed"
            )
    return frame


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


def _finished_seconds() -> dict[tuple, list[float]]:
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
    finished = _finished_seconds() if finished is None else finished
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
    finished = _finished_seconds()
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


def runnable_here(config, device: torch.device | None = None) -> bool:
    """Whether ``device`` (default: the one this machine's runs train on, ``REPRO_DEVICE``, else a
    GPU when there is one) trains ``config`` at its own precision natively: a bf16 run needs a GPU
    with bf16 or a CPU with native bf16 (AMX or AVX512-BF16), unless ``REPRO_ALLOW_EMULATED_BF16=1``
    asks to emulate it on the CPU."""
    if getattr(config, "precision", "float32") != "bf16":
        return True
    device = resolve_device() if device is None else device
    if bf16_is_native_on(device):
        return True
    return device.type == "cpu" and bool_env(provenance.ALLOW_EMULATED_BF16_ENV, False)


def split_runnable(configs: list, device: torch.device | None = None) -> tuple[list, list]:
    """``configs`` split into those ``device`` (default: this machine's training device) can train
    (:func:`runnable_here`) and the rest, in order."""
    device = resolve_device() if device is None else device
    here = [c for c in configs if runnable_here(c, device)]
    return here, [c for c in configs if not runnable_here(c, device)]


def _without_bf16(device: torch.device) -> str:
    """The device that lacks native bf16, in words, for the skip message."""
    if device.type == "cuda":
        return f"this GPU ({torch.cuda.get_device_name(device)}) has no bf16 support"
    if device.type == "cpu":
        return f"this CPU ({provenance.cpu_model()}, {provenance.cpu_capability()}) has no native bf16"
    return f"{device.type} has no bf16 autocast here"


def _batch_keys(parser: argparse.ArgumentParser, text: list[str]) -> list[str]:
    unknown = [k for k in text if k not in BATCHES]
    if unknown:
        parser.error(f"unknown batch {', '.join(unknown)}; choose from {', '.join(BATCHES)}")  # exits 2
    if repeated := sorted({k for k in text if text.count(k) > 1}):
        parser.error(f"claim {', '.join(repeated)} given twice; name each claim once")
    return text or list(BATCHES)


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(
        prog="python -m tools.retrain",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("batches", nargs="*", help=f"batches to train, in order (default: all of {', '.join(BATCHES)})")
    parser.add_argument(
        "--workers",
        type=positive_int_arg("--workers"),
        default=None,
        help="parallel runs, a positive integer (default: REPRO_WORKERS, else one per core)",
    )
    parser.add_argument("--status", action="store_true", help="print progress per claim and exit")
    parser.add_argument(
        "--plan",
        action="store_true",
        help="print the seeds that would decide each inconclusive run-based row, with their cost, and exit",
    )
    parser.add_argument(
        "--profile",
        default="cpu",
        choices=("cpu", "paper"),
        help="cpu: the decisive-scale claims above; paper: every paper-profile run, "
        "grouped by the report rows it decides (claims are then group names)",
    )
    cluster_args.add_executor_args(parser)
    args = parser.parse_args(argv)
    if args.plan and args.status:
        parser.error("--plan and --status are two reports; ask for one at a time")
    if args.plan or args.status:  # a report trains nothing: a flag of how to train would be ignored
        training = ("workers", "executor", *cluster_args.SLURM_DESTS)
        given = [f"--{d.replace('_', '-')}" for d in training if getattr(args, d) != parser.get_default(d)]
        if given:
            parser.error(f"{', '.join(given)} choose how runs train; --status and --plan train nothing")
    if args.plan:
        print(plan_text(seed_plan()))
        return
    if args.profile == "paper":
        _paper(parser, args)
        return
    keys = _batch_keys(parser, args.batches)
    if args.status:
        finished = _finished_seconds()
        for key in keys:
            st = batch_status(BATCHES[key], finished)
            left = (
                ""
                if st.done == st.total
                else (", left: unknown" if st.hours_left is None else f", about {st.hours_left:.1f} left")
            )
            print(f"({st.key}) {st.title}: {st.done}/{st.total} runs, {st.core_hours:.2f} core-hours{left}")
        runs, hours = total_core_hours(keys)
        print(f"total: {runs} distinct runs done, {hours:.2f} core-hours (a run shared by two claims counts once)")
        for issue in dict.fromkeys(BATCHES[k].issue for k in keys):
            print(_issue_line(issue))
        return
    executor = cluster_args.executor_from_args(parser, args)
    configs = [cfg for key in keys for cfg in BATCHES[key].configs()]
    skipped: list = []
    if executor is None:  # on a cluster the runs train on its nodes, which check for themselves
        device = resolve_device()
        configs, skipped = split_runnable(configs, device)
    if skipped:
        # bf16 runs wait for a machine with native bf16 rather than train 10-17x slower here, or
        # train in float32 under another key (a different run); the next such session takes them.
        pending = sum(load_result(c) is None for c in skipped)
        print(
            f"skipping {len(skipped)} bf16 runs ({pending} not yet trained): {_without_bf16(device)}",
            flush=True,
        )
    # Keep every run's final weights (beside its result, ignored by git): the ReLU-ization chapter
    # analyses the GELU, ReLU and annealed λ-GELU runs of (c)/(d) instead of training them again.
    os.environ.setdefault(KEEP_FINAL_WEIGHTS_ENV, "1")  # inherited by the worker processes
    cluster_args.check_distributable(parser, configs, cluster_args.job_for(args))
    run_many(configs, workers=args.workers, desc="retrain " + ",".join(keys), executor=executor)


def _paper(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--profile paper``: the plan with its GPU-hours (``--status``), or train its groups."""
    try:
        configs = paper_plan.paper_configs(args.batches or None)
    except ValueError as err:
        parser.error(str(err))
    if args.status:
        keys = set(args.batches or [g.key for g in paper_plan.GROUPS])
        print(paper_plan.plan_text(tuple(g for g in paper_plan.GROUPS if g.key in keys)))
        return
    cluster_args.check_distributable(parser, configs, cluster_args.job_for(args))
    executor = cluster_args.executor_from_args(parser, args)
    run_many(configs, workers=args.workers, desc="paper " + ",".join(args.batches or ["all"]), executor=executor)


if __name__ == "__main__":
    main()

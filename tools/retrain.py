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
import os

import pandas as pd
import torch

from helpers.claims import report_claims
from helpers.core import provenance
from helpers.core.device import bf16_is_native_on, resolve_device
from helpers.core.env import bool_env
from helpers.core.results_cache import load_result, run_many
from helpers.core.runs import KEEP_FINAL_WEIGHTS_ENV
from helpers.lambda_gelu import protocol as lgelu
from helpers.relu_ization.experiment import reluization_configs
from helpers.srelu.dpo_experiment import dpo_configs
from tools import cluster_args, paper_plan
from tools.batches import BATCHES, ISSUES, gelu_and_annealed
from tools.cli import ArgumentParser, positive_int_arg
from tools.retrain_status import batch_status, finished_seconds, status_lines
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
    finished = finished_seconds()
    for claim in BATCHES.values():
        if claim.decides:
            st = batch_status(claim, finished)
            frame.loc[frame["key"].isin(claim.decides), "bought by"] = (
                f"batch ({claim.key}) of the retrain: {st.done}/{st.total} runs committed"
            )
    return frame


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
        print("\n".join(status_lines(keys)))
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

"""The executor flags of the protocol CLIs: where runs train (``--executor``) and what each SLURM
job asks for. ``--executor slurm`` submits through submitit (:mod:`tools.executors`)."""

from __future__ import annotations

import argparse
from typing import Any

from helpers.core import distributed
from helpers.core.runs import TrainConfig
from tools import executors
from tools.cli import positive_int_arg
from tools.train_distributed import train_one


def add_executor_args(parser: argparse.ArgumentParser) -> None:
    """``--executor`` and the SLURM options (each job's resources; ignored by ``local``)."""
    parser.add_argument(
        "--executor",
        default="local",
        choices=executors.EXECUTORS,
        help="where runs train: local (worker processes here), slurm (job arrays through "
        "submitit; run it on the cluster's login node), submitit-local (submitit's "
        "jobs on this machine, to try the cluster path)",
    )
    group = parser.add_argument_group("SLURM job options (--executor slurm)")
    group.add_argument("--partition", default=None, help="SLURM partition (default: the cluster's)")
    group.add_argument(
        "--time-min",
        type=positive_int_arg("--time-min"),
        default=24 * 60,
        help="time limit of each job in minutes; a job that reaches it requeues from its "
        "last epoch's checkpoint (default: 1440)",
    )
    group.add_argument(
        "--gpus-per-node",
        type=positive_int_arg("--gpus-per-node"),
        default=None,
        help="GPUs each node of a job asks for (default: the cluster's)",
    )
    group.add_argument(
        "--cpus-per-task",
        type=positive_int_arg("--cpus-per-task"),
        default=None,
        help="CPU cores each task asks for (default: the cluster's)",
    )
    group.add_argument("--nodes", type=positive_int_arg("--nodes"), default=1, help="nodes each job spans (default: 1)")
    group.add_argument(
        "--tasks-per-node",
        type=positive_int_arg("--tasks-per-node"),
        default=1,
        help="tasks of one run under torch.distributed (one per GPU)",
    )
    group.add_argument(
        "--array-parallelism",
        type=positive_int_arg("--array-parallelism"),
        default=None,
        help="jobs of an array running at once (default: as many as the cluster allows)",
    )


#: The SLURM flags' destinations, which --executor local would ignore (so it refuses them).
SLURM_DESTS: tuple[str, ...] = (
    "partition",
    "time_min",
    "gpus_per_node",
    "cpus_per_task",
    "nodes",
    "tasks_per_node",
    "array_parallelism",
)


def cluster_options(args: argparse.Namespace) -> executors.ClusterOptions:
    """The parsed SLURM flags as :class:`~tools.executors.ClusterOptions`."""
    return executors.ClusterOptions(
        partition=args.partition,
        time_min=args.time_min,
        gpus_per_node=args.gpus_per_node,
        cpus_per_task=args.cpus_per_task,
        nodes=args.nodes,
        tasks_per_node=args.tasks_per_node,
        array_parallelism=args.array_parallelism,
    )


def executor_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> executors.Submitit | None:
    """``None`` (``run_many``'s worker processes here), or the submitit jobs the flags describe, each
    running :func:`job_for`'s job; a missing ``sbatch``, a bad
    option, or a SLURM flag given with ``--executor local`` (which would ignore it) is an argparse
    error (exit 2) before anything is submitted."""
    if args.executor == "local":
        given = [
            f"--{dest.replace('_', '-')}" for dest in SLURM_DESTS if getattr(args, dest) != parser.get_default(dest)
        ]
        if given:
            parser.error(
                f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for SLURM jobs, which --executor local "
                "does not submit: add --executor slurm (or submitit-local to try the cluster path here), "
                "or leave them out"
            )
        return None
    try:
        return executors.Submitit(executors.make_executor(args.executor, cluster_options(args)), job=job_for(args))
    except (RuntimeError, ValueError) as err:
        parser.error(str(err))


def distributed_job(config: TrainConfig, rerun: bool) -> dict | None:
    """One run as every task of a multi-task submitit job: join the process group the job's
    tasks form (:class:`~tools.executors.CheckpointedCall` exported its variables) and
    train together; rank 0 writes and returns the result. A cached result is loaded, as with
    ``torchrun``; ``rerun`` is not applied to several tasks (delete the result file instead)."""
    device = distributed.process_device()
    world = distributed.init_from_env(device)
    try:
        distributed.check_global_batch(config.batch_size, world.size)
        return train_one(config)
    finally:
        distributed.shutdown()


def job_for(args: argparse.Namespace) -> Any:
    """What each submitit job runs: :func:`distributed_job` when a run has several tasks, else
    ``None`` (``run_many``'s own ``run_or_load``; always so for the local executor, which
    ignores the SLURM options)."""
    if args.executor == "local":
        return None
    options = cluster_options(args)
    return distributed_job if options.nodes * options.tasks_per_node > 1 else None


def check_distributable(parser: argparse.ArgumentParser, configs: list, job: Any) -> None:
    """An argparse error when a run of several tasks is asked for runs that train no single
    :class:`TrainConfig` (DPO, the Flex-Act synthetic study, ReLU-ization's analyses)."""
    if job is None:
        return
    other = sorted({type(c).__name__ for c in configs if not isinstance(c, TrainConfig)})
    if other:
        parser.error(
            f"--nodes × --tasks-per-node > 1 trains TrainConfig runs under torch.distributed; "
            f"these runs are {', '.join(other)}: send them with one task per run "
            "(--nodes 1 --tasks-per-node 1), or leave their groups out"
        )

"""Where :func:`helpers.core.results_cache.run_many` trains: this machine or a SLURM cluster.

* ``local``: worker processes on this machine (``run_many``'s own pool, ``executor=None``).
* ``slurm``: one submitit job per run, sent as SLURM job arrays (``executor.map_array``), with the
  cluster options of :class:`ClusterOptions`. Each job is :class:`CheckpointedCall`, a
  ``submitit.helpers.Checkpointable``: on preemption or timeout SLURM signals the job, submitit
  asks it for its checkpoint (a ``DelayedSubmission`` of itself) and requeues it, and the requeued
  run resumes from the per-epoch checkpoint ``fit`` left in the run's folder.
* ``submitit-local``: the same jobs through submitit's ``LocalExecutor`` on this machine (real
  subprocesses, the same checkpoint protocol), to try the cluster path without a cluster.

Why ``local`` keeps its own pool instead of submitit's ``LocalExecutor``: the local executor
starts every submitted job at once (it has no worker limit, so 400 runs are 400 processes on a
2-core machine), its job controllers are meant to outlive the submitting process (a killed
``run_many`` would leave its runs training unseen), and every job pays a fresh interpreter with
torch's import, where a pool worker imports once and trains many runs.
"""

from __future__ import annotations

import dataclasses
import shutil
import signal
import socket
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import submitit

from helpers.core.results_cache import RunFailed, exit_on_sigterm, run_or_load
from helpers.core.runtime import dir_env, progress, repo_root
from helpers.core.validation import checked_arguments, integer, text

#: The executors ``run_many`` and ``python -m tools.retrain`` accept.
EXECUTORS: tuple[str, ...] = ("local", "slurm", "submitit-local")
#: Folder of submitit's job files (pickles, logs); default ``logs/submitit`` (ignored by git).
JOBS_DIR_ENV = "REPRO_JOBS_DIR"


def check_executor(name: str) -> str:
    """``name`` if it is one of :data:`EXECUTORS`, else a ``ValueError`` listing them."""
    if name not in EXECUTORS:
        raise ValueError(
            f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)} "
            "(local: worker processes on this machine; slurm: job arrays on a SLURM cluster "
            "through submitit; submitit-local: submitit's jobs on this machine)"
        )
    return name


def require_sbatch() -> None:
    """A ``RuntimeError`` saying what to do when SLURM's ``sbatch`` is not on ``PATH``."""
    if shutil.which("sbatch") is None:
        raise RuntimeError(
            f"--executor slurm submits with SLURM's sbatch, and there is no sbatch on PATH on this "
            f"machine ({socket.gethostname()}). Run the same command on the cluster's login node, or "
            "use --executor local to train here (or --executor submitit-local to try the job path here)."
        )


def jobs_dir() -> Path:
    """Where submitit keeps its job files: ``REPRO_JOBS_DIR``, else ``logs/submitit`` in the repository."""
    return dir_env(JOBS_DIR_ENV, repo_root() / "logs" / "submitit") or repo_root() / "logs" / "submitit"


@checked_arguments(
    {
        "partition": text(optional=True, non_empty=True),
        "time_min": integer(1),
        "gpus_per_node": integer(1, optional=True),
        "cpus_per_task": integer(1, optional=True),
        "nodes": integer(1),
        "tasks_per_node": integer(1),
        "array_parallelism": integer(1, optional=True),
    }
)
@dataclasses.dataclass(frozen=True)
class ClusterOptions:
    """What each job asks the cluster for (``None``: the cluster's default).

    ``nodes`` × ``tasks_per_node`` tasks form one run under ``torch.distributed``
    (``submitit.helpers.TorchDistributedEnvironment`` gives each its rank); ``array_parallelism``
    caps how many jobs of an array run at once.
    """

    partition: str | None = None
    time_min: int = 24 * 60
    gpus_per_node: int | None = None
    cpus_per_task: int | None = None
    nodes: int = 1
    tasks_per_node: int = 1
    array_parallelism: int | None = None

    def parameters(self) -> dict[str, Any]:
        """The options as ``AutoExecutor.update_parameters`` keywords (unset ones left out)."""
        out: dict[str, Any] = {"timeout_min": self.time_min, "nodes": self.nodes, "tasks_per_node": self.tasks_per_node}
        optional = {
            "slurm_partition": self.partition,
            "gpus_per_node": self.gpus_per_node,
            "cpus_per_task": self.cpus_per_task,
            "slurm_array_parallelism": self.array_parallelism,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out


#: The public constructors of this module that check their arguments against a table
#: (``tests/test_constructor_validation.py`` generates bad inputs for each).
CHECKED_CONSTRUCTORS: tuple[type, ...] = (ClusterOptions,)


def make_executor(name: str, options: ClusterOptions | None = None, folder: Path | None = None) -> submitit.Executor:
    """A submitit executor for ``name`` (``slurm`` or ``submitit-local``) with ``options``
    (wrap it in :class:`Submitit` to hand it to ``run_many``)."""
    check_executor(name)
    if name == "local":
        raise ValueError("the local executor is run_many's worker pool, not a submitit executor")
    if name == "slurm":
        require_sbatch()
    folder = (folder or jobs_dir()) / "%j"
    executor = submitit.AutoExecutor(folder=folder, cluster="slurm" if name == "slurm" else "local")
    opts = options or ClusterOptions()
    params = opts.parameters()
    if name != "slurm":  # submitit's local executor runs one node; slurm_* keys are ignored there
        params.pop("nodes")
    executor.update_parameters(**params)
    return executor


def _tasks_of_this_job() -> int:
    """Tasks of the submitit job this process runs in (1 outside a job)."""
    try:
        return submitit.JobEnvironment().num_tasks
    except RuntimeError:  # not inside a submitit job (a direct call)
        return 1


class CheckpointedCall(submitit.helpers.Checkpointable):
    """``fn(*args)`` in a submitit job (a fresh job process reads the book's tables where a run
    uses them: nothing to import first).

    ``fn`` must be a module-level function (pickled by reference). On preemption or timeout,
    ``checkpoint`` (inherited) resubmits this call with the same arguments; ``fn`` resumes from
    what the interrupted attempt left on disk. In a job of several tasks (nodes × tasks per
    node), each task first exports the ``torch.distributed`` variables (``RANK``, ``WORLD_SIZE``,
    ``MASTER_ADDR``, ...) through ``submitit.helpers.TorchDistributedEnvironment``, every task
    keeping all of its node's GPUs visible (the rank picks its own from ``LOCAL_RANK``), so
    ``fn`` joins one process group as under ``torchrun``.
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, *args: Any) -> Any:
        if _tasks_of_this_job() > 1:
            submitit.helpers.TorchDistributedEnvironment().export(set_cuda_visible_devices=False)
        return self.fn(*args)


def submit_array(executor: submitit.Executor, call: CheckpointedCall, *iterables: Sequence[Any]) -> list:
    """One job per item, as job arrays (``map_array``; submitit splits arrays past the cluster's size)."""
    return executor.map_array(call, *iterables)


def cancel_all(jobs: Iterable[Any]) -> None:
    """Cancel the jobs still running or queued (a run stopped mid-epoch resumes from its checkpoint)."""
    for job in jobs:
        try:
            if not job.done():
                job.cancel(check=False)
        except Exception:  # noqa: BLE001 (a job gone meanwhile is what we want anyway)
            continue


#: Lines of a failed job's own stderr log quoted in its failure message.
LOG_TAIL_LINES: int = 15


def failure_text(job: Any, err: BaseException) -> str:
    """What a failed job says: its id, the last line of its error, where its logs are, and the
    last :data:`LOG_TAIL_LINES` lines of its stderr log (what the job itself printed, which on a
    cluster is otherwise a login away)."""
    lines = [ln for ln in str(err).strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else type(err).__name__
    text = f"job {job.job_id} failed: {last} (logs: {job.paths.stderr})"
    try:
        with open(job.paths.stderr, "rb") as log:  # its end only: a long job's log can be large
            log.seek(max(0, Path(job.paths.stderr).stat().st_size - 65536))
            tail = log.read().decode(errors="replace").splitlines()[-LOG_TAIL_LINES:]
    except OSError:
        return text + "; its stderr log cannot be read"
    return text + ("\nthe end of its stderr log:\n" + "\n".join("  " + ln for ln in tail) if tail else "")


def _run_job(config: Any, rerun: bool) -> dict:
    """Body of a submitit job of :class:`Submitit` (module level: jobs pickle it by reference)."""
    return run_or_load(config, rerun=rerun)


class Submitit:
    """``run_many``'s executor for submitit jobs: one job per run, sent as job arrays, each a
    :class:`CheckpointedCall` that resumes from the run's checkpoint when requeued. An interrupted
    wait (Ctrl-C, ``kill``) cancels the jobs. ``job(config, rerun)`` replaces what each job runs
    (default: ``run_or_load``); a run of several tasks passes one that joins ``torch.distributed``
    and returns rank 0's result."""

    def __init__(self, executor: submitit.Executor, job: Callable[[Any, bool], dict | None] | None = None) -> None:
        if not callable(getattr(executor, "map_array", None)):
            raise TypeError(f"Submitit.executor must be a submitit executor (with map_array); got {executor!r}")
        if job is not None and not callable(job):
            raise TypeError(f"Submitit.job must be a callable job(config, rerun) or None; got {job!r}")
        self.executor = executor
        self.job = job

    def __call__(self, configs: list, rerun: bool, desc: str) -> list:
        call = CheckpointedCall(self.job or _run_job)
        in_main = threading.current_thread() is threading.main_thread()
        # A kill while the jobs are being submitted is held until their handles exist: exiting at once
        # would orphan the jobs already started, which nothing could cancel then. SIGINT is held too, and
        # for a second reason: submitit cancels a local job with SIGINT, and a process started in the
        # background (``nohup ... &``) ignores SIGINT, which every program it starts inherits; a handler,
        # unlike "ignore", is reset to the default in a new program, so the jobs start able to be cancelled.
        killed: list[int] = []
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: killed.append(signum)) if in_main else None
        previous_int = signal.signal(signal.SIGINT, lambda signum, frame: killed.append(signum)) if in_main else None
        try:
            jobs = submit_array(self.executor, call, configs, [rerun] * len(configs))
        except BaseException:
            if in_main:
                signal.signal(signal.SIGTERM, previous)
            raise
        finally:
            if in_main:
                signal.signal(signal.SIGINT, previous_int)
        if in_main:
            signal.signal(signal.SIGTERM, exit_on_sigterm)
        outcomes: list = []
        try:
            if killed:
                exit_on_sigterm(killed[0], None)
            for handle in progress(jobs, desc=f"{desc} ({len(jobs)} jobs)", total=len(jobs), each=True, unit="run"):
                try:
                    outcomes.append(handle.results()[0])  # task 0: rank 0 of a multi-task run
                except Exception as err:  # noqa: BLE001 (the job's own error comes back as text)
                    outcomes.append(RunFailed(failure_text(handle, err)))
        except BaseException:
            cancel_all(jobs)
            raise
        finally:
            if in_main:
                signal.signal(signal.SIGTERM, previous)
        return outcomes

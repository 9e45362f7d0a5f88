"""Runs dispatched through submitit (local executor: real subprocesses), a preempted job requeued
from its per-epoch checkpoint to the uninterrupted result, and the executor choice's bad input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import submitit

from helpers.core.results_cache import run_many, run_or_load
from helpers.core.runs import KEEP_FINAL_WEIGHTS_ENV, TrainConfig
from tools import cluster_args, executors, paper_plan, retrain

ROOT = Path(__file__).resolve().parents[1]

# A tiny real training run (fit with its per-epoch checkpoint), in a module the job processes can
# import. With PROBE_MARKS set, the first attempt of seed 0 stops at the start of epoch 3 (after epoch 2's
# checkpoint), records its pid and waits there to be preempted.
PROBE = textwrap.dedent("""
    import dataclasses, os, time
    from pathlib import Path
    import torch
    from torch.utils.data import TensorDataset
    from helpers.core.data import make_loader
    from helpers.core.models import MLP
    from helpers import methods
    from helpers.core.train import TrainHook, fit

    @dataclasses.dataclass(frozen=True)
    class ProbeConfig:
        experiment: str = "probe"
        profile: str = "smoke"
        epochs: int = 4
        seed: int = 0

    class Marks(TrainHook):
        def __init__(self, seed):
            self.seed = seed

        def on_epoch_start(self, epoch, model):
            marks = os.environ.get("PROBE_MARKS")
            if not marks or self.seed != 0:
                return
            with open(Path(marks) / "epochs", "a") as fh:
                fh.write(f"{os.getpid()} {epoch}\\n")
            paused = Path(marks) / "paused"
            if epoch == 3 and not paused.exists():
                paused.write_text(str(os.getpid()))
                time.sleep(300)

    def run(cfg, workdir):
        torch.manual_seed(cfg.seed)
        g = torch.Generator().manual_seed(cfg.seed)
        xs, ys = torch.randn(64, 4, generator=g), torch.randint(0, 2, (64,), generator=g)
        model = MLP(4, 2, depth=1, width=8)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        out = fit(model, make_loader(TensorDataset(xs, ys), 16, True, seed=1),
                  make_loader(TensorDataset(xs, ys), 32, False), optimizer=opt, epochs=cfg.epochs,
                  task="classification", hooks=[Marks(cfg.seed)], checkpoint_path=workdir / "checkpoint.ckpt")
        return {"history": out["history"], "train_seconds": 0.0}

    # a job process imports this module to unpickle a ProbeConfig: the class's line of the table
    methods.RUNNERS[ProbeConfig] = run
""")


@pytest.fixture
def probe(tmp_path, monkeypatch):
    """The probe module, importable here and in every job process (they inherit the environment)."""
    (tmp_path / "requeue_probe.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("REPRO_QUIET", "1")
    monkeypatch.delenv("CI", raising=False)
    sys.modules.pop("requeue_probe", None)
    import requeue_probe  # noqa: PLC0415 (written by this fixture)

    yield requeue_probe
    sys.modules.pop("requeue_probe", None)


def _metrics(result: dict) -> list[dict]:
    """The per-epoch numbers of a run, without its timings."""
    return [{k: v for k, v in row.items() if "second" not in k and "time" not in k} for row in result["history"]]


def _local_executor(folder: Path) -> submitit.Executor:
    ex = submitit.LocalExecutor(folder=folder / "%j")
    ex.update_parameters(timeout_min=10)
    return ex


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="signals a job process by pid")
def test_a_preempted_job_of_an_array_requeues_from_its_checkpoint_to_the_uninterrupted_result(
    probe, tmp_path, monkeypatch
):
    configs = [probe.ProbeConfig(seed=0), probe.ProbeConfig(seed=1, epochs=2)]
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path / "uninterrupted"))
    uninterrupted = [run_or_load(cfg) for cfg in configs]

    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path / "cluster"))
    monkeypatch.setenv("PROBE_MARKS", str(marks))
    out: dict = {}
    worker = threading.Thread(
        target=lambda: out.update(r=run_many(configs, executor=executors.Submitit(_local_executor(tmp_path / "jobs"))))
    )
    worker.start()
    deadline = time.monotonic() + 240
    while not (marks / "paused").exists():
        assert worker.is_alive(), "run_many returned before its job reached epoch 3"
        assert time.monotonic() < deadline, "the job did not reach epoch 3"
        time.sleep(0.2)
    time.sleep(0.5)  # let it enter its wait
    first_pid = int((marks / "paused").read_text())
    # what SLURM does on preemption or shortly before the time limit: USR2 to the job's tasks
    os.kill(first_pid, submitit.JobEnvironment._usr_sig())
    worker.join(timeout=240)
    assert not worker.is_alive(), "the requeued job did not finish"

    attempts = [line.split() for line in (marks / "epochs").read_text().splitlines()]
    assert [int(e) for pid, e in attempts if int(pid) == first_pid] == [1, 2, 3]
    later = [int(e) for pid, e in attempts if int(pid) != first_pid]
    assert later == [3, 4], f"the requeued job should resume at epoch 3, started epochs {later}"
    assert [r["config"]["seed"] for r in out["r"]] == [0, 1]  # in the order of the configs
    assert [_metrics(r) for r in out["r"]] == [_metrics(r) for r in uninterrupted]


def test_an_unknown_executor_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"unknown executor 'pbs'.*local, slurm, submitit-local"):
        executors.make_executor("pbs")


def test_the_retrain_cli_refuses_an_unknown_executor(capsys):
    with pytest.raises(SystemExit) as exit_info:
        retrain.main(["a", "--executor", "pbs"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "pbs" in err and "local" in err and "slurm" in err


def test_slurm_without_sbatch_says_where_to_run_instead(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch here
    with pytest.raises(RuntimeError, match=r"no sbatch on PATH.*login node.*--executor local"):
        executors.make_executor("slurm", folder=tmp_path)


def test_the_retrain_cli_stops_before_training_when_sbatch_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        retrain.main(["m", "--executor", "slurm", "--partition", "gpu"])
    assert exit_info.value.code == 2
    assert "sbatch" in capsys.readouterr().err


def test_cluster_options_become_submitit_parameters():
    opts = executors.ClusterOptions(
        partition="gpu", time_min=90, gpus_per_node=4, cpus_per_task=8, nodes=2, tasks_per_node=4, array_parallelism=16
    )
    assert opts.parameters() == {
        "slurm_partition": "gpu",
        "timeout_min": 90,
        "gpus_per_node": 4,
        "cpus_per_task": 8,
        "nodes": 2,
        "tasks_per_node": 4,
        "slurm_array_parallelism": 16,
    }
    assert executors.ClusterOptions().parameters() == {"timeout_min": 1440, "nodes": 1, "tasks_per_node": 1}


@pytest.mark.parametrize(
    "field, value",
    [("time_min", 0), ("gpus_per_node", -1), ("nodes", 1.5), ("array_parallelism", True), ("partition", " ")],
)
def test_bad_cluster_options_are_refused_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        executors.ClusterOptions(**{field: value})


def test_the_job_callable_is_checkpointable_and_resubmits_itself():
    call = executors.CheckpointedCall(len)
    delayed = call.checkpoint([1, 2, 3])
    assert isinstance(delayed, submitit.helpers.DelayedSubmission)
    assert delayed.function is call and delayed.args == ([1, 2, 3],)
    assert call([1, 2, 3]) == 3


SLEEPER = textwrap.dedent("""
    import dataclasses, os, time
    from pathlib import Path
    from helpers import methods

    @dataclasses.dataclass(frozen=True)
    class SleepConfig:
        experiment: str = "sleep"
        profile: str = "smoke"
        seed: int = 0

    def run(cfg, workdir):
        (Path(os.environ["MARKS"]) / f"{os.getpid()}").write_text("started")
        time.sleep(120)
        return {"train_seconds": 0.0}

    # the job process imports this module to unpickle a SleepConfig: the class's line of the table
    methods.RUNNERS[SleepConfig] = run
""")

SUBMITTER = textwrap.dedent("""
    import sys
    from helpers.core import results_cache
    from sleeper import SleepConfig
    from tools import executors
    jobs = executors.Submitit(executors.make_executor("submitit-local"))
    results_cache.run_many([SleepConfig(seed=s) for s in range(2)], executor=jobs)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")  # a zombie (exited, not yet reaped) counts as gone
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_killing_run_many_cancels_its_submitit_jobs(tmp_path):
    """run_many started in the background (``nohup ... &``), where SIGINT, submitit's signal to
    cancel a local job, is ignored by every process started from it: the harder case, so the
    jobs must be stopped by run_many itself (a run started in the foreground, where SIGINT works,
    is cancelled by the same path)."""
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    (tmp_path / "submitter.py").write_text(SUBMITTER)
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {
        **os.environ,
        "MARKS": str(marks),
        "REPRO_RESULTS_DIR": str(tmp_path / "results"),
        "REPRO_JOBS_DIR": str(tmp_path / "jobs"),
        "REPRO_QUIET": "1",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
    }
    env.pop("CI", None)

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    parent = subprocess.Popen([sys.executable, str(tmp_path / "submitter.py")], env=env, preexec_fn=ignore_sigint)
    try:
        deadline = time.monotonic() + 180
        while len(list(marks.iterdir())) < 2:
            assert parent.poll() is None, "run_many exited before its jobs started"
            assert time.monotonic() < deadline, "the jobs did not start"
            time.sleep(0.2)
        runs = [int(p.name) for p in marks.iterdir()]
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=60) != 0
        # generous: on a loaded 2-core machine the controller's SIGINT -> SIGKILL escalation can lag
        deadline = time.monotonic() + 90
        while any(_alive(pid) for pid in runs) and time.monotonic() < deadline:
            time.sleep(0.2)
        alive = {
            pid: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:200] for pid in runs if _alive(pid)
        }
        logs = "\n".join(f"--- {p.name}\n{p.read_text()[-600:]}" for p in sorted((tmp_path / "jobs").rglob("*.err")))
        env_keys = sorted(k for k in env if k.startswith(("REPRO", "SUBMITIT", "RANK", "WORLD", "MASTER", "LOCAL")))
        assert not alive, f"submitit jobs outlived the killed run_many: {alive}\nenv: {env_keys}\n{logs}"
    finally:
        if parent.poll() is None:
            parent.kill()
        for mark in marks.iterdir():  # never leave a sleeping job behind a failed test
            try:
                os.kill(int(mark.name), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_the_retrain_cli_hands_its_runs_and_cluster_options_to_run_many(monkeypatch, tmp_path):
    seen: dict = {}
    monkeypatch.setenv("REPRO_JOBS_DIR", str(tmp_path / "jobs"))
    monkeypatch.setenv(KEEP_FINAL_WEIGHTS_ENV, "1")  # set by retrain.main: undone after the test
    monkeypatch.setattr(retrain, "run_many", lambda configs, **kw: seen.update(configs=configs, **kw))
    retrain.main(
        [
            "--profile",
            "paper",
            "srelu_delta",
            "--executor",
            "submitit-local",
            "--tasks-per-node",
            "2",
            "--time-min",
            "30",
        ]
    )
    assert len(seen["configs"]) == len(paper_plan.paper_configs(["srelu_delta"])) > 0
    parameters = seen["executor"].executor.parameters
    assert parameters["tasks_per_node"] == 2 and parameters["timeout_min"] == 30
    assert seen["executor"].job is cluster_args.distributed_job  # two tasks: one torch.distributed run
    retrain.main(["m", "--executor", "submitit-local"])
    assert seen["executor"].job is None and seen["configs"] == retrain.BATCHES["m"].configs()


def test_several_tasks_per_run_are_refused_for_runs_that_are_not_one_training(capsys):
    with pytest.raises(SystemExit) as exit_info:
        retrain.main(
            ["--profile", "paper", "flexact_synthetic", "--executor", "submitit-local", "--tasks-per-node", "2"]
        )
    assert exit_info.value.code == 2
    assert "FlexActSyntheticConfig" in capsys.readouterr().err


DATA = Path(os.environ.get("REPRO_DATA_DIR") or ROOT.parent / "shared" / "data")
# The small run of tests/test_distributed.py: 16 SGD steps of an MLP on Adult, global batch 64.
DDP_CONFIG = {
    "experiment": "ddp_check",
    "dataset": "adult",
    "model": "mlp",
    "profile": "smoke",
    "activation": "lambda_gelu",
    "n_train": 512,
    "n_val": 256,
    "epochs": 2,
    "batch_size": 64,
}


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "adult").exists(), reason=f"the Adult data set is not under {DATA}")
def test_a_run_of_two_submitit_tasks_trains_as_one_torch_distributed_run(tmp_path, monkeypatch):
    for name, value in {
        "REPRO_DATA_DIR": str(DATA),
        "REPRO_OFFLINE": "1",
        "REPRO_KERNELS": "eager",
        "REPRO_QUIET": "1",
        "REPRO_DEVICE": "cpu",
        "OMP_NUM_THREADS": "1",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("CI", raising=False)
    cfg = TrainConfig(**DDP_CONFIG)
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path / "one"))
    one = run_or_load(cfg)
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path / "two"))
    ex = _local_executor(tmp_path / "jobs")
    ex.update_parameters(tasks_per_node=2)
    [two] = run_many([cfg], executor=executors.Submitit(ex, job=cluster_args.distributed_job))
    assert two["provenance"]["world_size"] == 2
    # float32 sums in another order (two half-batch gradients all-reduced): tests/test_distributed.py
    # measured at most 2e-8 relative on this run; 1e-5 still fails on another data order or batch.
    for row_one, row_two in zip(one["history"], two["history"], strict=True):
        for key in ("train_loss", "val_loss", "val_metric"):
            assert row_two[key] == pytest.approx(row_one[key], rel=1e-5), (key, row_one, row_two)


def test_a_kill_during_submission_cancels_every_job_submitted(monkeypatch):
    """SIGTERM while submitit is still starting the jobs: run_many waits for their handles, then
    cancels them all and exits, instead of dying at once and orphaning the jobs already running."""
    cancelled: list[int] = []

    class Handle:
        def __init__(self, k: int) -> None:
            self.k = k

        def done(self) -> bool:
            return False

        def cancel(self, check: bool = True) -> None:
            cancelled.append(self.k)

    def submit_while_killed(executor, call, *iterables):
        os.kill(os.getpid(), signal.SIGTERM)  # arrives mid-submission
        return [Handle(k) for k in range(len(iterables[0]))]

    monkeypatch.setattr(executors, "submit_array", submit_while_killed)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stop:
        executors.Submitit(SimpleNamespace(map_array=lambda *args: []))(list("abc"), False, "runs")
    assert stop.value.code == 128 + signal.SIGTERM
    assert cancelled == [0, 1, 2]
    assert signal.getsignal(signal.SIGTERM) is before  # the caller's handler is back


def test_slurm_flags_with_the_local_executor_are_refused(capsys):
    """``--executor local`` submits no job, so a SLURM flag beside it would be silently ignored."""
    import argparse

    from tools import cluster_args

    parser = argparse.ArgumentParser(prog="retrain")
    cluster_args.add_executor_args(parser)
    args = parser.parse_args(["--nodes", "4", "--tasks-per-node", "8", "--partition", "gpu"])
    with pytest.raises(SystemExit) as stop:
        cluster_args.executor_from_args(parser, args)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "--partition, --nodes, --tasks-per-node are for SLURM jobs" in err
    assert cluster_args.executor_from_args(parser, parser.parse_args([])) is None
    assert cluster_args.executor_from_args(parser, parser.parse_args(["--nodes", "1"])) is None  # the default


def test_a_failed_jobs_message_quotes_the_end_of_its_own_log(tmp_path):
    from types import SimpleNamespace

    log = tmp_path / "123_0_log.err"
    log.write_text("".join(f"line {i}\n" for i in range(100)) + "RuntimeError: CUDA out of memory\n")
    job = SimpleNamespace(job_id="123_0", paths=SimpleNamespace(stderr=log))
    text = executors.failure_text(job, submitit.core.utils.FailedJobError("job 123_0 failed\nsee the log"))
    assert text.startswith(f"job 123_0 failed: see the log (logs: {log})")
    quoted = text.split("the end of its stderr log:\n")[1].splitlines()
    assert len(quoted) == executors.LOG_TAIL_LINES and quoted[-1] == "  RuntimeError: CUDA out of memory"
    job.paths.stderr = tmp_path / "gone.err"
    assert executors.failure_text(job, RuntimeError("x")).endswith("; its stderr log cannot be read")

"""Throughput of one training run in two processes (DDP, gloo, 1 thread each) against one process.

    python benchmarks/ddp_throughput.py [--steps 30] [--warmup 3] [--rounds 2] [--out FILE]

Both arms train ResNet-18/4 (``resnet18``, ``width_mult=0.25``) on CIFAR-10 at a global batch of
128 with :func:`helpers.core.train.fit`, launched by ``torchrun`` (``--nproc_per_node 1`` and
``2``) running this file with ``--worker``: one process trains on whole batches, two processes on
64 images each, their gradients all-reduced, BatchNorm statistics over the global batch
(:mod:`helpers.core.distributed`). Each process uses one intra-op thread. Images per second are
counted from the training steps after ``--warmup`` (timed by a hook at each step: data, forward,
backward, all-reduce, optimiser). The arms alternate for ``--rounds`` rounds; the ratio is the
median over rounds of two-process over one-process images/s. Images per CPU-second (summed
over the processes) are printed beside it: their ratio is the work the second process adds
(all-reduce, smaller batches), whatever the machine's load.

A third arm trains two processes with BatchNorm statistics per process (64 images each), which
is what DDP without ``SyncBatchNorm`` does (timm's and torchvision's default): its result is
*not* the one-process result, so the book never trains that way, but the gap between the two
two-process arms is the price of the global-batch statistics: two small collectives per
BatchNorm layer and step (forward and backward), which cannot overlap with compute because the
next layer needs them. On gloo over loopback each costs about half a millisecond to a
millisecond, against tens of microseconds for NCCL on GPUs.

This is a benchmark, not a test: on a shared machine other processes take cores away, the
two-process arm (which needs both cores) more than the one-process arm, so the figure varies
from one run to the next. The header records the CPU, core count and load average.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without install

import torch  # noqa: E402

from helpers.core import distributed  # noqa: E402
from helpers.core.provenance import cpu_capability, cpu_model  # noqa: E402
from helpers.core.runs import TrainConfig, build_run  # noqa: E402
from helpers.core.runtime import seed_everything  # noqa: E402
from helpers.core.train import TrainHook, fit  # noqa: E402
from tools.cli import ArgumentParser, positive_int_arg  # noqa: E402

GLOBAL_BATCH = 128


class StepClock(TrainHook):
    """The wall and CPU time of this process at the start of every optimisation step."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.cpu: list[float] = []

    def on_step(self, step: int, model: torch.nn.Module) -> None:
        self.times.append(time.perf_counter())
        self.cpu.append(time.process_time())


def worker(steps: int, warmup: int, batchnorm: str) -> None:
    """One process of an arm: train ``warmup + steps + 1`` global batches, print images/s (rank 0)."""
    torch.set_num_threads(1)
    if batchnorm == "per-rank":
        # this arm only: BatchNorm keeps its shard's statistics, so the ranks' running statistics
        # differ, which the end-of-epoch check rightly refuses in a real run
        distributed.convert_batchnorm = lambda model, device: model
        distributed.check_same_state = lambda model, hooks, where: None
    device = distributed.process_device("cpu")
    world = distributed.init_from_env(device)
    try:
        n_batches = warmup + steps + 1
        cfg = TrainConfig(
            experiment="ddp_throughput",
            dataset="cifar10",
            model="resnet18",
            model_kwargs={"width_mult": 0.25},
            profile="smoke",
            n_train=GLOBAL_BATCH * n_batches,
            n_val=GLOBAL_BATCH,
            epochs=1,
            batch_size=GLOBAL_BATCH,
            activation="gelu",
        )
        seed_everything(0, device)
        parts = build_run(cfg, device)
        clock = StepClock()
        fit(
            parts["model"],
            parts["train_loader"],
            parts["val_loader"],
            optimizer=parts["optimizer"],
            epochs=1,
            task="classification",
            hooks=[clock],
            device=device,
            train_module=distributed.wrap_model(parts["model"], device),
        )
        timed, cpu = clock.times[warmup:], clock.cpu[warmup:]
        images = GLOBAL_BATCH * (len(timed) - 1)
        # CPU seconds of every process (all-reduced), so that the cores taken by other users of a
        # shared machine show: on an idle machine CPU time and wall time per process agree
        cpu_seconds = distributed.all_reduce_sum([cpu[-1] - cpu[0]])[0]
        if distributed.is_main():
            print(
                json.dumps(
                    {
                        "processes": world.size,
                        "images_per_s": images / (timed[-1] - timed[0]),
                        "images_per_cpu_s": images / cpu_seconds,
                        "steps": len(timed) - 1,
                    }
                )
            )
    finally:
        distributed.shutdown()


def run_arm(processes: int, steps: int, warmup: int, batchnorm: str = "global") -> dict[str, float]:
    torchrun = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or "torchrun"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "REPRO_QUIET": "1", "REPRO_DEVICE": "cpu", "REPRO_OFFLINE": "1"}
    done = subprocess.run(
        [
            torchrun,
            "--standalone",
            "--nproc_per_node",
            str(processes),
            str(Path(__file__).resolve()),
            "--worker",
            "--steps",
            str(steps),
            "--warmup",
            str(warmup),
            "--batchnorm",
            batchnorm,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the {processes}-process arm failed:\n{done.stderr[-3000:]}")
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("{")][-1]
    return json.loads(line)


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # the process torchrun starts for one arm (internal: the arms pass it to themselves)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=positive_int_arg("--steps"), default=30, help="timed steps per arm")
    parser.add_argument("--warmup", type=positive_int_arg("--warmup"), default=3, help="untimed steps first")
    parser.add_argument("--rounds", type=positive_int_arg("--rounds"), default=2, help="alternations of the arms")
    # the worker's BatchNorm (internal: the arms pass it to themselves)
    parser.add_argument("--batchnorm", choices=("global", "per-rank"), default="global", help=argparse.SUPPRESS)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).with_name("ddp_throughput_measured.txt"),
        help="where the measured lines are written (default: benchmarks/ddp_throughput_measured.txt)",
    )
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.steps, args.warmup, args.batchnorm)
        return
    lines = [
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {cpu_model()} ({cpu_capability()}), "
        f"{os.cpu_count()} cores, {platform.machine()}, torch {torch.__version__}",
        f"# ResNet-18/4 on CIFAR-10, global batch {GLOBAL_BATCH}, float32, 1 thread per process, "
        f"{args.steps} timed steps after {args.warmup}; load average before: {os.getloadavg()}",
    ]
    print("\n".join(lines), flush=True)
    ratios, per_rank_ratios = [], []
    for r in range(1, args.rounds + 1):
        one, two = run_arm(1, args.steps, args.warmup), run_arm(2, args.steps, args.warmup)
        per_rank = run_arm(2, args.steps, args.warmup, "per-rank")
        ratio = two["images_per_s"] / one["images_per_s"]
        ratios.append(ratio)
        per_rank_ratios.append(per_rank["images_per_s"] / one["images_per_s"])
        line = (
            f"round {r}: 1 process x 1 thread {one['images_per_s']:.1f} images/s, 2 processes x 1 thread "
            f"{two['images_per_s']:.1f} images/s, ratio {ratio:.2f}x; per CPU-second of all processes "
            f"{one['images_per_cpu_s']:.1f} vs {two['images_per_cpu_s']:.1f} images (ratio "
            f"{two['images_per_cpu_s'] / one['images_per_cpu_s']:.2f}: the cost of sharding and all-reduce); "
            f"with BatchNorm per process (not the one-process result) {per_rank['images_per_s']:.1f} "
            f"images/s, ratio {per_rank_ratios[-1]:.2f}x"
        )
        print(line, flush=True)
        lines.append(line)
    summary = (
        f"median ratio over {args.rounds} rounds: {statistics.median(ratios):.2f}x with global-batch "
        f"BatchNorm (the book's runs), {statistics.median(per_rank_ratios):.2f}x with BatchNorm per process "
        f"(load average after: {os.getloadavg()})"
    )
    print(summary)
    lines.append(summary)
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

"""Forward+backward time of the book's activations on the CPU, and one MLP epoch end to end.

    python benchmarks/activations.py [--quick]

Every candidate is timed on the same float32 tensor with the same upstream gradient; one call
is ``y = act(x); y.backward(g)`` with a fresh leaf ``x`` (so allocation of ``y`` and ``x.grad``
is included, as in training). Candidates are interleaved round by round, in a new random order
each round, so that load from other processes and the state left by the previous call hit all of
them alike, and each ratio is the median over rounds of the per-round
ratio to ``nn.GELU`` (resp. ``nn.ReLU``); medians and minima of the times are printed too. The
thread count is left as it is (``torch.get_num_threads()``).

The end-to-end part trains the λ-GELU paper's MLP (4 hidden layers of 256, SGD, batch 128) for
one epoch on random Fashion-MNIST-sized data (60 000 × 784, 10 classes) with GELU and with
learnable layerwise λ-GELU (t = 0.1, c = 9), stepping the two models alternately on the same
batches, and reports the epoch-time ratio.
Timings depend on the machine and its load: the table says where and when it was measured.

Allocator. At 4M elements every output (16 MB) is above glibc's mmap threshold: a fresh tensor is
mapped from the kernel and its 4,096 pages fault in on first write, which costs as much as the
activation itself and depends on the order in which earlier tensors were freed (we measured
nn.GELU's forward at 0.7 ms into reused memory and 3-18 ms into fresh mappings in the same
process). That noise says nothing about an activation, so by default the benchmark raises
glibc's mmap and trim thresholds (``mallopt``) so that freed blocks are reused, as in a training
loop in steady state; every candidate allocates the same tensors either way. ``--system-malloc``
keeps glibc's defaults.
"""

from __future__ import annotations

import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without install

import helpers.lambda_gelu.activation as lg  # noqa: E402
from helpers.core import kernels  # noqa: E402
from helpers.lambda_gelu.activation import LambdaGELU, lambda_gelu_reference  # noqa: E402
from tools.cli import ArgumentParser, positive_int_arg  # noqa: E402

Step = Callable[[torch.Tensor], torch.Tensor]


class NaiveLambdaGELU(nn.Module):
    """``x · ½(1 + erf(λx/√2))`` with λ = 1 + softplus(s/t), differentiated by autograd."""

    def __init__(self, t: float = 0.1, lam_init: float = 2.0) -> None:
        super().__init__()
        self.t = t
        self.s = nn.Parameter(lg.s_from_lambda(lam_init, t).float())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return lambda_gelu_reference(x, lg.lambda_from_s(self.s, self.t))


class EagerLambdaGELU(LambdaGELU):
    """Our LambdaGELU forced onto the eager ATen path (what the fused kernels replace)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        previous = kernels.kernel_backend()
        kernels.set_kernel_backend("eager")
        try:
            return super().forward(x)
        finally:
            kernels.set_kernel_backend(previous)


def candidates() -> tuple[dict[str, nn.Module | Step], list[str]]:
    """Name -> module/callable, and notes on the ones skipped."""
    acts: dict[str, nn.Module | Step] = {
        "nn.ReLU": nn.ReLU(),
        "nn.GELU": nn.GELU(),
        "λ-GELU naive (erf + autograd)": NaiveLambdaGELU(),
        "λ-GELU eager (gelu(λx)/λ)": EagerLambdaGELU(lam_init=2.0),
        "LambdaGELU (layer, learnable)": LambdaGELU(lam_init=2.0),
        "LambdaGELU (fixed λ, annealing)": LambdaGELU(fixed_lambda=2.0),
    }
    skipped = []
    try:
        from helpers.activations import get_activation

        acts["srelu (SReLU, δ=1e-3)"] = get_activation("srelu")
    except Exception as err:  # noqa: BLE001 - an unfinished module must not stop the benchmark
        skipped.append(f"srelu: {type(err).__name__}: {err}")
    try:
        from helpers.srelu.activation import srelu_paper_reference

        acts["srelu_paper_where (reference)"] = lambda x: srelu_paper_reference(x, 1e-3)
    except Exception as err:  # noqa: BLE001
        skipped.append(f"srelu_paper_where: {type(err).__name__}: {err}")
    try:
        from helpers.activations import FlexAct

        acts["flexact (5 candidates)"] = FlexAct()
    except (NotImplementedError, TypeError, ImportError) as err:
        skipped.append(f"flexact: {type(err).__name__}: {err}")
    return acts, skipped


def warm_allocator() -> bool:
    """Keep freed large blocks in glibc's heap for reuse (see the module docstring); False when
    this is not glibc."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # from <malloc.h>
        big = 1 << 30
        return bool(libc.mallopt(m_mmap_threshold, big)) and bool(libc.mallopt(m_trim_threshold, big))
    except (OSError, AttributeError):
        return False


def _time_once(act: nn.Module | Step, x0: torch.Tensor, g: torch.Tensor) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one forward+backward."""
    x = x0.detach().requires_grad_(True)
    start, cpu_start = time.perf_counter(), time.process_time()
    y = act(x)
    y.backward(g)
    return time.perf_counter() - start, time.process_time() - cpu_start


def time_activations(numel: int, rounds: int, warmup: int = 3) -> list[dict[str, float | str]]:
    """Interleaved forward+backward timings; one row per candidate."""
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(numel, generator=gen)
    g = torch.randn(numel, generator=gen)
    acts, skipped = candidates()
    for note in skipped:
        print(f"  skipped {note}")
    usable = {}
    for name, act in acts.items():
        try:
            for _ in range(warmup):
                _time_once(act, x0, g)
            usable[name] = act
        except Exception as err:  # noqa: BLE001
            print(f"  skipped {name}: {type(err).__name__}: {err}")
    times: dict[str, list[float]] = {name: [] for name in usable}
    cpu: dict[str, list[float]] = {name: [] for name in usable}
    order = random.Random(0)
    names = list(usable)
    for _ in range(rounds):
        # A fresh order every round: what ran just before a call (its cache and thread-pool
        # state) changes that call's time at small sizes, so a fixed order would charge one
        # candidate for its neighbour.
        order.shuffle(names)
        for name in names:
            act = usable[name]
            wall, cpu_s = _time_once(act, x0, g)
            times[name].append(wall)
            cpu[name].append(cpu_s)
    rows = []
    for name, ts in times.items():
        rows.append(
            {
                "activation": name,
                "median_ms": 1e3 * statistics.median(ts),
                "min_ms": 1e3 * min(ts),
                "vs_GELU": statistics.median(a / b for a, b in zip(ts, times["nn.GELU"])),
                "vs_GELU_min": min(ts) / min(times["nn.GELU"]),
                "vs_GELU_cpu": statistics.median(a / b for a, b in zip(cpu[name], cpu["nn.GELU"])),
                "vs_ReLU": statistics.median(a / b for a, b in zip(ts, times["nn.ReLU"])),
            }
        )
    return rows


def _step(
    model: nn.Module, opt: torch.optim.Optimizer, xb: torch.Tensor, yb: torch.Tensor, loss_fn: nn.Module
) -> tuple[float, float]:
    start, cpu_start = time.perf_counter(), time.process_time()
    opt.zero_grad(set_to_none=True)
    loss_fn(model(xb), yb).backward()
    opt.step()
    return time.perf_counter() - start, time.process_time() - cpu_start


def mlp_epoch_overhead(samples: int, repeats: int, batch: int = 128) -> dict[str, float]:
    """One SGD epoch of the GELU MLP and of the λ-GELU MLP (learnable λ, t=0.1, c=9).

    The two models are stepped alternately on the same batches, so that load from other
    processes falls on both alike; an "epoch time" is the sum of a model's step times.
    """
    from helpers.core.train import optimizer_from_groups
    from helpers.lambda_gelu.hardness import hardness_param_groups

    try:
        from helpers.models import MLP

        def build(act):
            return MLP(784, 10, depth=4, width=256, act=act)
    except ImportError:  # helpers.models not there: the same network inline

        def build(act):
            layers, fan_in = [nn.Flatten()], 784
            for _ in range(4):
                layers += [nn.Linear(fan_in, 256), act()]
                fan_in = 256
            return nn.Sequential(*layers, nn.Linear(fan_in, 10))

    gen = torch.Generator().manual_seed(0)
    data = torch.randn(samples, 784, generator=gen)
    labels = torch.randint(0, 10, (samples,), generator=gen)
    torch.manual_seed(0)
    models = {"gelu": build(nn.GELU)}
    torch.manual_seed(0)
    models["lambda_gelu"] = build(lambda: LambdaGELU(t=0.1))
    opts = {
        k: optimizer_from_groups(hardness_param_groups(m, 0.05, 1e-4, 9.0), "sgd", lr=0.05) for k, m in models.items()
    }
    loss_fn = nn.CrossEntropyLoss()
    for k in models:  # warm up (and load the kernel)
        for i in range(0, 2048, batch):
            _step(models[k], opts[k], data[i : i + batch], labels[i : i + batch], loss_fn)
    wall = {k: [] for k in models}
    cpu = {k: [] for k in models}
    for _ in range(repeats):
        epoch_wall = dict.fromkeys(models, 0.0)
        epoch_cpu = dict.fromkeys(models, 0.0)
        for i in range(0, samples, batch):
            for k in models:
                w, c = _step(models[k], opts[k], data[i : i + batch], labels[i : i + batch], loss_fn)
                epoch_wall[k] += w
                epoch_cpu[k] += c
        for k in models:
            wall[k].append(epoch_wall[k])
            cpu[k].append(epoch_cpu[k])
    return {
        "gelu_s": statistics.median(wall["gelu"]),
        "lambda_gelu_s": statistics.median(wall["lambda_gelu"]),
        "ratio": statistics.median(a / b for a, b in zip(wall["lambda_gelu"], wall["gelu"])),
        "ratio_cpu": statistics.median(a / b for a, b in zip(cpu["lambda_gelu"], cpu["gelu"])),
    }


def _print_table(rows: list[dict[str, float | str]]) -> None:
    print(
        f"  {'activation':34s} {'median ms':>10s} {'min ms':>9s} {'×GELU':>7s} {'×GELU(min)':>10s} "
        f"{'×GELU(cpu)':>10s} {'×ReLU':>7s}"
    )
    for r in rows:
        print(
            f"  {r['activation']:34s} {r['median_ms']:10.3f} {r['min_ms']:9.3f} {r['vs_GELU']:7.2f} "
            f"{r['vs_GELU_min']:10.2f} {r['vs_GELU_cpu']:10.2f} {r['vs_ReLU']:7.2f}"
        )
    print(
        "  ×GELU: median of per-round wall-time ratios; (min): ratio of the fastest rounds; "
        "(cpu): median ratio of process CPU time"
    )


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and smaller sizes (a smoke run)")
    parser.add_argument(
        "--threads",
        type=positive_int_arg("--threads"),
        default=None,
        help="torch.set_num_threads(N) first (default: leave the thread count as it is)",
    )
    parser.add_argument("--skip-mlp", action="store_true", help="only the activation table")
    parser.add_argument(
        "--system-malloc",
        action="store_true",
        help="keep glibc's mmap threshold (fresh pages for every large tensor: noisy)",
    )
    args = parser.parse_args(argv)
    warm = False if args.system_malloc else warm_allocator()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    sizes = [1 << 18, 1 << 14] if args.quick else [4_000_000, 1 << 16]
    rounds = 5 if args.quick else 30
    from helpers.core.provenance import cpu_capability, cpu_model

    # timings are only comparable on one CPU type: name it in every output
    print(f"CPU: {cpu_model()} ({cpu_capability()}, {platform.machine()})")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, python {platform.python_version()}")
    print(
        "allocator: "
        + (
            "freed blocks reused (mallopt); --system-malloc for glibc's defaults"
            if warm
            else "glibc defaults (large tensors are fresh mappings: page faults included)"
        )
    )
    reason = kernels.compile_unavailable_reason()
    print(
        f"kernel backend: {kernels.kernel_backend()} (fused above {kernels.COMPILE_MIN_NUMEL:,} elements)"
        + (f"; compiled kernels unavailable: {reason}" if reason else "")
    )
    if hasattr(os, "getloadavg"):
        print(
            f"load average at start: {', '.join(f'{v:.2f}' for v in os.getloadavg())} "
            f"on {os.cpu_count()} CPUs (other processes make timings noisy)"
        )
    for numel in sizes:
        print(f"\nforward+backward, {numel:,} float32 elements, {rounds} interleaved rounds:")
        _print_table(time_activations(numel, rounds))
    if args.skip_mlp:
        return 0
    samples, repeats = (8_192, 2) if args.quick else (60_000, 3)
    print(
        f"\nMLP 784-4x256-10, one SGD epoch of {samples:,} random samples, batch 128 ({repeats} alternating repeats):"
    )
    res = mlp_epoch_overhead(samples, repeats)
    print(
        f"  GELU epoch {res['gelu_s']:.2f} s, λ-GELU epoch {res['lambda_gelu_s']:.2f} s: "
        f"λ-GELU/GELU = {res['ratio']:.3f} wall, {res['ratio_cpu']:.3f} CPU time (medians over repeats)"
    )
    if hasattr(os, "getloadavg"):
        print(f"load average at end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0 if all(math.isfinite(v) for v in res.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())

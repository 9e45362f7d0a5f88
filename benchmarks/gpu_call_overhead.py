"""Where one activation call's time goes on a GPU: the host's enqueue time against the total,
and the profiler's top operations. Run once on a lent GPU, after ``gpu_check.py`` found λ-GELU
and S-ReLU 8-12x slower per call than ``nn.GELU``.

    python benchmarks/gpu_call_overhead.py [--device cuda|cpu] [--rounds 1]

For each activation, backend and dtype: microseconds per forward + backward of a ResNet-sized
tensor (128 × 64 × 32 × 32; smaller with ``cpu``, to test the script), as ``host`` (the loop's
time before the final synchronisation: what Python and the launches cost) and ``total`` (after
it), the median over ``--rounds`` timed loops. ``total ≈ host`` means the call is bound by the
host: the GPU waits for Python. Then the compiled kernels called alone, and ``torch.profiler``
tables for the λ-GELU and S-ReLU modules. Output on stdout;
``benchmarks/gpu_call_overhead_measured.txt`` holds one run's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without install
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_check  # noqa: E402
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from helpers.core import kernels  # noqa: E402
from helpers.core.device import resolve_device  # noqa: E402
from helpers.core.registry import activation_factory  # noqa: E402
from helpers.lambda_gelu import kernels as lambda_kernels  # noqa: E402
from tools.cli import ArgumentParser, positive_int_arg  # noqa: E402

KWARGS = gpu_check.ACTIVATION_KWARGS  # the papers' values, as the GPU check uses them


def _loop(fn: Callable[[], object], n: int, sync: Callable[[], None], rounds: int = 1) -> tuple[float, float]:
    """Microseconds per call: before the final synchronisation (host) and after it (total), each
    the median over ``rounds`` timed loops of ``n`` calls."""
    for _ in range(5):
        fn()
    hosts, totals = [], []
    for _ in range(rounds):
        sync()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        hosts.append(time.perf_counter() - start)
        sync()
        totals.append(time.perf_counter() - start)
    return 1e6 * statistics.median(hosts) / n, 1e6 * statistics.median(totals) / n


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (to test the script)")
    parser.add_argument(
        "--rounds", type=positive_int_arg("--rounds"), default=1, help="timed loops per arm; the median is reported"
    )
    args = parser.parse_args(argv)
    dev = resolve_device(args.device)  # a clear error for cuda without a GPU
    rounds = args.rounds
    cuda = dev.type == "cuda"

    def sync() -> None:
        gpu_check._sync(dev)

    shape = (128, 64, 32, 32) if cuda else (16, 64, 16, 16)
    n = 50 if cuda else 5
    for dt in (torch.bfloat16, torch.float32):
        x0 = torch.randn(*shape, device=dev, dtype=dt)
        g = torch.randn_like(x0)
        for name in ("gelu", "lambda_gelu", "srelu", "smelu"):
            for backend in ("compiled", "eager"):
                kernels.set_kernel_backend(backend)
                m = activation_factory(name, **KWARGS.get(name, {}))().to(dev)
                x = x0.clone().requires_grad_(True)
                try:
                    h, t = _loop(lambda: m(x).backward(g), n, sync, rounds)  # noqa: B023  (called at once)
                    hf, tf = _loop(lambda: m(x), n, sync, rounds)  # noqa: B023
                except Exception as err:  # noqa: BLE001  (a failure is a finding; measure the rest)
                    print(name, backend, "ERR", type(err).__name__, str(err)[:300], flush=True)
                    continue
                print(
                    f"{str(dt)[6:]:9s} {name:12s} {backend:8s} fwd+bwd host {h:7.0f} total {t:7.0f} | "
                    f"fwd host {hf:6.0f} total {tf:6.0f} us",
                    flush=True,
                )
    # the compiled kernels alone (no module, no autograd function), λ a device scalar
    kernels.set_kernel_backend("compiled")
    for dt in (torch.float32, torch.bfloat16):
        x = torch.randn(*shape, device=dev, dtype=dt)
        g = torch.randn_like(x)
        lam = torch.tensor(1.5, device=dev, dtype=dt)
        gate = lambda_kernels.FORWARD(x, lam)[1]
        if gate is None:  # the CPU computes bf16 eagerly, without the saved gate
            gate = lambda_kernels._gate(x * lam)
        calls = [
            ("FORWARD", lambda: lambda_kernels.FORWARD(x, lam)),  # noqa: B023
            ("GATED_GRAD_X_LAM", lambda: lambda_kernels.GATED_GRAD_X_LAM(g, x, lam, gate)),  # noqa: B023
            ("GATED_GRAD_X", lambda: lambda_kernels.GATED_GRAD_X(g, x, lam, gate)),  # noqa: B023
            ("F.gelu", lambda: torch.nn.functional.gelu(x)),  # noqa: B023
        ]
        for label, fn in calls:
            h, t = _loop(fn, n, sync, rounds)
            print(f"kernel {label:18s} {str(dt)[6:]:9s} host {h:6.0f} total {t:6.0f} us", flush=True)
    # the profiler's view of five calls of each module, bf16, compiled kernels
    x0 = torch.randn(*shape, device=dev, dtype=torch.bfloat16)
    g = torch.randn_like(x0)
    for name in ("lambda_gelu", "srelu"):
        m = activation_factory(name, **KWARGS.get(name, {}))().to(dev)
        x = x0.clone().requires_grad_(True)
        for _ in range(3):
            m(x).backward(g)
        sync()
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with profile(activities=activities) as prof:
            for _ in range(5):
                m(x).backward(g)
            sync()
        key = "self_cuda_time_total" if cuda else "self_cpu_time_total"
        print(f"==== {name}: sorted by {key}")
        print(prof.key_averages().table(sort_by=key, row_limit=22, max_name_column_width=60))
        print(f"==== {name}: sorted by cpu_time_total")
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=18, max_name_column_width=60))


if __name__ == "__main__":
    main()

"""ResNet-18 training steps on a GPU with GELU, λ-GELU and S-ReLU, the model run as it is and
through ``torch.compile(model)``: graph breaks, and the steady-state step time, as the host's
enqueue time and the total. Run once on a lent GPU.

    python benchmarks/gpu_compiled_model.py [--device cuda|cpu] [--rounds 3]

The model, batch (128) and input are ``gpu_check.py``'s ResNet-18 / CIFAR-10 row, in bf16
autocast with AdamW. Each arm starts from a fresh Dynamo cache (``torch._dynamo.reset``), warms up
8 steps, then times ``--rounds`` blocks of 20 steps (3); the median block is reported. ``frames`` counts the
graphs Dynamo captured after warm-up / after timing (equal: nothing recompiled while timed).
Output on stdout; ``benchmarks/gpu_compiled_model_measured.txt`` holds one run's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without install
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_check  # noqa: E402
import torch  # noqa: E402
import torch._dynamo as dynamo  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

from helpers.core.device import resolve_device  # noqa: E402
from helpers.core.registry import activation_factory  # noqa: E402
from helpers.models import build_model  # noqa: E402
from tools.cli import ArgumentParser, positive_int_arg  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (to test the script)")
    parser.add_argument(
        "--rounds", type=positive_int_arg("--rounds"), default=3, help="timed blocks per arm; the median is reported"
    )
    args = parser.parse_args(argv)
    dev = resolve_device(args.device)  # a clear error for cuda without a GPU
    cuda = dev.type == "cuda"
    _, name, kwargs, batch, _ = gpu_check.MODELS[1]  # ResNet-18 / CIFAR-10
    if not cuda:
        batch = 8  # to test the script

    def sync() -> None:
        gpu_check._sync(dev)

    warmup, steps = (8, 20) if cuda else (2, 2)
    for act in ("gelu", "lambda_gelu", "srelu"):
        for compiled in (False, True):
            torch.manual_seed(0)
            dynamo.reset()
            counters.clear()
            factory = activation_factory(act, **gpu_check.ACTIVATION_KWARGS.get(act, {}))
            model = build_model(name, act=factory, **kwargs).to(dev).train()
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
            x, y = gpu_check._batch(kwargs, batch, dev)
            forward = torch.compile(model) if compiled else model
            if compiled:
                with torch.autocast(dev.type, dtype=torch.bfloat16):
                    explained = dynamo.explain(model)(x)
                print(f"{act} explain: graphs {explained.graph_count} breaks {explained.graph_break_count}")
                for reason in explained.break_reasons[:4]:
                    print("   break:", str(reason.reason)[:300])
                dynamo.reset()
                counters.clear()

            def step() -> None:
                with torch.autocast(dev.type, dtype=torch.bfloat16):
                    loss = F.cross_entropy(forward(x).float(), y)  # noqa: B023  (called in this iteration)
                opt.zero_grad(set_to_none=True)  # noqa: B023
                loss.backward()
                opt.step()  # noqa: B023

            start = time.perf_counter()
            for _ in range(warmup):
                step()
            sync()
            warm = time.perf_counter() - start
            frames_warm = counters["stats"].get("unique_graphs")
            hosts, totals = [], []
            for _ in range(args.rounds):
                start = time.perf_counter()
                for _ in range(steps):
                    step()
                hosts.append(time.perf_counter() - start)
                sync()
                totals.append(time.perf_counter() - start)
            host, total = statistics.median(hosts), statistics.median(totals)
            print(
                f"{act:12s} compiled_model={compiled!s:5s} warm {warm:6.1f} s  step host "
                f"{1e3 * host / steps:6.2f} ms total {1e3 * total / steps:6.2f} ms  img/s "
                f"{batch * steps / total:8.0f}  frames {frames_warm}/{counters['stats'].get('unique_graphs')} "
                f"calls {counters['stats'].get('calls_captured')}",
                flush=True,
            )
            model = opt = forward = None  # free the arm's memory before the next
            if cuda:
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

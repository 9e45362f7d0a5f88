"""End to end: one training step of each model the book trains, with each activation, against nn.GELU.

    python benchmarks/training_step.py [--models mlp,resnet18,...] [--rounds 15] [--channels-last]

A step is what ``helpers.core.train.fit`` does per batch: forward, cross-entropy, backward, an
SGD step with momentum. Each model is built as the cpu profile builds it (float32, the batch size
of its protocol, contiguous memory unless ``--channels-last``), once per activation, every
activation site replaced: ``gelu`` (the book's GELU, the baseline: nn.GELU with its limits at
±∞), ``torch_gelu`` (nn.GELU itself), ``lambda_gelu`` (learnable layerwise
λ, t = 0.1, the paper's setting), ``srelu`` (δ = 0.001) and ``flexact`` (the default five
candidates, training mode: a Gumbel sample per call); where the book places a method at one
site only, an extra arm does that too (``flexact@penultimate``: Flex-Act Table 2). Steps of the arms are interleaved
round by
round in a fresh random order, on the same batch, so load from other processes hits every arm
alike; each ratio is the median over rounds of the per-round ratio to GELU. Warm-up steps
(which include TorchInductor's one-off compilation of the fused kernels) are not timed.

The thread count is ``torch.get_num_threads()`` unless ``--threads``; the header names the CPU,
the kernel backend and the load average, since every number here depends on them.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without install

from helpers.activations import get_activation  # noqa: E402
from helpers.core import kernels  # noqa: E402
from helpers.core.provenance import cpu_capability, cpu_model  # noqa: E402
from helpers.models import build_model  # noqa: E402
from tools.cli import ArgumentParser, positive_int_arg  # noqa: E402


@dataclass(frozen=True)
class Setting:
    """A model as the cpu profile trains it (see the protocol named in ``source``)."""

    model: str
    kwargs: dict
    batch: int
    source: str
    input_shape: tuple[int, ...] | None = None
    vocab: int | None = None
    block: int | None = None

    @property
    def unit(self) -> str:
        return "tokens" if self.vocab else "images"


SETTINGS: dict[str, Setting] = {
    "mlp": Setting(
        "mlp", {"depth": 4, "width": 256}, 128, "λ-GELU Fig. 1/Table II, Fashion-MNIST", input_shape=(1, 28, 28)
    ),
    "resnet18": Setting(
        "resnet18",
        {"width_mult": 0.125},
        128,
        "λ-GELU Table I/II and Flex-Act Table 2, CIFAR-10",
        input_shape=(3, 32, 32),
    ),
    "convnext": Setting(
        "convnext",
        {"depths": (1, 1, 2, 1), "dims": (16, 32, 64, 128)},
        128,
        "S-ReLU Table 2, CIFAR-10",
        input_shape=(3, 32, 32),
    ),
    "vit": Setting(
        "vit", {"dim": 48, "depth": 4, "heads": 2, "patch": 4}, 128, "S-ReLU Table 1, CIFAR-10", input_shape=(3, 32, 32)
    ),
    "gpt": Setting(
        "gpt",
        {"layers": 6, "dim": 64, "heads": 4, "block_size": 64},
        32,
        "λ-GELU Table I (Tiny Shakespeare stand-in)",
        vocab=65,
        block=64,
    ),
}

#: Extra arms: an activation placed as the book places it, where that is not every site.
PLACED: dict[str, dict[str, str]] = {
    # Flex-Act Table 2: one Flex-Act layer on the pooled features, the rest as in the baseline
    "resnet18": {"flexact@penultimate": "flexact"},
}

#: torch's own GELU, without the book's limits at ±∞ (helpers.core.registry.relu_limits): its
#: ratio to ``gelu`` is what the one min/max pass per call costs.
TORCH_ARMS: dict[str, type[nn.Module]] = {"torch_gelu": nn.GELU}

ARMS: dict[str, dict] = {
    "gelu": {},
    "lambda_gelu": {"t": 0.1, "lam_init": 1.01},
    "srelu": {"delta": 0.001},
    "flexact": {},
}


def _batch(s: Setting, channels_last: bool) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    if s.vocab:
        x = torch.randint(0, s.vocab, (s.batch, s.block), generator=gen)
        return x, torch.randint(0, s.vocab, (s.batch, s.block), generator=gen)
    x = torch.randn((s.batch, *s.input_shape), generator=gen)
    if channels_last and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    return x, torch.randint(0, 10, (s.batch,), generator=gen)


def _build(s: Setting, arm: str, channels_last: bool) -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    if arm in PLACED.get(s.model, {}):  # GELU everywhere, the method at its one site
        penultimate = PLACED[s.model][arm]
        model = build_model(
            s.model,
            input_shape=s.input_shape,
            num_classes=10,
            act=nn.GELU,
            penultimate_act=lambda: get_activation(penultimate, **ARMS[penultimate]),
            **s.kwargs,
        )
        model.train()
        return model, torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    act = TORCH_ARMS.get(arm) or (lambda: get_activation(arm, **ARMS[arm]))
    if s.vocab:
        model = build_model(s.model, vocab_size=s.vocab, act=act, **s.kwargs)
    else:
        model = build_model(s.model, input_shape=s.input_shape, num_classes=10, act=act, **s.kwargs)
    if channels_last and s.input_shape and len(s.input_shape) == 3:
        model = model.to(memory_format=torch.channels_last)
    model.train()
    return model, torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def _step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> None:
    opt.zero_grad(set_to_none=True)
    out = model(x)
    F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1)).backward()
    opt.step()


def measure(name: str, rounds: int, warmup: int, channels_last: bool) -> None:
    s = SETTINGS[name]
    x, y = _batch(s, channels_last)
    arms = [*ARMS, *TORCH_ARMS, *PLACED.get(name, {})]
    built = {arm: _build(s, arm, channels_last) for arm in arms}
    for model, opt in built.values():
        for _ in range(warmup):
            _step(model, opt, x, y)
    times: dict[str, list[float]] = {arm: [] for arm in arms}
    for _ in range(rounds):
        order = list(arms)
        random.shuffle(order)
        for arm in order:
            model, opt = built[arm]
            t0 = time.perf_counter()
            _step(model, opt, x, y)
            times[arm].append(time.perf_counter() - t0)
    per_step = s.batch * (s.block or 1)
    base = times["gelu"]
    print(f"\n{name}: {s.source}; batch {s.batch}, {s.kwargs}")
    print(f"  {'activation':20s} {s.unit + '/s':>10s} {'ratio to GELU':>14s}")
    for arm, ts in times.items():
        ratio = statistics.median(t / b for t, b in zip(ts, base))
        flag = "" if ratio <= 1.15 else "   > 1.15"
        print(f"  {arm:20s} {per_step / statistics.median(ts):10.0f} {ratio:14.3f}{flag}")


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(SETTINGS), help="comma-separated: " + ", ".join(SETTINGS))
    parser.add_argument(
        "--rounds", type=positive_int_arg("--rounds"), default=15, help="interleaved timed rounds (default 15)"
    )
    parser.add_argument(
        "--warmup", type=positive_int_arg("--warmup"), default=3, help="untimed steps per arm first (default 3)"
    )
    parser.add_argument(
        "--threads",
        type=positive_int_arg("--threads"),
        default=None,
        help="torch.set_num_threads(N) first (default: leave the thread count as it is)",
    )
    parser.add_argument("--channels-last", action="store_true", help="conv nets in channels_last")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown or not names:
        parser.error(f"unknown model(s) {unknown or args.models!r}; choose from {', '.join(SETTINGS)}")
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    random.seed(0)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"CPU {cpu_model()} ({cpu_capability()}, {platform.machine()}), torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s), kernels {kernels.kernel_backend()}, float32, "
        f"{'channels_last' if args.channels_last else 'contiguous'}; load average {load:.2f}; "
        f"{args.rounds} interleaved rounds after {args.warmup} warm-up steps"
    )
    for name in names:
        measure(name, args.rounds, args.warmup, args.channels_last)


if __name__ == "__main__":
    main()

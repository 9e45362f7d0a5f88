"""Experimental protocols of the papers as lists of run configs, and a CLI to run them.

* :mod:`helpers.lambda_gelu.protocol`: Fig. 1 (t, c) grid, Fig. 2 c sweep, Table I, Table II.
* :mod:`helpers.srelu.protocol`: Table 4 (δ sensitivity), Tables 1-2 (activation comparison).
* :mod:`helpers.flexact.protocol`: Flex-Act Table 2 (ResNet on CIFAR-10).

``python -m tools.run lgelu_table1 --profile cpu --shard 0/2`` runs (or loads) one
protocol; shards let several processes share the list, since every run is cached on its own.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import replace

from helpers import methods
from helpers.core.results_cache import RunFailed, run_or_load
from helpers.core.runs import TrainConfig
from helpers.core.runtime import PROFILES, TRAIN_THREADS_ENV, current_profile
from helpers.flexact.synthetic import synthetic_configs
from helpers.lambda_gelu.options import LambdaGeluOptions
from helpers.lambda_gelu.protocol import pair_config
from helpers.srelu import protocol as srelu
from tools.cli import ArgumentParser, positive_int_arg


def all_experiments() -> dict[str, Callable[[str], list[TrainConfig]]]:
    """Every method's experiments, by name (:data:`helpers.methods.METHODS` lists them); a name two
    methods list is an error."""
    experiments: dict[str, Callable[[str], list[TrainConfig]]] = {}
    for method in methods.METHODS:
        for name, configs in method.experiments.items():
            if name in experiments:
                raise ValueError(f"experiment {name!r} is listed by two methods")
            experiments[name] = configs
    return experiments


def cheap_check_configs() -> list[TrainConfig]:
    """cpu-profile runs cheap enough for CI to retrain and compare with their committed results:
    one per paper's pipeline (λ-GELU MLP on Adult with the fused kernel, S-ReLU ViT on CIFAR-10,
    Flex-Act synthetic regression with the fused mixture), about a minute in all."""

    flexact = next(c for c in synthetic_configs("cpu") if c.method == "flexact")
    return [
        replace(pair_config("adult", "cpu", activation="lambda_gelu", mode="increasing", seed=0)),
        srelu.cheap_check_config(),
        flexact,
    ]


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` as ``(i, n)`` with ``n >= 1`` and ``0 <= i < n``; anything else (``5/2`` would run
    nothing, ``0/0`` nothing sensible) is a ``ValueError`` naming the argument."""
    parts = text.split("/") if isinstance(text, str) else []
    try:
        index, count = (int(p.strip()) for p in parts)
    except ValueError:
        raise ValueError(f"--shard must be i/n with integers, e.g. 0/2, got {text!r}") from None
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"--shard {text!r}: need n >= 1 and 0 <= i < n (shard i of n), e.g. 0/2 or 1/2")
    return index, count


def _shard_arg(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


_threads_arg = positive_int_arg("--threads")


def main(argv: list[str] | None = None) -> None:
    """The CLI (see the module docstring); ``--help`` lists the flags."""
    experiments = all_experiments()
    parser = ArgumentParser(
        prog="python -m tools.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("experiment", choices=sorted(experiments), help="the protocol to run or load")
    parser.add_argument(
        "--profile", default=None, choices=PROFILES, help="run profile (default: REPRO_PROFILE, else cpu)"
    )
    parser.add_argument(
        "--shard", default=(0, 1), type=_shard_arg, help="i/n: run every n-th config starting at i (0 <= i < n)"
    )
    parser.add_argument(
        "--threads",
        type=_threads_arg,
        default=None,
        help=f"intra-op threads of each training run (sets {TRAIN_THREADS_ENV}; default 1; "
        "float32 results depend on it, and the committed ones used 1)",
    )
    parser.add_argument("--only", default=None, help="comma-separated activations to run (default: all)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        # training_threads() sets each run's thread count from the variable, so the flag goes there
        os.environ[TRAIN_THREADS_ENV] = str(args.threads)
    index, count = args.shard
    configs = experiments[args.experiment](current_profile(args.profile))
    # `is not None`, not truthiness: an empty --only ('' from an unset shell variable) names no
    # activation, so it is refused like ',' rather than silently meaning "all"
    if args.only is not None:
        wanted = [a.strip() for a in args.only.split(",") if a.strip()]
        known = sorted({c.activation for c in configs})
        unknown = [a for a in wanted if a not in known]
        if unknown or not wanted:
            parser.error(
                f"--only {args.only!r}: {', '.join(unknown) or 'no name given'} not in "
                f"{args.experiment}'s activations ({', '.join(known)})"
            )
        configs = [c for c in configs if c.activation in wanted]
    mine = configs[index::count]
    for i, cfg in enumerate(mine, 1):
        lgelu = cfg.option(LambdaGeluOptions)
        label = (
            f"{cfg.experiment} {cfg.activation} {cfg.activation_kwargs} mode={lgelu.init_mode} "
            f"c={lgelu.hardness_lr_mult} seed={cfg.seed}"
        )
        try:
            result = run_or_load(cfg)
            print(
                f"[{i}/{len(mine)}] {label}: best {result['best_val_metric']:.4f} @ epoch {result['best_epoch']}",
                flush=True,
            )
        except RunFailed as err:
            print(f"[{i}/{len(mine)}] FAILED {label}: {err}", flush=True)


if __name__ == "__main__":
    main()

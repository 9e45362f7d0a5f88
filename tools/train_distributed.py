"""Train protocol runs in several processes: the entry point ``torchrun`` launches.

One node, two processes (GPUs when ``REPRO_DEVICE`` is ``auto`` and there are GPUs, else the CPU
with gloo)::

    torchrun --nproc_per_node 2 -m tools.train_distributed lgelu_table1 --profile paper \\
        --config-hash 0123456789abcdef

Every process selects the same configs (an experiment of :func:`tools.run.all_experiments`,
narrowed by ``--config-hash``, ``--only`` and ``--shard`` as in ``python -m tools.run``;
or one config written as JSON, ``--config-json run.json``, a :class:`TrainConfig`'s fields, with
which those three flags are refused and ``--profile``, if given, must be the file's profile)
and trains them one after the other, together: each run is one training loop over all processes
(:mod:`helpers.core.distributed`). Rank 0 writes results and checkpoints; a run that finds its
result cached is skipped by every rank; a run killed mid-way resumes from its last epoch when the
same command is started again. Without ``torchrun`` it trains in this one process.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path

from helpers.core import distributed
from helpers.core.result_files import unique_keys
from helpers.core.results_cache import config_hash, load_result, result_path, run_or_load
from helpers.core.runs import TrainConfig, run_training
from helpers.core.runtime import PROFILES, TRAIN_THREADS_ENV, current_profile
from tools.cli import ArgumentParser, positive_int_arg
from tools.run import all_experiments, parse_shard


def select_configs(
    experiment: str, profile: str, hashes: Sequence[str] = (), only: str | None = None, shard: tuple[int, int] = (0, 1)
) -> list[TrainConfig]:
    """The configs of ``experiment`` at ``profile`` this command trains; a ``ValueError`` names
    a hash or activation that matches none, or a hash given twice (which would train it twice)."""
    experiments = all_experiments()
    if experiment not in experiments:
        raise ValueError(f"unknown experiment {experiment!r}; choose one of {', '.join(sorted(experiments))}")
    configs = [c for c in experiments[experiment](profile) if isinstance(c, TrainConfig)]
    if hashes:
        repeated = sorted({h for h in hashes if list(hashes).count(h) > 1})
        if repeated:
            raise ValueError(f"--config-hash {', '.join(repeated)} given more than once; give each hash once")
        by_hash = {config_hash(c): c for c in configs}
        unknown = [h for h in hashes if h not in by_hash]
        if unknown:
            raise ValueError(
                f"--config-hash {', '.join(unknown)}: no {experiment} config at profile {profile!r} "
                f"has that hash; `python -m tools.train_distributed {experiment} --profile "
                f"{profile} --list` lists them"
            )
        configs = [by_hash[h] for h in hashes]
    if only is not None:
        wanted = {a.strip() for a in only.split(",") if a.strip()}
        known = sorted({c.activation for c in configs})
        unknown = sorted(wanted - set(known))
        if unknown or not wanted:  # a misspelt name must not quietly train the others only
            raise ValueError(
                f"--only {only!r}: {', '.join(unknown) or 'no name given'} not in {experiment}'s activations "
                f"({', '.join(known)})"
            )
        configs = [c for c in configs if c.activation in wanted]
    index, count = shard
    return configs[index::count]


def config_from_json(path: str | Path) -> TrainConfig:
    """The :class:`TrainConfig` whose fields ``path`` holds as a JSON object."""
    try:
        fields = json.loads(Path(path).read_text(), object_pairs_hook=unique_keys)
    except (OSError, ValueError) as err:
        raise ValueError(f"--config-json {path}: not a readable JSON file ({err})") from None
    except RecursionError:
        raise ValueError(f"--config-json {path}: JSON nested too deeply to be a TrainConfig") from None
    if not isinstance(fields, dict):
        raise ValueError(f"--config-json {path}: expected an object of TrainConfig fields, got {type(fields).__name__}")
    try:
        return TrainConfig.from_dict(fields)
    except TypeError as err:
        raise ValueError(f"--config-json {path}: {err}") from None


def _shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def train_one(cfg: TrainConfig) -> dict | None:
    """Train (or load) ``cfg`` with every process; rank 0 returns the stored result, the others
    ``None``. All ranks agree first on whether the result is already cached."""
    cached = distributed.broadcast_object(load_result(cfg) is not None if distributed.is_main() else None)
    if cached:
        return run_or_load(cfg) if distributed.is_main() else None
    if distributed.is_main():
        return run_or_load(cfg, rerun=True)  # writes the result file and its provenance
    workdir = result_path(cfg).with_suffix("")  # rank 0 made it; checkpoints are rank 0's to write
    run_training(cfg, workdir)
    return None


def main(argv: list[str] | None = None) -> None:
    """The CLI (see the module docstring)."""
    parser = ArgumentParser(
        prog="python -m tools.train_distributed",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "experiment", nargs="?", default=None, help="a protocol (python -m tools.run --help lists them)"
    )
    parser.add_argument("--config-json", default=None, help="train the one TrainConfig this JSON file holds")
    parser.add_argument(
        "--profile",
        default=None,
        choices=PROFILES,
        help="run profile (default: REPRO_PROFILE, else cpu; with --config-json, the file's, which it must equal)",
    )
    parser.add_argument(
        "--config-hash",
        action="append",
        default=[],
        dest="hashes",
        help="train only the config with this hash (repeatable)",
    )
    parser.add_argument("--only", default=None, help="comma-separated activations to train")
    # default None, not (0, 1): --config-json must tell a --shard given from one left out
    parser.add_argument("--shard", default=None, type=_shard, help="i/n: every n-th config from i (default 0/1)")
    parser.add_argument(
        "--threads",
        type=positive_int_arg("--threads"),
        default=None,
        help=f"intra-op threads per process (sets {TRAIN_THREADS_ENV}; default 1)",
    )
    parser.add_argument("--list", action="store_true", help="list the selected configs with their hashes and stop")
    args = parser.parse_args(argv)
    if args.threads is not None:
        os.environ[TRAIN_THREADS_ENV] = str(args.threads)
    profile = current_profile(args.profile)
    if (args.experiment is None) == (args.config_json is None):
        parser.error("give an experiment or --config-json FILE (one of them)")
    if args.config_json is not None:
        # the file is the one config to train: flags that select among an experiment's configs
        # would be silently ignored, so a command that gives one is refused
        ignored = [
            flag
            for flag, given in (
                ("--config-hash", bool(args.hashes)),
                ("--only", args.only is not None),
                ("--shard", args.shard is not None),
            )
            if given
        ]
        if ignored:
            these = "these flags choose" if len(ignored) > 1 else "this flag chooses"
            parser.error(
                f"{', '.join(ignored)} cannot be used with --config-json: the file holds the one config to "
                f"train, and {these} among an experiment's configs"
            )
    try:
        configs = (
            [config_from_json(args.config_json)]
            if args.config_json is not None
            else select_configs(args.experiment, profile, args.hashes, args.only, args.shard or (0, 1))
        )
    except ValueError as err:
        parser.error(str(err))
    if args.config_json is not None and args.profile is not None and args.profile != configs[0].profile:
        # the file's profile field decides the run; a different --profile means the wrong file
        # or the wrong flag, and training the file's profile under it would mislead
        parser.error(
            f"--profile {args.profile} but {args.config_json} holds a {configs[0].profile!r} config; "
            f"drop --profile or give --profile {configs[0].profile}"
        )
    if args.list:
        for cfg in configs:
            print(
                f"{config_hash(cfg)}  {cfg.model} {cfg.dataset} {cfg.activation} seed={cfg.seed} "
                f"batch={cfg.batch_size} epochs={cfg.epochs}"
            )
        return
    for cfg in configs:  # before any process group exists, so every rank stops with the message
        distributed.check_global_batch(cfg.batch_size, distributed.world_from_env().size)
    device = distributed.process_device()
    world = distributed.init_from_env(device)
    try:
        for i, cfg in enumerate(configs, 1):
            result = train_one(cfg)
            if result is not None:
                print(
                    f"[{i}/{len(configs)}] {config_hash(cfg)} {cfg.experiment} {cfg.activation} seed={cfg.seed}: "
                    f"best {result['best_val_metric']:.4f} @ epoch {result['best_epoch']} "
                    f"({world.size} process{'es' if world.size > 1 else ''}, {device})",
                    flush=True,
                )
    finally:
        distributed.shutdown()


if __name__ == "__main__":
    main()

"""One-off migration: the S-ReLU DPO results from ``DPOConfig`` to ``TrainConfig`` + ``DPOOptions``.

``python scripts/rekey_dpo_results.py [folder]`` (default: the committed ``results/``). Used once, on
2026-12-02, on the 6 files of ``results/srelu_dpo/``, when the DPO runs became ``TrainConfig`` runs
(one config class and one runner for every supervised run, issue #53) and their ``DPOConfig`` and
runner ``run_dpo`` were removed. The new runner computes the same numbers bit for bit (checked on
the smoke configs before the migration), so nothing was retrained. For each file it:

1. checks the old file (its content checksum, and its config hash equal to its name);
2. builds the new config from the stored old one (:func:`helpers.srelu.dpo_experiment.dpo_config`,
   the old field names mapped as ``DPOConfig.pretrain_config`` mapped them) and checks that it is one
   of ``dpo_configs("cpu")``;
3. writes the result in ``run_training``'s layout under the new hash: ``pretrain_history`` becomes
   ``history``, with ``best_epoch``, ``best_val_metric`` and ``higher_is_better`` as
   :func:`helpers.core.train.fit` derives them from it and ``lambda_init: []`` as every
   ``TrainConfig`` result without λ-GELU records it; ``pretrain_val_loss``, ``dpo``, ``n_params``,
   ``data_source``, ``status``, ``provenance`` and the timings are kept as recorded;
4. restamps its checksum (as ``scripts/stamp_result_checksums.py`` does, after every other check of
   :mod:`helpers.core.result_files` passes) and removes the old file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from helpers.core.result_files import content_checksum, find_problems, with_checksum, write_json_atomic
from helpers.core.results_cache import CODE_VERSION, config_dict, config_hash, field_defaults
from helpers.core.runs import TrainConfig
from helpers.core.runtime import results_root
from helpers.srelu.dpo_experiment import dpo_config, dpo_configs
from tools.cli import ArgumentParser

#: ``DPOConfig`` field -> ``dpo_config`` argument, where the names differ.
RENAMED = {
    "betas": "dpo_betas",
    "pretrain_epochs": "epochs",
    "pretrain_blocks": "n_train",
    "pretrain_val_blocks": "n_val",
    "pretrain_lr": "lr",
}


def new_config(old: dict[str, Any]) -> TrainConfig:
    """The ``TrainConfig`` of a stored ``DPOConfig`` dict."""
    fields = {RENAMED.get(k, k): v for k, v in old.items() if k not in ("config_class", "experiment")}
    fields = {k: tuple(v) if k in ("dpo_betas", "families") else v for k, v in fields.items()}
    return dpo_config(fields.pop("profile"), fields.pop("activation"), fields.pop("seed"), **fields)


def rekeyed(data: dict[str, Any]) -> dict[str, Any]:
    """The record of an old DPO result in ``run_training``'s layout, under its new config (checksum stamped)."""
    cfg = new_config(data["config"])
    history = data["pretrain_history"]
    best = min(history, key=lambda row: row["val_metric"])  # perplexity: lower is better, the first of equals
    kept = (
        "n_params",
        "data_source",
        "train_seconds",
        "cpu_seconds",
        "pretrain_val_loss",
        "dpo",
        "status",
        "provenance",
    )
    record = {
        "config": config_dict(cfg),
        "config_hash": config_hash(cfg),
        "history": history,
        "best_epoch": best["epoch"],
        "best_val_metric": best["val_metric"],
        "higher_is_better": False,
        "lambda_init": [],
        **{k: data[k] for k in kept if k in data},
    }
    return with_checksum(record)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", type=Path, default=None, help="results folder (default: results/)")
    args = parser.parse_args(argv)
    folder = (args.folder if args.folder is not None else results_root("cpu")) / "srelu_dpo"
    wanted = {config_hash(c) for c in dpo_configs("cpu")}
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        if data["config"]["config_class"] != "DPOConfig":
            continue
        if data["checksum"] != content_checksum(data) or data["config_hash"] != path.stem:
            raise SystemExit(f"{path}: checksum or config hash does not match; not migrated")
        record = rekeyed(data)
        new_path = folder / f"{record['config_hash']}.json"
        problems = find_problems(new_path, record, field_defaults(TrainConfig), CODE_VERSION, record["config_hash"])
        if record["config_hash"] not in wanted or problems:
            raise SystemExit(f"{path}: not one of dpo_configs('cpu'), or {problems}; not migrated")
        write_json_atomic(new_path, record)
        path.unlink()
        print(f"{path.stem} -> {new_path.stem}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

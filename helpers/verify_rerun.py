"""Retrain cheap cpu-profile runs and check they reproduce their committed results exactly.

``python -m helpers.verify_rerun`` (CI runs it): for each config of
:func:`helpers.protocols.cheap_check_configs`, load the committed result from ``results/``, retrain
into a temporary results folder, and compare every recorded number. Seeded CPU runs are
bit-identical, so the comparison is exact; only wall-clock fields are skipped.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from typing import Any

from helpers.experiments import load_result, run_or_load

IGNORED_KEYS = {"train_seconds"}


def differences(committed: Any, fresh: Any, path: str = "") -> list[str]:
    """Paths where two result trees differ (numbers compared exactly, NaN equal to NaN)."""
    if isinstance(committed, dict) and isinstance(fresh, dict):
        out: list[str] = []
        for key in sorted(set(committed) | set(fresh)):
            if key in IGNORED_KEYS:
                continue
            if key not in committed or key not in fresh:
                out.append(f"{path}/{key}: present in only one result")
            else:
                out += differences(committed[key], fresh[key], f"{path}/{key}")
        return out
    if isinstance(committed, list) and isinstance(fresh, list):
        if len(committed) != len(fresh):
            return [f"{path}: length {len(committed)} != {len(fresh)}"]
        return [d for i, (a, b) in enumerate(zip(committed, fresh)) for d in differences(a, b, f"{path}[{i}]")]
    if isinstance(committed, float) and isinstance(fresh, float) and math.isnan(committed) and math.isnan(fresh):
        return []
    return [] if committed == fresh else [f"{path}: committed {committed!r} != rerun {fresh!r}"]


def main() -> int:
    from helpers.protocols import cheap_check_configs

    configs = cheap_check_configs()
    failures = 0
    for cfg in configs:
        committed = load_result(cfg)
        if committed is None:
            print(f"MISSING committed result for {cfg}", file=sys.stderr)
            failures += 1
            continue
        with tempfile.TemporaryDirectory() as tmp:
            previous = os.environ.get("REPRO_RESULTS_DIR")
            os.environ["REPRO_RESULTS_DIR"] = tmp
            try:
                fresh = json.loads(json.dumps(run_or_load(cfg, rerun=True)))
            finally:
                if previous is None:
                    os.environ.pop("REPRO_RESULTS_DIR")
                else:
                    os.environ["REPRO_RESULTS_DIR"] = previous
        diffs = differences(committed, fresh)
        label = f"{cfg.experiment}/{committed['config_hash']}"
        if diffs:
            failures += 1
            print(f"DIFFERS {label}:\n  " + "\n  ".join(diffs[:20]), file=sys.stderr)
        else:
            print(f"identical {label} (retrained from scratch, {len(committed.get('history', []))} epochs)")
    print(f"{len(configs) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

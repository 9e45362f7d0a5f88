"""Every protocol's config hashes, as a committed fixture that refactors must keep.

A run's cache key is the hash of its config (``helpers.core.results_cache.config_hash``); a
refactor that changes a key silently orphans the committed result. This script lists the keys of
every config the protocols build, per protocol and profile. (That each committed result file's
stored config still hashes to its file name is ``python -m tools.verify_results``'s check.)

    python scripts/config_hash_fixture.py          # check against tests/fixtures/config_hashes.json
    python scripts/config_hash_fixture.py --write  # rewrite the fixture (only when a key must change)

``tests/test_config_hashes.py`` runs the check.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable

from helpers.core.results_cache import config_hash
from helpers.core.runtime import repo_root
from tools.cli import ArgumentParser

FIXTURE = repo_root() / "tests" / "fixtures" / "config_hashes.json"
PROFILES = ("smoke", "cpu", "paper")


def _protocol_sources() -> dict[str, Callable[[str], Iterable]]:
    from helpers.flexact.readings import readings_configs
    from helpers.flexact.synthetic import sensitivity_configs, synthetic_configs
    from helpers.relu_ization.experiment import reluization_configs
    from helpers.relu_ization.protocol import RELU_PAIRS
    from helpers.srelu.dpo_experiment import dpo_configs
    from tools.run import all_experiments

    sources: dict[str, Callable[[str], Iterable]] = dict(all_experiments())
    sources["flexact_synthetic"] = synthetic_configs
    sources["flexact_sensitivity"] = sensitivity_configs
    sources["flexact_readings"] = readings_configs
    sources["srelu_dpo"] = dpo_configs
    for pair in RELU_PAIRS:
        sources[f"reluization_{pair}"] = lambda profile, pair=pair: reluization_configs(pair, profile)
    return sources


def protocol_hashes() -> dict[str, list[str]]:
    """``{"<protocol>/<profile>": sorted hashes}`` of every protocol's configs, plus the retrain's
    claim lists and CI's cheap rerun configs."""
    from tools.batches import BATCHES
    from tools.run import cheap_check_configs

    out: dict[str, list[str]] = {}
    for name, build in sorted(_protocol_sources().items()):
        for profile in PROFILES:
            out[f"{name}/{profile}"] = sorted({config_hash(c) for c in build(profile)})
    for key, claim in BATCHES.items():
        out[f"retrain_{key}"] = sorted({config_hash(c) for c in claim.configs()})
    out["cheap_check"] = sorted(config_hash(c) for c in cheap_check_configs())
    return out


def current() -> dict:
    return {"protocols": protocol_hashes()}


def diff(expected: dict, actual: dict) -> list[str]:
    """Human-readable differences, empty when the keys are unchanged."""
    lines = []
    for name in sorted(set(expected["protocols"]) | set(actual["protocols"])):
        old, new = set(expected["protocols"].get(name, [])), set(actual["protocols"].get(name, []))
        if old != new:
            lines.append(
                f"{name}: {len(old - new)} keys gone ({', '.join(sorted(old - new)[:5])}...), "
                f"{len(new - old)} new ({', '.join(sorted(new - old)[:5])}...)"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="rewrite the fixture from the current code")
    args = parser.parse_args(argv)
    actual = current()
    if args.write:
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n")
        n = sum(len(v) for v in actual["protocols"].values())
        print(f"wrote {FIXTURE}: {n} keys of {len(actual['protocols'])} protocol lists")
        return 0
    problems = diff(json.loads(FIXTURE.read_text()), actual)
    for line in problems:
        print(line)
    print(f"{len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""One-off repair: ReLU-ization results written before ``ReluizationConfig.precision`` existed
recorded ``precision: float32`` in their provenance although their arm trained in its TrainConfig's
precision (bf16 for the ResNet-18 pair; the annealed λ-GELU arm of seed 0 reproduces the committed
bf16 run of batch (c) bit for bit). This sets the recorded precision to the config's and re-stamps
the checksum; it touches nothing else and no other kind of result.

    python scripts/repair_reluization_precision.py [--dry-run]
"""

from __future__ import annotations

import json

from helpers.core.result_files import config_precision, with_checksum, write_json_atomic
from helpers.core.runtime import results_root
from tools.cli import ArgumentParser


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="list the files, change nothing")
    args = parser.parse_args(argv)
    fixed = 0
    for path in sorted(results_root("cpu").glob("reluization_*/*.json")):
        data = json.loads(path.read_text())
        if data.get("config", {}).get("config_class") != "ReluizationConfig":
            continue
        provenance = data.get("provenance")
        wanted = config_precision(data["config"])
        if not isinstance(provenance, dict) or provenance.get("precision") in (None, wanted):
            continue
        print(f"{path}: provenance precision {provenance['precision']!r} -> {wanted!r}")
        fixed += 1
        if not args.dry_run:
            write_json_atomic(path, with_checksum({**data, "provenance": {**provenance, "precision": wanted}}))
    print(f"{fixed} file(s) {'to repair' if args.dry_run else 'repaired'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

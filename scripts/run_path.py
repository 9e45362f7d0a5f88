"""Which ``helpers`` modules one training run crosses (issue 53, item 2: "at most 8").

Trains smoke ``TrainConfig`` runs in this process, into a scratch results folder, under a profiler
that notes the file of every Python function called, and prints the ``helpers`` modules that ran:

    python scripts/run_path.py            # a GELU MLP and a λ-GELU MLP on Adult
    python scripts/run_path.py --quiet    # only the counts

Every module is imported before the profiler starts (``helpers.methods``, the table the core reads,
imports every method's run modules), so the count is of modules whose code a run executes, not of
those an import drags in.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import helpers
from tools.cli import ArgumentParser

HELPERS = Path(helpers.__file__).resolve().parent


def crossed_modules(run) -> list[str]:
    """The ``helpers`` modules (``core/runs``, ``lambda_gelu/training``, ...) whose code ``run()`` executes."""
    files: set[str] = set()

    def profile(frame, event, arg) -> None:
        if event == "call":
            files.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    names = []
    for file in files:
        path = Path(file).resolve()
        if path.is_relative_to(HELPERS) and path.suffix == ".py":
            names.append(path.relative_to(HELPERS).with_suffix("").as_posix())
    return sorted(names)


def example_configs() -> dict[str, object]:
    """The runs the issue's note counts: a GELU MLP and a λ-GELU MLP on Adult (smoke profile)."""
    from helpers.core.runs import TrainConfig

    base = {"experiment": "run_path", "dataset": "adult", "model": "mlp", "profile": "smoke", "epochs": 2}
    return {
        "GELU MLP on Adult": TrainConfig(activation="gelu", **base),
        "λ-GELU MLP on Adult": TrainConfig(activation="lambda_gelu", **base),
    }


def main(argv: list[str] | None = None) -> dict[str, list[str]]:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quiet", action="store_true", help="print only the counts")
    quiet = parser.parse_args(argv).quiet
    import helpers.methods  # noqa: F401 (the tables, and through them every method's run modules)
    from helpers.experiments import run_or_load

    crossed = {}
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["REPRO_RESULTS_DIR"] = scratch
        for label, cfg in example_configs().items():
            run_or_load(cfg, rerun=False)  # a first run warms lazy imports and data caches
            crossed[label] = crossed_modules(lambda cfg=cfg: run_or_load(cfg, rerun=True))
    for label, names in crossed.items():
        core = [n for n in names if n.startswith("core/")]
        print(f"{label}: {len(names)} modules ({len(core)} core, {len(names) - len(core)} other)")
        if not quiet:
            print("  " + "\n  ".join(names))
    return crossed


if __name__ == "__main__":
    main()

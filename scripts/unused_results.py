"""List committed cpu-profile result files that no protocol asks for any more.

When a claim's cpu scale is switched (see :mod:`tools.retrain`), the runs of the
earlier scale that nothing else shares stop being loaded by any page. This script names them, so
they can be removed in the same commit (their content stays in git history):

    python scripts/unused_results.py            # list
    python scripts/unused_results.py --git-rm   # git rm them

"Asked for" means: a config of any protocol of the book in the cpu profile (the papers'
experiments, the Flex-Act synthetic study and its sweeps, the DPO stand-in, the ReLU-ization
chapter), of a retrain batch, or a run CI retrains and compares (``cheap_check_configs``).
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from helpers.core.results_cache import result_path
from helpers.core.runtime import results_root
from helpers.flexact import synthetic
from helpers.flexact.readings import readings_configs
from helpers.relu_ization.experiment import reluization_configs
from helpers.relu_ization.protocol import cpu_pairs
from helpers.srelu.dpo_experiment import dpo_configs
from tools.batches import BATCHES
from tools.cli import ArgumentParser
from tools.run import all_experiments, cheap_check_configs
from tools.verify_results import result_files


def used_paths() -> set[Path]:
    """Result paths of every cpu-profile config the book or the retrain asks for."""
    configs = [c for make in all_experiments().values() for c in make("cpu")]
    configs += synthetic.synthetic_configs("cpu") + synthetic.sensitivity_configs("cpu")
    configs += dpo_configs("cpu")
    configs += readings_configs("cpu")
    configs += [c for pair in cpu_pairs() for c in reluization_configs(pair, "cpu")]
    configs += [c for claim in BATCHES.values() for c in claim.configs()]
    configs += cheap_check_configs()  # CI retrains them (tools.verify_rerun)
    return {result_path(c).resolve() for c in configs}


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--git-rm", action="store_true", help="remove the unused files with git rm")
    args = parser.parse_args(argv)
    used = used_paths()
    unused = [p for p in result_files(results_root("cpu")) if p.resolve() not in used]
    for path in unused:
        print(path)
    print(f"{len(unused)} unused result file(s)")
    if args.git_rm and unused:
        subprocess.run(["git", "rm", "-q", *map(str, unused)], check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""One-off migration: add the content checksum to result files written before checksums existed.

``python scripts/stamp_result_checksums.py [folder]`` (default ``results/``). A file is stamped
only when it passes every other check of :mod:`helpers.core.result_files` (status, finite numbers,
config hash equal to its name and to its stored config), so a file that was already damaged is
reported, not blessed. Files that already carry a checksum are left alone. Used once, on
2026-11-23, on the 469 results committed by then (their git history shows their content).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from helpers.core.result_files import find_problems, with_checksum
from helpers.core.runtime import results_root
from helpers.experiments import CODE_VERSION, field_defaults, write_json_atomic
from tools.cli import ArgumentParser
from tools.verify_results import _config_classes, result_files


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "folder", nargs="?", type=Path, default=None, help="folder of result files (default: the committed results/)"
    )
    args = parser.parse_args(argv)
    folder = args.folder if args.folder is not None else results_root("cpu")
    if not folder.is_dir():
        parser.error(f"{folder} is not a folder")
    classes = _config_classes()
    stamped = refused = 0
    for path in result_files(folder):
        data = json.loads(path.read_text())
        if "checksum" in data:
            continue
        cls = classes[data["config"]["config_class"]]
        candidate = with_checksum(data)
        problems = find_problems(path, candidate, field_defaults(cls), CODE_VERSION)
        if problems:
            refused += 1
            print(f"NOT stamped {path}: {'; '.join(problems)}")
            continue
        write_json_atomic(path, candidate)
        stamped += 1
    print(f"stamped {stamped} files, refused {refused}")
    return 1 if refused else 0


if __name__ == "__main__":
    raise SystemExit(main())

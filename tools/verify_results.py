"""Verify every committed result file: ``python -m tools.verify_results [folder]``.

Runs the checks of :mod:`helpers.core.result_files` (JSON object with the required keys, status
``ok``, finite numbers, content checksum, ``config_hash`` equal to the file name and to the hash
of the stored config) over every ``*.json`` under ``results/`` (or the given folder), skipping
``*.failed.json`` records of failed runs. Prints one line per problem file and a closing
``N passed, N failed`` line; exits 1 when any file fails, and when the folder holds no result
file at all (a verification of nothing is not a success). CI runs it.

What the checksum guards against: accidents (a file truncated, merged badly, edited by hand
without restamping, or damaged on disk). It is not a signature: anyone who edits a result can
recompute its checksum. Deliberate edits are guarded by the git history: ``git log -p
results/<experiment>/<hash>.json`` shows who changed a committed result, when and how.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from helpers.churn.predictions import N_CLASSES, decode_predictions
from helpers.core.result_files import CorruptResult, read_result_json, verify_data
from helpers.core.results_cache import CODE_VERSION, field_defaults, registered_config_classes
from helpers.core.runtime import results_root
from tools.cli import ArgumentParser


def _config_classes() -> dict[str, type]:
    """Every config class of ``helpers.methods.RUNNERS`` by name: a result of another class fails
    as "unknown config_class", so a new runner is noticed."""
    return registered_config_classes()


def result_files(folder: Path) -> list[Path]:
    """Every entry named like a result JSON under ``folder`` (records of failed runs excluded),
    sorted: a directory, FIFO or device with that name is listed too, and reported by
    :func:`verify_file` without being opened."""
    return sorted(p for p in folder.rglob("*.json") if not p.name.endswith(".failed.json"))


def verify_file(path: Path, classes: dict[str, type], *, placed: bool = False) -> None:
    """Raise :class:`CorruptResult` naming ``path`` when it fails any check; with ``placed`` (a file
    of a results folder), also when it lies outside the folder of its experiment
    (``<experiment>/<hash>.json``), the one place the cache reads it from."""
    data = read_result_json(path)
    config = data.get("config") if isinstance(data, dict) else None
    name = config.get("config_class") if isinstance(config, dict) else None
    if isinstance(config, dict) and name is None:
        raise CorruptResult(f"{path}: its config names no config_class, so its config hash cannot be checked")
    cls = classes.get(name) if isinstance(name, str) else None
    if isinstance(name, str) and cls is None:
        raise CorruptResult(f"{path}: unknown config_class {name!r} (known: {', '.join(sorted(classes))})")
    if placed and isinstance(config, dict) and path.parent.name != config.get("experiment"):
        raise CorruptResult(
            f"{path}: a result of experiment {config.get('experiment')!r} in folder {path.parent.name!r}; the cache "
            f"reads it only at {config.get('experiment')}/{path.name}"
        )
    verify_data(path, data, field_defaults(cls) if cls is not None else None, CODE_VERSION)
    for key in ("predictions", "predictions_relu"):  # payloads a checksum restamped after an edit still passes
        if key in data:
            try:
                decode_predictions(data[key], N_CLASSES.get(str(config.get("dataset"))))
            except ValueError as err:
                raise CorruptResult(f"{path}: {key}: {err}") from None


#: Printed with every verification: what passing means and what it does not.
GUARANTEE = (
    "The checksum detects accidental damage (truncation, bad merges, hand edits without "
    "restamping); it is not a signature. Deliberate edits are visible in the git history: "
    "git log -p results/"
)


def main(argv: list[str] | None = None) -> int:
    """The CLI; returns the exit status (0: every file passed; 1: a file failed, or none was found)."""
    parser = ArgumentParser(
        prog="python -m tools.verify_results",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "folder", nargs="?", type=Path, default=None, help="folder of result files (default: the committed results/)"
    )
    args = parser.parse_args(argv)
    folder = args.folder if args.folder is not None else results_root("cpu")
    if not folder.is_dir():
        parser.error(f"{folder} is not a folder")
    classes = _config_classes()
    files = result_files(folder)
    if not files:
        print(
            f"FAILED no result files (*.json, other than *.failed.json) under {folder}: nothing was "
            "verified. Point it at a results folder, e.g. python -m tools.verify_results results"
        )
        return 1
    failed = 0
    for path in files:
        try:
            verify_file(path, classes, placed=True)
        except CorruptResult as err:
            failed += 1
            print(f"FAILED {err}")
    print(
        f"verified {len(files)} result files under {folder}: every file's checksum, status, "
        "numbers and config hash checked"
    )
    print(f"{len(files) - failed} passed, {failed} failed")
    print(GUARANTEE)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

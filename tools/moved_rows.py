"""Which report rows new results moved: every claim computed, with today's code, from the results
committed at a git revision and from the results now, and the rows that differ.

    python -m tools.moved_rows --since REV
    python -m tools.moved_rows --since REV --code-too

A stop note lists every row that a batch of runs moved, before → after (a verdict, our value,
the effect and its interval, n): this prints that list. The results at ``REV`` are read with
``git archive`` into a temporary folder, so the working tree is not touched. Each side is computed
in its own process (``REPRO_RESULTS_DIR`` pointing at its results), about half a minute each.
By default only the results differ between the two sides, not the code: a row that moved did so
because of runs committed since ``REV``.

A page that switches to a larger seed set (or another scale) moves rows with no new results: its
runs were committed before the switch. ``--code-too`` computes the 'before' side with the code
at ``REV`` as well (the whole tree at ``REV``, extracted the same way), so that the list is the
switch's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

from helpers.claims import report_claims
from tools.cli import ArgumentParser

ROOT = Path(__file__).resolve().parents[2]

#: The fields of a claim that new results can move (its text and the paper's side cannot).
MOVING_FIELDS: tuple[str, ...] = ("verdict", "our_value", "effect", "ci", "n", "mde", "profile", "scale")

__all__ = ["MOVING_FIELDS", "moved", "snapshot", "results_at", "tree_at", "main"]


def _snapshot_here() -> dict[str, dict[str, Any]]:
    """Every claim's moving fields, computed in this process from its ``REPRO_RESULTS_DIR``."""
    rows = {}
    for claim in report_claims():
        record = dataclasses.asdict(claim)
        rows[claim.key] = {"claim": record["claim"], **{f: repr(record[f]) for f in MOVING_FIELDS}}
    return rows


def snapshot(results_dir: Path, code_dir: Path = ROOT) -> dict[str, dict[str, Any]]:
    """The moving fields of every claim, computed from the results in ``results_dir`` by the
    ``helpers`` package in ``code_dir`` (this checkout's, unless another tree is given)."""
    # `python -m` puts the working directory first on sys.path: code_dir's helpers is imported,
    # ahead of the editable install of this checkout.
    env = {
        **os.environ,
        "REPRO_RESULTS_DIR": str(results_dir),
        "REPRO_QUIET": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(code_dir), os.environ.get("PYTHONPATH")])),
    }
    # a tree from before tools/ moved out of helpers/ keeps this command under helpers.protocols
    old_layout = not (code_dir / "tools" / "moved_rows.py").exists()
    module = "helpers.protocols.moved_rows" if old_layout else "tools.moved_rows"
    done = subprocess.run(
        [sys.executable, "-m", module, "--snapshot"],
        cwd=code_dir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"computing the claims from {results_dir} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _check_revision(revision: str) -> str:
    """``revision`` unless it is empty or starts with ``-`` (which git would take for an option)."""
    if not isinstance(revision, str) or not revision.strip() or revision.startswith("-"):
        raise ValueError(
            f"--since {revision!r}: not a git revision (a revision cannot be empty or start with '-'; "
            "e.g. HEAD~5 or a commit hash)"
        )
    return revision


def _extract(revision: str, into: Path, *paths: str) -> None:
    """``paths`` (the whole tree if none) as committed at ``revision``, extracted under ``into``.

    A ``revision`` starting with ``-`` is a ``ValueError``: git would read it as an option
    (``--output=FILE`` writes a file); ``--end-of-options`` keeps git from reading it so anyway."""
    _check_revision(revision)
    done = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--end-of-options", revision, *paths], capture_output=True, check=False
    )
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()
        what = " ".join(f"{p}/" for p in paths) or "the tree"
        raise SystemExit(f"moved_rows: cannot read {what} at {revision!r}: {message}")
    with tarfile.open(fileobj=BytesIO(done.stdout)) as archive:
        archive.extractall(into, filter="data")


def results_at(revision: str, into: Path) -> Path:
    """The ``results/`` folder committed at ``revision``, extracted under ``into``."""
    _extract(revision, into, "results")
    return into / "results"


def tree_at(revision: str, into: Path) -> Path:
    """The whole tree committed at ``revision`` (code and results), extracted under ``into``."""
    _extract(revision, into)
    return into


def moved(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose moving fields differ, in ``after``'s order (then rows only ``before`` has):
    ``{"key", "claim", "changes": {field: (before, after)}}``; a row on one side only has
    ``"only": "before"`` or ``"after"``."""
    rows = []
    for key, now in after.items():
        then = before.get(key)
        if then is None:
            rows.append({"key": key, "claim": now["claim"], "only": "after", "changes": {}})
            continue
        changes = {f: (then[f], now[f]) for f in MOVING_FIELDS if then.get(f) != now.get(f)}
        if changes:
            rows.append({"key": key, "claim": now["claim"], "changes": changes})
    rows += [
        {"key": key, "claim": then["claim"], "only": "before", "changes": {}}
        for key, then in before.items()
        if key not in after
    ]
    return rows


def _short(value: str, limit: int = 160) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _markdown(rows: list[dict[str, Any]], since: str) -> str:
    if not rows:
        return f"No report row moved since {since}."
    lines = [f"{len(rows)} report rows moved since {since} (before → after):", ""]
    for row in rows:
        if "only" in row:
            lines.append(f"- `{row['key']}` ({row['claim']}): only {row['only']}")
            continue
        parts = "; ".join(f"{f} {_short(b)} → {_short(a)}" for f, (b, a) in row["changes"].items())
        lines.append(f"- `{row['key']}` ({row['claim']}): {parts}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--since", help="the git revision whose committed results are 'before' (e.g. HEAD~5)")
    parser.add_argument(
        "--code-too",
        action="store_true",
        help="compute 'before' with the code at REV too (a seed or scale switch moves rows without new results)",
    )
    parser.add_argument("--json", action="store_true", help="print the moved rows as JSON")
    # one side's claims as JSON (internal: each side runs in its own process)
    parser.add_argument("--snapshot", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.snapshot:
        print(json.dumps(_snapshot_here()))
        return
    if not args.since:
        parser.error("--since REV is required (the revision whose results are 'before')")
    try:
        _check_revision(args.since)
    except ValueError as err:
        parser.error(str(err))
    current = Path(os.environ.get("REPRO_RESULTS_DIR", ROOT / "results"))
    try:
        with tempfile.TemporaryDirectory(prefix="moved_rows_") as tmp:
            if args.code_too:
                tree = tree_at(args.since, Path(tmp))
                before = snapshot(tree / "results", code_dir=tree)
            else:
                before = snapshot(results_at(args.since, Path(tmp)))
        after = snapshot(current)
    except RuntimeError as err:  # one side's claims failed to compute: its stderr, not our stack
        raise SystemExit(f"moved_rows: {err}") from None
    rows = moved(before, after)
    since = f"{args.since} (its code and results)" if args.code_too else args.since
    print(json.dumps(rows, indent=1) if args.json else _markdown(rows, since))


if __name__ == "__main__":
    main()

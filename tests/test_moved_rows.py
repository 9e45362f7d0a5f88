"""``python -m helpers.protocols.moved_rows``: the report rows that new results moved."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers.protocols import moved_rows as M


def _row(claim: str, **fields: str) -> dict[str, str]:
    return {"claim": claim, **{f: fields.get(f, "''") for f in M.MOVING_FIELDS}}


def test_only_rows_whose_moving_fields_differ_are_listed_in_report_order():
    before = {"a": _row("A", verdict="'inconclusive'"), "b": _row("B"), "gone": _row("G")}
    after = {"new": _row("N"), "b": _row("B"), "a": _row("A", verdict="'confirmed'", n="'8'")}
    rows = M.moved(before, after)
    assert [r["key"] for r in rows] == ["new", "a", "gone"]
    assert rows[0]["only"] == "after" and rows[2]["only"] == "before"
    assert rows[1]["changes"] == {"verdict": ("'inconclusive'", "'confirmed'"), "n": ("''", "'8'")}
    text = M._markdown(rows, "REV")
    assert "3 report rows moved since REV" in text and "verdict 'inconclusive' → 'confirmed'" in text
    assert M._markdown([], "REV") == "No report row moved since REV."
    assert M.moved(after, after) == []


def test_a_long_value_is_shortened_in_the_listing():
    rows = M.moved({"a": _row("A", scale="x" * 500)}, {"a": _row("A", scale="y")})
    line = M._markdown(rows, "REV").splitlines()[-1]
    assert "…" in line and len(line) < 300


@pytest.mark.parametrize(
    "args,message",
    [([], "--since REV is required"), (["--since", "no-such-revision-xyz"], "cannot read results/ at")],
)
def test_bad_arguments_get_a_clear_message(args, message):
    done = subprocess.run(
        [sys.executable, "-m", "helpers.protocols.moved_rows", *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr

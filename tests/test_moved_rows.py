"""``python -m tools.moved_rows``: the report rows that new results moved."""

from __future__ import annotations

import pytest

from tools import moved_rows as M


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


def _main_error(args: list[str], capsys) -> str:
    """What ``moved_rows`` prints to stderr when it refuses ``args`` (it exits non-zero; a message
    given to ``SystemExit`` is what Python prints to stderr at exit)."""
    with pytest.raises(SystemExit) as stop:
        M.main(args)
    code = stop.value.code
    assert code not in (0, None)
    return capsys.readouterr().err + (code if isinstance(code, str) else "")


@pytest.mark.parametrize(
    "args,message",
    [
        ([], "--since REV is required"),
        (["--since", "no-such-revision-xyz"], "cannot read results/ at"),
        (["--since", "no-such-revision-xyz", "--code-too"], "cannot read the tree at"),
    ],
)
def test_bad_arguments_get_a_clear_message(args, message, capsys):
    err = _main_error(args, capsys)
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("layout", ["tools", "helpers/protocols"])
def test_the_before_side_can_run_another_trees_code(tmp_path, layout):
    """``--code-too`` computes 'before' with the code at REV: the snapshot runs the package of the
    tree it is given, not this checkout's editable install, in today's layout or the one before
    tools/ left helpers/."""
    package = tmp_path / "tree" / layout
    package.mkdir(parents=True)
    for folder in (package, package.parent):
        (folder / "__init__.py").write_text("")
    (package / "moved_rows.py").write_text(
        f"import json, os\nprint(json.dumps({{'{layout}': os.environ['REPRO_RESULTS_DIR']}}))\n"
    )
    assert M.snapshot(tmp_path / "results", code_dir=tmp_path / "tree") == {layout: str(tmp_path / "results")}


def test_a_side_that_fails_to_compute_stops_with_its_message(monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("computing the claims from X failed:\nImportError: no module")

    monkeypatch.setattr(M, "snapshot", fail)
    monkeypatch.setattr(M, "results_at", lambda revision, into: into)
    with pytest.raises(SystemExit, match="moved_rows: computing the claims from X failed"):
        M.main(["--since", "HEAD"])

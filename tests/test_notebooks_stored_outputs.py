"""Notebook hygiene that nbval cannot see.

nbval --nbval-lax compares a ``# NBVAL_CHECK_OUTPUT`` cell with the output *stored* in the
committed notebook; a marked cell committed without output compares against nothing and passes.
These tests fail in that case, and when a notebook would silently not be built (absent from
``_toc.yml``, which ``only_build_toc_files: true`` skips without a warning).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MARKER = "# NBVAL_CHECK_OUTPUT"


def _code_cells(path: Path) -> list:
    import nbformat  # at use: its import costs every pytest process 3 s

    nb = nbformat.read(path, as_version=4)
    return [cell for cell in nb.cells if cell.cell_type == "code"]


@pytest.fixture(scope="module")
def is_marked(script):
    """nbval compares a cell's output when this says so (the rule scripts/strip_outputs.py keeps outputs by)."""
    return script("strip_outputs").is_checked


@pytest.mark.slow
def test_checked_cells_have_stored_outputs(is_marked) -> None:
    problems = []
    for path in NOTEBOOKS:
        for index, cell in enumerate(_code_cells(path)):
            if not is_marked(cell):
                continue
            if not cell.get("outputs"):
                problems.append(f"{path.name} code cell {index}: marked {MARKER} but has no stored output")
            elif any(out.output_type == "error" for out in cell.outputs):
                problems.append(f"{path.name} code cell {index}: its stored output is an error")
    assert not problems, (
        "; ".join(problems) + ". Execute the notebook in place and commit it with its outputs (see book/rerun.md)."
    )


def test_only_checked_cells_keep_stored_outputs(is_marked) -> None:
    """Outputs nbval does not compare would go stale unseen (a reader opening the file would see
    old verdicts): the committed notebooks keep none of them."""
    stale = [
        f"{path.name} code cell {index}"
        for path in NOTEBOOKS
        for index, cell in enumerate(_code_cells(path))
        if not is_marked(cell) and (cell.get("outputs") or cell.get("execution_count"))
    ]
    assert not stale, f"unchecked cells with stored outputs: {stale}. Run: python scripts/strip_outputs.py"


def test_marker_is_the_first_line_when_present(is_marked) -> None:
    """A marker further down a cell is ignored by the convention above: flag it rather than trust it."""
    misplaced = [
        f"{path.name} cell {index}"
        for path in NOTEBOOKS
        for index, cell in enumerate(_code_cells(path))
        if MARKER in cell.source and not is_marked(cell)
    ]
    assert not misplaced, f"{MARKER} must be the first line of code cells: {misplaced}"


def test_first_code_cell_is_tagged_parameters() -> None:
    untagged = []
    for path in NOTEBOOKS:
        cells = _code_cells(path)
        if not cells or "parameters" not in cells[0].metadata.get("tags", []):
            untagged.append(path.name)
    assert not untagged, f"the first code cell must be tagged 'parameters' (profile and seeds): {untagged}"


def test_every_notebook_is_in_the_toc_and_every_toc_entry_exists(script) -> None:
    check_toc = script("check_toc")
    problems = check_toc.problems()
    assert not problems, "\n".join(problems) + "\nFix with: .venv/bin/python scripts/check_toc.py --write"


def test_check_toc_detects_a_missing_notebook(tmp_path: Path, script) -> None:
    """The toc check itself can fail: an unlisted notebook and an entry without a file are reported."""
    check_toc = script("check_toc")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.md").write_text("# x\n")
    (tmp_path / "notebooks" / "05_orphan.ipynb").write_text("{}")
    toc = tmp_path / "_toc.yml"
    toc.write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: A\n    chapters:\n"
        "      - file: notebooks/06_missing\n"
        "#~    - file: notebooks/05_orphan\n"
    )
    problems = check_toc.problems(toc, tmp_path)
    assert any("no file: notebooks/06_missing" in p for p in problems)
    assert any("commented: notebooks/05_orphan" in p for p in problems)
    rendered = check_toc.render(check_toc.read_toc(toc, planned=True), tmp_path)
    assert "      - file: notebooks/05_orphan" in rendered
    assert "#~    - file: notebooks/06_missing" in rendered


def test_check_toc_keeps_a_caption_with_a_colon_valid_yaml(tmp_path: Path, script) -> None:
    """--write used to print every caption unquoted, so "A: B" turned _toc.yml into invalid YAML."""
    check_toc = script("check_toc")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.md").write_text("# x\n")
    (tmp_path / "notebooks" / "40_a.ipynb").write_text("{}")
    toc = tmp_path / "_toc.yml"
    toc.write_text(
        'format: jb-book\nroot: book/intro\nparts:\n  - caption: "Beyond: it"\n    chapters:\n'
        "      - file: notebooks/40_a\n"
    )
    rendered = check_toc.render(check_toc.read_toc(toc, planned=True), tmp_path)
    toc.write_text(rendered)
    assert check_toc.read_toc(toc).parts[0].caption == "Beyond: it"
    assert not check_toc.problems(toc, tmp_path)


#: What a page may call to get claims: the report's rows (helpers.claims), never a claims function
#: of a method, which would decide the verdict a second time beside the report.
READS_THE_REPORT = {"section_claims", "report_claims", "page_claims", "claims_frame"}
DECIDES = ("judge(", "intersection_union(", "proportion_verdict(")


def test_a_page_reads_its_claims_from_the_report_and_decides_no_verdict():
    """Pages read the stored report (never ``collect_claims``, which would recompute it per page)."""
    import re

    offenders = {}
    for path in NOTEBOOKS:
        calls = []
        for cell in _code_cells(path):
            for name in re.findall(r"(\w*claims)\(", cell.source):
                if name not in READS_THE_REPORT:
                    calls.append(f"{name}(...)")
            calls += [d for d in DECIDES if d in cell.source]
        if calls:
            offenders[path.name] = sorted(set(calls))
    assert not offenders, (
        f"pages that compute claims or verdicts themselves: {offenders}; read the report's rows with "
        "helpers.claims.section_claims / claim / findings_box instead"
    )

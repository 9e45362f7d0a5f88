"""Keep in the committed notebooks only the outputs that nbval checks.

nbval (``--nbval-lax``) compares the cells whose first line is ``# NBVAL_CHECK_OUTPUT`` with their
stored outputs and ignores every other stored output, so those would go stale unseen: a reader
opening the ``.ipynb`` file would see old numbers and old verdicts. The rendered book executes
every page, so it never shows them. Run after executing a notebook in place::

    python scripts/strip_outputs.py                 # every notebook under notebooks/
    python scripts/strip_outputs.py notebooks/21_srelu_benchmarks.ipynb

``tests/test_notebooks_stored_outputs.py`` fails while an unchecked cell keeps an output.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from tools.cli import ArgumentParser

ROOT = Path(__file__).resolve().parent.parent
MARKER = "# NBVAL_CHECK_OUTPUT"


def is_checked(cell: nbformat.NotebookNode) -> bool:
    """Whether nbval compares this code cell's output: the marker is its first non-blank line."""
    lines = [line.strip() for line in cell.source.splitlines() if line.strip()]
    return bool(lines) and lines[0] == MARKER


def strip(path: Path) -> int:
    """Drop the outputs and execution counts of ``path``'s unchecked code cells; return how many
    cells changed (the file is rewritten only when some did)."""
    notebook = nbformat.read(path, as_version=4)
    changed = 0
    for cell in notebook.cells:
        if cell.cell_type == "code" and not is_checked(cell) and (cell.outputs or cell.execution_count):
            cell.outputs, cell.execution_count = [], None
            changed += 1
    if changed:
        nbformat.write(notebook, path)
    return changed


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to strip (default: notebooks/*.ipynb)")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file() or p.suffix != ".ipynb"]
    if missing:
        parser.error(f"not a notebook file: {', '.join(missing)}")
    for path in paths:
        if count := strip(path):
            print(f"{path}: {count} unchecked cells' outputs removed")


if __name__ == "__main__":
    main()

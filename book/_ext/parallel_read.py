"""Sphinx extension: let the book's pages be read, and so executed, in parallel (``-j``).

Why: myst-nb executes a notebook while Sphinx reads it, so reading two pages at once halves the
book build on 2 cores (``scripts/build_book.py`` passes ``jobs``). Sphinx reads serially if any
extension leaves ``parallel_read_safe`` undeclared, and two that jupyter-book always loads do:
``sphinx_jupyterbook_latex`` (transforms that act only for the LaTeX builder) and
``sphinx_multitoc_numbering`` (patches the section numbering that Sphinx runs once, in the main
process, after every page is read). Neither keeps per-page state, so this declares them safe
for reading (undeclared, Sphinx warns and reads serially; under ``-W`` the warning fails the
build). Writing needs nothing: Sphinx assumes it safe unless an extension says otherwise.
"""

from __future__ import annotations

from typing import Any

#: Extensions that are safe to read in parallel but do not say so (checked in the versions pinned
#: in pyproject.toml).
UNDECLARED_BUT_SAFE = ("sphinx_jupyterbook_latex", "sphinx_multitoc_numbering")


def _declare(app) -> None:  # noqa: ANN001
    for name in UNDECLARED_BUT_SAFE:
        extension = app.extensions.get(name)
        if extension is not None and extension.parallel_read_safe is None:
            extension.parallel_read_safe = True


def setup(app) -> dict[str, Any]:  # noqa: ANN001
    app.connect("builder-inited", _declare)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

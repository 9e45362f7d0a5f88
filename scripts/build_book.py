"""The book's build: ``jupyter-book build SOURCE -n -W --keep-going`` with Sphinx's parallel read.

jupyter-book 1.x has no ``-j`` flag, but its :func:`jupyter_book.sphinx.build_sphinx` takes
``jobs``; this passes it through. myst-nb executes each notebook while Sphinx reads it, so with
``--jobs 2`` two pages run at once (``book/_ext/parallel_read.py`` lets Sphinx read in parallel;
the pages' shared report is computed once, under a lock, by :func:`helpers.claims.report_claims`).
Warnings are errors (``-W``) and every page is checked for broken references (``-n``), as always.
"""

from __future__ import annotations

import functools
import os

from tools.cli import ArgumentParser


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", default=".", help="the book's folder (default: .)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="pages read and executed at once (default: the number of CPUs)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")

    import jupyter_book.cli.main as jupyter_book_cli  # after --help, which needs none of it
    import jupyter_book.sphinx

    # the CLI imports build_sphinx from this module when it runs, so it gets the patched one
    jupyter_book.sphinx.build_sphinx = functools.partial(jupyter_book.sphinx.build_sphinx, jobs=args.jobs)
    jupyter_book_cli.main(["build", args.source, "-n", "-W", "--keep-going"])


if __name__ == "__main__":
    main()

"""Whose value is it: the source's own printed words, or a value we derived from them.

A claim's "source's value" is one of three things, and the report shows which:

* a plain string: only to say the source prints nothing there (``"—"``, ``"not stated"``, the
  book's own hypothesis; ``tests/test_attribution.py`` lists the spellings);
* :class:`Quoted`: a verbatim excerpt with where it stands (``QUOTES`` of the ``paper.py``
  modules); tests check that each number taken from it occurs in it, and that it occurs in the
  source where the texts are at hand (``tests/quotes.py``);
* :class:`Derived`: a value the source does not print, derived by us from what it prints, with how.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What a claim's source value is: printed at the claim's location, an excerpt, or ours.
PAPER_KINDS: tuple[str, ...] = ("printed", "quoted", "derived")
#: What follows a derived value in its display string: says whose it is and how it was derived.
DERIVED_MARK = " [derived by us: "


@dataclass(frozen=True)
class Quoted:
    """The source's own words or numbers, verbatim, and where they stand (section, table, line).

    ``values``: the numbers a ``paper.py`` module takes from it, each in ``text``. A ``table`` is
    quoted whole (a row a line, cells separated by ``|``, header first); ``column`` is the header
    cell a claim shows."""

    text: str
    where: str
    values: tuple[float, ...] = ()
    table: bool = False
    column: str = ""

    def __post_init__(self) -> None:
        if not self.text.strip() or not self.where.strip():
            raise ValueError("a quotation needs its text and where it stands in the source")
        if self.column and not self.table:
            raise ValueError(f"column {self.column!r} given for a quotation that is not a table")
        if self.column and self.column not in self.cells()[0]:
            raise ValueError(f"column {self.column!r} is not in the table's header {self.cells()[0]}")

    def cells(self) -> list[list[str]]:
        """The quoted table's rows, each a list of its cells (the header first)."""
        return [[c.strip() for c in line.split("|")] for line in self.text.strip().splitlines()]

    def of_column(self, column: str) -> Quoted:
        """This quoted table, showing ``column``."""
        if not self.table:
            raise ValueError(f"{self.text[:40]!r}... is not a quoted table; it has no column {column!r}")
        return Quoted(self.text, self.where, self.values, table=True, column=column)

    def display(self) -> str:
        if self.column:
            header, *rows = self.cells()
            at = header.index(self.column)
            return f"“{self.column}: {', '.join(row[at] for row in rows)}” ({self.where})"
        if self.table:
            return f"“{'; '.join(' | '.join(row) for row in self.cells())}” ({self.where})"
        return f"“{self.text}” ({self.where})"


@dataclass(frozen=True)
class Derived:
    """A value the source does not print, derived by us: ``how`` (``"our average of Table I over its
    three init modes"``), and ``basis``, the source's words it reads, if any."""

    value: str
    how: str
    basis: tuple[Quoted, ...] = ()

    def __post_init__(self) -> None:
        if not self.value.strip() or not self.how.strip():
            raise ValueError("a derived value needs the value and how it was derived")

    def display(self) -> str:
        text = f"{self.value}{DERIVED_MARK}{self.how}]"
        if self.basis:
            text += "; the source: " + "; ".join(q.display() for q in self.basis)
        return text


#: A claim's source value: printed at the claim's location, one or more excerpts, or ours.
SourceValue = str | Quoted | tuple[Quoted, ...] | Derived


def paper_kind(value: SourceValue) -> str:
    """``printed``, ``quoted`` or ``derived`` (:data:`PAPER_KINDS`)."""
    if isinstance(value, Quoted) or (isinstance(value, tuple) and value and all(isinstance(q, Quoted) for q in value)):
        return "quoted"
    if isinstance(value, Derived):
        return "derived"
    if isinstance(value, str):
        return "printed"
    raise TypeError(f"a source's value is a str, Quoted or Derived, got {type(value).__name__}")


def paper_display(value: SourceValue) -> str:
    """The display string of a source's value (a derived value says that it is ours)."""
    if isinstance(value, tuple):
        return "; ".join(q.display() for q in value)
    return value if isinstance(value, str) else value.display()


def paper_detail(value: SourceValue) -> str:
    """Where a quotation stands, or how a derived value was derived (empty for a plain string)."""
    if isinstance(value, Quoted):
        return value.where
    if isinstance(value, tuple):
        return "; ".join(q.where for q in value)
    return value.how if isinstance(value, Derived) else ""

"""Every arXiv identifier the book cites (``arXiv NNNN.NNNNN`` in a page, a book file or a
docstring) is an entry of ``book/references.bib``, next to its first author's name or the name
its title gives the method (λ-GELU, SAU), and any month
written beside it is the one the identifier encodes (an arXiv identifier starts with its year and
month: 2010.09931 is October 2020). SmeLU was once cited by its authors' later paper's identifier
and date in the very section that argues priority; this is the check that catches it."""

from __future__ import annotations

import calendar
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CITED = re.compile(r"arXiv (\d{2})(\d{2})\.\d{4,5}")  # our citations; a paper's own "arXiv:" quotes are not
MONTH_AFTER = re.compile(r"\W{0,3}(" + "|".join(calendar.month_name[1:]) + r") (\d{4})")
ENTRY = re.compile(r"@\w+\{(\w+),(.*?)\n\}", re.S)


def _bibliography() -> dict[str, dict[str, str]]:
    """eprint → the entry's fields (author, year, month), from the book's bib file."""
    entries = {}
    for key, body in ENTRY.findall((ROOT / "book" / "references.bib").read_text(encoding="utf-8")):
        fields = dict(re.findall(r"(\w+)\s*=\s*\{(.*?)\},?\n", body + "\n"))
        if "eprint" in fields:
            entries[fields["eprint"]] = {"key": key, **fields}
    return entries


def _names(entry: dict[str, str]) -> tuple[str, str]:
    """The first author's surname (LaTeX accents undone: P{\\'e}rez → Pérez) and the first word of
    the title (a method's name: {λ-GELU}: ..., {SAU}: ...)."""
    accents = {"\\'e": "é", "\\'a": "á", "\\'i": "í", "\\'o": "ó", '\\"o': "ö", '\\"u': "ü"}
    surname = entry["author"].split(",")[0].strip()
    for latex, letter in accents.items():
        surname = surname.replace("{" + latex + "}", letter)
    return surname, entry.get("title", "").split()[0].strip("{}:")


def _texts() -> list[tuple[str, str]]:
    import nbformat  # at use: its import costs every pytest process 3 s

    texts = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
            texts.append((f"{path.name} cell {index}", cell.source))
    for path in sorted([*(ROOT / "book").glob("*.md"), *(ROOT / "helpers").rglob("*.py"), ROOT / "README.md"]):
        texts.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return texts


def _introduced(bib: dict[str, dict[str, str]]) -> dict[str, str]:
    """A method's name → the identifier of the entry whose note says it introduces the method."""
    return {m.group(1): eprint for eprint, e in bib.items() if (m := re.match(r"Introduces (\w+)", e.get("note", "")))}


def citation_problems(where: str, text: str, bib: dict[str, dict[str, str]]) -> list[str]:
    problems = []
    for match in CITED.finditer(text):
        eprint = match.group(0).split()[1]
        entry = bib.get(eprint)
        if entry is None:
            problems.append(f"{where}: arXiv {eprint} is not in book/references.bib")
            continue
        context = text[max(0, match.start() - 200) : match.end() + 200]
        if not any(name in context for name in _names(entry)):
            problems.append(f"{where}: arXiv {eprint} cited away from its author or name {_names(entry)}")
        if month := MONTH_AFTER.match(text, match.end()):
            written = (list(calendar.month_name).index(month.group(1)), int(month.group(2)))
            encoded = (int(match.group(2)), 2000 + int(match.group(1)))
            if written != encoded:
                problems.append(f"{where}: arXiv {eprint} dated {month.group(0).strip(' ,(')}")
        before = text[max(0, match.start() - 80) : match.start()].rsplit("arXiv", 1)[-1]
        for method, source in _introduced(bib).items():
            if method in before and source != eprint:
                problems.append(f"{where}: {method} cited as arXiv {eprint}; its source is arXiv {source}")
    return problems


def test_every_cited_arxiv_identifier_is_in_the_bibliography_with_its_author_and_month():
    bib = _bibliography()
    texts = _texts()
    assert any(CITED.search(text) for _, text in texts), "no citation found: the pattern no longer fits the book"
    problems = [problem for where, text in texts for problem in citation_problems(where, text, bib)]
    assert not problems, "\n".join(problems)


def test_the_check_catches_smelu_cited_by_its_authors_later_paper():
    """The sentence page 93 once printed, in the section that argues SmeLU's priority."""
    bib = _bibliography()
    wrong = "SmeLU was introduced by Shamir & Lin, arXiv 2202.06499, February 2022."
    assert citation_problems("page", wrong, bib) == [
        "page: SmeLU cited as arXiv 2202.06499; its source is arXiv 2010.09931"
    ]
    assert citation_problems("page", "SmeLU (Shamir, Lin & Coviello, arXiv 2010.09931, October 2020)", bib) == []
    assert citation_problems("page", "Shamir et al., arXiv 2010.09931, February 2022", bib) == [
        "page: arXiv 2010.09931 dated February 2022"
    ]
    assert citation_problems("page", "Nobody, arXiv 2111.00001", bib) == [
        "page: arXiv 2111.00001 is not in book/references.bib"
    ]


def test_the_bibliography_dates_each_arxiv_entry_by_its_identifier():
    wrong = []
    for eprint, entry in _bibliography().items():
        year, month = 2000 + int(eprint[:2]), int(eprint[2:4])
        if entry.get("year") and int(entry["year"]) != year:
            wrong.append(f"{entry['key']}: year {entry['year']}, identifier {eprint}")
        if entry.get("month") and entry["month"].strip().lower()[:3] != calendar.month_abbr[month].lower():
            wrong.append(f"{entry['key']}: month {entry['month']}, identifier {eprint}")
    assert not wrong, "\n".join(wrong)

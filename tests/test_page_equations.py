"""Every equation a claim cites is a labelled display of the book, and the claim's section cites it.

A labelled equation in MyST is ``$$ ... $$ (label)`` (or a ``{math}`` block with ``:label:``), a
reference is {eq}`label`, and labels are global to the book, so a page may cite another page's
equation instead of repeating its derivation. Each ``helpers/<method>/paper.py`` maps the equations
its claims cite ("Eq. (3)", "formula of V_λ") to the label of the book's display in
``EQUATION_LABELS``. The pages are read from their markdown cells (``notebooks/*.ipynb``) and from
``book/*.md``; code cells and stored outputs are not part of the text.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

import helpers
from helpers.core.claim import Claim
from helpers.core.runtime import repo_root

ROOT = repo_root()
PAPERS = ROOT.parent / "shared" / "papers"

#: ``$$ ... $$ (label)``: the label on the line of the closing ``$$``.
DOLLAR_LABEL = re.compile(r"\$\$[ \t]*\(([^()\s]+)\)[ \t]*$", re.M)
#: A ``{math}`` directive's ``:label: name`` option.
MATH_LABEL = re.compile(r"^:label:[ \t]*(\S+)[ \t]*$", re.M)
REFERENCE = re.compile(r"\{eq\}`([^`]+)`")
#: A MyST target line ``(name)=``.
TARGET = re.compile(r"^\(([^()\s]+)\)=[ \t]*$")
HEADING = re.compile(r"^(#{1,6})\s")

#: Any mention of an equation in a claim's source or sentence (``Eq. (2)``, ``Eqs.``, ``equation``,
#: ``formula of V_λ``). "Equivalence" and "equal" do not match.
MENTIONS_EQUATION = re.compile(r"\beqs?\.|\bequations?\b|\bformula of\b", re.I)
#: The citations that name one equation, as the keys of ``EQUATION_LABELS`` spell them.
NUMBERED = re.compile(r"\b(?:Eqs?\.|[Ee]quations?)\s*\((\d+)\)")
FORMULA = re.compile(r"\bformula of (\S+)")


def labels_in(text: str) -> list[str]:
    """The equation labels ``text`` defines, in order."""
    return DOLLAR_LABEL.findall(text) + MATH_LABEL.findall(text)


def references_in(text: str) -> list[str]:
    """The labels ``text`` cites with {eq}, in order."""
    return REFERENCE.findall(text)


def page_text(path: Path) -> str:
    """A page's prose: a notebook's markdown cells joined (code and outputs left out), or a markdown file."""
    import nbformat  # at use: its import costs every pytest process 3 s

    if path.suffix == ".ipynb":
        notebook = nbformat.read(path, as_version=4)
        return "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    return path.read_text(encoding="utf-8")


def section(text: str, anchor: str) -> str:
    """The text from the target ``(anchor)=`` up to the next target, or the next heading at the level
    of the anchor's own heading or above (``KeyError`` when the page has no such target)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if TARGET.match(line) and TARGET.match(line).group(1) == anchor]
    if len(starts) != 1:
        raise KeyError(f"target ({anchor})= occurs {len(starts)} times, expected once")
    level = None
    for j, line in enumerate(lines[starts[0] + 1 :], start=starts[0] + 1):
        heading = HEADING.match(line)
        if heading and level is None:
            level = len(heading.group(1))
            continue
        if TARGET.match(line) or (heading and len(heading.group(1)) <= level):
            return "\n".join(lines[starts[0] : j])
    return "\n".join(lines[starts[0] :])


def cited_equations(claim: Claim) -> list[str]:
    """The equations a claim's source and sentence name, spelled as ``EQUATION_LABELS`` keys."""
    text = f"{claim.source}\n{claim.claim}"
    numbered = [f"Eq. ({n})" for n in NUMBERED.findall(text)]
    formulas = [f"formula of {name}" for name in FORMULA.findall(text)]
    return list(dict.fromkeys(numbered + formulas))


def paper_modules() -> list[ModuleType]:
    """Every ``helpers/<method>/paper.py``."""
    found = []
    for info in pkgutil.iter_modules(helpers.__path__):
        if info.ispkg and (Path(helpers.__path__[0]) / info.name / "paper.py").exists():
            found.append(importlib.import_module(f"helpers.{info.name}.paper"))
    return found


PAGES = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.md"))


@functools.cache
def _texts() -> dict[Path, str]:
    """Every page's prose, read when a test first asks (not at collection)."""
    return {path: page_text(path) for path in PAGES}


@functools.cache
def _labels() -> Counter:
    return Counter(label for text in _texts().values() for label in labels_in(text))


MAPPED = [
    (module.__name__, cited, label)
    for module in paper_modules()
    for cited, label in getattr(module, "EQUATION_LABELS", {}).items()
]


def test_the_parsers_find_labels_references_and_sections() -> None:
    text = (
        "(sec-a)=\n## A\n\n$$\nx = 1\n$$ (eq-one)\n\nSee {eq}`eq-one` and {eq}`eq-two`.\n\n### sub\n"
        "inside\n\n(sec-b)=\n## B\n```{math}\n:label: eq-two\ny = 2\n```\n$$ z $$\n"
    )
    assert labels_in(text) == ["eq-one", "eq-two"]
    assert references_in(text) == ["eq-one", "eq-two"]
    assert section(text, "sec-a").endswith("inside\n")
    assert "eq-two" not in labels_in(section(text, "sec-a"))
    assert section(text, "sec-b").startswith("(sec-b)=")
    with pytest.raises(KeyError, match="sec-c"):
        section(text, "sec-c")


def test_equation_labels_are_unique_across_the_book() -> None:
    assert _labels(), "no labelled equation found: the label pattern no longer matches the pages"
    duplicated = {label: n for label, n in _labels().items() if n > 1}
    assert not duplicated, f"labels defined more than once (Sphinx warns, the -W build fails): {duplicated}"


def test_every_eq_reference_resolves_to_one_label() -> None:
    unresolved = [
        f"{path.relative_to(ROOT)}: {{eq}}`{ref}`"
        for path, text in _texts().items()
        for ref in references_in(text)
        if _labels()[ref] != 1
    ]
    assert not unresolved, "references without exactly one label:\n" + "\n".join(unresolved)


@pytest.mark.parametrize(("module", "cited", "label"), MAPPED, ids=[f"{m}:{c}" for m, c, _ in MAPPED])
def test_every_mapped_equation_is_a_labelled_display_of_the_book(module: str, cited: str, label: str) -> None:
    assert _labels()[label] == 1, f"{module}.EQUATION_LABELS[{cited!r}] = {label!r} is defined {_labels()[label]} times"


@pytest.mark.skipif(not PAPERS.is_dir(), reason=f"source texts not at hand ({PAPERS})")
@pytest.mark.parametrize(("module", "cited", "label"), MAPPED, ids=[f"{m}:{c}" for m, c, _ in MAPPED])
def test_every_mapped_equation_number_is_printed_by_the_source(module: str, cited: str, label: str) -> None:
    if not (number := re.fullmatch(r"Eq\. \((\d+)\)", cited)):
        pytest.skip(f"{cited!r} is an unnumbered formula")
    texts = "\n".join(p.read_text(encoding="utf-8") for p in PAPERS.glob("*.txt"))
    # the sources number a display as "\quad (n)$$" or "(n)$$" at its end
    assert re.search(rf"\({number.group(1)}\)\s*\$\$", texts), f"{module}: no display numbered ({number.group(1)})"


@pytest.fixture(scope="module")
def citing_claims(committed_claims) -> list[Claim]:
    """The claims whose source or sentence mentions an equation."""
    return [c for c in committed_claims if MENTIONS_EQUATION.search(f"{c.source}\n{c.claim}")]


def test_some_claims_cite_equations(citing_claims: list[Claim]) -> None:
    assert citing_claims, "no claim mentions an equation: the pattern no longer matches the sources"


def test_every_equation_a_claim_cites_is_labelled_and_cited_in_its_section(citing_claims: list[Claim]) -> None:
    labels_by_source = {
        module.SOURCE: getattr(module, "EQUATION_LABELS", {}) for module in paper_modules() if hasattr(module, "SOURCE")
    }
    problems = []
    for c in citing_claims:
        mapping = next((m for source, m in labels_by_source.items() if c.source.startswith(source)), {})
        if not (cited := cited_equations(c)):
            problems.append(f"{c.key}: mentions an equation without naming which ({c.source!r})")
            continue
        if not c.anchor:
            problems.append(f"{c.key}: cites {cited} but has no anchor to find its section by")
            continue
        page = ROOT / f"{c.notebook}.ipynb"
        try:
            text = section(_texts()[page], c.anchor)
        except KeyError as error:
            problems.append(f"{c.key}: {c.notebook}: {error}")
            continue
        for equation in cited:
            if (label := mapping.get(equation)) is None:
                problems.append(f"{c.key}: cites {equation}, missing from its paper.py's EQUATION_LABELS")
            elif _labels()[label] != 1:
                problems.append(f"{c.key}: {equation} -> {label!r}, defined {_labels()[label]} times in the book")
            elif label not in references_in(text):
                problems.append(f"{c.key}: section ({c.anchor})= of {c.notebook} does not cite {{eq}}`{label}`")
    assert not problems, "\n".join(problems)

"""What the book shows as a source's value is the source's own: excerpts and their numbers.

Every ``paper.py`` module keeps the source's own words that a claim or page shows as ``QUOTES``
(:class:`helpers.core.attribution.Quoted`). The numbers a module takes from an excerpt must occur
in it; where the source texts are at hand (``../shared/papers``, as in CI), every excerpt must occur
in its source. Claims mark values the source does not print as derived.
"""

from __future__ import annotations

import importlib
from decimal import Decimal

import pytest
from quotes import normalise, numbers_in, occurs_in, quote_problems

from helpers import methods
from helpers.core.attribution import Derived, Quoted
from helpers.core.claim import Claim
from helpers.core.runtime import repo_root
from helpers.srelu.dpo_analysis import PAPER_TABLE3, paper_table3
from helpers.srelu.paper import QUOTES as SRELU_QUOTES

#: Each method's source text (under ``../shared/papers``) and the paper module that quotes it.
MODULES = {m.source_text: importlib.import_module(m.paper) for m in methods.METHODS if m.source_text}
PAPERS = repo_root().parent / "shared" / "papers"
gelu_paper = MODULES["gelu-blog.txt"]


def test_every_number_taken_from_an_excerpt_occurs_in_it() -> None:
    problems = [f"{source} {p}" for source, module in MODULES.items() for p in quote_problems(module.QUOTES)]
    assert len(MODULES) == 4 and sum(len(m.QUOTES) for m in MODULES.values()) > 150
    assert not problems, "\n".join(problems)


def test_every_excerpt_occurs_in_its_source_text() -> None:
    if not all((PAPERS / source).is_file() for source in MODULES):
        pytest.skip(f"the source texts are not at {PAPERS}; the excerpts are checked where they are (CI)")
    problems = [
        f"{source} {p}"
        for source, module in MODULES.items()
        for p in quote_problems(module.QUOTES, (PAPERS / source).read_text(encoding="utf-8"))
    ]
    assert not problems, "\n".join(problems)


def test_number_check_catches_a_number_that_is_not_in_the_excerpt() -> None:
    assert Decimal("5e-5") not in numbers_in(gelu_paper.QUOTES["tanh_accuracy"].text)
    assert Decimal("1e-4") in numbers_in(gelu_paper.QUOTES["tanh_error_near_zero"].text)
    assert numbers_in("z > −0.75 and 3–4×") == [Decimal("-0.75"), Decimal(3), Decimal(4)]


def test_a_quoted_table_shows_one_column_and_is_found_where_the_extraction_runs_its_cells_together() -> None:
    table = Quoted("z | Φ(z) | GELU\n−3 | 0.0013 | −0.0040\n0.5 | 0.6915 | 0.3457", "a table", table=True)
    extraction = "Forms\n\nzΦ(z)GELU\n−30.0013−0.0040\n0.50.69150.3457\n"
    assert occurs_in(table, extraction)
    assert not occurs_in(Quoted("z | Φ(z) | GELU\n−3 | 0.0014 | −0.0040", "a table", table=True), extraction)
    assert table.of_column("Φ(z)").display() == "“Φ(z): 0.0013, 0.6915” (a table)"
    assert table.display() == "“z | Φ(z) | GELU; −3 | 0.0013 | −0.0040; 0.5 | 0.6915 | 0.3457” (a table)"
    with pytest.raises(ValueError, match="not in the table's header"):
        table.of_column("ReLU")
    with pytest.raises(ValueError, match="not a quoted table"):
        Quoted("a sentence", "here").of_column("x")


def test_normalise_reads_the_extraction_as_the_excerpt() -> None:
    assert normalise("a novel second-order continuously\ndifferentiable (C²)") == normalise(
        "a novel secondorder continuously differentiable (C2)"
    )
    assert normalise("we use  $\\delta=0.001$  for all") == normalise("we use δ=0.001 for all")
    assert normalise("four decimal places") not in normalise("to five decimal places")


def _claim(paper_value) -> Claim:
    return Claim(
        claim="c",
        source="s, here",
        paper_value=paper_value,
        our_value="1",
        profile="theory",
        scale="",
        verdict="confirmed",
        notebook="notebooks/x",
        key="attribution-claim-1",
    )


def test_a_claim_records_whether_its_source_value_is_printed_quoted_or_derived() -> None:
    printed, quoted = _claim("0.13"), _claim(Quoted("Gradient ≈ 0.13", "first figure"))
    derived = _claim(
        Derived(
            "|error| < 5e-5",
            "our reading of 'four decimal places'",
            (Quoted("matches to four decimal places", "section X"),),
        )
    )
    assert (printed.paper_kind, printed.paper_value) == ("printed", "0.13")
    assert (quoted.paper_kind, quoted.paper_detail) == ("quoted", "first figure")
    assert quoted.paper_value == "“Gradient ≈ 0.13” (first figure)"
    assert derived.paper_kind == "derived" and derived.paper_detail == "our reading of 'four decimal places'"
    assert "derived by us" in derived.paper_value and "“matches to four decimal places”" in derived.paper_value
    with pytest.raises(TypeError):
        _claim(0.13)


@pytest.fixture(scope="module")
def claims(committed_claims) -> list[Claim]:
    return committed_claims


def _find(claims: list[Claim], text: str) -> Claim:
    return next(c for c in claims if text in c.claim)


#: The only plain strings a claim may show as its source's value: that the source prints nothing there.
NOTHING_PRINTED = ("", "—", "not stated", "hypothesis of this book (no source measures it)")


def test_every_source_value_is_quoted_or_marked_derived(claims: list[Claim]) -> None:
    plain = [
        f"{c.key}: {c.paper_value!r}"
        for c in claims
        if c.paper_kind not in ("quoted", "derived") and c.paper_value not in NOTHING_PRINTED
    ]
    assert not plain, f"{len(plain)} claims show a plain string as the source's value:\n" + "\n".join(plain)


def test_the_values_the_sources_do_not_print_are_marked_derived(claims: list[Claim]) -> None:
    assert _find(claims, "to four decimal places").paper_kind == "derived"
    assert _find(claims, "MLP/CNN pairs learn larger mean hardness").paper_kind == "derived"
    table2 = [c for c in claims if c.claim.startswith("Table II,") and "annealing reduces" in c.claim]
    assert table2 and all(
        c.paper_kind == "derived" and "Table II prints no drop" in c.paper_detail
        for c in table2
        if "omit it from Table II" not in c.paper_value  # GPT-2: the paper's words on why it is not there
    )
    margins = [c for c in claims if "S-ReLU beats every other activation" in c.claim]
    assert margins and all("our assumption" in c.paper_detail for c in margins)


def test_the_source_words_behind_the_headline_claims_are_quoted(claims: list[Claim]) -> None:
    smooth = _find(claims, "S-ReLU is C²")
    assert smooth.paper_kind == "quoted" and "abstract" in smooth.paper_detail and "Sec. 4.6" in smooth.paper_detail
    picks = _find(claims, "selects the ground-truth activation")
    assert picks.paper_kind == "quoted" and "with the exception of Leaky ReLU" in picks.paper_value
    assert not any("S-ReLU included" in c.claim for c in claims)


def test_the_fig2_label_names_the_stand_in_when_the_sweep_runs_another_pair(claims: list[Claim]) -> None:
    fig2 = [c for c in claims if c.claim.startswith("Fig. 2:")]
    assert fig2
    for c in fig2:
        assert "CIFAR-100" in c.claim, c.claim


def test_the_dpo_pages_table_3_numbers_are_the_excerpts() -> None:
    # dpo_analysis.PAPER_TABLE3 is read out of the excerpts: each row's chosen reward and accuracy are
    # the values paper.py takes from that excerpt, and a row whose excerpt lost a number fails loudly
    rows = {key: q for key, q in SRELU_QUOTES.items() if key.startswith("table3_beta")}
    assert len(rows) == 6 and sum(len(acts) for acts in PAPER_TABLE3.values()) == 6
    for key, quote in rows.items():
        beta, activation = key.removeprefix("table3_beta").split("_")
        cells = PAPER_TABLE3[float(beta)][activation]
        assert (cells["chosen_reward"], cells["preference_accuracy"][0]) == quote.values, key
        assert {*cells["unlabelled"], *cells["preference_accuracy"]} <= {float(n) for n in numbers_in(quote.text)}, key
    lost = {"table3_beta2_gelu": Quoted("GELU   -1.6600=		0.0460	0.5080±0.0022", "Table 3, β = 2, GELU row")}
    with pytest.raises(ValueError, match="expected five numbers"):
        paper_table3(lost)

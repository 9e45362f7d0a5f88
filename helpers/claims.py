"""Every claim of every source document, in report order (the reproducibility report's table).

Pages read their claims from here too, by key (:func:`claim`, :func:`findings_box`), so a page
shows the report's row and never decides a verdict itself.

An app-level tool: :data:`helpers.methods.CLAIM_SOURCES` lists each method's claims function
(GELU primer, λ-GELU, S-ReLU, Flex-Act, then the book's own chapters beyond the papers); the
:class:`~helpers.core.report.Claim`
type, the verdict vocabulary and the table rendering live in :mod:`helpers.core.report`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import pandas as pd

from helpers import methods
from helpers.core.findings import find_claim_by_key, findings_markdown, glue_values, page_claims
from helpers.core.report import Claim
from helpers.methods import CLAIM_SOURCES

__all__ = [
    "CLAIM_SOURCES",
    "collect_claims",
    "report_claims",
    "claim",
    "section_claims",
    "claims_frame",
    "findings_box",
]


def collect_claims() -> list[Claim]:
    """All claims of all source documents and of the book's own chapters, in report order."""
    claims: list[Claim] = []
    for method in methods.CLAIM_SOURCES:
        claims.extend(method.claims())
        if method.audit is not None:
            claims.extend(method.audit())
    return claims


@functools.lru_cache(maxsize=1)
def report_claims() -> tuple[Claim, ...]:
    """:func:`collect_claims`, computed once per process (a page reads several claims)."""
    return tuple(collect_claims())


def claim(key: str) -> Claim:
    """The report's claim with :attr:`~helpers.core.report.Claim.key` ``key`` (``KeyError`` if none)."""
    return find_claim_by_key(report_claims(), key)


def section_claims(page: str, anchor: str | None = None) -> list[Claim]:
    """The report's claims on ``page`` (``notebooks/20_x`` or ``20_x``), in report order; with
    ``anchor``, only those whose section label is ``anchor``. A page's own claims table reads its
    rows here, so it shows exactly what the report shows (``KeyError`` when there are none)."""
    claims = page_claims(report_claims(), page)
    if anchor is not None:
        claims = [c for c in claims if c.anchor == anchor]
    if not claims:
        where = f"page {page!r}" + (f", section {anchor!r}" if anchor else "")
        raise KeyError(f"the report has no claims on {where}")
    return claims


def claims_frame(claims: Sequence[Claim], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``claims`` as a table of their report rows (:meth:`Claim.as_row`), the ``columns`` given."""
    frame = pd.DataFrame([c.as_row() for c in claims])
    return frame if columns is None else frame[list(columns)]


def findings_box(
    page: str,
    keys: Sequence[str] | None = None,
    *,
    name: str = "findings",
    extra: str = "",
    when_empty: str | None = None,
    **options,
) -> None:
    """Glue the body of ``page``'s "What this page finds" box as ``name``: the page's
    claims in the report (``page``: ``notebooks/20_x`` or ``20_x``), the ones listed in ``keys`` in
    that order (or one per verdict without ``keys``); ``options`` go to
    :func:`helpers.core.findings.findings_markdown` (``max_items``, ``strict``, ``summary``...);
    ``extra``: markdown lines the page appends (a finding that is not a claim); ``when_empty``: the
    text to show when the report has no claim on the page yet (without it, that is a ``KeyError``)."""
    from IPython.display import Markdown  # lazy: only pages (run under Jupyter) display markdown

    claims = page_claims(report_claims(), page)
    if not claims and when_empty is None:
        raise KeyError(f"the report has no claims on page {page!r}")
    body = (findings_markdown(claims, keys=keys, **options) + (f"\n{extra}" if extra else "")) if claims else when_empty
    glue_values(**{name: Markdown(body)})

"""Claims the book tests, and the verdict for each.

Every paper module in :mod:`helpers.paper` exposes ``claims() -> list[Claim]``. A claim holds the
paper's value (from the paper module, typed once from the source text) and *our* value, which the
claim's builder computes (sympy, quadrature, or a committed result under ``results/``). The
reproducibility report page renders :func:`collect_claims` as one table; nothing in it is typed.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal

Verdict = Literal["confirmed", "not confirmed", "contradicted", "not run here"]
VERDICTS: tuple[str, ...] = ("confirmed", "not confirmed", "contradicted", "not run here")


@dataclass(frozen=True)
class Claim:
    """One quantitative statement of a source document and what we found.

    ``paper_value`` and ``our_value`` are display strings (numbers formatted by the builder);
    ``verdict`` is decided by the builder with :func:`numeric_verdict` or an explicit rule.
    ``notebook`` is the notebook's docname (e.g. ``notebooks/02_lambda_gelu_theory``), used for
    the link in the report.
    """

    claim: str
    source: str
    paper_value: str
    our_value: str
    profile: str
    scale: str
    verdict: Verdict
    notebook: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    def as_row(self) -> dict[str, str]:
        return asdict(self)


def numeric_verdict(
    paper: float, ours: float, *, rel_tol: float = 0.0, abs_tol: float = 0.0
) -> Verdict:
    """``confirmed`` when ``ours`` matches ``paper`` within the tolerances, else ``contradicted``.

    Use for exact statements (a constant, a closed form evaluated at a point), where a mismatch
    beyond rounding of the printed digits is a contradiction, not a scale effect.
    """
    if not (math.isfinite(paper) and math.isfinite(ours)):
        return "contradicted"
    return "confirmed" if math.isclose(paper, ours, rel_tol=rel_tol, abs_tol=abs_tol) else "contradicted"


def rounds_to(value: float, printed: float, decimals: int) -> bool:
    """True when ``value`` rounded to ``decimals`` places gives the printed number."""
    return round(value, decimals) == round(printed, decimals) or math.isclose(
        round(value, decimals), printed, abs_tol=10 ** (-decimals) / 2
    )


def collect_claims() -> list[Claim]:
    """All claims of all source documents, in report order."""
    import importlib

    claims: list[Claim] = []
    for name in ("gelu_blog", "lambda_gelu", "srelu", "flexact"):
        try:
            module = importlib.import_module(f"helpers.paper.{name}")
        except ModuleNotFoundError as err:  # a paper part not written yet must not hide others
            if err.name != f"helpers.paper.{name}":
                raise
            continue
        claims.extend(module.claims())
    return claims

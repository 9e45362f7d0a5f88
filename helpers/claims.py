"""Every claim of every source document, in report order (the reproducibility report's table).

An app-level tool: :data:`helpers.methods.CLAIM_SOURCES` lists each method's claims function
(GELU primer, λ-GELU, S-ReLU, Flex-Act, then the book's own chapters beyond the papers); the :class:`~helpers.core.report.Claim`
type, the verdict vocabulary and the table rendering live in :mod:`helpers.core.report`.
"""

from __future__ import annotations

from helpers import methods
from helpers.core.report import Claim
from helpers.methods import CLAIM_SOURCES

__all__ = ["CLAIM_SOURCES", "collect_claims"]


def collect_claims() -> list[Claim]:
    """All claims of all source documents and of the book's own chapters, in report order."""
    claims: list[Claim] = []
    for method in methods.CLAIM_SOURCES:
        claims.extend(method.claims())
        if method.audit is not None:
            claims.extend(method.audit())
    return claims

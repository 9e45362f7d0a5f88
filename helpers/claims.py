"""Every claim of every source document, in report order (the reproducibility report's table).

An app-level tool: it imports each method's claims module; the :class:`~helpers.core.report.Claim`
type, the verdict vocabulary and the table rendering live in :mod:`helpers.core.report`.
"""

from __future__ import annotations

from helpers.core.report import Claim
from helpers.flexact import claims as flexact_claims
from helpers.gelu_primer import claims as gelu_primer_claims
from helpers.lambda_gelu import claims as lambda_gelu_claims
from helpers.relu_ization import claims as relu_ization_claims
from helpers.srelu import claims as srelu_claims

__all__ = ["CLAIM_SOURCES", "collect_claims"]

#: The claims modules in report order (GELU primer, λ-GELU, S-ReLU, Flex-Act, then the book's own
#: findings beyond the papers: ReLU-ization, source "This book (beyond the papers)").
CLAIM_SOURCES = (gelu_primer_claims, lambda_gelu_claims, srelu_claims, flexact_claims, relu_ization_claims)


def collect_claims() -> list[Claim]:
    """All claims of all source documents and of the book's own chapters, in report order."""
    claims: list[Claim] = []
    for module in CLAIM_SOURCES:
        claims.extend(module.claims())
    return claims

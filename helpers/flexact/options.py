"""Flex-Act's knobs of a :class:`~helpers.core.runs.TrainConfig` run (:class:`FlexActOptions`).

Where the Flex-Act layer sits is the config's ``penultimate_activation`` (a model site any
activation can take).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from helpers.core import validation as v
from helpers.core.options import MethodOptions


@dataclass(frozen=True)
class FlexActOptions(MethodOptions):
    """``flexact_alpha``: the regulariser's weight α in the loss; ``flexact_lam``: its λ (Eqs. 1-4);
    ``flexact_tau_min``: None keeps the temperature τ at 1, else τ anneals exponentially from 1 to
    ``flexact_tau_min`` over every training step (:mod:`helpers.flexact.hook`)."""

    flexact_alpha: float = 0.0
    flexact_lam: float = 1.0
    flexact_tau_min: float | None = None

    SITES: ClassVar[tuple[str, ...]] = ("flexact",)

    RULES: ClassVar[dict[str, v.Rule]] = {
        "flexact_alpha": v.number(0),
        "flexact_lam": v.number(0, low_open=True),
        "flexact_tau_min": v.number(0, 1, low_open=True, optional=True),  # τ starts at 1
    }
    LABELS: ClassVar[dict[str, str]] = {
        "flexact_alpha": "Flex-Act α",
        "flexact_lam": "Flex-Act λ",
        "flexact_tau_min": "Flex-Act final τ",
    }

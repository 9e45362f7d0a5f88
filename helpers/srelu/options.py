"""S-ReLU's knobs of a :class:`~helpers.core.runs.TrainConfig` run (:class:`SReluOptions`), read by
:mod:`helpers.srelu.training` through ``cfg.option(SReluOptions)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from helpers.core import validation as v
from helpers.core.options import MethodOptions


@dataclass(frozen=True)
class SReluOptions(MethodOptions):
    """``delta_anneal_target``: S-ReLU's δ → 0 twin of Algorithm 1: δ = ``activation_kwargs["delta"]``
    until the config's switch epoch (``anneal_switch``), then 1/δ linear in the epoch to
    1/``delta_anneal_target`` (:class:`helpers.srelu.training.DeltaAnnealing`); None: δ stays."""

    delta_anneal_target: float | None = None

    SITES: ClassVar[tuple[str, ...]] = ("srelu",)

    RULES: ClassVar[dict[str, v.Rule]] = {"delta_anneal_target": v.number(0, low_open=True, optional=True)}

    @property
    def anneals(self) -> bool:
        """Whether the run anneals δ (at the config's ``anneal_switch``)."""
        return self.delta_anneal_target is not None

    def check(self, config: Any) -> None:
        if self.delta_anneal_target is None:
            return
        if config.activation != "srelu" or config.activation_kwargs.get("learnable", False):
            raise ValueError(
                f"delta_anneal_target anneals a fixed S-ReLU δ; activation is "
                f"{config.activation!r} with {config.activation_kwargs}"
            )

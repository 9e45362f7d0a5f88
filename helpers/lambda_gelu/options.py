"""λ-GELU's knobs of a :class:`~helpers.core.runs.TrainConfig` run (:class:`LambdaGeluOptions`).

The class registers itself when defined; :mod:`helpers.lambda_gelu.training` reads it through
``cfg.option(LambdaGeluOptions)``. The annealing's switch epoch is the config's own ``anneal_switch``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from helpers.core import validation as v
from helpers.core.options import MethodOptions
from helpers.lambda_gelu.hardness import INIT_MODES


@dataclass(frozen=True)
class LambdaGeluOptions(MethodOptions):
    """``hardness_lr_mult``: c, the hardness learning rate η_s = c·η_w; ``init_mode``: λ's
    initialisation across depth (:func:`helpers.lambda_gelu.hardness.apply_init_mode`);
    ``anneal_target``: Algorithm 1 towards one λ for every layer; ``anneal_layer_eps``: Algorithm 1
    with one target per layer, the smallest λ whose gate error on that layer's pre-activations
    (recorded during the last learning epoch) is <= this ε (:mod:`helpers.lambda_gelu.layer_targets`).
    """

    hardness_lr_mult: float = 1.0
    init_mode: str | None = None
    anneal_target: float | None = None
    anneal_layer_eps: float | None = None

    SITES: ClassVar[tuple[str, ...]] = ("lambda_gelu",)

    RULES: ClassVar[dict[str, v.Rule]] = {
        "hardness_lr_mult": v.number(0, low_open=True),
        "init_mode": v.choice(INIT_MODES, optional=True),  # a typo fails here, not in a training worker
        "anneal_target": v.number(1, optional=True),
        "anneal_layer_eps": v.number(0, 0.5, low_open=True, high_open=True, optional=True),
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.anneal_layer_eps is not None and self.anneal_target is not None:
            raise ValueError(
                "anneal_target (one λ for every layer) and anneal_layer_eps (a λ per layer) exclude each other; set one"
            )

    @property
    def anneals(self) -> bool:
        """Whether the run anneals λ (one target or one per layer)."""
        return self.anneal_target is not None or self.anneal_layer_eps is not None

    def check(self, config: Any) -> None:
        if self.anneal_layer_eps is not None and math.floor(config.anneal_switch * config.epochs) < 1:
            raise ValueError(
                f"anneal_layer_eps records pre-activations during the last learning epoch, "
                f"but floor(anneal_switch·epochs) = floor({config.anneal_switch}·{config.epochs}) = 0"
            )

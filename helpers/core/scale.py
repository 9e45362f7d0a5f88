"""The scale of a protocol's runs at one profile: size, data, seeds and the recipe values it sets.

A protocol writes ``SCALES[model or pair][profile] -> Scale`` once and builds its configs from it.
``None`` means "the protocol's own value", so a scale states only what it changes; ``note`` says so
in words and becomes each config's ``scale_note`` (part of the cache key).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from helpers.core import validation as v
from helpers.core.provenance import PRECISIONS
from helpers.core.runs import SCHEDULES
from helpers.core.train_config import AUGMENTATIONS


@dataclass(frozen=True, kw_only=True)
class Scale:
    """How one profile runs a protocol's model or pair (keywords only).

    ``seeds``: every arm's; ``arm_seeds``: the secondary arms' subset (``None``: every seed).
    ``activations``: the arms (``None``: the protocol's). ``looks``: how many times the seed count
    was chosen (once, plus each addition after looking at the rows); every row at this scale tests
    at ``0.05/looks`` (:func:`helpers.core.verdicts.judge`).
    """

    model_kwargs: dict[str, Any]
    epochs: int
    seeds: tuple[int, ...]
    note: str = ""
    dataset: str | None = None
    n_train: int | None = None
    n_val: int | None = None
    batch_size: int = 128
    lr: float | None = None
    schedule: str | None = None
    warmup_epochs: int = 0
    warmup_start_lr: float | None = None
    augment: str = "none"
    precision: str = "float32"
    channels_last: bool = False
    activations: tuple[str, ...] | None = None
    arm_seeds: tuple[int, ...] | None = None
    looks: int = 1

    def __post_init__(self) -> None:
        for name, rule in _RULES.items():
            v.check_value("Scale", name, getattr(self, name), rule)
        _check_seeds("seeds", self.seeds)
        if self.arm_seeds is not None:
            _check_seeds("arm_seeds", self.arm_seeds)
            if not set(self.arm_seeds) <= set(self.seeds):
                raise ValueError(f"Scale.arm_seeds {self.arm_seeds} must be a subset of seeds {self.seeds}")
        if self.warmup_epochs and self.warmup_epochs >= self.epochs:
            raise ValueError(f"Scale.warmup_epochs must be below epochs ({self.epochs}), got {self.warmup_epochs}")
        if self.activations is not None and not (
            isinstance(self.activations, tuple)
            and self.activations
            and all(isinstance(a, str) and a for a in self.activations)
        ):
            raise ValueError(f"Scale.activations must be None or a non-empty tuple of names, got {self.activations!r}")


def _check_seeds(name: str, value: Any) -> None:
    if (
        not isinstance(value, tuple)
        or not value
        or len(set(value)) != len(value)
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value)
    ):
        raise ValueError(f"Scale.{name} must be a non-empty tuple of distinct ints >= 0, got {value!r}")


def arm_seeds_of(scale: Scale) -> tuple[int, ...]:
    """The seeds of ``scale``'s secondary arms: ``arm_seeds``, or every seed when it is ``None``."""
    return scale.seeds if scale.arm_seeds is None else scale.arm_seeds


#: The rule of each scalar field (the tuple fields are checked in ``__post_init__``).
_RULES: dict[str, v.Rule] = {
    "model_kwargs": v.mapping(),
    "epochs": v.integer(1),
    "looks": v.integer(1),
    "note": v.text(),
    "dataset": v.text(optional=True, non_empty=True),
    "n_train": v.integer(1, optional=True),
    "n_val": v.integer(1, optional=True),
    "batch_size": v.integer(1),
    "lr": v.number(0, low_open=True, optional=True),
    "schedule": v.choice(SCHEDULES, optional=True),
    "warmup_epochs": v.integer(0),
    "warmup_start_lr": v.number(0, low_open=True, optional=True),
    "augment": v.choice(AUGMENTATIONS),
    "precision": v.choice(PRECISIONS),
    "channels_last": v.boolean(),
}

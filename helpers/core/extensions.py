"""What a method adds to a :class:`~helpers.core.runs.TrainConfig` run: a :class:`RunExtension`
(an init step, the optimiser's parameter groups, training hooks, entries of the result). The
book's extensions are the plain table ``helpers.methods.RUN_EXTENSIONS``; a run uses those whose
:meth:`RunExtension.applies` is true for it, in table order."""

from __future__ import annotations

from typing import Any

from torch import nn

from helpers.core.registry import catalog
from helpers.core.train import TrainHook

#: A run's :class:`~helpers.core.runs.TrainConfig` (named here only: that module imports this one).
TrainConfig = Any

__all__ = [
    "RunExtension",
    "applicable_extensions",
    "param_groups_of",
    "default_param_groups",
]


class RunExtension:
    """The method-specific steps of a :class:`TrainConfig` run; every step is optional. A run uses
    those whose :meth:`applies` is true, in table order."""

    def applies(self, model: nn.Module, cfg: TrainConfig) -> bool:
        """Whether this extension takes part in the run of ``cfg`` on the freshly built ``model``."""
        return True

    def prepare(self, model: nn.Module, cfg: TrainConfig) -> None:
        """Change the freshly built model before the optimiser sees it (e.g. an init mode)."""

    def param_groups(self, model: nn.Module, cfg: TrainConfig) -> list[dict[str, Any]] | None:
        """The optimiser's parameter groups, or None for the default (one group of all weights)."""
        return None

    def hooks(self, model: nn.Module, cfg: TrainConfig, steps_per_epoch: int) -> list[TrainHook]:
        """Training hooks of the run (in order)."""
        return []

    def initial_record(self, model: nn.Module) -> dict[str, Any]:
        """Entries of the result recorded right before training starts."""
        return {}

    def final_record(
        self, model: nn.Module, cfg: TrainConfig, out: dict[str, Any], parts: dict[str, Any]
    ) -> dict[str, Any]:
        """Entries of the result recorded after training (``out``: :func:`fit`'s output, with
        ``best_state``; ``parts``: :func:`build_run`'s, with the validation loader). Evaluate under
        :func:`autocast_context` of ``cfg.precision``, as the run trained."""
        return {}


def applicable_extensions(model: nn.Module, cfg: TrainConfig) -> list[RunExtension]:
    """The extensions of ``helpers.methods.RUN_EXTENSIONS`` that apply to the run of ``cfg`` on ``model``."""
    return [e for e in catalog().RUN_EXTENSIONS if e.applies(model, cfg)]


def param_groups_of(extensions: list[RunExtension], model: nn.Module, cfg: TrainConfig) -> list[dict[str, Any]]:
    """The one applicable extension's parameter groups, or the default; two that both set them
    would silently drop one method's optimiser settings, so that is an error naming both."""
    wanted = [(e, g) for e in extensions if (g := e.param_groups(model, cfg)) is not None]
    if len(wanted) > 1:
        names = ", ".join(type(e).__name__ for e, _ in wanted)
        raise ValueError(
            f"run {cfg.experiment!r} ({cfg.activation}): several run extensions set the optimiser's "
            f"parameter groups ({names}); at most one may, so these methods cannot be combined"
        )
    return wanted[0][1] if wanted else default_param_groups(model, cfg.lr, cfg.weight_decay)


def default_param_groups(model: nn.Module, lr: float, weight_decay: float) -> list[dict[str, Any]]:
    """One group of every parameter (what a run uses when no extension groups them)."""
    return [{"params": list(model.parameters()), "lr": lr, "weight_decay": weight_decay, "name": "weights"}]

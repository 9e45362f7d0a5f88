"""Activation functions of the book and a name -> factory registry.

The methods live in their own modules (:mod:`helpers.lambda_gelu`, :mod:`helpers.srelu`,
:mod:`helpers.flexact`); this module re-exports them under the public names of DESIGN.md and
maps names to module factories, so models, experiments and Flex-Act candidate sets can all say
``get_activation("srelu", delta=0.01)``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from helpers.flexact import FlexAct
from helpers.lambda_gelu import LambdaGELU, lambda_gelu
from helpers.mollify import MollifiedActivation
from helpers.srelu import SReLU, SReLUPaperReference, srelu

__all__ = [
    "lambda_gelu",
    "LambdaGELU",
    "srelu",
    "SReLU",
    "FlexAct",
    "get_activation",
    "register_activation",
    "available_activations",
    "ACTIVATION_TYPES",
]

ActivationFactory = Callable[..., nn.Module]

_REGISTRY: dict[str, ActivationFactory] = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,  # exact (erf) form
    "gelu_tanh": lambda **kw: nn.GELU(approximate="tanh", **kw),
    "elu": nn.ELU,
    "celu": nn.CELU,
    "prelu": nn.PReLU,
    "silu": nn.SiLU,
    "mish": nn.Mish,
    "leaky_relu": nn.LeakyReLU,
    "sigmoid": nn.Sigmoid,
    "tanh": nn.Tanh,
    "identity": nn.Identity,
    "lambda_gelu": LambdaGELU,
    "srelu": SReLU,
    "srelu_paper": SReLUPaperReference,
    "flexact": FlexAct,
}

# Module classes that count as "an activation site" for replace_activations and for tests that
# check no old activation is left behind.
ACTIVATION_TYPES: tuple[type[nn.Module], ...] = (
    nn.ReLU,
    nn.GELU,
    nn.ELU,
    nn.CELU,
    nn.PReLU,
    nn.SiLU,
    nn.Mish,
    nn.LeakyReLU,
    nn.Sigmoid,
    nn.Tanh,
    LambdaGELU,
    SReLU,
    SReLUPaperReference,
    MollifiedActivation,
    FlexAct,
)


def available_activations() -> list[str]:
    """Registered activation names, sorted."""
    return sorted(_REGISTRY)


def register_activation(name: str, factory: ActivationFactory) -> None:
    """Add a new activation under ``name`` (e.g. a mollified activation built in a notebook)."""
    if not isinstance(name, str) or not name:
        raise ValueError("activation name must be a non-empty string")
    if not callable(factory):
        raise TypeError(f"factory for {name!r} must be callable, got {type(factory).__name__}")
    _REGISTRY[name] = factory


def get_activation(name: str, **kwargs: object) -> nn.Module:
    """Build a fresh activation module by registry name, e.g. ``get_activation("srelu", delta=0.01)``.

    Raises ``ValueError`` naming the registered activations for an unknown name, and
    ``TypeError`` with the name when the keyword arguments do not fit its constructor.
    """
    if not isinstance(name, str):
        raise TypeError(f"activation name must be a string, got {type(name).__name__}")
    key = name.lower()
    if key not in _REGISTRY:
        raise ValueError(
            f"unknown activation {name!r}; registered: {', '.join(available_activations())}"
        )
    try:
        module = _REGISTRY[key](**kwargs)
    except TypeError as err:
        raise TypeError(f"bad arguments for activation {name!r}: {err}") from err
    if not isinstance(module, nn.Module):
        raise TypeError(f"factory for {name!r} returned {type(module).__name__}, not nn.Module")
    return module


def activation_factory(name: str, **kwargs: object) -> Callable[[], nn.Module]:
    """A zero-argument factory for :func:`helpers.models.replace_activations` and model builders.

    The name is checked now, so a typo fails at configuration time, not mid-build.
    """
    get_activation(name, **kwargs)  # validate eagerly
    return lambda: get_activation(name, **kwargs)


def apply_activation(x: torch.Tensor, name: str, **kwargs: object) -> torch.Tensor:
    """Functional convenience: ``get_activation(name, **kwargs)(x)``."""
    return get_activation(name, **kwargs)(x)

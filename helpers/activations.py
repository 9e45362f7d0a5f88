"""The activation functions of the book under their public names, and the registry.

The methods live in their packages (:mod:`helpers.lambda_gelu.activation`,
:mod:`helpers.srelu.activation`, :mod:`helpers.srelu.mollify`, :mod:`helpers.flexact.activation`);
the name -> factory registry lives in :mod:`helpers.core.registry`
(``get_activation("srelu", delta=0.01)``). This module only re-exports them (and, by importing
every method's activation module, registers their classes as activation sites).
"""

from __future__ import annotations

import helpers.methods  # noqa: F401  registers the methods' activations by name
from helpers.core import registry as _registry
from helpers.core.registry import (
    ActivationFactory,
    activation_factory,
    activation_types,
    apply_activation,
    available_activations,
    get_activation,
    register_activation,
    register_activation_type,
)
from helpers.flexact.activation import FlexAct
from helpers.lambda_gelu.activation import LambdaGELU, lambda_gelu
from helpers.srelu.activation import SReLU, SReLUPaperReference, srelu
from helpers.srelu.mollify import MollifiedActivation

__all__ = [
    "lambda_gelu",
    "LambdaGELU",
    "srelu",
    "SReLU",
    "SReLUPaperReference",
    "MollifiedActivation",
    "FlexAct",
    "get_activation",
    "register_activation",
    "register_activation_type",
    "available_activations",
    "activation_types",
    "ACTIVATION_TYPES",  # noqa: F822 (computed by the module __getattr__)
    "ActivationFactory",
    "activation_factory",
    "apply_activation",
]


def __getattr__(name: str) -> object:  # computed, so types registered later are included
    if name == "ACTIVATION_TYPES":
        return _registry.activation_types()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

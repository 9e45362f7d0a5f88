"""The activation functions of the book under their public names, and the lookups by name.

The methods live in their packages (:mod:`helpers.lambda_gelu.activation`,
:mod:`helpers.srelu.activation`, :mod:`helpers.srelu.mollify`, :mod:`helpers.flexact.activation`);
every activation is one line of the plain table :data:`helpers.methods.ACTIVATIONS`, looked up by
:mod:`helpers.core.registry` (``get_activation("srelu", delta=0.01)``). This module re-exports them.
"""

from __future__ import annotations

from helpers.core.registry import (
    ActivationFactory,
    activation_factory,
    activation_types,
    apply_activation,
    available_activations,
    get_activation,
    register_activation,
)
from helpers.flexact.activation import FlexAct
from helpers.lambda_gelu.activation import LambdaGELU, lambda_gelu
from helpers.methods import ACTIVATION_TYPES, ACTIVATIONS
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
    "ACTIVATIONS",
    "get_activation",
    "register_activation",
    "available_activations",
    "activation_types",
    "ACTIVATION_TYPES",
    "ActivationFactory",
    "activation_factory",
    "apply_activation",
]

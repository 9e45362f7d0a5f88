"""Activations by name: the torch built-ins' table, and the lookups over the book's full table.

Like timm's ``create_act.py``, an activation is a function, a module and one line in a plain dict:
``helpers.methods.ACTIVATIONS`` (:data:`TORCH_ACTIVATIONS` plus the methods'), with
``ACTIVATION_TYPES`` (the classes that count as activation sites) and ``DISPLAY_NAMES`` beside it.
The core reads those tables through :func:`catalog`; importing a module registers nothing.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from types import ModuleType

import numpy as np
import torch
from torch import nn

from helpers.core.validation import Rule, boolean, canonical_arguments, check_value, choice, integer, number

ActivationFactory = Callable[..., nn.Module]


def _checked(cls: type[nn.Module], **rules: Rule) -> ActivationFactory:
    """``cls`` as a factory that checks its keyword arguments first (torch takes ``ELU(alpha="x")`` or
    ``LeakyReLU(negative_slope=nan)`` and fails, or returns NaN, only in a forward pass)."""

    def factory(**kwargs: object) -> nn.Module:
        for key, value in kwargs.items():
            if key in rules:
                check_value(cls.__name__, key, value, rules[key])
        return cls(**kwargs)

    factory.__name__ = factory.__qualname__ = cls.__name__
    return factory


def _no_arguments(cls: type[nn.Module]) -> ActivationFactory:
    """``cls`` without arguments (``nn.Identity`` would accept and ignore any)."""

    def factory() -> nn.Module:
        return cls()

    factory.__name__ = factory.__qualname__ = cls.__name__
    return factory


# ------------------------------------------------------------ limits at ±∞ of the x·g(x) activations
def _saturation(dtype: torch.dtype) -> float:
    """From this ``|x|`` on, GELU (both forms), SiLU and Mish equal ``relu(x)`` exactly in ``dtype``
    (their gate is 0 or 1 to the last bit), yet the tanh form's ``x³`` still fits float32 (2^40
    cubed is 2^120); float16 computes in float32 but stores only to 65504."""
    return 2.0**10 if dtype == torch.float16 else 2.0**40


def relu_limits(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """``fn(x)`` for an activation ``x·g(x)`` (gate ``g`` from 0 to 1) with the limits torch's kernels
    lose: ``0`` at ``x = −∞`` and ``+∞`` at ``+∞`` (torch: NaN, ``−∞·0``), gradients 0 and 1 there,
    and ``relu(x)`` near the float range's ends (vectorised GELU overflows to ``inf`` from ~1.7e38 on
    some CPUs). On the CPU, inputs below :func:`_saturation` take ``fn(x)`` bit for bit; on a GPU or
    in a compiled graph the guarded form always runs (same values below saturation)."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        got = f"a {x.dtype} tensor" if isinstance(x, torch.Tensor) else f"{type(x).__name__} {x!r:.40}"
        raise TypeError(f"the activation takes a floating-point torch.Tensor, got {got}")
    if x.device.type == "cpu" and not torch.compiler.is_compiling():
        if x.numel() == 0:
            return fn(x)
        if float(x.detach().abs().max()) < _saturation(x.dtype):  # a NaN in x compares False
            return fn(x)
    top = _saturation(x.dtype)
    return torch.where(torch.abs(x) >= top, torch.relu(x), fn(x.clamp(-top, top)))


class GELU(nn.GELU):
    """``nn.GELU`` with its limits at ±∞ (:func:`relu_limits`); the same module otherwise."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_limits(super().forward, x)


class SiLU(nn.SiLU):
    """``nn.SiLU`` with its limits at ±∞ (:func:`relu_limits`)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_limits(super().forward, x)


class Mish(nn.Mish):
    """``nn.Mish`` with its limits at ±∞ (:func:`relu_limits`)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_limits(super().forward, x)


class PReLU(nn.PReLU):
    """``nn.PReLU`` that names a dtype or device mismatch between its slope and the input (torch says
    "Type promoting not supported"). The slope is a parameter, never converted silently."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            got = f"a {x.dtype} tensor" if isinstance(x, torch.Tensor) else f"{type(x).__name__} {x!r:.40}"
            raise TypeError(f"PReLU takes a floating-point torch.Tensor, got {got}")
        w = self.weight
        if x.device != w.device or (x.dtype != w.dtype and not torch.is_autocast_enabled(x.device.type)):
            raise TypeError(
                f"PReLU's slope is {w.dtype} on {w.device} and the input is {x.dtype} on {x.device}: move the "
                f"module to the input's dtype and device first (module.to(x)); the learned slope is not converted "
                "silently"
            )
        channels = x.shape[1] if x.dim() >= 2 else 1
        if w.numel() != 1 and w.numel() != channels:
            raise ValueError(
                f"PReLU has {w.numel()} slopes (num_parameters) and the input has {channels} channels in "
                f"dimension 1 (shape {tuple(x.shape)}): give num_parameters=1, or the channel count of inputs "
                "of at least 2 dimensions"
            )
        return super().forward(x)


#: The torch activations given their limits at ±∞; each extends the torch class it names and
#: nothing else (FX quantisation, which matches torch's classes, swaps them back).
LIMITED_ACTIVATIONS: tuple[type[nn.Module], ...] = (GELU, SiLU, Mish)


def _gelu_tanh(**kwargs: object) -> nn.Module:
    return GELU(approximate="tanh", **kwargs)


_INPLACE = {"inplace": boolean()}
#: A slope or scale that torch's kernels hold as a float32: beyond this, torch fails at the first
#: forward ("cannot be converted to type float without overflow") instead of naming the argument.
_FLOAT32_SCALE = 1e30
#: The torch activations by name (``helpers.methods.ACTIVATIONS`` adds the methods').
TORCH_ACTIVATIONS: dict[str, ActivationFactory] = {
    "relu": _checked(nn.ReLU, **_INPLACE),
    "gelu": _checked(GELU, approximate=choice(("none", "tanh"))),  # exact (erf) form by default
    "gelu_tanh": _gelu_tanh,
    "elu": _checked(nn.ELU, alpha=number(-_FLOAT32_SCALE, _FLOAT32_SCALE), **_INPLACE),
    # x/alpha: 0 gives NaN, and a tiny alpha overflows float32 as surely as a huge one
    "celu": _checked(nn.CELU, alpha=number(1 / _FLOAT32_SCALE, _FLOAT32_SCALE), **_INPLACE),
    "prelu": _checked(PReLU, num_parameters=integer(1), init=number(-_FLOAT32_SCALE, _FLOAT32_SCALE)),
    "silu": _checked(SiLU, **_INPLACE),
    "mish": _checked(Mish, **_INPLACE),
    "leaky_relu": _checked(nn.LeakyReLU, negative_slope=number(-_FLOAT32_SCALE, _FLOAT32_SCALE), **_INPLACE),
    "sigmoid": _no_arguments(nn.Sigmoid),
    "tanh": _no_arguments(nn.Tanh),
    "identity": _no_arguments(nn.Identity),
}

#: The torch module classes that count as activation sites (the methods' classes join them in
#: ``helpers.methods.ACTIVATION_TYPES``).
TORCH_ACTIVATION_TYPES: tuple[type[nn.Module], ...] = (
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
)

#: How tables print a torch activation's name (``helpers.methods.DISPLAY_NAMES`` adds the methods').
TORCH_DISPLAY_NAMES: dict[str, str] = {
    "gelu": "GELU",
    "elu": "ELU",
    "prelu": "PReLU",
    "celu": "CELU",
    "silu": "SiLU",
    "mish": "Mish",
    "relu": "ReLU",
    "leaky_relu": "LeakyReLU",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "identity": "Identity",
}


def catalog() -> ModuleType:
    """``helpers.methods``, the book's plain tables (``ACTIVATIONS``, ``ACTIVATION_TYPES``,
    ``DISPLAY_NAMES``, ``OPTIONS``, ``RUN_EXTENSIONS``, ``CONFIG_CLASSES``), read where they are used.

    The core's one deferred import: the methods import the core, so the core cannot import their
    table at its top (a cycle); it reads it on first use instead. Every process (a pool worker, a
    torchrun rank, a cluster job) reads the same tables this way, with nothing to register first.
    """
    return importlib.import_module("helpers.methods")


def activation_types() -> tuple[type[nn.Module], ...]:
    """The module classes that count as "an activation site" (``helpers.methods.ACTIVATION_TYPES``)."""
    return catalog().ACTIVATION_TYPES


def display_name(name: str) -> str:
    """How tables print activation ``name``; an unknown name is an error listing the known ones."""
    names = catalog().DISPLAY_NAMES
    if name not in names:
        raise KeyError(
            f"no display name for activation {name!r}; known: {', '.join(sorted(names))} (the table "
            "helpers.methods.DISPLAY_NAMES)"
        )
    return names[name]


def display_names() -> dict[str, str]:
    """Every display name, by activation name."""
    return dict(catalog().DISPLAY_NAMES)


def available_activations() -> list[str]:
    """The activation names of ``helpers.methods.ACTIVATIONS``, sorted."""
    return sorted(catalog().ACTIVATIONS)


#: An activation name: lowercase, as :func:`get_activation` looks names up (``"MyAct"`` would be unreachable).
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def register_activation(name: str, factory: ActivationFactory, *, replace: bool = False) -> None:
    """Add a reader's own activation to ``helpers.methods.ACTIVATIONS`` under ``name``
    (``[a-z][a-z0-9_]*``), an explicit call (the book's own are lines of that table); a taken
    name is an error unless ``replace=True`` (the same factory again is a no-op)."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ValueError(
            f"activation name must be a lowercase identifier (a-z first, then a-z, 0-9, '_'), got {name!r}"
            + (f"; use {name.lower()!r}" if isinstance(name, str) and _NAME.fullmatch(name.lower()) else "")
        )
    if not callable(factory):
        raise TypeError(f"factory for {name!r} must be callable, got {type(factory).__name__}")
    if not isinstance(replace, bool):
        raise TypeError(f"replace must be True or False, got {replace!r}")
    table = catalog().ACTIVATIONS
    if name in table and table[name] is not factory and not replace:
        raise ValueError(
            f"activation {name!r} is already registered ({table[name]!r}); pass replace=True to replace it"
        )
    table[name] = factory


def get_activation(name: str, **kwargs: object) -> nn.Module:
    """A fresh activation module by name, e.g. ``get_activation("srelu", delta=0.01)``."""
    if not isinstance(name, str):
        raise TypeError(f"activation name must be a string, got {type(name).__name__}")
    table = catalog().ACTIVATIONS
    key = name.lower()
    if key not in table:
        raise ValueError(
            f"unknown activation {name!r}; known: {', '.join(sorted(table))} (the table helpers.methods.ACTIVATIONS)"
        )
    factory = table[key]
    try:
        module = factory(**kwargs)
    except TypeError as err:
        if isinstance(err, ValueError):  # a value the constructor's table refused: it names the argument
            raise
        raise TypeError(f"bad arguments for activation {name!r}: {err}") from err
    if not isinstance(module, nn.Module):
        raise TypeError(f"factory for {name!r} returned {type(module).__name__}, not nn.Module")
    return module


def activation_factory(name: str, **kwargs: object) -> Callable[[], nn.Module]:
    """A zero-argument factory for model builders; the name is checked now, not mid-build."""
    get_activation(name, **kwargs)  # validate eagerly
    return lambda: get_activation(name, **kwargs)


def _plain(value: object) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is None or type(value) in (bool, int, float, str)


def canonical_kwargs(owner: str, name: str, kwargs: Mapping[str, object]) -> dict[str, object]:
    """``kwargs`` of activation ``name`` as a run's key spells them (one activation, one key):
    defaults left out, except a class's ``KEYED_DEFAULTS`` (λ-GELU's ``t``), always spelled out, as
    the committed runs are. The activation must build under its exact registered name, without
    ``inplace`` (memory use, not the run); ``owner`` names the field."""
    if "inplace" in kwargs:
        raise ValueError(f"{owner} {name!r}: leave inplace out; it changes memory use, not the run")
    # a NumPy scalar is the Python number of the same value (keyed so already)
    kwargs = {k: v.item() if isinstance(v, np.generic) else v for k, v in kwargs.items()}
    for key, value in kwargs.items():
        if not _plain(value):  # a tensor or an object would build, then fail as the run's key is written
            raise ValueError(
                f"{owner} {name!r}: {key}={value!r:.60} is not a plain value (a number, string, bool, None or a list "
                "of them); a run's key stores its arguments as JSON"
            )
    table = catalog().ACTIVATIONS
    if name not in table and isinstance(name, str) and name.lower() in table:
        raise ValueError(f"{owner} {name!r} is not a registered name; use {name.lower()!r}")
    if name == "gelu" and kwargs.get("approximate") == "tanh":  # one module, two names: one key
        raise ValueError(f"{owner} 'gelu' with approximate='tanh' is registered as 'gelu_tanh'; use that name")
    try:
        get_activation(name, **kwargs)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{owner} {name!r} with {dict(kwargs)}: {err}") from None
    return canonical_arguments(type(get_activation(name, **kwargs)), kwargs)


def apply_activation(x: torch.Tensor, name: str, **kwargs: object) -> torch.Tensor:
    """Functional convenience: ``get_activation(name, **kwargs)(x)``."""
    return get_activation(name, **kwargs)(x)

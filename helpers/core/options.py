"""Method options: the knobs a method adds to a run config, as one typed object per method.

A method defines a frozen :class:`MethodOptions` subclass (fields, rules, a
:meth:`MethodOptions.check` hook for rules involving the config), one line of the plain table
``helpers.methods.OPTIONS`` (read through :func:`helpers.core.registry.catalog`; its order is the
stored order). A run config carries at most one instance per class (absent: defaults).
Cache keys and stored configs are flat (:func:`flat_options`, inverted by :func:`split_options`), so
they do not depend on how knobs are grouped; hence no two classes may share a field name.

The key of a run (:func:`config_hash`) is a stable hash of its config as that flat JSON, fields at
their default dropped (so a new field whose default keeps the old behaviour keeps every key), and
:data:`CODE_VERSION`; its result is stored under that key (:func:`result_path`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from helpers.core import validation as v
from helpers.core.registry import catalog
from helpers.core.runtime import results_root


@dataclasses.dataclass(frozen=True)
class MethodOptions:
    """Base of a method's options (a frozen dataclass, every field with a default). ``RULES``: a
    :class:`helpers.core.validation.Rule` per field; ``LABELS``: setup-table row labels; ``SITES``:
    the activations that read them."""

    RULES: ClassVar[Mapping[str, v.Rule]] = {}
    LABELS: ClassVar[Mapping[str, str]] = {}
    #: The activations (registry names) whose sites read these options; a run with none of them
    #: (as ``activation`` or ``penultimate_activation``) is refused. Empty: any run may carry them.
    SITES: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        v.check_fields(self, self.RULES)

    def check(self, config: Any) -> None:
        """Rules that involve the run config carrying these options (raise ``ValueError``)."""

    @property
    def anneals(self) -> bool:
        """Whether these options anneal something at the config's ``anneal_switch`` (the run reads it)."""
        return False


_O = TypeVar("_O", bound=MethodOptions)


def _check_class(cls: Any) -> None:
    if not (isinstance(cls, type) and issubclass(cls, MethodOptions) and cls is not MethodOptions):
        raise TypeError(f"method options must be a MethodOptions subclass, got {cls!r}")
    if not dataclasses.is_dataclass(cls) or not cls.__dataclass_params__.frozen:
        raise TypeError(f"{cls.__name__} must be a frozen dataclass")
    missing = [
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise TypeError(f"every field of {cls.__name__} needs a default (the run without the method), not {missing}")
    unruled = sorted({f.name for f in dataclasses.fields(cls)} ^ set(cls.RULES))
    if unruled:
        raise TypeError(f"{cls.__name__}.RULES must list a rule for each field and no other name; differs on {unruled}")


def check_options_table(classes: tuple[type[MethodOptions], ...]) -> None:
    """``helpers.methods.OPTIONS`` is sound: frozen dataclasses with a default and a rule per field,
    no two classes of one name, and no field name in two classes (the flat keys would clash)."""
    for i, cls in enumerate(classes):
        _check_class(cls)
        names = {f.name for f in dataclasses.fields(cls)}
        for other in classes[:i]:
            if other.__name__ == cls.__name__:
                raise ValueError(f"two method options classes are named {cls.__name__!r}")
            shared = names & {f.name for f in dataclasses.fields(other)}
            if shared:
                raise ValueError(f"{cls.__name__} and {other.__name__} both have the fields {sorted(shared)}")


def registered_options() -> tuple[type[MethodOptions], ...]:
    """The options classes of ``helpers.methods.OPTIONS``, in table order."""
    return catalog().OPTIONS


def options_field_names() -> tuple[str, ...]:
    """Every options field name of the table (the flat keys they add to a stored config)."""
    return tuple(f.name for cls in registered_options() for f in dataclasses.fields(cls))


def check_sites(options: tuple[MethodOptions, ...], activations: set[str | None]) -> None:
    """Refuse options that none of a run's ``activations`` reads (their class's ``SITES``): the run
    would train as without them, under another key."""
    for option in options:
        sites = type(option).SITES
        if sites and not activations & set(sites):
            used = ", ".join(sorted(a for a in activations if a))
            raise ValueError(
                f"TrainConfig.options {option!r} have no effect: they apply to activation {' or '.join(sites)}, and "
                f"this run's activations are {used}. Leave them out, or train that activation"
            )


def check_options(options: Any, owner: str) -> None:
    """``options`` is a tuple of instances of the table's options classes, at most one per class."""
    if not isinstance(options, tuple):
        raise TypeError(f"{owner}.options must be a tuple of MethodOptions, got {type(options).__name__}")
    seen: set[type] = set()
    for item in options:
        if not isinstance(item, MethodOptions):
            raise TypeError(f"{owner}.options holds {item!r}; expected MethodOptions instances")
        cls = type(item)
        if cls not in registered_options():
            raise ValueError(
                f"{owner}.options holds {cls.__name__}, which is not a line of the table helpers.methods.OPTIONS"
            )
        if cls in seen:
            raise ValueError(f"{owner}.options holds two {cls.__name__}; give at most one per class")
        seen.add(cls)


def canonical_options(options: tuple[MethodOptions, ...]) -> tuple[MethodOptions, ...]:
    """``options`` without default instances, in table order (checked first by
    :func:`check_options`): two configs of the same run compare equal however they were written."""
    order = registered_options()
    return tuple(sorted((o for o in options if not is_default(o)), key=lambda o: order.index(type(o))))


@functools.cache
def _default(cls: type[_O]) -> _O:
    """``cls()``, built and checked once (frozen, so one instance serves every config)."""
    return cls()


def is_default(options: MethodOptions) -> bool:
    """Whether ``options`` is its class's default instance, value and type alike (``1`` is not
    ``1.0`` in a stored config, so such an instance is kept)."""
    return repr(options) == repr(_default(type(options)))


def option_of(options: Iterable[MethodOptions], cls: type[_O]) -> _O:
    """The instance of ``cls`` in ``options``, else ``cls()`` (the run without that method's knobs)."""
    if not (isinstance(cls, type) and issubclass(cls, MethodOptions)):
        raise TypeError(f"expected a MethodOptions subclass, got {cls!r}")
    for item in options:
        if type(item) is cls:
            return item
    return _default(cls)


def flat_options(options: Iterable[MethodOptions]) -> dict[str, Any]:
    """Every table class's fields by name: the carried instance's value, else the default."""
    carried = tuple(options)
    flat: dict[str, Any] = {}
    for cls in registered_options():
        instance = option_of(carried, cls)
        flat.update((f.name, getattr(instance, f.name)) for f in dataclasses.fields(cls))
    return flat


def options_labels() -> dict[str, str]:
    """Every table class's setup-table labels (``LABELS``), by field name."""
    return {name: text for cls in registered_options() for name, text in cls.LABELS.items()}


def flat_defaults() -> dict[str, Any]:
    """Every table class's fields with their default values."""
    return flat_options(())


def split_options(fields: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[MethodOptions, ...]]:
    """``(rest, options)``: the flat option keys of ``fields`` routed into one instance per class
    that has any of them, in table order; ``rest`` is every other key."""
    if not isinstance(fields, Mapping):
        raise TypeError(f"config fields must be a dict of field names to values, got {type(fields).__name__}")
    rest = dict(fields)
    built: list[MethodOptions] = []
    for cls in registered_options():
        mine = {f.name: rest.pop(f.name) for f in dataclasses.fields(cls) if f.name in rest}
        if mine and not is_default(built_one := cls(**mine)):
            built.append(built_one)
    return rest, tuple(built)


# ------------------------------------------------------------------------------- the key of a run
# Bump when a change to training code would change results of an unchanged config.
CODE_VERSION = "1"


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _jsonable(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return value  # json keeps 1.0 vs 1 distinct; both are stable
    return value


#: The config field that holds method options (:mod:`helpers.core.options`): a stored config and
#: its hash see every options field of the table flat, under its own name, in its place.
OPTIONS_FIELD = "options"


def config_dict(config: Any) -> dict:
    """The config as a plain, JSON-able dict (with its class name); its method options flat."""
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError(f"config must be a dataclass instance, got {type(config).__name__}")
    out: dict[str, Any] = {"config_class": type(config).__name__}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if f.name == OPTIONS_FIELD:
            out.update(_jsonable(flat_options(value)))
        else:
            out[f.name] = _jsonable(value)
    return out


def field_defaults(config_cls: type) -> dict[str, Any]:
    """Each field's default value of a config class, JSON-able (fields without one are left out;
    method options as the defaults of the table's fields)."""
    return dict(_field_defaults(config_cls, registered_options()))


@functools.cache
def _field_defaults(config_cls: type, registered: tuple[type, ...]) -> dict[str, Any]:
    """:func:`field_defaults`, cached per class and options table."""
    defaults = {}
    for f in dataclasses.fields(config_cls):
        if f.name == OPTIONS_FIELD:
            defaults.update(_jsonable(flat_defaults()))
        elif f.default is not dataclasses.MISSING:
            defaults[f.name] = _jsonable(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            defaults[f.name] = _jsonable(f.default_factory())
    return defaults


def hash_payload(config: Any) -> dict:
    """What the hash sees: the config without fields left at their default value."""
    full = config_dict(config)
    defaults = field_defaults(type(config))
    return {k: v for k, v in full.items() if k not in defaults or defaults[k] != v}


def config_hash(config: Any) -> str:
    """Stable 16-hex-digit hash of the config's non-default fields and the code version."""
    payload = json.dumps({"code_version": CODE_VERSION, **hash_payload(config)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def result_path(config: Any, folder: Path | None = None) -> Path:
    """``<results root>/<experiment>/<hash>.json`` for this config (the root of ``folder`` when given)."""
    for name in ("experiment", "profile"):
        if not hasattr(config, name):
            raise TypeError(f"config {type(config).__name__} needs a {name!r} field")
    return results_root(config.profile, folder) / config.experiment / f"{config_hash(config)}.json"

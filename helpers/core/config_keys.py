"""The key of a run: a stable hash of its config's non-default fields and the code version.

A stored result's file name is this hash: the config as plain JSON, method options flat, fields at
their default dropped (so a new field whose default keeps the old behaviour keeps every key)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from typing import Any

from helpers.core.options import flat_defaults, flat_options, registered_options

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
#: its hash see every registered options field flat, under its own name, in its place.
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
    method options as their registered fields' defaults)."""
    return dict(_field_defaults(config_cls, registered_options()))


@functools.cache
def _field_defaults(config_cls: type, registered: tuple[type, ...]) -> dict[str, Any]:
    """:func:`field_defaults`, cached per class and set of registered options."""
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

"""Table-driven checks of config fields: one :class:`Rule` per field, one :func:`check_fields`.

Every run-config class (``TrainConfig``, ``FlexActSyntheticConfig``, ``DPOConfig``,
``ReluizationConfig``) lists a rule for each of its fields; :func:`check_fields` checks them all
and refuses a table that misses a field, so a new field cannot go unchecked. The rules never
convert a value: a config's cache key is built from the values as given, and changing them here
would change committed keys.

What the rules refuse, for every field of a kind:

* numbers: a ``bool`` (``epochs=True`` is not 1), a string (``lr="0.1"``), NaN and ±inf, and
  values outside the field's range;
* integers: the above, and a float (``epochs=2.0``);
* names that become paths (``experiment`` is a results sub-folder): empty names, ``/``, ``\\``,
  ``..``, a leading ``.``, control characters;
* choices: anything not listed.

Cross-field rules (``min_lr <= lr``...) stay in each class's ``__post_init__``.
A leaf of the core: imports nothing from ``helpers``.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Rule",
    "integer",
    "number",
    "boolean",
    "text",
    "choice",
    "path_name",
    "mapping",
    "number_tuple",
    "choice_tuple",
    "check_fields",
    "check_value",
    "describe",
]

#: A name that becomes a folder: letters, digits, ``_``, ``-``, ``.``, ``+``, ``=``; no leading dot.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_+=\-][A-Za-z0-9_.+=\-]*")


@dataclass(frozen=True)
class Rule:
    """What one field accepts.

    ``kind``: ``int``, ``number``, ``bool``, ``str``, ``name`` (a path component), ``choice``,
    ``dict`` (str keys; numbers inside must be finite), ``numbers`` (a non-empty tuple or list
    of numbers, each in range) or ``choices`` (a non-empty tuple or list of ``choices``). ``low``/``high``: the range
    of numbers (``None``: unbounded),
    ``low_open``/``high_open``: whether the bound itself is excluded. ``optional``: ``None``
    is accepted.
    """

    kind: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    optional: bool = False
    choices: tuple[Any, ...] = ()
    non_empty: bool = False


def integer(low: int | None = None, high: int | None = None, *, optional: bool = False) -> Rule:
    """An ``int`` (not a bool, not a float) in ``[low, high]``."""
    return Rule("int", low, high, optional=optional)


def number(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    optional: bool = False,
) -> Rule:
    """A finite ``int`` or ``float`` (not a bool, not a string) in the given range."""
    return Rule("number", low, high, low_open, high_open, optional)


def boolean() -> Rule:
    """``True`` or ``False`` (not 0/1, not a string)."""
    return Rule("bool")


def text(*, optional: bool = False, non_empty: bool = False) -> Rule:
    """A ``str``."""
    return Rule("str", optional=optional, non_empty=non_empty)


def choice(options: Sequence[Any], *, optional: bool = False) -> Rule:
    """One of ``options`` (compared with ``==``, and by type, so ``True`` is not ``1``)."""
    return Rule("choice", optional=optional, choices=tuple(options))


def path_name() -> Rule:
    """A name used as one path component (a results sub-folder)."""
    return Rule("name")


def mapping() -> Rule:
    """A ``dict`` with ``str`` keys; numbers anywhere inside must be finite."""
    return Rule("dict")


def number_tuple(
    low: float | None = None, high: float | None = None, *, low_open: bool = False, high_open: bool = False
) -> Rule:
    """A non-empty tuple or list of numbers, each finite and in the given range."""
    return Rule("numbers", low, high, low_open, high_open)


def choice_tuple(options: Sequence[str]) -> Rule:
    """A non-empty tuple or list whose items are each one of ``options``."""
    return Rule("choices", choices=tuple(options))


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def describe(rule: Rule) -> str:
    """What ``rule`` expects, in words (used in the error messages)."""
    if rule.kind in ("number", "int", "numbers"):
        what = {"int": "an int", "number": "a finite number", "numbers": "a non-empty sequence of finite numbers"}[
            rule.kind
        ]
        bounds = []
        if rule.low is not None:
            bounds.append(f"{'>' if rule.low_open else '>='} {rule.low:g}")
        if rule.high is not None:
            bounds.append(f"{'<' if rule.high_open else '<='} {rule.high:g}")
        text_ = what + (" " + " and ".join(bounds) if bounds else "")
    elif rule.kind == "bool":
        text_ = "True or False"
    elif rule.kind == "str":
        text_ = "a non-empty str" if rule.non_empty else "a str"
    elif rule.kind == "name":
        text_ = "a folder name: letters, digits, '_', '-', '.', '+', '=', not empty, not starting with '.', no '/'"
    elif rule.kind == "choice":
        text_ = "one of " + ", ".join(repr(c) for c in rule.choices)
    elif rule.kind == "choices":
        text_ = "a non-empty sequence of " + ", ".join(repr(c) for c in rule.choices)
    elif rule.kind == "dict":
        text_ = "a dict with str keys and finite numbers"
    else:  # pragma: no cover - a rule of an unknown kind is a programming error
        raise ValueError(f"unknown rule kind {rule.kind!r}")
    return text_ + (", or None" if rule.optional else "")


def _in_range(value: float, rule: Rule) -> bool:
    if rule.low is not None and (value <= rule.low if rule.low_open else value < rule.low):
        return False
    if rule.high is not None and (value >= rule.high if rule.high_open else value > rule.high):
        return False
    return True


def _non_finite(value: Any) -> bool:
    """Whether a float anywhere inside ``value`` (dicts, lists, tuples) is NaN or infinite."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(_non_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_non_finite(v) for v in value)
    return False


def _accepts(value: Any, rule: Rule) -> bool:
    if value is None:
        return rule.optional
    kind = rule.kind
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and _in_range(value, rule)
    if kind == "number":
        return _is_number(value) and math.isfinite(value) and _in_range(value, rule)
    if kind == "numbers":
        return (
            isinstance(value, (tuple, list))
            and len(value) > 0
            and all(_is_number(v) and math.isfinite(v) and _in_range(v, rule) for v in value)
        )
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str) and (bool(value.strip()) or not rule.non_empty)
    if kind == "name":
        return isinstance(value, str) and _SAFE_NAME.fullmatch(value) is not None and ".." not in value
    if kind == "choice":
        return any(type(value) is type(c) and value == c for c in rule.choices)
    if kind == "choices":
        return (
            isinstance(value, (tuple, list))
            and len(value) > 0
            and all(any(type(x) is type(c) and x == c for c in rule.choices) for x in value)
        )
    if kind == "dict":
        return isinstance(value, dict) and all(isinstance(k, str) for k in value) and not _non_finite(value)
    raise ValueError(f"unknown rule kind {kind!r}")


def check_value(owner: str, name: str, value: Any, rule: Rule) -> None:
    """Raise a ``ValueError`` naming ``owner.name``, the value and what is expected, unless
    ``value`` satisfies ``rule``."""
    if _accepts(value, rule):
        return
    why = ""
    if isinstance(value, bool) and rule.kind in ("int", "number"):
        why = " (a bool is not a number)"
    elif isinstance(value, str) and rule.kind in ("int", "number", "numbers"):
        why = " (a string is not a number)"
    elif isinstance(value, float) and rule.kind == "int":
        why = " (a float is not an int)"
    elif isinstance(value, float) and not math.isfinite(value):
        why = " (not finite)"
    raise ValueError(f"{owner}.{name} must be {describe(rule)}; got {value!r}{why}")


def check_fields(config: Any, rules: Mapping[str, Rule]) -> None:
    """Check every field of the dataclass instance ``config`` against ``rules``.

    ``rules`` must name exactly the dataclass's fields: a field without a rule (or a rule without
    a field) is a ``TypeError``, so the table cannot fall behind the class.
    """
    owner = type(config).__name__
    names = [f.name for f in dataclasses.fields(config)]
    missing = [n for n in names if n not in rules]
    extra = [n for n in rules if n not in names]
    if missing or extra:
        raise TypeError(
            f"the validation table of {owner} does not match its fields: "
            f"no rule for {missing}, rules for unknown fields {extra}"
        )
    for name in names:
        check_value(owner, name, getattr(config, name), rules[name])

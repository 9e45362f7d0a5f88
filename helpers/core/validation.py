"""Table-driven checks of config fields: one :class:`Rule` per field, one :func:`check_fields`.

Every run-config class (``TrainConfig``, ``FlexActSyntheticConfig``, ``DPOConfig``,
``ReluizationConfig``) lists a rule for each of its fields; :func:`check_fields` checks them all
and refuses a table that misses a field, so a new field cannot go unchecked. The rules never
convert a value: a config's cache key is built from the values as given, and changing them here
would change committed keys. The one exception: a NumPy floating scalar in a number field of a
config (``np.float32(0.1)``) is stored as the Python float of the same value, which is how an
``np.float64`` (a ``float`` subclass) was always keyed.

What the rules refuse, for every field of a kind:

* numbers: a ``bool`` (``epochs=True`` is not 1), a string (``lr="0.1"``), NaN and ±inf, an int
  too large for a float (``10**400``), and values outside the field's range;
* integers: the above, and a float (``epochs=2.0``);
* names that become paths (``experiment`` is a results sub-folder): empty names, ``/``, ``\\``,
  ``..``, a leading ``.``, control characters;
* choices: anything not listed.

Cross-field rules (``min_lr <= lr``...) stay in each class's ``__post_init__``.

Constructors and functions (the activations, the models, the training hooks and schedules) use
the same rules through :func:`checked_arguments`: one table line per argument, checked before the
body runs; the table is kept on the function as ``argument_rules`` so tests can generate bad inputs from it.
A leaf of the core: imports nothing from ``helpers``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import inspect
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "ArgumentParser",
    "positive_int_arg",
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
    "instances",
    "check_fields",
    "check_value",
    "describe",
    "instance_of",
    "integer_tuple",
    "InvalidValue",
    "checked_arguments",
    "argument_rules",
]


class ArgumentParser(argparse.ArgumentParser):
    """The book's command lines: ``argparse`` that refuses a flag given twice (argparse keeps the
    last silently: ``--seeds 0 --seeds 1`` would run seed 1 alone) and an abbreviated flag (a
    prefix that a later flag could make ambiguous). Flags meant to repeat (``append``, ``count``)
    may."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        seen: dict[str, str] = {}
        for token in sys.argv[1:] if args is None else list(args):
            if token == "--":
                break
            action = self._option_string_actions.get(token.split("=", 1)[0]) if token.startswith("-") else None
            if action is None or isinstance(action, (argparse._AppendAction, argparse._CountAction)):
                continue
            if action.dest in seen:
                self.error(f"{token.split('=', 1)[0]} given twice (after {seen[action.dest]}): give it once")
            seen[action.dest] = token.split("=", 1)[0]
        return super().parse_known_args(args, namespace)


def positive_int_arg(flag: str) -> Callable[[str], int]:
    """An argparse ``type`` for ``flag``: a positive integer, else an argparse error naming it."""

    def parse(text: str) -> int:
        # ASCII digits only: int() also reads "1_0" as 10 and other scripts' digits
        value = int(text) if text.isascii() and text.strip().isdigit() else 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive integer, got {text!r}")
        return value

    return parse


class InvalidValue(ValueError, TypeError):
    """A value a rule refuses. Both a ``ValueError`` and a ``TypeError``: a wrong kind of value
    (``True`` for a number) is caught by callers that expect either."""


#: A name that becomes a folder: letters, digits, ``_``, ``-``, ``.``, ``+``, ``=``; no leading dot.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_+=\-][A-Za-z0-9_.+=\-]*")


@dataclass(frozen=True)
class Rule:
    """What one field accepts.

    ``kind``: ``int``, ``number``, ``bool``, ``str``, ``name`` (a path component), ``choice``,
    ``dict`` (str keys; numbers inside must be finite), ``numbers`` (a non-empty tuple or list
    of numbers, each in range), ``ints`` (the same, of ints), ``choices`` (a non-empty tuple or
    list of ``choices``), ``instances`` (a tuple of instances of ``choices[0]``) or ``instance``
    (an instance of one of ``choices``). ``low``/``high``: the range of numbers (``None``:
    unbounded), ``low_open``/``high_open``: whether the bound itself is excluded. ``optional``:
    ``None`` is accepted.
    """

    kind: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    optional: bool = False
    choices: tuple[Any, ...] = ()
    non_empty: bool = False
    #: Other types accepted as they are, because the owner checks them itself (a tensor λ).
    also: tuple[type, ...] = ()
    #: ``int``/``ints``: a technical ceiling (the largest size torch holds), refused but left out
    #: of :func:`describe`, which states the field's meaningful range.
    limit: int | None = None


def integer(
    low: int | None = None,
    high: int | None = None,
    *,
    optional: bool = False,
    also: tuple[type, ...] = (),
    limit: int | None = None,
) -> Rule:
    """An ``int`` (not a bool, not a float) in ``[low, high]`` (or one of the types ``also``), and
    not above ``limit`` (a technical ceiling, see :class:`Rule`)."""
    return Rule("int", low, high, optional=optional, also=also, limit=limit)


def number(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    optional: bool = False,
    also: tuple[type, ...] = (),
) -> Rule:
    """A finite ``int`` or ``float`` (not a bool, not a string) in the given range (or one of the
    types ``also``, checked by the owner)."""
    return Rule("number", low, high, low_open, high_open, optional, also=also)


def boolean() -> Rule:
    """``True`` or ``False`` (not 0/1, not a string)."""
    return Rule("bool")


def text(*, optional: bool = False, non_empty: bool = False) -> Rule:
    """A ``str``."""
    return Rule("str", optional=optional, non_empty=non_empty)


def choice(options: Sequence[Any], *, optional: bool = False) -> Rule:
    """One of ``options`` (compared with ``==``, and by type, so ``True`` is not ``1``)."""
    return Rule("choice", optional=optional, choices=tuple(options))


#: The longest name :func:`path_name` accepts: file systems allow 255 bytes per path component
#: (the names are ASCII), and a longer name would pass here and fail only when the run writes.
MAX_NAME_LENGTH: int = 128


def path_name() -> Rule:
    """A name used as one path component (a results sub-folder)."""
    return Rule("name")


def mapping() -> Rule:
    """A ``dict`` with ``str`` keys; numbers anywhere inside must be finite."""
    return Rule("dict")


def number_tuple(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    optional: bool = False,
    also: tuple[type, ...] = (),
) -> Rule:
    """A non-empty tuple or list of numbers, each finite and in the given range."""
    return Rule("numbers", low, high, low_open, high_open, optional, also=also)


def integer_tuple(low: int | None = None, high: int | None = None, *, limit: int | None = None) -> Rule:
    """A non-empty tuple or list of ints (not bools, not floats), each in ``[low, high]`` and not
    above ``limit``."""
    return Rule("ints", low, high, limit=limit)


def instance_of(*types: type, optional: bool = False) -> Rule:
    """An instance of one of ``types`` (an argument the owner checks further: a tensor, a factory)."""
    if not types:
        raise ValueError("instance_of needs at least one type")
    return Rule("instance", optional=optional, choices=types)


def choice_tuple(options: Sequence[str]) -> Rule:
    """A non-empty tuple or list whose items are each one of ``options``."""
    return Rule("choices", choices=tuple(options))


def instances(cls: type) -> Rule:
    """A tuple (possibly empty) whose items are each an instance of ``cls``."""
    return Rule("instances", choices=(cls,))


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)


def _finite(value: Any) -> bool:
    """Whether the number ``value`` is a finite float: an int too large for a float (``10**400``)
    is not (``math.isfinite`` would raise ``OverflowError`` on it)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _bound(value: float) -> str:
    return str(value) if isinstance(value, int) and abs(value) >= 10**6 else f"{value:g}"


def describe(rule: Rule) -> str:
    """What ``rule`` expects, in words (used in the error messages)."""
    if rule.kind in ("number", "int", "numbers", "ints"):
        what = {
            "int": "an int",
            "number": "a finite number",
            "numbers": "a non-empty sequence of finite numbers",
            "ints": "a non-empty sequence of ints",
        }[rule.kind]
        bounds = []
        if rule.low is not None:
            bounds.append(f"{'>' if rule.low_open else '>='} {_bound(rule.low)}")
        if rule.high is not None:
            bounds.append(f"{'<' if rule.high_open else '<='} {_bound(rule.high)}")
        text_ = what + (" " + " and ".join(bounds) if bounds else "")
    elif rule.kind == "bool":
        text_ = "True or False"
    elif rule.kind == "str":
        text_ = "a non-empty str" if rule.non_empty else "a str"
    elif rule.kind == "name":
        text_ = (
            "a folder name: letters, digits, '_', '-', '.', '+', '=', not empty, not starting with '.', no '/', "
            f"at most {MAX_NAME_LENGTH} characters"
        )
    elif rule.kind == "choice":
        text_ = "one of " + ", ".join(repr(c) for c in rule.choices)
    elif rule.kind == "choices":
        text_ = "a non-empty sequence of " + ", ".join(repr(c) for c in rule.choices)
    elif rule.kind == "dict":
        text_ = "a dict with str keys and finite numbers"
    elif rule.kind == "instances":
        text_ = f"a tuple of {rule.choices[0].__name__} instances"
    elif rule.kind == "instance":
        text_ = " or ".join(_type_name(t) for t in rule.choices)
    else:  # pragma: no cover - a rule of an unknown kind is a programming error
        raise ValueError(f"unknown rule kind {rule.kind!r}")
    if rule.also:
        text_ += ", or " + " or ".join(_type_name(t) for t in rule.also)
    return text_ + (", or None" if rule.optional else "")


def _type_name(kind: type) -> str:
    module = getattr(kind, "__module__", "builtins")
    if module in ("builtins", "collections.abc", "typing"):
        name = kind.__qualname__
    else:
        # torch's public path, not where the class is defined (torch.nn.modules.module)
        public = "torch.nn" if module.startswith("torch.nn") else "torch" if module.startswith("torch") else module
        name = f"{public}.{kind.__qualname__}"
    return f"{'an' if name[0] in 'AEIOUaeiou' else 'a'} {name}"


def _in_range(value: float, rule: Rule) -> bool:
    if rule.limit is not None and value > rule.limit:
        return False
    if rule.low is not None and (value <= rule.low if rule.low_open else value < rule.low):
        return False
    if rule.high is not None and (value >= rule.high if rule.high_open else value > rule.high):
        return False
    return True


def _non_finite(value: Any) -> bool:
    """Whether a float anywhere inside ``value`` (dicts, lists, tuples) is NaN or infinite."""
    if isinstance(value, (float, np.floating)) or (isinstance(value, int) and not isinstance(value, bool)):
        return not _finite(value)
    if isinstance(value, Mapping):
        return any(_non_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_non_finite(v) for v in value)
    return False


def _accepts(value: Any, rule: Rule) -> bool:
    if value is None:
        return rule.optional
    if rule.also and isinstance(value, rule.also):
        return True
    kind = rule.kind
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and _in_range(value, rule)
    if kind == "number":
        return _is_number(value) and _finite(value) and _in_range(value, rule)
    if kind == "numbers":
        return (
            isinstance(value, (tuple, list))
            and len(value) > 0
            and all(_is_number(v) and _finite(v) and _in_range(v, rule) for v in value)
        )
    if kind == "ints":
        return (
            isinstance(value, (tuple, list))
            and len(value) > 0
            and all(isinstance(v, int) and not isinstance(v, bool) and _in_range(v, rule) for v in value)
        )
    if kind == "instance":
        return isinstance(value, rule.choices)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str) and (bool(value.strip()) or not rule.non_empty)
    if kind == "name":
        return (
            isinstance(value, str)
            and _SAFE_NAME.fullmatch(value) is not None
            and ".." not in value
            and len(value) <= MAX_NAME_LENGTH
        )
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
    if kind == "instances":
        return isinstance(value, tuple) and all(isinstance(x, rule.choices[0]) for x in value)
    raise ValueError(f"unknown rule kind {kind!r}")


def _over_limit(value: Any, limit: int) -> bool:
    values = value if isinstance(value, (tuple, list)) else (value,)
    return any(_is_number(v) and v > limit for v in values)


def check_value(owner: str, name: str, value: Any, rule: Rule) -> None:
    """Raise a ``ValueError`` naming ``owner.name``, the value and what is expected, unless
    ``value`` satisfies ``rule``."""
    if _accepts(value, rule):
        return
    why = ""
    if isinstance(value, bool) and rule.kind in ("int", "number"):
        why = " (a bool is not a number)"
    elif isinstance(value, str) and rule.kind in ("int", "number", "numbers", "ints"):
        why = " (a string is not a number)"
    elif isinstance(value, float) and rule.kind == "int":
        why = " (a float is not an int)"
    elif rule.limit is not None and _over_limit(value, rule.limit):
        why = f" (above {rule.limit}, the largest size torch holds)"
    elif _is_number(value) and not _finite(value):
        why = " (not finite)" if isinstance(value, (float, np.floating)) else " (too large for a float)"
    raise InvalidValue(f"{owner}.{name} must be {describe(rule)}; got {value!r}{why}")


def canonical_arguments(cls: type, kwargs: Mapping[str, Any], keyed: Sequence[str] | None = None) -> dict[str, Any]:
    """``kwargs`` of ``cls`` as a run's key spells them, so that one module has one key: an integer
    for a float parameter is that float, and an argument equal to its default is left out, except
    those ``cls`` lists in ``KEYED_DEFAULTS`` (a method's defining parameter, such as λ-GELU's
    ``t``; or ``keyed`` when given), which are always spelled out, their default filled in when
    left out. Both spellings are the ones the committed runs use."""
    params = inspect.signature(cls.__init__).parameters
    keyed = tuple(getattr(cls, "KEYED_DEFAULTS", ()) if keyed is None else keyed)
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        default = params[key].default if key in params else inspect.Parameter.empty
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # t=1 and t=1.0 are one activation
        # a None default that stands for a value (``IMPLIED_DEFAULTS``) is that value
        default = getattr(cls, "IMPLIED_DEFAULTS", {}).get(key, default) if default is None else default
        is_default = (
            default is not inspect.Parameter.empty
            and type(value) in (bool, int, float, str, type(None))
            and isinstance(value, bool) == isinstance(default, bool)
            and value == default
        )
        if key in keyed or not is_default:
            out[key] = value
    for key in keyed:
        if key not in out:
            out[key] = params[key].default
    return out


def check_fields(config: Any, rules: Mapping[str, Rule]) -> None:
    """Check every field of the dataclass instance ``config`` against ``rules``.

    ``rules`` must name exactly the dataclass's fields: a field without a rule (or a rule without
    a field) is a ``TypeError``, so the table cannot fall behind the class. A number is stored in
    one spelling (a NumPy float or an integer as a float, -0.0 as 0.0), so that one run has one key.
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
        value = getattr(config, name)
        check_value(owner, name, value, rules[name])
        if rules[name].kind == "number" and isinstance(value, np.floating):
            # a NumPy scalar is stored (and keyed) as the Python float of the same value
            object.__setattr__(config, name, float(value))
        elif rules[name].kind == "number" and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            # lr=1 and lr=1.0 are one run, so one key: a number field stores the float
            object.__setattr__(config, name, float(value))
        if rules[name].kind == "number" and isinstance(getattr(config, name), float) and getattr(config, name) == 0:
            object.__setattr__(config, name, 0.0)  # -0.0 and 0.0: one run, one key


_F = TypeVar("_F", bound=Callable[..., Any])


def checked_arguments(rules: Mapping[str, Rule]) -> Callable[[_F], _F]:
    """Decorate a function or an ``__init__`` so that its arguments are checked against
    ``rules`` (one per parameter) before its body runs.

    The table must name exactly the parameters (``self`` and ``*args``/``**kwargs`` aside), and
    every default must satisfy its rule: both are checked when the decorator runs, at import, so
    a table cannot fall behind its signature. The error names the owner (the class of the
    instance being built, or the function), the argument, the value and what is expected. The
    table is kept on the wrapper as ``argument_rules``.

    Applied to a class (above ``@dataclass``, whose ``__init__`` is generated), it checks that
    class's ``__init__`` and returns the class.
    """
    table = MappingProxyType(dict(rules))

    def decorate(fn: _F) -> _F:
        if isinstance(fn, type):
            fn.__init__ = decorate(fn.__init__)  # type: ignore[misc]
            return fn
        signature = inspect.signature(fn)
        owner = fn.__qualname__.removesuffix(".__init__")
        method = fn.__name__ == "__init__"
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        params = [n for n, p in signature.parameters.items() if n != "self" and p.kind not in variadic]
        missing = [n for n in params if n not in table]
        extra = [n for n in table if n not in params]
        if missing or extra:
            raise TypeError(
                f"the argument table of {owner} does not match its signature: "
                f"no rule for {missing}, rules for unknown arguments {extra}"
            )
        for name in params:
            default = signature.parameters[name].default
            if default is not inspect.Parameter.empty:
                check_value(owner, name, default, table[name])

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = signature.bind(*args, **kwargs).arguments  # the usual TypeError for a wrong call
            who = type(args[0]).__name__ if method else owner  # a subclass is named as itself
            for name in params:
                if name in given:  # the defaults were checked at import
                    check_value(who, name, given[name], table[name])
            return fn(*args, **kwargs)

        wrapper.argument_rules = table  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def argument_rules(fn: Callable[..., Any]) -> Mapping[str, Rule] | None:
    """The table :func:`checked_arguments` put on ``fn`` (a class: its ``__init__``), or None."""
    target = fn.__init__ if isinstance(fn, type) else fn
    return getattr(target, "argument_rules", None)

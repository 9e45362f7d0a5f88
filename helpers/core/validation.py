"""Table-driven checks of values: one :class:`Rule` per config field or function argument.

Every run-config class lists a rule for each field and :func:`check_fields` refuses a table that
misses one; cross-field rules stay in ``__post_init__``. Functions use the same rules through
:func:`checked_arguments`, which keeps the table as ``argument_rules`` so tests can generate bad inputs.

A number rule refuses a ``bool`` (``epochs=True`` is not 1), a string, NaN, ±inf, an int too large
for a float, a value out of range; a folder name, ``/``, ``..``, a leading ``.``. Rules never convert
a value, except that a config's number field stores the Python float (one run, one key).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np


class InvalidValue(ValueError, TypeError):
    """A value a rule refuses; both a ``ValueError`` and a ``TypeError`` (for callers expecting either)."""


#: A name that becomes a folder: letters, digits, ``_``, ``-``, ``.``, ``+``, ``=``; no leading dot.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_+=\-][A-Za-z0-9_.+=\-]*")


@dataclass(frozen=True)
class Rule:
    """What one field accepts: a ``kind`` of :data:`_KINDS`; ``low``/``high`` (``None``: unbounded),
    ``low_open``/``high_open`` (bound excluded); ``optional``: ``None`` too."""

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
    #: ``int``/``ints``: a technical ceiling (the largest size torch holds), refused but not described.
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:  # a rule of an unknown kind is a programming error
            raise ValueError(f"unknown rule kind {self.kind!r}")


def integer(low: int | None = None, high: int | None = None, **options: Any) -> Rule:
    """An ``int`` (not a bool, not a float) in ``[low, high]``; ``options``: the :class:`Rule`
    fields ``optional``, ``also`` (other types, checked by the owner) and ``limit``."""
    return Rule("int", low, high, **options)


def number(low: float | None = None, high: float | None = None, **options: Any) -> Rule:
    """A finite ``int`` or ``float`` (not a bool, not a string) in the range; ``options``: the
    :class:`Rule` fields ``low_open``, ``high_open``, ``optional`` and ``also``."""
    return Rule("number", low, high, **options)


def boolean() -> Rule:
    """``True`` or ``False`` (not 0/1, not a string)."""
    return Rule("bool")


def text(*, optional: bool = False, non_empty: bool = False) -> Rule:
    """A ``str``."""
    return Rule("str", optional=optional, non_empty=non_empty)


def choice(options: Sequence[Any], *, optional: bool = False) -> Rule:
    """One of ``options`` (compared with ``==``, and by type, so ``True`` is not ``1``)."""
    return Rule("choice", optional=optional, choices=tuple(options))


#: The longest name :func:`path_name` accepts: 255 bytes per path component (ASCII names).
MAX_NAME_LENGTH: int = 128


def path_name() -> Rule:
    """A name used as one path component (a results sub-folder)."""
    return Rule("name")


def mapping() -> Rule:
    """A ``dict`` with ``str`` keys; numbers anywhere inside must be finite."""
    return Rule("dict")


def number_tuple(low: float | None = None, high: float | None = None, **options: Any) -> Rule:
    """A non-empty tuple or list of numbers, each as :func:`number` (same arguments) accepts it."""
    return Rule("numbers", low, high, **options)


def integer_tuple(low: int | None = None, high: int | None = None, **options: Any) -> Rule:
    """A non-empty tuple or list of ints, each as :func:`integer` (same arguments) accepts it."""
    return Rule("ints", low, high, **options)


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
    """Whether the number ``value`` is a finite float (not an int too large for one, ``10**400``)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _in_range(value: float, rule: Rule) -> bool:
    return not (
        (rule.limit is not None and value > rule.limit)
        or (rule.low is not None and (value <= rule.low if rule.low_open else value < rule.low))
        or (rule.high is not None and (value >= rule.high if rule.high_open else value > rule.high))
    )


def _non_finite(value: Any) -> bool:
    """Whether a float anywhere inside ``value`` (dicts, lists, tuples) is NaN or infinite."""
    if _is_number(value):
        return not _finite(value)
    if isinstance(value, Mapping):
        return any(_non_finite(v) for v in value.values())
    return isinstance(value, (list, tuple)) and any(_non_finite(v) for v in value)


def _int(value: Any, rule: Rule) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and _in_range(value, rule)


def _number(value: Any, rule: Rule) -> bool:
    return _is_number(value) and _finite(value) and _in_range(value, rule)


def _each(value: Any, accepts: Callable[[Any], bool]) -> bool:
    """A non-empty tuple or list whose every item ``accepts``."""
    return isinstance(value, (tuple, list)) and len(value) > 0 and all(accepts(v) for v in value)


def _listed(value: Any, options: tuple[Any, ...]) -> bool:
    return any(type(value) is type(c) and value == c for c in options)  # by type too: True is not 1


def _name(value: Any, rule: Rule) -> bool:
    return (
        isinstance(value, str)
        and _SAFE_NAME.fullmatch(value) is not None
        and ".." not in value
        and len(value) <= MAX_NAME_LENGTH
    )


#: Each kind of rule: what it accepts (``None`` and the rule's ``also`` types aside), and that in
#: words (a template :func:`describe` fills in; numbers are followed by their range).
_KINDS: dict[str, tuple[Callable[[Any, Rule], bool], str]] = {
    "int": (_int, "an int"),
    "number": (_number, "a finite number"),
    "numbers": (lambda v, r: _each(v, lambda x: _number(x, r)), "a non-empty sequence of finite numbers"),
    "ints": (lambda v, r: _each(v, lambda x: _int(x, r)), "a non-empty sequence of ints"),
    "instance": (lambda v, r: isinstance(v, r.choices), "{types}"),
    "bool": (lambda v, r: isinstance(v, bool), "True or False"),
    "str": (lambda v, r: isinstance(v, str) and (bool(v.strip()) or not r.non_empty), "a {non_empty}str"),
    "name": (
        _name,
        "a folder name: letters, digits, '_', '-', '.', '+', '=', not empty, not starting with '.', no '/', "
        f"at most {MAX_NAME_LENGTH} characters",
    ),
    "choice": (lambda v, r: _listed(v, r.choices), "one of {listed}"),
    "choices": (lambda v, r: _each(v, lambda x: _listed(x, r.choices)), "a non-empty sequence of {listed}"),
    "dict": (
        lambda v, r: isinstance(v, dict) and all(isinstance(k, str) for k in v) and not _non_finite(v),
        "a dict with str keys and finite numbers",
    ),
    "instances": (
        lambda v, r: isinstance(v, tuple) and all(isinstance(x, r.choices[0]) for x in v),
        "a tuple of {cls} instances",
    ),
}


def _bound(value: float) -> str:
    return str(value) if isinstance(value, int) and abs(value) >= 10**6 else f"{value:g}"


def describe(rule: Rule) -> str:
    """What ``rule`` expects, in words (used in the error messages)."""
    fields = {"non_empty": "non-empty " if rule.non_empty else "", "listed": ", ".join(repr(c) for c in rule.choices)}
    if rule.kind in ("instance", "instances"):
        fields.update(types=" or ".join(_type_name(t) for t in rule.choices), cls=rule.choices[0].__name__)
    words = _KINDS[rule.kind][1].format(**fields)
    if rule.kind in ("number", "int", "numbers", "ints"):
        ends = ((rule.low, ">" if rule.low_open else ">="), (rule.high, "<" if rule.high_open else "<="))
        bounds = [f"{op} {_bound(end)}" for end, op in ends if end is not None]
        words += " " + " and ".join(bounds) if bounds else ""
    if rule.also:
        words += ", or " + " or ".join(_type_name(t) for t in rule.also)
    return words + (", or None" if rule.optional else "")


def _type_name(kind: type) -> str:
    module = getattr(kind, "__module__", "builtins")
    if module in ("builtins", "collections.abc", "typing"):
        name = kind.__qualname__
    else:
        # torch's public path, not where the class is defined (torch.nn.modules.module)
        public = "torch.nn" if module.startswith("torch.nn") else "torch" if module.startswith("torch") else module
        name = f"{public}.{kind.__qualname__}"
    return f"{'an' if name[0] in 'AEIOUaeiou' else 'a'} {name}"


def _accepts(value: Any, rule: Rule) -> bool:
    if value is None:
        return rule.optional
    return bool(rule.also and isinstance(value, rule.also)) or _KINDS[rule.kind][0](value, rule)


def check_value(owner: str, name: str, value: Any, rule: Rule) -> None:
    """A ``ValueError`` naming ``owner.name``, the value and what is expected, unless ``value`` fits ``rule``."""
    if _accepts(value, rule):
        return
    why = ""
    if isinstance(value, bool) and rule.kind in ("int", "number"):
        why = " (a bool is not a number)"
    elif isinstance(value, str) and rule.kind in ("int", "number", "numbers", "ints"):
        why = " (a string is not a number)"
    elif isinstance(value, float) and rule.kind == "int":
        why = " (a float is not an int)"
    elif rule.limit is not None and any(
        _is_number(v) and v > rule.limit for v in (value if isinstance(value, (tuple, list)) else (value,))
    ):
        why = f" (above {rule.limit}, the largest size torch holds)"
    elif _is_number(value) and not _finite(value):
        why = " (not finite)" if isinstance(value, (float, np.floating)) else " (too large for a float)"
    raise InvalidValue(f"{owner}.{name} must be {describe(rule)}; got {value!r}{why}")


def canonical_arguments(cls: type, kwargs: Mapping[str, Any], keyed: Sequence[str] | None = None) -> dict[str, Any]:
    """``kwargs`` of ``cls`` as a run's key spells them (one module, one key): an int for a float
    parameter is that float; defaults left out except ``KEYED_DEFAULTS`` (or ``keyed``), always
    spelled out, as the committed runs are."""
    params = inspect.signature(cls.__init__).parameters
    keyed = tuple(getattr(cls, "KEYED_DEFAULTS", ()) if keyed is None else keyed)
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        default = params[key].default if key in params else inspect.Parameter.empty
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # t=1 and t=1.0 are one activation
        # a None default that stands for a value (``IMPLIED_DEFAULTS``) is that value
        default = getattr(cls, "IMPLIED_DEFAULTS", {}).get(key, default) if default is None else default
        plain = type(value) in (bool, int, float, str, type(None)) and isinstance(value, bool) == isinstance(
            default, bool
        )
        if key in keyed or default is inspect.Parameter.empty or not plain or value != default:
            out[key] = value
    return out | {key: params[key].default for key in keyed if key not in out}


def _require_rules(names: Sequence[str], rules: Mapping[str, Rule], problem: str, what: str) -> None:
    """A ``TypeError`` saying ``problem`` unless ``rules`` name exactly ``names``."""
    missing, extra = [n for n in names if n not in rules], [n for n in rules if n not in names]
    if missing or extra:
        raise TypeError(f"{problem}: no rule for {missing}, rules for unknown {what} {extra}")


def check_fields(config: Any, rules: Mapping[str, Rule]) -> None:
    """Check every field of dataclass ``config`` against ``rules``, which must name exactly its fields."""
    owner = type(config).__name__
    names = [f.name for f in dataclasses.fields(config)]
    _require_rules(names, rules, f"the validation table of {owner} does not match its fields", "fields")
    for name in names:
        value = getattr(config, name)
        check_value(owner, name, value, rules[name])
        if rules[name].kind == "number" and _is_number(value):
            # lr=1, lr=1.0, np.float32(1.0): one run, one key, so the Python float (+ 0.0: -0.0 is 0.0)
            object.__setattr__(config, name, float(value) + 0.0)


_F = TypeVar("_F", bound=Callable[..., Any])


def checked_arguments(rules: Mapping[str, Rule]) -> Callable[[_F], _F]:
    """Check the arguments of a function or ``__init__`` against ``rules`` (one per parameter) before
    its body runs, naming the owner. Table and defaults must match the signature (checked at
    import). On a class (above ``@dataclass``) it checks the generated ``__init__``."""
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
        _require_rules(params, table, f"the argument table of {owner} does not match its signature", "arguments")
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

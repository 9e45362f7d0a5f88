"""Every public activation, model, training-hook and schedule constructor (and every activation
function) checks each of its arguments against a table, and the bad inputs here are generated from
those tables.

For each argument the table's rule yields the values it must refuse: ``True`` and ``"1"`` for a
number (a bool is not a number, a string is not a number), NaN and ±inf, a float for an int, a
value outside the range, a wrong type for a flag or a choice. Each must raise a ``ValueError``
or ``TypeError`` whose message names the owner, the argument and the value. A new activation
registered without a table fails :func:`test_every_registered_activation_has_an_argument_table`;
one with a table is covered by the rest without a new line here.

The other constructors are found by walking ``helpers``: every public class with its own
``__init__`` that takes an int or a float must have a table (or a reason in
``UNCHECKED_CLASSES``), and each module lists the dataclasses it checks (their ``__init__`` is
generated) in ``CHECKED_CONSTRUCTORS``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Callable
from types import ModuleType

import pytest
import torch
from torch import nn

import helpers
import helpers.methods
import tools
from helpers.core import models as core_models
from helpers.core.registry import activation_types, get_activation
from helpers.core.runs import TrainConfig
from helpers.core.validation import Rule, argument_rules, checked_arguments, integer, number
from helpers.srelu.mollify import GaussianKernel, MollifierKernel

#: Values for the arguments that have no default, so each constructor can be called with one
#: bad argument and everything else valid (keyed by the parameter name).
REQUIRED = {
    "x": torch.linspace(-1.0, 1.0, 5),
    "lam": 2.0,
    "delta": 0.1,
    "scale": 0.5,
    "f": torch.relu,
    "kernel": GaussianKernel(0.5),
    "in_features": 4,
    "out_features": 2,
    "vocab_size": 50,
    "in_ch": 4,
    "out_ch": 4,
    "stride": 1,
    "act": nn.ReLU,
    "dim": 4,
    "hidden": 8,
    "heads": 2,
    "causal": False,
    "mlp_ratio": 2.0,
    "alpha": 0.3,
    "total_epochs": 4,
    "lambda_target": 10.0,
    "delta_start": 2.0,
    "delta_target": 0.01,
    "eps": 0.01,
    "modules": [nn.ReLU()],
    "n_features": 4,
    "sampler": range(64),
    "batch_size": 32,
    "rank": 0,
    "world_size": 2,
}

#: Where one constructor needs another valid value than :data:`REQUIRED` gives (by owner name).
REQUIRED_BY_OWNER: dict[str, dict[str, object]] = {
    "SyntheticNet": {"act": nn.Tanh()},  # a module, where the models take a factory
}

#: Public classes whose constructor takes an int or a float but has no table, with the reason.
UNCHECKED_CLASSES: dict[str, str] = {}

#: Public activation functions deliberately left without checks, with the reason.
UNCHECKED_FUNCTIONS = {
    "lambda_gelu_reference": "the naive formula that tests and benchmarks/activations.py compare against",
}


def _method_activation_classes() -> list[type]:
    """Every activation class a method defines: the site types and the classes of the activation table."""
    classes = {t for t in activation_types() if t.__module__.startswith("helpers.")}
    classes.update(f for f in helpers.methods.method_activations().values() if isinstance(f, type))
    return sorted(classes, key=lambda c: (c.__module__, c.__name__))


def _kernel_classes() -> list[type]:
    found, todo = [], list(MollifierKernel.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(found, key=lambda c: c.__name__)


ACTIVATION_CLASSES = _method_activation_classes()
MODEL_NAMES = ("MLP", "BasicBlock", "ResNet", "FeedForward", "SelfAttention", "Block", "ViT", "GPT", "ConvNeXtBlock")
MODEL_CLASSES = [getattr(core_models, name) for name in (*MODEL_NAMES, "ConvNeXt")]
ACTIVATION_MODULES: list[ModuleType] = sorted(
    {inspect.getmodule(c) for c in ACTIVATION_CLASSES}, key=lambda m: m.__name__
)


def _activation_functions() -> list[Callable]:
    """The public functions of the activation modules that take a tensor ``x`` first."""
    found = []
    for module in ACTIVATION_MODULES:
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue  # private, or imported from elsewhere
            if inspect.isfunction(obj) and name not in UNCHECKED_FUNCTIONS:
                params = list(inspect.signature(obj).parameters)
                if params and params[0] == "x":
                    found.append(obj)
    return found


ACTIVATION_FUNCTIONS = _activation_functions()


def _helpers_modules() -> list[ModuleType]:
    """Every module of the ``helpers`` and ``tools`` packages, imported (``__main__`` aside: it runs
    a command)."""
    names = [info.name for pkg in (helpers, tools) for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
    return [importlib.import_module(name) for name in names if not name.endswith("__main__")]


HELPERS_MODULES = _helpers_modules()


def _takes_a_number(cls: type) -> bool:
    """Whether ``cls.__init__`` has a parameter annotated with ``int`` or ``float``."""
    params = inspect.signature(cls.__init__).parameters.values()
    return any(re.search(r"\b(int|float)\b", str(p.annotation)) for p in params if p.name != "self")


def _public_constructors() -> list[type]:
    """The public, concrete classes of ``helpers`` whose own ``__init__`` takes a number (a
    dataclass's only when it has a table: the run configs check theirs with a RULES table)."""
    found = []
    for module in HELPERS_MODULES:
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and obj.__module__ == module.__name__
                and not name.startswith("_")
                and not inspect.isabstract(obj)
                and "__init__" in obj.__dict__
                and (argument_rules(obj) is not None or not dataclasses.is_dataclass(obj))
                and _takes_a_number(obj)
            ):
                found.append(obj)
    return sorted(found, key=lambda c: (c.__module__, c.__name__))


def _declared_constructors() -> list[type]:
    """What the modules list in ``CHECKED_CONSTRUCTORS``."""
    return [cls for module in HELPERS_MODULES for cls in getattr(module, "CHECKED_CONSTRUCTORS", ())]


PUBLIC_CONSTRUCTORS = _public_constructors()
DECLARED_CONSTRUCTORS = _declared_constructors()


def _unique(items: list[Callable]) -> list[Callable]:
    return list(dict.fromkeys(items))


CONSTRUCTORS: list[Callable] = _unique(
    [
        *ACTIVATION_CLASSES,
        *_kernel_classes(),
        *MODEL_CLASSES,
        *ACTIVATION_FUNCTIONS,
        *DECLARED_CONSTRUCTORS,
        *(c for c in PUBLIC_CONSTRUCTORS if c.__name__ not in UNCHECKED_CLASSES),
    ]
)


def _bad_values(rule: Rule) -> list[object]:
    """What ``rule`` must refuse."""
    if rule.kind in ("number", "int"):
        bad: list[object] = [True, "1", math.nan, math.inf, -math.inf]
        if rule.kind == "int":
            bad.append(2.5)
        if rule.low is not None:
            bad.append(rule.low if rule.low_open else rule.low - 1)
        if rule.high is not None:
            bad.append(rule.high if rule.high_open else rule.high + 1)
        return bad
    if rule.kind in ("numbers", "ints"):
        bad = [True, "1", (math.nan,), (math.inf,), (-math.inf,), (True,)]
        if rule.kind == "ints":
            bad.append((2.5,))
        if rule.low is not None:
            bad.append((rule.low if rule.low_open else rule.low - 1,))
        return bad
    if rule.kind == "bool":
        return [1, "True", 0.0]
    if rule.kind == "choice":
        return ["no-such-choice", True, 1]
    if rule.kind in ("str", "name"):
        return [1, True] + ([" "] if rule.non_empty else []) + (["../up", "x" * 300] if rule.kind == "name" else [])
    if rule.kind == "instance":
        return [object(), 1.5]
    return []


def _base_arguments(target: Callable) -> dict[str, object]:
    params = inspect.signature(target).parameters
    required = [
        name
        for name, p in params.items()
        if name != "self" and p.default is inspect.Parameter.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    values = {**REQUIRED, **REQUIRED_BY_OWNER.get(_owner(target), {})}
    missing = [name for name in required if name not in values]
    if missing:
        pytest.fail(f"{_owner(target)} needs {missing} without a default: add a valid value to REQUIRED")
    return {name: values[name] for name in required}


def _owner(target: Callable) -> str:
    return target.__name__


def _cases() -> list[tuple[Callable, str, object]]:
    cases = []
    for target in CONSTRUCTORS:
        rules = argument_rules(target) or {}
        for name, rule in rules.items():
            cases.extend((target, name, value) for value in _bad_values(rule))
    return cases


CASES = _cases()


def _case_id(case: tuple[Callable, str, object]) -> str:
    target, name, value = case
    return f"{_owner(target)}-{name}-{value!r}"


def _offenders(items, fault) -> list[str]:
    """Every item for which ``fault(item)`` names a problem (a string), so one test lists them all."""
    return [problem for item in items if (problem := fault(item))]


def test_every_registered_activation_has_an_argument_table():
    missing = _offenders(
        ACTIVATION_CLASSES,
        lambda cls: argument_rules(cls) is None and f"{cls.__module__}.{cls.__name__}",
    )
    assert not missing, (
        f"registered activations without an argument table: {missing}; decorate each __init__ with "
        "helpers.core.validation.checked_arguments({...})"
    )


def test_every_public_model_kernel_and_activation_function_has_an_argument_table():
    targets = [*MODEL_CLASSES, *_kernel_classes(), *ACTIVATION_FUNCTIONS]
    missing = _offenders(targets, lambda t: argument_rules(t) is None and _owner(t))
    assert not missing, f"no argument table: {missing}"


def test_every_public_constructor_that_takes_a_number_has_an_argument_table():
    missing = _offenders(
        [c for c in PUBLIC_CONSTRUCTORS if c.__name__ not in UNCHECKED_CLASSES],
        lambda cls: "argument_rules" not in vars(cls)["__init__"].__dict__ and f"{cls.__module__}.{cls.__name__}",
    )
    assert not missing, (
        f"these __init__ take a number but have no argument table: {missing}; decorate each with "
        "helpers.core.validation.checked_arguments({...}), or give the reason in UNCHECKED_CLASSES"
    )


def test_every_declared_checked_constructor_has_its_own_table():
    def fault(cls) -> str:
        if "argument_rules" not in vars(cls)["__init__"].__dict__:
            return f"{cls.__name__} is listed but has no own table"
        if cls not in vars(inspect.getmodule(cls)).get("CHECKED_CONSTRUCTORS", ()):
            return f"{cls.__name__} is listed by another module than its own"
        return ""

    assert not (problems := _offenders(DECLARED_CONSTRUCTORS, fault)), problems


def test_the_hook_and_schedule_constructors_are_covered():
    """The walk above is computed; this pins that it finds the training hooks and schedules."""
    names = {c.__name__ for c in CONSTRUCTORS if isinstance(c, type)}
    expected = {
        "TemperatureSchedule",
        "AlphaSchedule",
        "FlexActHook",
        "DeltaAnnealing",
        "AnnealingSchedule",
        "LayerwiseAnnealing",
        "PreactivationRecorder",
        "SyntheticNet",
        "ShardedBatchSampler",
        "ClusterOptions",
    }
    assert expected <= names, expected - names
    assert {"TemperatureSchedule", "AlphaSchedule"} <= {c.__name__ for c in DECLARED_CONSTRUCTORS}


def test_a_checked_dataclass_names_its_field_and_keeps_its_cross_field_rule():
    from helpers.flexact.hook import AlphaSchedule, TemperatureSchedule

    with pytest.raises(ValueError, match=r"AlphaSchedule\.fraction must be a finite number > 0 and <= 1; got 0"):
        AlphaSchedule(0.3, total=10, fraction=0)
    with pytest.raises(ValueError, match=r"tau_min \(1\.0\) must not exceed tau_start \(0\.5\)"):
        TemperatureSchedule(0.5, 1.0)
    assert TemperatureSchedule(total=3).total == 3


def test_the_discovery_finds_the_known_activations_and_functions():
    """The lists above are computed; this pins that they are not empty by accident."""
    names = {c.__name__ for c in ACTIVATION_CLASSES}
    assert {"LambdaGELU", "SReLU", "SReLUPaperReference", "SmeLU", "FlexAct", "MollifiedActivation"} <= names
    functions = {f.__name__ for f in ACTIVATION_FUNCTIONS}
    assert {"lambda_gelu", "srelu", "srelu_derivative", "smelu", "smelu_grad"} <= functions
    assert len(CASES) > 300


def test_valid_arguments_are_accepted():
    """The generated bad cases are the only change from a call that works."""

    def fault(target) -> str:
        try:
            target(**_base_arguments(target))
        except Exception as err:  # noqa: BLE001 - every failure is listed, not only the first
            return f"{_owner(target)}: {type(err).__name__}: {err}"
        return ""

    assert not (problems := _offenders(CONSTRUCTORS, fault)), "\n".join(problems)


def _refusal_fault(case: tuple[Callable, str, object]) -> str:
    """What is wrong with how ``case`` is refused ("" when it is refused naming the argument and value)."""
    target, name, value = case
    try:
        target(**{**_base_arguments(target), name: value})
    except (ValueError, TypeError) as err:
        message = str(err)
        if f"{_owner(target)}.{name} must be" not in message or repr(value) not in message:
            return f"{_case_id(case)}: refused without naming it: {message}"
        return ""
    return f"{_case_id(case)}: accepted"


#: The rule kinds the generated cases exercise: one test each, over every argument with that rule.
RULE_KINDS = sorted({argument_rules(target)[name].kind for target, name, _ in CASES})


@pytest.mark.parametrize("kind", RULE_KINDS)
def test_each_rule_kind_refuses_its_bad_values_naming_the_argument_and_value(kind):
    cases = [c for c in CASES if argument_rules(c[0])[c[1]].kind == kind]
    assert cases
    assert not (problems := _offenders(cases, _refusal_fault)), "\n".join(problems)


def test_get_activation_passes_a_refused_value_through_with_its_message():
    with pytest.raises(ValueError, match=r"LambdaGELU\.t must be a finite number > 0; got True"):
        get_activation("lambda_gelu", t=True)


def test_a_subclass_is_named_as_itself():
    with pytest.raises(ValueError, match=r"GaussianKernel\.scale must be a finite number > 0; got nan"):
        GaussianKernel(float("nan"))


def test_a_table_must_match_the_signature():
    with pytest.raises(TypeError, match=r"no rule for \['b'\]"):

        @checked_arguments({"a": integer()})
        def two(a: int, b: int) -> None: ...

    with pytest.raises(TypeError, match=r"rules for unknown arguments \['c'\]"):

        @checked_arguments({"a": integer(), "c": integer()})
        def one(a: int) -> None: ...


def test_a_default_that_breaks_its_own_rule_fails_at_import():
    with pytest.raises(ValueError, match=r"scaled\.factor must be a finite number > 0; got 0"):

        @checked_arguments({"factor": number(0, low_open=True)})
        def scaled(factor: float = 0) -> None: ...


def test_a_refused_value_is_both_a_value_error_and_a_type_error():
    """Callers that caught either before keep working."""

    @checked_arguments({"n": integer(1)})
    def count(n: int) -> int:
        return n

    assert count(3) == 3
    for bad in (True, "3", 0):
        with pytest.raises(ValueError):
            count(bad)
        with pytest.raises(TypeError):
            count(bad)


@pytest.mark.parametrize(
    ("model", "kwargs", "fragment"),
    [
        ("mlp", {"width": True}, "MLP.width must be an int >= 1; got True"),
        ("resnet18", {"width_mult": "0.5"}, "ResNet.width_mult must be a finite number > 0; got '0.5'"),
        ("vit", {"dropout": 1.0}, "ViT.dropout must be a finite number >= 0 and < 1; got 1.0"),
        ("convnext", {"dims": (8, 0)}, "ConvNeXt.dims must be a non-empty sequence of ints >= 1; got (8, 0)"),
    ],
)
def test_a_run_config_refuses_a_bad_model_argument_when_it_is_made(model, kwargs, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        TrainConfig(experiment="t", dataset="adult", model=model, model_kwargs=kwargs)

"""The book's methods and their plain tables: what the core reads, by name, where it uses it.

Like timm's ``create_act.py``, an activation is a function, a module and one line of
:data:`ACTIVATIONS`; a method's knobs are one line of :data:`OPTIONS`, its steps of a run lines of
:data:`RUN_EXTENSIONS`, a config class and its runner one line of :data:`RUNNERS`. Nothing is
registered by importing a module: the core (which imports no method) reads these tables through
:func:`helpers.core.registry.catalog`, in any process, with nothing to import first.

Adding a paper is one :class:`Method` line and its lines in these tables (see "Adding a paper" in
helpers/README.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

# Each method's modules that a training run needs. The claims and audit modules are named, not
# imported (:func:`claims_of`).
from helpers.churn import predictions as churn_predictions
from helpers.core import runs
from helpers.core.options import MethodOptions, check_options_table
from helpers.core.registry import TORCH_ACTIVATION_TYPES, TORCH_ACTIVATIONS, TORCH_DISPLAY_NAMES, ActivationFactory
from helpers.core.runs import ExtensionLine
from helpers.flexact import hook as flexact_hook
from helpers.flexact import protocol as flexact_protocol
from helpers.flexact import synthetic as flexact_synthetic
from helpers.flexact.activation import FlexAct
from helpers.flexact.options import FlexActOptions
from helpers.lambda_gelu import protocol as lambda_gelu_protocol
from helpers.lambda_gelu import training as lambda_gelu_training
from helpers.lambda_gelu.activation import LambdaGELU
from helpers.lambda_gelu.options import LambdaGeluOptions
from helpers.relu_ization import experiment as relu_ization_experiment
from helpers.srelu import dpo_experiment as srelu_dpo_experiment
from helpers.srelu import protocol as srelu_protocol
from helpers.srelu import training as srelu_training
from helpers.srelu.activation import SReLU, SReLUPaperReference
from helpers.srelu.dpo_experiment import DPOOptions
from helpers.srelu.mollify import MollifiedActivation
from helpers.srelu.options import SReluOptions
from helpers.srelu.smelu import SmeLU

#: Every activation by name: a module class or a factory of one (``get_activation(name, **kwargs)``).
ACTIVATIONS: dict[str, ActivationFactory] = {
    **TORCH_ACTIVATIONS,
    "lambda_gelu": LambdaGELU,
    "srelu": SReLU,
    "srelu_paper": SReLUPaperReference,
    "smelu": SmeLU,
    "flexact": FlexAct,
}

#: The module classes that count as activation sites (``activation_sites``, ``replace_activations``).
ACTIVATION_TYPES: tuple[type, ...] = TORCH_ACTIVATION_TYPES + (
    LambdaGELU,
    SReLU,
    SReLUPaperReference,
    SmeLU,
    MollifiedActivation,
    FlexAct,
)

#: How tables print an activation's name.
DISPLAY_NAMES: dict[str, str] = {
    **TORCH_DISPLAY_NAMES,
    "lambda_gelu": "λ-GELU",
    "srelu": "S-ReLU",
    "flexact": "Flex-Act",
}

#: Each method's knobs of a ``TrainConfig`` run; this order is the order of a stored config's fields.
OPTIONS: tuple[type[MethodOptions], ...] = (LambdaGeluOptions, SReluOptions, FlexActOptions, DPOOptions)
check_options_table(OPTIONS)

#: The steps methods add to a ``TrainConfig`` run, in the order a run applies them (the λ record
#: first: its hook runs before the annealing hooks, as the committed runs did), each with the runs it
#: serves: a run enters only the method modules it uses.
RUN_EXTENSIONS: tuple[ExtensionLine, ...] = (
    ExtensionLine(lambda_gelu_training.LAMBDA_RECORD, activations=("lambda_gelu",), absent_record={"lambda_init": []}),
    ExtensionLine(lambda_gelu_training.RUN_EXTENSION, activations=("lambda_gelu",)),
    # a DPO run records its DPO grid, not Table II's test of the pre-trained model
    ExtensionLine(
        lambda_gelu_training.RELU_SUBSTITUTION,
        activations=lambda_gelu_training.SUBSTITUTED_ACTIVATIONS,
        excluded_by=(DPOOptions,),
    ),
    ExtensionLine(srelu_training.RUN_EXTENSION, options=SReluOptions),
    ExtensionLine(flexact_hook.RUN_EXTENSION, activations=("flexact",)),
    ExtensionLine(churn_predictions.RUN_EXTENSION, flag="record_predictions"),
    ExtensionLine(srelu_dpo_experiment.RUN_EXTENSION, options=DPOOptions),
)

#: Each run config class and the function that trains one (``run_or_load``, ``run_many``).
RUNNERS: dict[type, Callable] = {
    runs.TrainConfig: runs.run_training,
    flexact_synthetic.FlexActSyntheticConfig: flexact_synthetic.run_synthetic,
    relu_ization_experiment.ReluizationConfig: relu_ization_experiment.run_reluization,
}


def claims_of(module: str, function: str = "claims") -> Callable[[], list]:
    """``module.function``, imported when first called: the report imports a method's claims and
    audit modules (sympy, scipy.stats, pandas, the report code), while a process that only trains
    a run (a worker, a torchrun rank, a cluster job) never does, and starts about 3 s sooner."""

    def claims() -> list:
        return getattr(importlib.import_module(module), function)()

    claims.__module__, claims.__qualname__ = module, function  # the report's key names the source
    return claims


@dataclass(frozen=True)
class Method:
    """One source document's method (or one of the book's own chapters) as the core sees it.

    ``package``: the package under ``helpers`` that holds it (its activations, options, run
    extensions and runners are lines of the tables above); ``claims``: the function that lists its
    claims (report order);
    ``audit``: the function that lists the findings of the source read against itself (after its
    claims in the report);
    ``experiments``: experiment name -> ``configs(profile)`` for ``python -m tools.run``;
    ``source_text``: the source's text file under ``../shared/papers``, which every excerpt of
    its ``paper`` module (``QUOTES``) must occur in.
    """

    package: str
    title: str
    claims: Callable[[], list]
    experiments: Mapping[str, Callable[[str], list]] = field(default_factory=dict)
    audit: Callable[[], list] | None = None
    source_text: str | None = None

    @property
    def paper(self) -> str:
        """The module of the source's excerpts (imported by the attribution test, never by a run)."""
        return f"helpers.{self.package}.paper"


#: The source documents' methods, in report order.
METHODS: tuple[Method, ...] = (
    Method(
        "gelu_primer",
        "A GELU tutorial post",
        claims_of("helpers.gelu_primer.claims"),
        audit=claims_of("helpers.gelu_primer.audit"),
        source_text="gelu-blog.txt",
    ),
    Method(
        "lambda_gelu",
        "λ-GELU",
        claims_of("helpers.lambda_gelu.claims"),
        experiments=lambda_gelu_protocol.EXPERIMENTS,
        audit=claims_of("helpers.lambda_gelu.audit"),
        source_text="lambda-gelu.txt",
    ),
    Method(
        "srelu",
        "S-ReLU",
        claims_of("helpers.srelu.claims"),
        experiments=srelu_protocol.EXPERIMENTS,
        audit=claims_of("helpers.srelu.audit"),
        source_text="s-relu.txt",
    ),
    Method(
        "flexact",
        "Flex-Act",
        claims_of("helpers.flexact.claims"),
        experiments=flexact_protocol.EXPERIMENTS,
        audit=claims_of("helpers.flexact.audit"),
        source_text="flex-act.txt",
    ),
)

#: The book's own chapters beyond the papers: they use several methods, so they live at the app
#: level (not under the method rule of the architecture test), and their claims follow the papers'.
BEYOND_THE_PAPERS: tuple[Method, ...] = (
    Method("relu_ization", "ReLU-ization (beyond the papers)", claims_of("helpers.relu_ization.claims")),
    Method(
        "churn",
        "Prediction churn (beyond the papers)",
        claims_of("helpers.churn.claims", "report_claims"),
    ),
)

#: Whose claims the report lists, in report order.
CLAIM_SOURCES: tuple[Method, ...] = METHODS + BEYOND_THE_PAPERS


def method_packages() -> tuple[str, ...]:
    """``helpers.<package>`` of every method (the architecture test's method layer)."""
    return tuple(f"helpers.{m.package}" for m in METHODS)


def method_activations() -> dict[str, ActivationFactory]:
    """The methods' lines of :data:`ACTIVATIONS` (every name but torch's)."""
    return {name: factory for name, factory in ACTIVATIONS.items() if name not in TORCH_ACTIVATIONS}

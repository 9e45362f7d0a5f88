"""The book's methods, joined to the core in this one place by plain imports.

The core (:mod:`helpers.core`) knows no method: it keeps an activation registry, a list of run
extensions and a runner per config class, and each method fills them here from one :data:`METHODS`
tuple. Importing this module registers everything; the public modules and every worker process
that trains a run import it.

Adding a paper is one new :class:`Method` line here (see "Adding a paper" in helpers/README.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

# Each method's modules that a training run needs, imported by name. A config class's runner
# registers when its module is imported (``register_runner``), so the modules that define one are
# imported here too. The claims and audit modules are named, not imported (:func:`claims_of`).
from helpers.churn import predictions as churn_predictions
from helpers.core import extensions, options, registry
from helpers.core.extensions import RunExtension
from helpers.core.options import MethodOptions
from helpers.core.registry import ActivationFactory
from helpers.core.results_cache import note_plugin_module
from helpers.flexact import activation as flexact_activation
from helpers.flexact import hook as flexact_hook
from helpers.flexact import options as flexact_options
from helpers.flexact import protocol as flexact_protocol
from helpers.flexact import synthetic as flexact_synthetic  # noqa: F401  runner of FlexActSyntheticConfig
from helpers.lambda_gelu import activation as lambda_gelu_activation
from helpers.lambda_gelu import options as lambda_gelu_options
from helpers.lambda_gelu import protocol as lambda_gelu_protocol
from helpers.lambda_gelu import training as lambda_gelu_training
from helpers.relu_ization import experiment as relu_ization_experiment  # noqa: F401  runner of ReluizationConfig
from helpers.srelu import activation as srelu_activation
from helpers.srelu import dpo_experiment as srelu_dpo_experiment  # noqa: F401  runner of DPOConfig
from helpers.srelu import options as srelu_options
from helpers.srelu import protocol as srelu_protocol
from helpers.srelu import smelu as srelu_smelu
from helpers.srelu import training as srelu_training

__all__ = ["claims_of", "Method", "METHODS", "BEYOND_THE_PAPERS", "CLAIM_SOURCES", "method_packages", "all_experiments"]


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

    ``package``: the package under ``helpers`` that holds it; ``activations``: registry name ->
    module factory; ``display_names``: registry name -> the name tables print, for those of its
    activations that tables show; ``options``: its :class:`~helpers.core.options.MethodOptions`
    classes (its knobs of a ``TrainConfig`` run); ``run_extensions``: the steps it adds to a
    ``TrainConfig`` run, in order; ``claims``: the function that lists its claims (report order);
    ``audit``: the function that lists the findings of the source read against itself (after its
    claims in the report);
    ``experiments``: experiment name -> ``configs(profile)`` for ``python -m tools.run``;
    ``source_text``: the source's text file under ``../shared/papers``, which every excerpt of
    its ``paper`` module (``QUOTES``) must occur in.
    """

    package: str
    title: str
    claims: Callable[[], list]
    activations: Mapping[str, ActivationFactory] = field(default_factory=dict)
    display_names: Mapping[str, str] = field(default_factory=dict)
    options: tuple[type[MethodOptions], ...] = ()
    run_extensions: tuple[RunExtension, ...] = ()
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
        activations={"lambda_gelu": lambda_gelu_activation.LambdaGELU},
        display_names={"lambda_gelu": "λ-GELU"},
        options=(lambda_gelu_options.LambdaGeluOptions,),
        # the λ record first: its hook runs before the annealing hooks, as the committed runs did
        run_extensions=(
            lambda_gelu_training.LAMBDA_RECORD,
            lambda_gelu_training.RUN_EXTENSION,
            lambda_gelu_training.RELU_SUBSTITUTION,
        ),
        experiments=lambda_gelu_protocol.EXPERIMENTS,
        audit=claims_of("helpers.lambda_gelu.audit"),
        source_text="lambda-gelu.txt",
    ),
    Method(
        "srelu",
        "S-ReLU",
        claims_of("helpers.srelu.claims"),
        activations={
            "srelu": srelu_activation.SReLU,
            "srelu_paper": srelu_activation.SReLUPaperReference,
            "smelu": srelu_smelu.SmeLU,
        },
        display_names={"srelu": "S-ReLU"},
        options=(srelu_options.SReluOptions,),
        run_extensions=(srelu_training.RUN_EXTENSION,),
        experiments=srelu_protocol.EXPERIMENTS,
        audit=claims_of("helpers.srelu.audit"),
        source_text="s-relu.txt",
    ),
    Method(
        "flexact",
        "Flex-Act",
        claims_of("helpers.flexact.claims"),
        activations={"flexact": flexact_activation.FlexAct},
        display_names={"flexact": "Flex-Act"},
        options=(flexact_options.FlexActOptions,),
        run_extensions=(flexact_hook.RUN_EXTENSION,),
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
        run_extensions=(churn_predictions.RUN_EXTENSION,),
    ),
)

#: Whose claims the report lists, in report order.
CLAIM_SOURCES: tuple[Method, ...] = METHODS + BEYOND_THE_PAPERS


def method_packages() -> tuple[str, ...]:
    """``helpers.<package>`` of every method (the architecture test's method layer)."""
    return tuple(f"helpers.{m.package}" for m in METHODS)


def all_experiments() -> dict[str, Callable[[str], list]]:
    """Every method's experiments, by name (``python -m tools.run``)."""
    experiments: dict[str, Callable[[str], list]] = {}
    for method in METHODS:
        for name, configs in method.experiments.items():
            if name in experiments:
                raise ValueError(f"experiment {name!r} is listed by two methods")
            experiments[name] = configs
    return experiments


def register(methods: tuple[Method, ...]) -> None:
    """Register the methods' activations, display names, options and run extensions with the core
    (idempotent)."""
    for method in methods:
        for name, factory in method.activations.items():
            registry.register_activation(name, factory)
        for name, text in method.display_names.items():
            registry.register_display_name(name, text)
        for cls in method.options:
            options.register_options(cls)
        for extension in method.run_extensions:
            extensions.register_run_extension(extension)


register(CLAIM_SOURCES)
# Worker processes (spawned: they start empty) import this module before their first run.
note_plugin_module(__name__)

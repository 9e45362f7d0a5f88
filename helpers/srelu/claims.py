"""The S-ReLU claims the book tests, with our value beside the paper's (:mod:`helpers.srelu.paper`).

Our values are computed in :func:`theory_claims` by :mod:`helpers.srelu.theory` and
:mod:`helpers.srelu.activation`, and in :func:`experiment_claims` from the committed results of the
δ-sensitivity, benchmark and DPO protocols (one function per claim in
:mod:`helpers.srelu.table_claims`, the DPO rows in :mod:`helpers.srelu.dpo_analysis`);
:func:`claims` returns both lists."""

from __future__ import annotations

from collections.abc import Callable

from helpers.core import tables as T
from helpers.core.profiles import decided_profile
from helpers.core.report import Claim
from helpers.core.runtime import current_profile
from helpers.srelu import protocol as P
from helpers.srelu.dpo_analysis import claims as dpo_claims
from helpers.srelu.dpo_experiment import dpo_configs
from helpers.srelu.run_tables import load_runs
from helpers.srelu.table_claims import (
    BENCHMARKS,
    advantage_from_smoothing_claim,
    beats_every_other_claim,
    cifar100_imagenet_tables_claim,
    imagenet_convnext_claim,
    margin_size_claim,
    table1_average_row_claim,
    table4_best_delta_claim,
    table4_large_delta_drop_claim,
)
from helpers.srelu.theory_claims import paper_expr, theory_claims, untested_theory_claims

__all__ = [
    "paper_expr",
    "theory_claims",
    "claims",
    "untested_theory_claims",
    "experiment_claims",
]


#: Each family of run-based rows: the name its profile is decided under and its runs' configs.
FAMILIES: dict[str, Callable[[str], list]] = {
    "srelu_delta": P.delta_configs,
    "srelu_compare": P.compare_configs,
    "srelu_dpo": dpo_configs,
}


def _family_profiles(profile: str | None) -> dict[str, str]:
    """The profile each family of :data:`FAMILIES` reads: ``profile`` for all, or, without one,
    the profile its committed results decide."""
    if profile is None:
        return {name: decided_profile(name, configs) for name, configs in FAMILIES.items()}
    return dict.fromkeys(FAMILIES, current_profile(profile))


def experiment_claims(profile: str | None = None) -> list[Claim]:
    """Claims about Tables 1, 2 and 4 and the DPO stand-in of Table 3, from stored results
    (loaded, never trained: a table whose runs are missing gives "not run here"), in report order.
    With ``profile``, every table reads that profile's results; without, each family (Table 4,
    Tables 1-2, the DPO stand-in) reads the profile its committed results decide
    (:func:`helpers.core.profiles.decided_profile`). Each family's runs are loaded once here and
    passed to the functions that make its claims."""

    profiles = _family_profiles(profile)
    table4 = load_runs(P.delta_configs(profiles["srelu_delta"]), "delta", profiles["srelu_delta"])
    compare_profile = profiles["srelu_compare"]
    compare = {
        model: load_runs(P.compare_configs(compare_profile, model=model), "activation", compare_profile)
        for model in BENCHMARKS
    }
    dpo_profile = profiles["srelu_dpo"]
    return [
        table4_best_delta_claim(table4),
        table4_large_delta_drop_claim(table4),
        *(
            row
            for model, runs in compare.items()
            for row in (beats_every_other_claim(model, runs), margin_size_claim(model, runs))
        ),
        advantage_from_smoothing_claim(compare, compare_profile),
        imagenet_convnext_claim(),
        cifar100_imagenet_tables_claim(),
        *dpo_claims(T.load_all(dpo_configs(dpo_profile)), dpo_profile),
        table1_average_row_claim(),
    ]


def claims() -> list[Claim]:
    """All claims of the S-ReLU paper the book tests: theory, then experiments."""
    return theory_claims() + experiment_claims()

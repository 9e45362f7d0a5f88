"""The S-ReLU claims the book tests, with our value beside the paper's (:mod:`helpers.srelu.paper`).

Theory rows: :mod:`helpers.srelu.theory_claims`; run rows: :func:`experiment_claims` (Table 4 in
:mod:`helpers.srelu.table4_claims`, Tables 1-2 in :mod:`helpers.srelu.table_claims`, Table 3's DPO
stand-in in :mod:`helpers.srelu.dpo_analysis`)."""

from __future__ import annotations

from collections.abc import Callable

from helpers.core import tables as T
from helpers.core.claim import Claim
from helpers.core.profiles import decided_profile
from helpers.core.runtime import current_profile
from helpers.srelu import protocol as P
from helpers.srelu.dpo_analysis import SMALLEST_EFFECT
from helpers.srelu.dpo_analysis import claims as dpo_claims
from helpers.srelu.dpo_experiment import dpo_configs
from helpers.srelu.paper import DELTA_BEST_MARGIN
from helpers.srelu.run_tables import StoredRuns, load_runs
from helpers.srelu.table4_claims import table4_best_delta_claim, table4_large_delta_drop_claim
from helpers.srelu.table_claims import (
    BENCHMARKS,
    advantage_from_smoothing_claim,
    beats_every_other_claim,
    cifar100_imagenet_tables_claim,
    imagenet_convnext_claim,
    margin_size_claim,
    table1_average_row_claim,
)
from helpers.srelu.theory_claims import paper_expr, theory_claims, untested_theory_claims

__all__ = [
    "SMALLEST_EFFECT",
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


#: The non-inferiority margin of the S-ReLU rows, for the rules page (:func:`helpers.claims.margin_rules`).
MARGINS: tuple[tuple[str, str, str, str], ...] = (
    (
        "S-ReLU Table 4: δ = 0.001 is (one of) the best",
        r"srelu-table4-best-delta",
        f"{DELTA_BEST_MARGIN:g} point of accuracy (non-inferiority)",
        "absolute, in accuracy points: the book's reading of '(one of) the best' (the paper states no tolerance)",
    ),
)


def _family_profiles(profile: str | None) -> dict[str, str]:
    """The profile each family of :data:`FAMILIES` reads: ``profile`` for all, or, without one,
    the profile its committed results decide."""
    if profile is None:
        return {name: decided_profile(name, configs) for name, configs in FAMILIES.items()}
    return dict.fromkeys(FAMILIES, current_profile(profile))


def experiment_claims(profile: str | None = None) -> list[Claim]:
    """Claims about Tables 1, 2 and 4 and the DPO stand-in of Table 3, from stored results (never
    trained: missing runs give "not run here"), in report order. Without ``profile`` each family
    reads the profile its committed results decide (:func:`helpers.core.profiles.decided_profile`)."""

    profiles = _family_profiles(profile)
    compare_profile = profiles["srelu_compare"]
    return [
        *_table4_rows(profiles["srelu_delta"]),
        *(row for model in BENCHMARKS for row in _benchmark_rows(model, compare_profile)),
        _smoothing_row(compare_profile),
        imagenet_convnext_claim(),
        cifar100_imagenet_tables_claim(),
        *_dpo_rows(profiles["srelu_dpo"]),
        table1_average_row_claim(),
    ]


# Each family's rows are built in the function that loads the family's runs, so that a row's runs
# (found by helpers.core.run_reads) are its family's, not every S-ReLU run.
def _table4_rows(profile: str) -> list[Claim]:
    table4 = load_runs(P.delta_configs(profile), "delta", profile)
    return [table4_best_delta_claim(table4), table4_large_delta_drop_claim(table4)]


def _compare_runs(model: str, profile: str) -> StoredRuns:
    return load_runs(P.compare_configs(profile, model=model), "activation", profile)


def _benchmark_rows(model: str, profile: str) -> list[Claim]:
    runs = _compare_runs(model, profile)
    return [beats_every_other_claim(model, runs), margin_size_claim(model, runs)]


def _smoothing_row(profile: str) -> Claim:
    return advantage_from_smoothing_claim({m: _compare_runs(m, profile) for m in BENCHMARKS}, profile)


def _dpo_rows(profile: str) -> list[Claim]:
    return dpo_claims(T.load_all(dpo_configs(profile)), profile)


def claims() -> list[Claim]:
    """All claims of the S-ReLU paper the book tests: theory, then experiments."""
    return theory_claims() + experiment_claims()

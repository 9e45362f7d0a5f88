"""The λ-GELU claims decided by runs (Figs. 1-3, Tables I-II), from committed results; loads,
never trains. :func:`experiment_claims` is what the report collects: it decides each family's
profile, loads its results once and lists the families' claims, each built by its own function in
:mod:`~helpers.lambda_gelu.grid_claims` (Figs. 1-2), :mod:`~helpers.lambda_gelu.table1_claims`
(Table I, Fig. 3) and :mod:`~helpers.lambda_gelu.table2_claims` (Table II)."""

from __future__ import annotations

from collections.abc import Callable

from helpers.core.profiles import decided_profile
from helpers.core.report import Claim
from helpers.core.runtime import current_profile
from helpers.lambda_gelu.claim_rows import ANCHORS, MATCH_TOL, SEVERE_PERPLEXITY_INCREASE, load_protocol
from helpers.lambda_gelu.grid import delta_bvs_by_seed, drift_contrast
from helpers.lambda_gelu.grid_claims import grid_claims
from helpers.lambda_gelu.protocol import EXPERIMENTS
from helpers.lambda_gelu.table1_claims import table1_claims
from helpers.lambda_gelu.table2_claims import table2_claims

__all__ = [
    "load_protocol",
    "ANCHORS",
    "SEVERE_PERPLEXITY_INCREASE",
    "MATCH_TOL",
    "delta_bvs_by_seed",
    "drift_contrast",
    "grid_claims",
    "table1_claims",
    "table2_claims",
    "experiment_claims",
]


def _table2_runs(profile: str) -> list:
    """Table II's rows read Table I's runs too: its family is both protocols' runs."""
    return [*EXPERIMENTS["lgelu_table1"](profile), *EXPERIMENTS["lgelu_table2"](profile)]


#: Each family of run-based rows: the name its profile is decided under and its runs' configs.
FAMILIES: dict[str, Callable[[str], list]] = {
    "lgelu_grid": EXPERIMENTS["lgelu_grid"],
    "lgelu_csweep": EXPERIMENTS["lgelu_csweep"],
    "lgelu_table1": EXPERIMENTS["lgelu_table1"],
    "lgelu_table2": _table2_runs,
}

#: A protocol's results of one profile: ``None`` unless every run is committed.
_Loaded = dict[tuple[str, str], list[dict] | None]


def _family_profiles(profile: str | None = None) -> dict[str, str]:
    """The profile each family of :data:`FAMILIES` reads: ``profile`` for all when given, else the
    one its committed results decide (:func:`helpers.core.profiles.decided_profile`)."""
    if profile is None:
        return {name: decided_profile(name, configs) for name, configs in FAMILIES.items()}
    return dict.fromkeys(FAMILIES, current_profile(profile))


def _committed(name: str, profile: str, loaded: _Loaded) -> list[dict] | None:
    """Protocol ``name``'s results of ``profile`` when all its runs are committed, else ``None``;
    loaded once per ``loaded`` (Table I's runs are read by two families)."""
    if (name, profile) not in loaded:
        results, missing = load_protocol(name, profile)
        loaded[(name, profile)] = results if results and not missing else None
    return loaded[(name, profile)]


def experiment_claims(profile: str | None = None) -> list[Claim]:
    """Every experiment claim of the λ-GELU paper with our value from committed results (loaded,
    never trained); a claim whose runs are missing is "not run here". With ``profile``, every
    family reads that profile's results; without, each family (Fig. 1, Fig. 2, Table I with Fig. 3,
    Table II) reads the profile its committed results decide (:func:`helpers.core.profiles.decided_profile`)."""

    profiles = _family_profiles(profile)
    grid, csweep, t1, t2 = (profiles[name] for name in ("lgelu_grid", "lgelu_csweep", "lgelu_table1", "lgelu_table2"))
    loaded: _Loaded = {}
    return [
        *grid_claims(_committed("lgelu_grid", grid, loaded), _committed("lgelu_csweep", csweep, loaded), grid, csweep),
        *table1_claims(_committed("lgelu_table1", t1, loaded), t1),
        *table2_claims(_committed("lgelu_table1", t2, loaded), _committed("lgelu_table2", t2, loaded), t2),
    ]

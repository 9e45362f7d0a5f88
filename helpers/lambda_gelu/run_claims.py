"""The λ-GELU claims decided by runs (Figs. 1-3, Tables I-II), from committed results; loads,
never trains. :func:`experiment_claims` is what the report collects: it decides each family's
profile, loads its results and lists the families' claims, each built by its own function in
:mod:`~helpers.lambda_gelu.grid_claims` (Figs. 1-2), :mod:`~helpers.lambda_gelu.table1_claims`
(Table I, Fig. 3) and :mod:`~helpers.lambda_gelu.table2_claims` (Table II)."""

from __future__ import annotations

from collections.abc import Callable

from helpers.core.profiles import decided_profile
from helpers.core.report import Claim
from helpers.core.runtime import current_profile
from helpers.lambda_gelu.claim_rows import ANCHORS, MATCH_TOL, SEVERE_PERPLEXITY_INCREASE, load_committed, load_protocol
from helpers.lambda_gelu.grid import delta_bvs_by_seed, drift_contrast
from helpers.lambda_gelu.grid_claims import fig1_bvs_close_claim, grid_claims
from helpers.lambda_gelu.protocol import EXPERIMENTS
from helpers.lambda_gelu.table1_claims import table1_claims
from helpers.lambda_gelu.table2_claims import table2_claims

__all__ = ["load_protocol", "ANCHORS", "SEVERE_PERPLEXITY_INCREASE", "MATCH_TOL", "delta_bvs_by_seed", "drift_contrast"]
__all__ += ["grid_claims", "table1_claims", "table2_claims", "experiment_claims"]


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


def _family_profiles(profile: str | None = None) -> dict[str, str]:
    """The profile each family of :data:`FAMILIES` reads: ``profile`` for all when given, else the
    one its committed results decide (:func:`helpers.core.profiles.decided_profile`)."""
    if profile is None:
        return {name: decided_profile(name, configs) for name, configs in FAMILIES.items()}
    return dict.fromkeys(FAMILIES, current_profile(profile))


def _committed(name: str, profile: str) -> list[dict] | None:
    """Protocol ``name``'s results of ``profile`` when all its runs are committed, else ``None``."""
    results, missing = load_protocol(name, profile)
    return results if results and not missing else None


def experiment_claims(profile: str | None = None) -> list[Claim]:
    """Every experiment claim of the λ-GELU paper with our value from committed results (loaded,
    never trained); a claim whose runs are missing is "not run here". With ``profile``, every
    family reads that profile's results; without, each family (Fig. 1, Fig. 2, Table I with Fig. 3,
    Table II) reads the profile its committed results decide (:func:`helpers.core.profiles.decided_profile`).

    Each family's rows are built in the function that loads its runs, so that a row's runs (found
    by :mod:`helpers.core.run_reads`) are its family's; Table I's runs are read by both Table I and
    Table II."""

    profiles = _family_profiles(profile)
    return [
        *_grid_rows(profiles["lgelu_grid"], profiles["lgelu_csweep"]),
        *_table1_rows(profiles["lgelu_table1"]),
        *_table2_rows(profiles["lgelu_table2"]),
    ]


def _grid_rows(grid: str, csweep: str) -> list[Claim]:
    return [*_fig1_rows(grid), *_fig2_rows(csweep)]


def _fig1_rows(profile: str) -> list[Claim]:
    """Fig. 1's rows: the two drift trends from the whole (t, c) grid, ΔBVS from its smallest t."""
    grid = _committed("lgelu_grid", profile)
    return [*grid_claims(grid, None, profile)[:2], _fig1_bvs_close_row(profile, grid is not None)]


def _fig1_bvs_close_row(profile: str, committed: bool) -> Claim:
    """From the GELU baseline and the grid's smallest t, loaded here: the runs it compares."""
    if not committed:
        return fig1_bvs_close_claim(None, profile)
    configs = EXPERIMENTS["lgelu_grid"](profile)
    t_min = min(c.activation_kwargs["t"] for c in configs if c.activation == "lambda_gelu")
    runs = load_committed(c for c in configs if c.activation == "gelu" or c.activation_kwargs["t"] == t_min)
    return fig1_bvs_close_claim(runs, profile)


def _fig2_rows(profile: str) -> list[Claim]:
    return grid_claims(None, _committed("lgelu_csweep", profile), profile)[3:]  # Fig. 2: the c sweep


def _table1_rows(profile: str) -> list[Claim]:
    return table1_claims(_committed("lgelu_table1", profile), profile)


def _table2_rows(profile: str) -> list[Claim]:
    return table2_claims(_committed("lgelu_table1", profile), _committed("lgelu_table2", profile), profile)

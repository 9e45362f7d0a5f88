"""The readings the Flex-Act paper leaves open, as data: each :class:`Reading` (what it changes in
Table 1's synthetic runs), the baseline reading (Table 1's runs), their run configs, and the loader
of their committed results (:func:`readings_overview` lists them).

:mod:`helpers.flexact.readings` compares the readings with the baseline, paired by seed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from helpers.core.results_cache import has_result, load_results, run_many
from helpers.flexact.synthetic import (
    GROUND_TRUTHS,
    SENSITIVITY_SEEDS,
    FlexActSyntheticConfig,
    profile_settings,
    synthetic_config,
)

#: α of the regularised arm (Table 1's regularised row).
BASELINE_ALPHA = 0.3


#: Floor added to each MSE before the log ratio: Table 1's printed precision.
EPSILON = 1e-4


#: Candidates that count as one another "up to the twin" (see the module docstring).
TWINS = frozenset({"relu", "leaky_relu"})


#: Config fields whose change also changes the unregularised (α = 0) model.
_ZERO_ARM_FIELDS = frozenset({"hard", "tau_schedule", "tau_start", "tau_min"})


#: Targets of Table 1's α claim ("α = 0 does worse on Sigmoid and Tanh"): where a reading changes
#: the α = 0 model, its α = 0 arm is re-run on these only.
ALPHA_TARGETS: tuple[str, ...] = ("sigmoid", "tanh")


@dataclass(frozen=True)
class Reading:
    """One reading of an open choice: the config fields it changes from the baseline reading (why each
    is a fair reading of the paper: the synthetic page's section on readings)."""

    key: str
    family: str
    label: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    n_seeds: int | None = None  # the first n seeds of the profile; None: all of them

    @property
    def changes_zero_arm(self) -> bool:
        """True when the α = 0 model differs under this reading (so its α = 0 arm is re-run)."""
        return bool(_ZERO_ARM_FIELDS & set(self.overrides))


BASELINE = Reading("baseline", "baseline", "baseline (Table 1)")


READINGS: tuple[Reading, ...] = (
    Reading("hard", "samples", "hard samples (straight-through)", {"hard": True}),
    Reading("tau_constant", "τ schedule", "τ = 1, constant", {"tau_schedule": "constant"}),
    Reading("tau_linear", "τ schedule", "τ linear 1 → 0.1", {"tau_schedule": "linear"}),
    Reading("kl_reverse", "KL direction", "KL(p ‖ p̃)", {"kl_direction": "reverse"}),
    Reading("alpha_warmup", "α schedule", "α warm-up (0 → 0.3 over the first half)", {"alpha_schedule": "warmup"}),
    Reading("alpha_decay", "α schedule", "α decayed (0.3 → 0 by mid-training)", {"alpha_schedule": "decay"}),
    # the λ readings are the sensitivity study's runs, on its seeds
    Reading("lam_0p1", "λ", "λ = 0.1", {"lam": 0.1}, n_seeds=SENSITIVITY_SEEDS),
    Reading("lam_10", "λ", "λ = 10", {"lam": 10.0}, n_seeds=SENSITIVITY_SEEDS),
)


def reading_by_key(key: str) -> Reading:
    """The reading called ``key`` (``"baseline"`` included)."""
    for reading in (BASELINE, *READINGS):
        if reading.key == key:
            return reading
    raise ValueError(f"unknown reading {key!r}; choose one of {[r.key for r in (BASELINE, *READINGS)]}")


def _config(profile: str, reading: Reading, ground_truth: str, seed: int, alpha: float) -> FlexActSyntheticConfig:
    base = synthetic_config(profile, ground_truth, "flexact", seed, alpha=alpha)
    overrides = dict(reading.overrides)
    if alpha == 0:  # the regulariser's readings do not exist without it
        overrides = {k: v for k, v in overrides.items() if k in _ZERO_ARM_FIELDS}
    return replace(base, **overrides)


def _arms(profile: str, reading: Reading) -> dict[float, list[FlexActSyntheticConfig]]:
    """``{α: configs}`` of one reading: α = 0.3 on every target; α = 0 on :data:`ALPHA_TARGETS`
    (re-run under the reading where it changes that model, else Table 1's α = 0 runs)."""
    seeds = tuple(profile_settings(profile)["seeds"])[: reading.n_seeds]  # n_seeds None: all of them
    return {
        BASELINE_ALPHA: [_config(profile, reading, gt, s, BASELINE_ALPHA) for gt in GROUND_TRUTHS for s in seeds],
        0.0: [
            _config(profile, reading, gt, s, 0.0)
            for gt in (GROUND_TRUTHS if reading is BASELINE else ALPHA_TARGETS)
            for s in seeds
        ],
    }


def baseline_configs(profile: str) -> dict[float, list[FlexActSyntheticConfig]]:
    """Table 1's Flex-Act runs (``α = 0.3`` and ``α = 0``), every ground truth and seed: the baseline."""
    return _arms(profile, BASELINE)


def readings_configs(profile: str) -> list[FlexActSyntheticConfig]:
    """The sweep: every reading of :data:`READINGS` at ``α = 0.3`` on every ground truth, and at
    ``α = 0`` on :data:`ALPHA_TARGETS` where the reading changes that model; the profile's seeds
    (cpu: 5, as Table 1; the λ readings are the sensitivity study's runs on the first 3)."""
    configs = []
    for reading in READINGS:
        arms = _arms(profile, reading)
        configs += arms[BASELINE_ALPHA] + (arms[0.0] if reading.changes_zero_arm else [])
    return configs


def run_readings(profile: str, *, workers: int | None = None) -> dict[str, dict[float, list[dict]]]:
    """``{reading key: {α: results}}`` for the baseline and every reading (cached runs load; missing
    ones train through :func:`helpers.core.results_cache.run_many`). A reading whose α = 0 model is
    Table 1's gets Table 1's α = 0 runs (on :data:`ALPHA_TARGETS` and its seeds)."""
    arms = {r.key: _arms(profile, r) for r in (BASELINE, *READINGS)}
    flat = list(dict.fromkeys(c for a in arms.values() for cfgs in a.values() for c in cfgs))
    by_config = dict(zip(flat, run_many(flat, workers=workers, desc="flexact readings")))
    return {key: {alpha: [by_config[c] for c in cfgs] for alpha, cfgs in a.items()} for key, a in arms.items()}


def load_readings(
    profile: str = "cpu", keep: Callable[[float, FlexActSyntheticConfig], bool] | None = None
) -> dict[str, dict[float, list[dict]]] | None:
    """What :func:`run_readings` returns, from stored results only (never trains); None when any
    run is missing (the claims then say "not run here"). ``keep(α, config)``: only the runs it
    accepts are read (a claim reads the runs it is computed from)."""
    out: dict[str, dict[float, list[dict]]] = {}
    for reading in (BASELINE, *READINGS):
        out[reading.key] = {}
        for alpha, cfgs in _arms(profile, reading).items():
            results = load_results(c for c in cfgs if keep is None or keep(alpha, c))
            if any(r is None for r in results):
                return None
            if results:
                out[reading.key][alpha] = results  # type: ignore[assignment]
    return out


def readings_committed(profile: str = "cpu") -> bool:
    """Whether every run of the readings sweep and of its baseline is stored (none is read)."""
    arms = [_arms(profile, reading) for reading in (BASELINE, *READINGS)]
    return all(has_result(c) for arm in arms for cfgs in arm.values() for c in cfgs)


def readings_overview() -> pd.DataFrame:
    """Each reading's open choice, and where its α = 0 arm comes from."""
    rows = [(BASELINE.family, BASELINE.label, "Table 1's runs")]
    for r in READINGS:
        rows.append((r.family, r.label, "re-run under the reading" if r.changes_zero_arm else "Table 1's α = 0 runs"))
    return pd.DataFrame(rows, columns=["open choice", "reading", "α = 0 arm"]).set_index("reading")

"""The readings of Flex-Act that the paper leaves open, swept on the synthetic task one at a time
(:mod:`helpers.flexact.reading_specs`: what each changes), compared with the *baseline reading*
(Table 1's runs: soft samples, ``τ`` exponential 1 → 0.1 per step, ``KL(p̃ ‖ p)``, constant
``α = 0.3``, ``λ = 1``) on every ground truth, paired by seed (:mod:`helpers.core.statistics`):

* held-out MSE per ground truth (difference, paired t);
* pooled over the ground truths: per seed the mean over targets of ``ln((MSE + ε)/(MSE_base + ε))``,
  then a t interval over seeds. Log, because the targets' MSEs span four orders of magnitude (a
  plain difference would be the Sigmoid and ReLU targets' alone), so each target counts equally and
  ``exp(effect)`` reads as a factor; ``ε = 10⁻⁴``, the precision Table 1 prints, so that two near-zero
  errors (1e-7 vs 1e-9) do not dominate. The five targets are a fixed design: the unit of
  replication is the seed (df = seeds − 1);
* selection accuracy: the share of runs whose argmax is the ground truth (exact Clopper-Pearson
  interval), and its paired difference from the baseline over the runs (target, seed), with the
  exact McNemar test beside the t interval. Per seed the difference is nearly constant (a reading
  loses or keeps a whole target), which would give a t interval of zero width; over runs the
  targets' differences count as spread, which is conservative. Also *up to the twin*: ReLU and
  LeakyReLU (slope 0.01) differ by 1 % on negative inputs and the paper's Fig. 2 caption concedes
  they are confused, so a pick of one for the other counts as right there (as in Table 1's claim).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from helpers.core.comparison import CONFIDENCE, Comparison, InsufficientData
from helpers.core.pairing import pair_by_seed
from helpers.core.statistics import Proportion, one_sample, paired_comparison, proportion
from helpers.flexact.reading_specs import (  # noqa: F401  the pages and scripts find the sweep here
    ALPHA_TARGETS,
    BASELINE,
    BASELINE_ALPHA,
    EPSILON,
    READINGS,
    TWINS,
    readings_configs,
    readings_overview,
    run_readings,
)
from helpers.flexact.synthetic import DISPLAY, GROUND_TRUTHS


def _right_up_to_twin(chosen: str, truth: str) -> bool:
    return chosen == truth or {chosen, truth} <= TWINS


def readings_frame(runs: Mapping[str, Mapping[float, list[dict]]]) -> pd.DataFrame:
    """One row per run: reading, α, ground truth, seed, held-out MSE, chosen candidate, picked truth
    (``picked``) and picked it up to the twin (``picked_twin``)."""
    runs_ = [(key, alpha, r, r["config"]) for key, arms in runs.items() for alpha, rs in arms.items() for r in rs]
    if not runs_:
        raise ValueError("no results given")
    rows = [
        (key, float(alpha), c["ground_truth"], int(c["seed"]), float(r["val_mse"]), r["chosen_activation"])
        for key, alpha, r, c in runs_
    ]
    frame = pd.DataFrame(rows, columns=["reading", "alpha", "ground_truth", "seed", "mse", "chosen"])
    frame["picked"] = [c == g for c, g in zip(frame["chosen"], frame["ground_truth"])]
    frame["picked_twin"] = [_right_up_to_twin(c, g) for c, g in zip(frame["chosen"], frame["ground_truth"])]
    return frame


def _arm(frame: pd.DataFrame, reading: str, alpha: float, ground_truth: str | None = None) -> pd.DataFrame:
    """The runs of ``(reading, α)`` (on one target when given); an error when there is none."""
    sel = frame[(frame["reading"] == reading) & (frame["alpha"] == alpha)]
    if ground_truth is not None:
        sel = sel[sel["ground_truth"] == ground_truth]
    if sel.empty:
        raise ValueError(
            f"no runs of reading {reading!r} at alpha={alpha}" + (f" for {ground_truth}" if ground_truth else "")
        )
    return sel


def _by_seed(frame: pd.DataFrame, reading: str, alpha: float, ground_truth: str) -> dict[int, float]:
    sel = _arm(frame, reading, alpha, ground_truth)
    return {int(s): float(v) for s, v in zip(sel["seed"], sel["mse"])}


def _safe(make: Callable[[], Comparison]) -> Comparison | None:
    try:
        return make()
    except InsufficientData:
        return None


def _paired(a: dict[Any, float], b: dict[Any, float], confidence: float = CONFIDENCE) -> Comparison | None:
    """``a`` − ``b`` paired on ``a``'s seeds (a reading on the first 3 seeds pairs with the baseline's
    first 3; an error when ``b`` lacks one of them), None when there is too little to compare."""
    return _safe(lambda: paired_comparison(*pair_by_seed(a, b, policy="subset"), confidence=confidence))


def mse_comparisons(frame: pd.DataFrame, reading: str, alpha: float = BASELINE_ALPHA) -> dict[str, Comparison | None]:
    """Per ground truth: held-out MSE of ``reading`` − baseline at ``α``, paired by seed (None with
    one seed)."""
    return {
        gt: _paired(_by_seed(frame, reading, alpha, gt), _by_seed(frame, BASELINE.key, alpha, gt))
        for gt in GROUND_TRUTHS
    }


def _seed_log_ratios(
    frame: pd.DataFrame, a: tuple[str, float], b: tuple[str, float], targets: tuple[str, ...]
) -> dict[int, float]:
    """Per seed (of ``a``): mean over ``targets`` of ``ln((MSE_a + ε)/(MSE_b + ε))``."""
    per_seed: dict[int, list[float]] = {}
    for gt in targets:
        va, vb = pair_by_seed(_by_seed(frame, *a, gt), _by_seed(frame, *b, gt), policy="subset")
        for seed in va:
            per_seed.setdefault(seed, []).append(math.log((va[seed] + EPSILON) / (vb[seed] + EPSILON)))
    return {seed: float(np.mean(v)) for seed, v in sorted(per_seed.items())}


def pooled_log_ratio(
    frame: pd.DataFrame,
    reading: str,
    alpha: float = BASELINE_ALPHA,
    *,
    against: tuple[str, float] | None = None,
    targets: tuple[str, ...] = GROUND_TRUTHS,
) -> Comparison | None:
    """Pooled over ``targets`` (see the module docstring): the mean log-MSE ratio of ``(reading, α)``
    against ``against`` (default: the baseline reading at the same α), one t interval over seeds.
    ``exp(effect)`` is the geometric-mean factor on ``MSE + ε``; None with one seed."""
    ratios = _seed_log_ratios(frame, (reading, alpha), against or (BASELINE.key, alpha), targets)
    return _safe(lambda: one_sample(ratios))


def selection_accuracy(
    frame: pd.DataFrame, reading: str, alpha: float = BASELINE_ALPHA, *, twins: bool = False
) -> Proportion:
    """Share of runs of ``(reading, α)`` whose argmax is the ground truth (``twins``: or its twin),
    with its exact interval."""
    sel = _arm(frame, reading, alpha)
    return proportion(int(sel["picked_twin" if twins else "picked"].sum()), len(sel))


def _run_picks(frame: pd.DataFrame, reading: str, alpha: float, twins: bool) -> dict[tuple[str, int], float]:
    """Per run (target, seed): 100 when its argmax is right, else 0."""
    sel = _arm(frame, reading, alpha)
    return {
        (str(g), int(s)): 100.0 * bool(v)
        for g, s, v in zip(sel["ground_truth"], sel["seed"], sel["picked_twin" if twins else "picked"])
    }


def selection_difference(
    frame: pd.DataFrame,
    reading: str,
    alpha: float = BASELINE_ALPHA,
    *,
    twins: bool = False,
    confidence: float = CONFIDENCE,
) -> Comparison | None:
    """Selection accuracy of ``reading`` − baseline in percentage points, paired over the runs
    (target, seed) of the reading; None with fewer than two runs."""
    picks = _run_picks(frame, reading, alpha, twins), _run_picks(frame, BASELINE.key, alpha, twins)
    return _paired(*picks, confidence)  # type: ignore[arg-type]


def mcnemar_p(frame: pd.DataFrame, reading: str, alpha: float = BASELINE_ALPHA, *, twins: bool = False) -> float:
    """Exact McNemar test of the selection difference: two-sided binomial test of the discordant
    pairs of runs (right under one reading only); 1 when there is none."""
    picks = _run_picks(frame, reading, alpha, twins), _run_picks(frame, BASELINE.key, alpha, twins)
    # keys are (target, seed) runs: the reading's runs pair with the baseline's
    a, b = pair_by_seed(*picks, policy="subset")  # type: ignore[arg-type]
    gained = sum(a[k] > b[k] for k in a)
    lost = sum(a[k] < b[k] for k in a)
    return float(stats.binomtest(gained, gained + lost).pvalue) if gained + lost else 1.0


def alpha_effect(frame: pd.DataFrame, reading: str, ground_truth: str) -> Comparison | None:
    """Table 1's α comparison within one reading: MSE at α = 0 − MSE at α = 0.3 on one target,
    paired by seed (positive: the regulariser helps, as the paper says); None with one seed."""
    return _paired(_by_seed(frame, reading, 0.0, ground_truth), _by_seed(frame, reading, BASELINE_ALPHA, ground_truth))


def majority_targets(frame: pd.DataFrame, reading: str, alpha: float = BASELINE_ALPHA) -> dict[str, str]:
    """Per target: the candidate a strict majority of seeds chose (``""`` when none has one)."""
    sel = frame[(frame["reading"] == reading) & (frame["alpha"] == alpha)]
    out = {}
    for gt, group in sel.groupby("ground_truth"):
        counts = group["chosen"].value_counts()
        out[str(gt)] = str(counts.index[0]) if counts.iloc[0] * 2 > len(group) else ""
    return {gt: out[gt] for gt in GROUND_TRUTHS if gt in out}


def _stats(comp: Comparison | None) -> tuple[float, float, float, float]:
    """``(effect, CI low, CI high, MDE)``; NaNs without an interval."""
    return (math.nan,) * 4 if comp is None else (comp.effect, comp.ci_low, comp.ci_high, comp.mde)  # type: ignore[return-value]


_BASELINE_STATS = (0.0, 0.0, 0.0, math.nan)  # the baseline against itself: no difference, no MDE


def _columns(effect: str, prefix: str, values: tuple[float, float, float, float]) -> dict[str, float]:
    return dict(zip((effect, f"{prefix}_low", f"{prefix}_high", f"{prefix}_mde"), values))


def readings_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per reading (baseline first), plain floats for the page to format and glue:

    * selection at α = 0.3, strict (``picked``/``n_runs``, exact 95 % interval ``acc_low``/``acc_high``)
      and up to the twin (``picked_twin``, ``twin_low``/``twin_high``); ``majority`` and
      ``majority_twin``: targets (of 5) that a strict majority of seeds picked right;
    * ``d_acc`` and ``d_twin``: the paired differences from the baseline (percentage points) with
      ``_low``/``_high``/``_mde`` and the exact McNemar ``_p``;
    * ``log_ratio`` (pooled ln MSE ratio vs the baseline at α = 0.3) with ``log_low``/``log_high``/
      ``log_mde``; ``ratio`` = ``exp(log_ratio)``;
    * ``a0_minus_a3_<target>`` for Sigmoid and Tanh (Table 1's α claim within the reading: MSE at
      α = 0 − at α = 0.3) with ``_low``/``_high``/``_mde``; ``alpha_log_ratio``: pooled over those
      two targets, ln(MSE at α = 0.3 / MSE at α = 0) within the reading, with CI and MDE;
    * ``seeds``: seeds of the reading (its comparisons pair with the baseline's same seeds).
    """
    rows = []
    for reading in (BASELINE, *READINGS):
        if not (frame["reading"] == reading.key).any():
            continue
        majority = majority_targets(frame, reading.key)
        sel = frame[(frame["reading"] == reading.key) & (frame["alpha"] == BASELINE_ALPHA)]
        row: dict[str, Any] = {
            "reading": reading.key,
            "family": reading.family,
            "label": reading.label,
            "seeds": int(sel["seed"].nunique()),
            "majority": sum(choice == gt for gt, choice in majority.items()),
            "majority_twin": sum(_right_up_to_twin(c, gt) for gt, c in majority.items() if c),
        }
        for name, twins in (("acc", False), ("twin", True)):
            acc = selection_accuracy(frame, reading.key, twins=twins)
            row["picked" if not twins else "picked_twin"] = acc.k
            row["n_runs"] = acc.n
            row[f"{name}_low"], row[f"{name}_high"] = acc.ci_low, acc.ci_high
            d = f"d_{name}"
            if reading is BASELINE:
                row.update({**_columns(d, d, _BASELINE_STATS), f"{d}_p": 1.0})
            else:
                row.update(_columns(d, d, _stats(selection_difference(frame, reading.key, twins=twins))))
                row[f"{d}_p"] = mcnemar_p(frame, reading.key, twins=twins)
        base = reading is BASELINE
        row.update(
            _columns("log_ratio", "log", _BASELINE_STATS if base else _stats(pooled_log_ratio(frame, reading.key)))
        )
        row["ratio"] = math.exp(row["log_ratio"]) if math.isfinite(row["log_ratio"]) else math.nan
        for gt in ALPHA_TARGETS:
            key = f"a0_minus_a3_{gt}"
            row.update(_columns(key, key, _stats(alpha_effect(frame, reading.key, gt))))
        pooled = pooled_log_ratio(frame, reading.key, against=(reading.key, 0.0), targets=ALPHA_TARGETS)
        row.update(_columns("alpha_log_ratio", "alpha_log", _stats(pooled)))
        rows.append(row)
    return pd.DataFrame(rows).set_index("reading")


def per_target_table(frame: pd.DataFrame, alpha: float = BASELINE_ALPHA) -> pd.DataFrame:
    """Per reading (rows) and ground truth (columns): mean held-out MSE at ``α`` over the reading's
    seeds, and the paired difference from the baseline (``Δ``) with its 95 % CI and MDE."""
    rows = {}
    for reading in (BASELINE, *READINGS):
        if not (frame["reading"] == reading.key).any():
            continue
        comps = mse_comparisons(frame, reading.key, alpha) if reading is not BASELINE else {}
        row = {}
        for gt in GROUND_TRUTHS:
            row[(DISPLAY[gt], "MSE")] = float(np.mean(list(_by_seed(frame, reading.key, alpha, gt).values())))
            row.update({(DISPLAY[gt], c): v for c, v in zip(("Δ", "low", "high", "MDE"), _stats(comps.get(gt)))})
        rows[reading.label] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    table.index.name = "reading"
    return table


# Display: the tables above as text for the pages, and the numbers they quote


def _interval(mid: float, lo: float, hi: float, fmt: str, mde: float = math.nan, times: str = "") -> str:
    """``mid [lo, hi] (MDE mde)``; ``times="×"`` marks the MDE of a factor (the factor it detects)."""
    if not math.isfinite(mid):
        return "—"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return format(mid, fmt)
    text = f"{format(mid, fmt)} [{format(lo, fmt)}, {format(hi, fmt)}]"
    return text + (f" (MDE {times}{format(mde, fmt.lstrip('+'))})" if math.isfinite(mde) else "")


def readings_display(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`readings_table` as text: estimate [95 % CI] (MDE) per measure."""
    out = pd.DataFrame(index=table["label"])
    out["seeds"] = table["seeds"].to_numpy()
    rows = table.reset_index().to_dict("records")
    for name, picked, title, delta in (
        ("acc", "picked", "picked truth", "Δ (points)"),
        ("twin", "picked_twin", "truth or twin", "Δ up to twin (points)"),
    ):
        out[title] = [
            f"{int(r[picked])}/{int(r['n_runs'])} [{r[f'{name}_low']:.0%}, {r[f'{name}_high']:.0%}]" for r in rows
        ]
        d = f"d_{name}"
        out[delta] = [
            _interval(r[d], r[f"{d}_low"], r[f"{d}_high"], "+.0f", r[f"{d}_mde"])
            + ("" if r["reading"] == BASELINE.key else f", McNemar p = {r[f'{d}_p']:.2f}")
            for r in rows
        ]
    out["targets by majority (up to twin)"] = [f"{int(r.majority_twin)}/5" for r in table.itertuples()]
    out["MSE ÷ baseline"] = [
        _interval(*np.exp([r.log_ratio, r.log_low, r.log_high]), ".2f", math.exp(r.log_mde), "×")
        if r.Index != BASELINE.key
        else "1"
        for r in table.itertuples()
    ]
    for gt in ALPHA_TARGETS:
        c = f"a0_minus_a3_{gt}"
        out[f"{DISPLAY[gt]}: MSE α=0 − α=0.3"] = [
            _interval(getattr(r, c), getattr(r, f"{c}_low"), getattr(r, f"{c}_high"), "+.4f", getattr(r, f"{c}_mde"))
            for r in table.itertuples()
        ]
    out.index.name = "reading"
    return out


def per_target_display(frame: pd.DataFrame, alpha: float = BASELINE_ALPHA) -> pd.DataFrame:
    """:func:`per_target_table` as text: per target, the mean MSE and ``Δ [95 % CI]`` vs the baseline."""
    table = per_target_table(frame, alpha)
    out = pd.DataFrame(index=table.index)
    for gt in GROUND_TRUTHS:
        d = DISPLAY[gt]
        out[(d, "MSE")] = table[(d, "MSE")].map(lambda v: f"{v:.4f}")
        out[(d, "Δ vs baseline [95% CI]")] = [
            _interval(m, lo, hi, "+.4f") for m, lo, hi in zip(table[(d, "Δ")], table[(d, "low")], table[(d, "high")])
        ]
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    return out


#: ``readings_summary``'s keys per reading: the table's columns as they are, and the log ratios as factors.
_SUMMARY_COLUMNS = {"twin": "picked_twin", "n": "n_runs", "seeds": "seeds", "d": "d_twin", "d_low": "d_twin_low"}
_SUMMARY_COLUMNS |= {"d_high": "d_twin_high", "d_mde": "d_twin_mde", "d_p": "d_twin_p"}
_SUMMARY_RATIOS = {"ratio": "log_ratio", "ratio_low": "log_low", "ratio_high": "log_high"}


def readings_summary(frame: pd.DataFrame, table: pd.DataFrame) -> dict[str, float]:
    """The numbers the page quotes, as plain floats keyed for ``glue`` (no dots in the keys):
    per reading ``<key>_<what>`` (``twin``/``n`` picks up to the twin, ``sig`` Sigmoid picks,
    ``ratio``/``ratio_low``/``ratio_high`` pooled MSE factor vs the baseline, ``d``/``d_low``/``d_high``/
    ``d_mde``/``d_p`` the selection difference up to the twin), plus the page-level counts."""
    out: dict[str, float] = {}
    for key, row in table.iterrows():
        out.update({f"{key}_{name}": float(row[column]) for name, column in _SUMMARY_COLUMNS.items()})
        out[f"{key}_sig"] = float(_arm(frame, str(key), BASELINE_ALPHA, "sigmoid")["picked"].sum())
        for name, column in _SUMMARY_RATIOS.items():
            out[f"{key}_{name}"] = float(math.exp(row[column]))
    readings = table.drop(index=BASELINE.key)
    out["n_readings"] = float(len(readings))
    out["n_keep"] = float((readings["majority_twin"] == 5).sum())
    out["discord_bound"] = float(proportion(0, int(table.loc[BASELINE.key, "n_runs"])).ci_high)
    worse = [(table[f"a0_minus_a3_{gt}_high"] < 0) for gt in ALPHA_TARGETS]
    out["n_alpha_worse"] = float((worse[0] | worse[1]).sum())
    out["n_with_baseline"] = float(len(table))
    for gt in ALPHA_TARGETS:
        sel = frame[(frame["alpha"] == BASELINE_ALPHA) & (frame["ground_truth"] == gt)]
        out[f"best_a3_{gt}"] = float(sel.groupby("reading")["mse"].mean().min())
        out[f"base_a0_{gt}"] = float(_arm(frame, BASELINE.key, 0.0, gt)["mse"].mean())
    return out

"""Tables of classification runs beside a paper's: seeds → mean ± std, margins, rank agreement.

Accuracy is in %; "best" is the maximum over epochs, selected on the data it is reported on (as the
papers' tables presumably are); std has ``ddof = 1``. Our arms pair by seed (:func:`compare_groups`);
a paper prints only mean ± std, so :class:`Difference` uses Welch's t on those printed numbers."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from helpers.core.results_cache import MissingResult, load_result, result_path, run_many
from helpers.core.run_reads import is_hidden
from helpers.core.statistics import Comparison, InsufficientData, compare, seed_values, welch_from_stats

_METRICS = ("best", "final")


def _column(metric: str, stat: str = "mean") -> str:
    """The summary column of ``metric`` (``best`` or ``final``) and ``stat``: ``"best_mean"``."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    return f"{metric}_{stat}"


def _runner_up(keys: Iterable[Hashable], target: Hashable, exclude: Iterable[Hashable], mean: Callable) -> Hashable:
    """The key of the largest ``mean(key)`` other than ``target`` and those in ``exclude``."""
    excluded = set(exclude)
    others = [k for k in keys if k != target and k not in excluded]
    if not others:
        raise ValueError(f"no group besides {target!r} to compare with")
    return max(others, key=mean)


def _check_configs(configs: Sequence[Any]) -> None:
    if isinstance(configs, (str, bytes)) or not isinstance(configs, Sequence):
        raise TypeError(f"configs must be a sequence of run configs, got {type(configs).__name__}")
    for cfg in configs:
        if not (hasattr(cfg, "experiment") and hasattr(cfg, "profile")):
            raise TypeError(f"not a run config (needs 'experiment' and 'profile'): {cfg!r}")


def load_all(configs: Sequence[Any]) -> list[dict] | None:
    """The stored results of every config, or ``None`` when any is missing or failed (no training)."""
    _check_configs(configs)
    results = []
    for cfg in configs:
        if is_hidden(cfg):  # a tool left it out on purpose (helpers.core.run_reads)
            continue
        result = load_result(cfg)
        if result is None or result.get("status", "ok") != "ok":
            return None
        results.append(result)
    return results


def gather_results(configs: Sequence[Any], *, protocol: str | None = None, train: bool | None = None) -> list[dict]:
    """Results of ``configs`` in order, the missing ones trained (:func:`run_many`), or with
    ``train=False`` :class:`MissingResult` naming ``python -m tools.run <protocol>``."""
    _check_configs(configs)
    if not configs:
        raise ValueError("no configs given")
    if train is None or train:
        return run_many(configs, desc=protocol or "runs")
    results, missing = [], []
    for cfg in configs:
        result = load_result(cfg)
        if result is None or result.get("status", "ok") != "ok":
            missing.append(result_path(cfg))
        else:
            results.append(result)
    if missing:
        how = (
            f"python -m tools.run {protocol} --profile {min(cfg.profile for cfg in configs)}"
            if protocol
            else "the protocol's runs"
        )
        raise MissingResult(
            f"{len(missing)} of {len(configs)} results are missing (first: {missing[0]}); produce them "
            f"with `{how}` (or set REPRO_RERUN=1 to train here)"
        )
    return results


def _config(result: Mapping[str, Any]) -> Mapping[str, Any]:
    if not isinstance(result, Mapping) or "config" not in result or "history" not in result:
        raise TypeError("each result must be a run_or_load result dict with 'config' and 'history'")
    return result["config"]


#: The columns :func:`accuracy_rows` builds itself, before any ``extra`` ones.
_ROW_COLUMNS = tuple(
    "experiment model dataset activation penultimate seed best final best_epoch epochs n_params".split()
)


def accuracy_rows(
    results: Iterable[Mapping[str, Any]], extra: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None
) -> pd.DataFrame:
    """One row per classification run: :data:`_ROW_COLUMNS` (``penultimate``: ``"none"`` without;
    ``best``/``final``: validation accuracy in %) and one column per ``extra`` function of the result."""
    clash = sorted(set(extra or {}) & set(_ROW_COLUMNS))
    if clash:
        raise ValueError(f"extra columns {clash} would replace accuracy_rows' own columns {list(_ROW_COLUMNS)}")
    rows = []
    for result in results:
        cfg = _config(result)
        if result.get("status", "ok") != "ok":
            raise ValueError(f"result {result.get('config_hash')} is not a successful run")
        if not result.get("higher_is_better", True):
            raise ValueError(
                "accuracy_rows takes classification runs (higher is better); got a run "
                f"of task metric {cfg.get('dataset')!r} where lower is better"
            )
        history = result["history"]
        if not history:
            raise ValueError(f"result {result.get('config_hash')} has an empty history")
        row = {
            "experiment": cfg.get("experiment"),
            "model": cfg.get("model"),
            "dataset": cfg.get("dataset"),
            "activation": cfg.get("activation"),
            "penultimate": cfg.get("penultimate_activation") or "none",
            "seed": cfg.get("seed"),
            "best": 100.0 * float(result["best_val_metric"]),
            "final": 100.0 * float(history[-1]["val_metric"]),
            "best_epoch": int(result["best_epoch"]),
            "epochs": len(history),
            "n_params": result.get("n_params"),
        }
        for name, fn in (extra or {}).items():
            row[name] = fn(result)
        rows.append(row)
    if not rows:
        raise ValueError("no results given")
    return pd.DataFrame(rows)


def summarize(rows: pd.DataFrame, by: str | Sequence[str]) -> pd.DataFrame:
    """Columns ``n, best_mean, best_std, final_mean, final_std`` over seeds per group of ``by``
    (column name(s), the index), in the order the groups first appear in ``rows``."""
    by = [by] if isinstance(by, str) else list(by)
    if not by:
        raise ValueError("by must name at least one column")
    missing = [c for c in [*by, *_METRICS] if c not in rows.columns]
    if missing:
        raise ValueError(f"rows lack columns {missing}; build them with accuracy_rows()")
    grouped = rows.groupby(by if len(by) > 1 else by[0], sort=False, dropna=False)
    out = pd.DataFrame({"n": grouped.size()})
    for metric in _METRICS:
        out[f"{metric}_mean"] = grouped[metric].mean()
        out[f"{metric}_std"] = grouped[metric].std(ddof=1)  # NaN for one seed
    return out


def format_mean_std(mean: float, std: float, digits: int = 1) -> str:
    """``"72.4 ± 0.7"``; only the mean when ``std`` is NaN (one seed); ``"—"`` for a NaN mean."""
    if not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits must be an int >= 0, got {digits!r}")
    if mean is None or not math.isfinite(mean):
        return "—"
    if std is None or not math.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _check_paper(paper: Mapping[Hashable, tuple[float, float]]) -> None:
    if not isinstance(paper, Mapping):
        raise TypeError(f"paper must map a key to (mean, std), got {type(paper).__name__}")
    for key, value in paper.items():
        if not (isinstance(value, tuple) and len(value) == 2):
            raise ValueError(f"paper[{key!r}] must be a (mean, std) tuple, got {value!r}")


def rekey(paper: Mapping[Hashable, tuple[float, float]], names: Mapping[Hashable, Hashable]) -> dict:
    """A paper table re-keyed by our keys: ``{ours: paper[names[ours]]}`` for the names it has
    (e.g. ``rekey(TABLE2["CIFAR-10"], {"gelu": "GELU", ...})``)."""
    _check_paper(paper)
    return {ours: paper[theirs] for ours, theirs in names.items() if theirs in paper}


def side_by_side(
    summary: pd.DataFrame,
    paper: Mapping[Hashable, tuple[float, float]],
    *,
    labels: Mapping[Hashable, str] | None = None,
    digits: int = 1,
    paper_name: str = "paper",
) -> pd.DataFrame:
    """Our best and final accuracy (mean ± std; a one-level :func:`summarize`), the paper's
    ``(mean, std)`` by the same keys, their difference and the ranks by mean (1 = highest)."""
    _check_paper(paper)
    if summary.index.nlevels != 1:
        raise ValueError("side_by_side needs a summary with one index level; select one group first")
    keys = list(summary.index) + [k for k in paper if k not in summary.index]
    ours_rank = summary["best_mean"].rank(ascending=False, method="min")
    paper_means = pd.Series({k: v[0] for k, v in paper.items()}, dtype=float)
    paper_rank = paper_means.rank(ascending=False, method="min")
    rows = []
    for key in keys:
        have = key in summary.index
        s = summary.loc[key] if have else None
        p = paper.get(key)
        rows.append(
            {
                "": (labels or {}).get(key, str(key)),
                "ours, best": format_mean_std(s["best_mean"], s["best_std"], digits) if have else "—",
                "ours, final": format_mean_std(s["final_mean"], s["final_std"], digits) if have else "—",
                paper_name: format_mean_std(*p, digits) if p else "—",
                "ours − paper": f"{s['best_mean'] - p[0]:+.{digits}f}" if (have and p) else "—",
                "rank (ours)": int(ours_rank[key]) if have else "—",
                f"rank ({paper_name})": int(paper_rank[key]) if p else "—",
            }
        )
    return pd.DataFrame(rows).set_index("")


def rank_correlation(
    summary: pd.DataFrame, paper: Mapping[Hashable, tuple[float, float]], metric: str = "best"
) -> tuple[float, int]:
    """Spearman correlation between our mean ``metric`` and the paper's means over the shared keys,
    and the number of keys (NaN for fewer than 3 keys or a constant side)."""
    from scipy.stats import spearmanr  # lazy: scipy.stats is slow to import and only this statistic needs it

    _check_paper(paper)
    column = _column(metric)
    shared = [k for k in summary.index if k in paper]
    if len(shared) < 3:
        return math.nan, len(shared)
    ours = summary.loc[shared, column].to_numpy(float)
    theirs = np.array([paper[k][0] for k in shared], dtype=float)
    if np.ptp(ours) == 0 or np.ptp(theirs) == 0:
        return math.nan, len(shared)
    return float(spearmanr(ours, theirs).statistic), len(shared)


def sweep_frame(source: pd.DataFrame | Mapping[float, tuple[float, float]], metric: str = "best") -> pd.DataFrame:
    """Columns ``x, mean, std`` for :func:`helpers.core.plots.plot_sweep_errorbars`, from a
    :func:`summarize` frame indexed by the swept value (its ``metric``) or from a paper's
    ``{value: (mean, std)}``."""
    if isinstance(source, pd.DataFrame):
        if source.index.nlevels != 1:
            raise ValueError("sweep_frame needs a summary with one index level (the swept value)")
        x, mean, std = source.index, source[_column(metric)], source[_column(metric, "std")]
        return pd.DataFrame({"x": x.to_numpy(float), "mean": mean.to_numpy(float), "std": std.to_numpy(float)})
    _check_paper(source)
    return pd.DataFrame([(float(k), float(m), float(s)) for k, (m, s) in source.items()], columns=["x", "mean", "std"])


@dataclass(frozen=True)
class Difference:
    """``mean_a − mean_b`` of two groups, with the spreads and counts behind it."""

    a: Hashable
    b: Hashable
    mean_a: float
    mean_b: float
    std_a: float
    std_b: float
    n_a: int
    n_b: int

    @property
    def diff(self) -> float:
        return self.mean_a - self.mean_b

    def welch(self) -> Comparison:
        """``a − b`` with a 95 % Welch t interval (:func:`welch_from_stats`), what a printed table
        supports; :class:`InsufficientData` without a spread (one seed, or none printed)."""
        return welch_from_stats(self.mean_a, self.std_a, self.n_a, self.mean_b, self.std_b, self.n_b)

    def describe(self, labels: Mapping[Hashable, str] | None = None, digits: int = 1) -> str:
        """``"S-ReLU − GELU = +1.2 points, 95% CI [+0.1, +2.3] (Welch t from printed mean ± sd, df =
        3.9, p = 0.04; 3 vs 3 runs; MDE 1.5)"``, or the difference alone when there is no spread."""

        name = lambda k: (labels or {}).get(k, str(k))  # noqa: E731
        head = f"{name(self.a)} − {name(self.b)} = "
        try:
            return head + self.welch().describe(digits, unit="points")
        except InsufficientData:
            return head + f"{self.diff:+.{digits}f} points (no spread, so no interval)"


def difference(summary: pd.DataFrame, a: Hashable, b: Hashable, metric: str = "best") -> Difference:
    """``a − b`` of the mean ``metric`` in ``summary`` (from :func:`summarize`)."""
    mean, std = _column(metric), _column(metric, "std")
    for key in (a, b):
        if key not in summary.index:
            raise KeyError(f"{key!r} is not in the summary (have {list(summary.index)})")
    sa, sb = summary.loc[a], summary.loc[b]
    return Difference(
        a, b, float(sa[mean]), float(sb[mean]), float(sa[std]), float(sb[std]), int(sa["n"]), int(sb["n"])
    )


def margin_over_rest(
    summary: pd.DataFrame, target: Hashable, *, metric: str = "best", exclude: Iterable[Hashable] = ()
) -> Difference:
    """``target`` minus the best of the other groups (by mean ``metric``), ``exclude`` left out."""
    runner_up = _runner_up(summary.index, target, exclude, lambda k: summary.loc[k, _column(metric)])
    return difference(summary, target, runner_up, metric)


def paper_difference(
    paper: Mapping[Hashable, tuple[float, float]],
    a: Hashable,
    b: Hashable | None = None,
    *,
    exclude: Iterable[Hashable] = (),
    n_runs: int,
) -> Difference:
    """The same difference from a paper's printed ``(mean, std)``: ``a − b``, or ``a`` minus the
    best other entry when ``b`` is None. ``n_runs``: runs per cell (the paper's count, else the
    caller's assumption, which its text must call one)."""
    _check_paper(paper)
    if a not in paper:
        raise KeyError(f"{a!r} is not in the paper's table (have {list(paper)})")
    b = _runner_up(paper, a, exclude, lambda k: paper[k][0]) if b is None else b
    if b not in paper:
        raise KeyError(f"{b!r} is not in the paper's table (have {list(paper)})")
    return Difference(a, b, paper[a][0], paper[b][0], paper[a][1], paper[b][1], n_runs, n_runs)


def compare_groups(
    rows: pd.DataFrame, by: str, a: Hashable, b: Hashable, metric: str = "best", *, paired: bool | None = None
) -> Comparison:
    """``a − b`` of the per-seed ``metric`` of two groups of :func:`accuracy_rows` with a 95 % CI
    (:func:`compare`: paired by seed when both ran the same seeds, Welch otherwise): what claims use."""
    _column(metric)  # refuses anything but best or final accuracy
    return compare(seed_values(rows, metric, where={by: a}), seed_values(rows, metric, where={by: b}), paired=paired)


def training_curves(
    results: Iterable[Mapping[str, Any]],
    key: Callable[[Mapping[str, Any]], Hashable],
    metrics: Sequence[str] = ("val_metric", "train_loss"),
) -> pd.DataFrame:
    """Per-epoch mean and std over seeds of history ``metrics`` (``val_metric`` in %), grouped by
    ``key(config)``: columns ``group, epoch, <metric>_mean, <metric>_std``."""
    rows = []
    for result in results:
        cfg = _config(result)
        for row in result["history"]:
            entry = {"group": key(cfg), "epoch": int(row["epoch"])}
            for metric in metrics:
                if metric not in row:
                    raise KeyError(f"history rows have no {metric!r} (have {sorted(row)})")
                entry[metric] = 100.0 * row[metric] if metric == "val_metric" else row[metric]
            rows.append(entry)
    if not rows:
        raise ValueError("no results given")
    out = pd.DataFrame(rows).groupby(["group", "epoch"], sort=False)[list(metrics)].agg(["mean", "std"])
    out.columns = [f"{m}_{s}" for m, s in out.columns]
    return out.reset_index()


def binomial_se(accuracy: float, n: int) -> float:
    """Standard error, in percentage points, of one accuracy (in %) measured on ``n`` images."""
    if not 0 <= accuracy <= 100:
        raise ValueError(f"accuracy must be in [0, 100] %, got {accuracy!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    p = accuracy / 100.0
    return 100.0 * math.sqrt(p * (1 - p) / n)

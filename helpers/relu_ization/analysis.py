"""Tables of the ReLU-ization chapter from its run results (:mod:`.experiment`), and the paired
statistics behind its claims.

Every training arm gives one result per seed; :func:`arm_rows` turns them into the six rows of
:data:`~helpers.relu_ization.protocol.ARMS` (a GELU run gives (i) and, swapped, (ii)). A *cost* is
counted as a loss: accuracy lost (in points, ×100) or perplexity gained, so a positive cost is
always worse. Arms share seeds (same data order; the same initial weights for the same
architecture), so differences between arms are paired by seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from helpers.core.comparison import Comparison
from helpers.core.result_files import read_verified
from helpers.core.results_cache import CODE_VERSION, field_defaults
from helpers.core.runs import TrainConfig
from helpers.core.runtime import results_root
from helpers.core.statistics import one_sample, paired_comparison
from helpers.lambda_gelu.options import LambdaGeluOptions
from helpers.relu_ization.protocol import ARM_LABELS, ARMS, LAMBDA_TARGET
from helpers.srelu.options import SReluOptions


def _check(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    results = list(results)
    if not results:
        raise ValueError("no results: run or load the pair's configs first")
    for r in results:
        if "config" not in r or "before_swap" not in r:
            raise ValueError("each result must be a ReluizationConfig result (run_or_load of reluization_configs)")
    return results


def scale(higher_is_better: bool) -> float:
    """Display factor: accuracy in points (×100), perplexity as it is."""
    return 100.0 if higher_is_better else 1.0


def unit(higher_is_better: bool) -> str:
    return "points" if higher_is_better else "perplexity"


def _networks(arm: str) -> list[tuple[str, str, str, str]]:
    """The networks a training arm's result describes, in order: (row of :data:`ARMS`, the result's
    key, stage, which network it is). A GELU run gives (i) and, swapped, (ii); ReLU has no swap.
    ``stage`` is ``"deployed"`` for the network an arm ships and ``"before swap"`` for the smooth
    network of (iii), (iv) and (vi) at the end of its annealing."""
    if arm == "gelu":
        return [
            ("gelu", "before_swap", "deployed", "GELU network"),
            ("gelu_swap", "after_swap", "deployed", "swapped to ReLU"),
        ]
    if arm == "relu":
        return [("relu", "before_swap", "deployed", "as trained")]
    return [(arm, "before_swap", "before swap", "before swap"), (arm, "after_swap", "deployed", "swapped to ReLU")]


def arm_rows(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per (arm, seed): ``value`` (float32 metric of the arm's deployed network), ``int8``,
    ``before`` (the smooth network before its swap; NaN for GELU and ReLU rows), ``swap_cost``,
    ``int8_cost`` (int8 against its own float32 network) and ``vs_gelu`` (against (i) of the same
    seed), all costs in display units."""
    rows = [
        (
            c["pair"],
            c["seed"],
            r["higher_is_better"],
            arm,
            r[key],
            r["int8"][key],
            r["before_swap"] if key == "after_swap" else math.nan,
        )
        for r in _check(list(results))
        for c in [r["config"]]
        for arm, key, stage, _ in _networks(c["arm"])
        if stage == "deployed"
    ]
    frame = pd.DataFrame(rows, columns=["pair", "seed", "higher_is_better", "arm", "value", "int8", "before"])
    k = frame["higher_is_better"].map(lambda h: scale(h) if h else -1.0)  # a cost's sign × display factor
    frame["swap_cost"] = (frame["before"] - frame["value"]) * k
    frame["int8_cost"] = (frame["value"] - frame["int8"]) * k
    gelu = frame[frame["arm"] == "gelu"].set_index(["pair", "seed"])["value"].to_dict()
    frame["vs_gelu"] = (
        pd.Series([gelu.get(ps, math.nan) for ps in zip(frame["pair"], frame["seed"])]) - frame["value"]
    ) * k
    frame["label"] = frame["arm"].map(ARM_LABELS)
    order = {a: i for i, a in enumerate(ARMS)}
    return frame.sort_values(
        ["pair", "arm", "seed"], key=lambda c: c.map(order) if c.name == "arm" else c, ignore_index=True
    )


def _mean_sd(values: pd.Series, digits: int) -> str:
    v = values.dropna().to_numpy(dtype=float)
    if v.size == 0:
        return "–"
    if v.size == 1:
        return f"{v[0]:.{digits}f}"
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}"


def summary_table(rows: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """Mean ± sd over seeds per arm, in display units: the deployed float32 metric, the smooth
    network before its swap, the swap's cost, int8 and int8's cost."""
    out = []
    for arm, g in rows.groupby("arm", sort=False):
        k = scale(bool(g["higher_is_better"].iloc[0]))
        out.append(
            {
                "arm": ARM_LABELS[arm],
                "seeds": len(g),
                "before swap": _mean_sd(g["before"] * k, digits),
                "float32": _mean_sd(g["value"] * k, digits),
                "swap cost": _mean_sd(g["swap_cost"], digits),
                "int8": _mean_sd(g["int8"] * k, digits),
                "int8 cost": _mean_sd(g["int8_cost"], digits),
            }
        )
    return pd.DataFrame(out).set_index("arm")


def arm_values(rows: pd.DataFrame, arm: str, column: str = "value") -> dict[int, float]:
    """``{seed: rows[column]}`` of one arm (in display units for metric columns)."""
    g = rows[rows["arm"] == arm]
    if g.empty:
        raise KeyError(f"no rows of arm {arm!r}")
    k = scale(bool(g["higher_is_better"].iloc[0])) if column in ("value", "int8", "before") else 1.0
    return {int(s): float(v) * k for s, v in zip(g["seed"], g[column])}


def compare_arms(rows: pd.DataFrame, arm_a: str, arm_b: str, column: str = "value") -> Comparison:
    """``arm_a − arm_b`` of ``column``, paired by seed (display units)."""
    return paired_comparison(arm_values(rows, arm_a, column), arm_values(rows, arm_b, column))


def cost_of_swap(rows: pd.DataFrame, arm: str) -> Comparison:
    """The mean cost of an arm's swap over seeds, with its one-sample t interval."""
    return one_sample(arm_values(rows, arm, "swap_cost"))


def sparsity_values(frame: pd.DataFrame, arm: str, stage: str) -> dict[int, float]:
    """``{seed: exact-zero percentage}`` of one arm at ``stage`` (:func:`sparsity_frame`), the mean over its sites."""
    g = frame[(frame["arm"] == arm) & (frame["stage"] == stage)]
    return {int(s): 100.0 * float(v) for s, v in g.groupby("seed")["zero_fraction"].mean().items()}


def region_change(frame: pd.DataFrame, arm: str, ref: str = "relu") -> dict[int, float]:
    """``{seed: % more linear regions per line than ref}`` (:func:`regions_frame`), the seeds both have."""
    per = regions_per_seed(frame).set_index(["arm", "seed"])["pieces"]
    seeds = sorted({s for a, s in per.index if a == arm} & {s for a, s in per.index if a == ref})
    return {s: 100.0 * (per[(arm, s)] / per[(ref, s)] - 1.0) for s in seeds}


# ------------------------------------------------------------------------------ sparsity
def sparsity_frame(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Long frame: arm (of :data:`ARMS`), seed, site, layer (1-based), stage (:func:`_networks`), zero_fraction."""
    rows = [
        (c["pair"], arm, c["seed"], site, i, stage, z)
        for r in _check(list(results))
        for c, sp in [(r["config"], r["sparsity"])]
        for arm, key, stage, _ in _networks(c["arm"])
        for i, (site, z) in enumerate(zip(sp["sites"], sp[key]), 1)
    ]
    return pd.DataFrame(rows, columns=["pair", "arm", "seed", "site", "layer", "stage", "zero_fraction"])


def sparsity_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean exact-zero fraction over every site, per arm, stage and seed (the unweighted mean of the sites)."""
    return frame.groupby(["arm", "stage", "seed"], sort=False)["zero_fraction"].mean().reset_index()


# ----------------------------------------------------------------------------- linear regions
def regions_frame(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Long frame: arm, seed, line, pieces (regions crossed), distinct patterns, length, density
    (pieces per unit of input-space length). Arms without a region count are left out."""
    rows = [
        (c["pair"], "gelu_swap" if c["arm"] == "gelu" else c["arm"], c["seed"], i, p, d, ln, p / ln)
        for r in _check(list(results))
        if "regions" in r
        for c, reg in [(r["config"], r["regions"])]
        for i, (p, d, ln) in enumerate(zip(reg["pieces"], reg["distinct"], reg["length"]))
    ]
    return pd.DataFrame(rows, columns=["pair", "arm", "seed", "line", "pieces", "distinct", "length", "density"])


def regions_per_seed(frame: pd.DataFrame, column: str = "pieces") -> pd.DataFrame:
    """Mean over lines per arm and seed (what the paired comparisons use)."""
    return frame.groupby(["arm", "seed"], sort=False)[column].mean().reset_index()


# ------------------------------------------------------------------------- per-layer targets
def layer_lambda_frame(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Per seed and λ-GELU layer of the per-layer arm (vi): the target chosen at the switch
    epoch, the final λ, and the global λ_target beside them; plus, for every arm, the λ that meets
    ε on the final network's own pre-activations (``lambda_for_eps``)."""
    rows: list[tuple] = []
    for r in _check(list(results)):
        c = r["config"]
        if c["arm"] != "lgelu_layerwise":
            continue
        history = r["train"]["history"]
        targets = next((row["lambda_targets"] for row in history if "lambda_targets" in row), None)
        if targets is None:
            raise ValueError(f"run {r['config_hash']} recorded no lambda_targets")
        final, for_eps = history[-1]["lambdas"], r["preactivations"]["lambda_for_eps"]
        rows += [
            (c["pair"], c["seed"], i, t, f, LAMBDA_TARGET, for_eps[i - 1])
            for i, (t, f) in enumerate(zip(targets, final), 1)
        ]
    columns = ["pair", "seed", "layer", "target", "final_lambda", "global_target", "lambda_for_eps_final"]
    return pd.DataFrame(rows, columns=columns)


def preactivation_frame(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Per arm, seed and site, the final network's pre-activation statistics on the calibration
    images: std, the λ meeting ε, the gate and activation errors of a swap at the global λ_target."""
    columns = ["std", "lambda_for_eps", "gate_error_global", "activation_error_global"]
    rows = [
        (c["pair"], c["arm"], c["seed"], i + 1, site, *(pre[k][i] for k in columns))
        for r in _check(list(results))
        for c, pre in [(r["config"], r["preactivations"])]
        for i, site in enumerate(pre["sites"])
    ]
    return pd.DataFrame(rows, columns=["pair", "arm", "seed", "layer", "site", *columns])


# ---------------------------------------------------------------------------------- records
def int8_modules(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """What int8 quantisation covered in each network (the first seed of each training arm stands
    for all: the module lists depend on the architecture and activation only). ``arm`` is the row
    of :data:`ARMS`; ``network`` says which network of the arm was quantised."""
    fmt = lambda d: ", ".join(f"{k} ×{v}" for k, v in d.items()) or "none"  # noqa: E731
    first: dict[str, Mapping[str, Any]] = {}  # each training arm's first result
    for r in _check(list(results)):
        first.setdefault(r["config"]["arm"], r)
    rows = [
        (arm, network, fmt(q[f"modules_{key}"]["int8"]), fmt(q[f"modules_{key}"]["float"]), q["scope"])
        for train_arm, r in first.items()
        for q in [r["int8"]]
        for arm, key, _, network in _networks(train_arm)
    ]
    return pd.DataFrame(rows, columns=["arm", "network", "int8 modules", "float32 modules", "scope"])


def _machine(provenance: Mapping[str, Any] | None) -> str | None:
    """``"Intel(R) Xeon(R) Processor (AVX512)"`` from a result's provenance (None: not recorded)."""
    if not provenance or not provenance.get("cpu_model"):
        return None
    return f"{provenance['cpu_model']} ({provenance.get('cpu_capability', '?')})"


def reproduction_frame(results: Sequence[Mapping[str, Any]], results_dir: Path | None = None) -> pd.DataFrame:
    """One row per run that is also a committed Table I/II run: whether it analysed that run's own
    kept final weights (``reused``) or retrained it bit for bit (``identical``), the largest
    difference of some epoch's validation metric (in display units), and, for a retraining that
    differs, the CPU type each side was trained on (None: not recorded, or the committed result is
    no longer in results/). Seeded runs are bit-identical only on the same CPU type, so a different
    machine explains a difference.

    Each committed result is verified first (as :func:`helpers.core.results_cache.load_result`
    does), so a damaged file raises :class:`helpers.core.result_files.CorruptResult` instead of
    lending its provenance. ``results_dir`` overrides each arm's profile's results folder."""
    rows = []
    for r in _check(results):
        rep = r["reproduces"]
        if not rep.get("found"):
            continue
        diff, differs, theirs = rep.get("max_abs_diff_val_metric"), rep.get("identical") is False, None
        folder = results_dir if results_dir is not None else results_root(r["config"].get("profile", "cpu"))
        path = folder / rep["experiment"] / f"{rep['config_hash']}.json"
        if differs and path.exists():
            committed = read_verified(path, field_defaults(TrainConfig), CODE_VERSION, expected_hash=rep["config_hash"])
            theirs = _machine(committed.get("provenance"))
        rows.append(
            (r["config"]["arm"], r["config"]["seed"], rep["config_hash"], bool(rep.get("reused_weights")))
            + (rep.get("identical"), None if diff is None else diff * scale(bool(r["higher_is_better"])), theirs)
            + (_machine(r.get("provenance")) if differs else None,)
        )
    columns = ["committed run", "reused", "identical", "max |Δ val metric|", "trained on", "retrained on"]
    return pd.DataFrame(rows, columns=["arm", "seed", *columns])


# ------------------------------------------------------------------------------- page tables
def arm_setup_frame(configs: Sequence[Any]) -> pd.DataFrame:
    """One row per training arm: what it trains and how it reaches ReLU (from the configs)."""
    rows, seen = [], {}
    for cfg in configs:
        seen.setdefault(cfg.arm, []).append(cfg.seed)
    for cfg in configs:
        if cfg.arm in {r["training arm"] for r in rows}:
            continue
        t = cfg.train_config()
        e_s = math.floor(t.anneal_switch * t.epochs)
        epochs = f"{e_s} epoch{'s' if e_s != 1 else ''}"
        lgelu, srelu = t.option(LambdaGeluOptions), t.option(SReluOptions)
        if lgelu.anneal_target is not None:
            how = f"λ learned for {epochs}, then linear to λ_target = {lgelu.anneal_target:.1f} (Algorithm 1)"
        elif lgelu.anneal_layer_eps is not None:
            how = (
                f"λ learned for {epochs}, then linear to a per-layer target "
                f"(gate error ≤ ε = {lgelu.anneal_layer_eps:g} on the layer's inputs)"
            )
        elif srelu.delta_anneal_target is not None:
            how = (
                f"δ = {t.activation_kwargs['delta']:.3f} for {epochs}, then 1/δ linear to "
                f"δ_T = {srelu.delta_anneal_target:.4f}"
            )
        else:
            how = "none"
        arms = [a for a in ARMS if a == cfg.arm or (cfg.arm == "gelu" and a == "gelu_swap")]
        rows.append(
            {
                "training arm": cfg.arm,
                "rows": ", ".join(ARM_LABELS[a] for a in arms),
                "activation": t.activation,
                "annealing": how,
                "epochs": t.epochs,
                "train examples": t.n_train if t.n_train is not None else "all",
                "optimiser": f"{t.optimizer}, lr {t.lr:g}",
                "seeds": ", ".join(map(str, seen[cfg.arm])),
            }
        )
    return pd.DataFrame(rows).set_index("training arm")


def arm_means(rows: pd.DataFrame, column: str = "value") -> dict[str, float]:
    """Mean over seeds of ``column`` per arm, in display units for metric columns."""
    return {
        arm: float(sum(v.values()) / len(v)) for arm in rows["arm"].unique() for v in [arm_values(rows, arm, column)]
    }

"""λ-GELU run records: one result dict -> :class:`RunInfo` (pair, activation, mode, seed, t, c), the
labels, orders and scale notes shared by the λ-GELU tables, and what the run-based claim modules
(``grid_claims``, ``table1_claims``, ``table2_claims``) share: loading a row's committed runs, the
row builder :func:`_claim` and the verdict of a row of several parts (:func:`decide_parts`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from helpers.core.attribution import SourceValue
from helpers.core.claim import Claim, source_row
from helpers.core.comparison import Comparison
from helpers.core.results_cache import load_result
from helpers.core.run_reads import is_hidden
from helpers.core.verdicts import family_verdict, judge, merge_fields
from helpers.lambda_gelu.hardness import best_validation_score, hardness_drift
from helpers.lambda_gelu.paper import ANCHORS, SOURCE
from helpers.lambda_gelu.protocol import PAIRS, figure_scale

ACT_LABELS: dict[str, str] = {"gelu": "GELU", "relu": "ReLU", "lambda_gelu": "λ-GELU"}
MODE_ABBREVIATIONS: dict[str, str] = {"uniform": "uni", "increasing": "inc", "decreasing": "dec"}
#: The three pairs of initialisation modes of Fig. 3 (right), with their labels.
MODE_PAIRS: dict[str, tuple[str, str]] = {
    "uni-inc": ("uniform", "increasing"),
    "uni-dec": ("uniform", "decreasing"),
    "inc-dec": ("increasing", "decreasing"),
}
#: "Close to GELU" for the BVS parity claims: 1 accuracy point, or 2 % of the GELU perplexity.
BVS_TOL_ACCURACY: float = 0.01
BVS_TOL_PERPLEXITY_REL: float = 0.02
#: "High" rank correlation of layerwise hardness across initialisations (Fig. 3 claims).
RHO_HIGH: float = 0.7

_MODEL_LABELS = {"mlp": "MLP", "resnet18": "ResNet-18", "vit": "DeiT-tiny", "gpt": "GPT-2"}
DATASET_LABELS = {
    "cifar10": "CIFAR-10",
    "cifar100": "CIFAR-100",
    "tinyshakespeare": "Tiny Shakespeare",
    "fmnist": "FMNIST",
    "fashion_mnist": "FMNIST",
    "adult": "Adult",
}
#: Architectures "more commonly trained with ReLU" (Table I discussion) vs transformers.
_RELU_STYLE_MODELS = ("mlp", "resnet18")
_ACT_ORDER = {"GELU": 0, "ReLU": 1, "λ-GELU": 2}
_MODE_ORDER = {"-": 0, "dec": 1, "inc": 2, "uni": 3}  # Table I prints dec, inc, uni


# ------------------------------------------------------------------------------- run records
@dataclass(frozen=True)
class RunInfo:
    """What identifies one run inside the λ-GELU protocols."""

    pair: str
    dataset: str
    model: str
    activation: str
    mode: str | None
    t: float | None
    c: float | None
    seed: int
    annealed: bool
    epochs: int
    profile: str


def _check_result(result: object) -> Mapping[str, Any]:
    if not isinstance(result, Mapping):
        raise TypeError(f"a result must be a dict from run_or_load, got {type(result).__name__}")
    for key in ("config", "history"):
        if key not in result:
            raise ValueError(
                f"result has no {key!r} entry (keys: {sorted(result)}); "
                "pass the dicts returned by helpers.core.results_cache.run_or_load"
            )
    if result.get("status", "ok") != "ok":
        raise ValueError(f"result {result.get('config_hash', '?')} has status {result.get('status')!r}")
    history = result["history"]
    if not isinstance(history, Sequence) or not history:
        raise ValueError(f"result {result.get('config_hash', '?')} has an empty history")
    return result


def run_info(result: Mapping[str, Any]) -> RunInfo:
    """The protocol coordinates of one result (pair, activation, mode, t, c, seed, annealing)."""
    cfg = _check_result(result)["config"]
    experiment = str(cfg.get("experiment", ""))
    if not experiment.startswith("lgelu_") or experiment[len("lgelu_") :] not in PAIRS:
        raise ValueError(
            f"result of experiment {experiment!r} is not a λ-GELU pair run "
            f"(expected lgelu_<pair> with pair in {list(PAIRS)})"
        )
    activation = cfg["activation"]
    is_lambda = activation == "lambda_gelu"
    return RunInfo(
        pair=experiment[len("lgelu_") :],
        dataset=cfg["dataset"],
        model=cfg["model"],
        activation=activation,
        mode=cfg.get("init_mode") if is_lambda else None,
        t=float(cfg.get("activation_kwargs", {}).get("t", 1.0)) if is_lambda else None,
        c=float(cfg.get("hardness_lr_mult", 1.0)) if is_lambda else None,
        seed=int(cfg["seed"]),
        annealed=cfg.get("anneal_target") is not None,
        epochs=int(cfg["epochs"]),
        profile=cfg["profile"],
    )


def _val_metrics(result: Mapping[str, Any]) -> list[float]:
    return [float(h["val_metric"]) for h in result["history"]]


def _lambda_history(result: Mapping[str, Any]) -> np.ndarray:
    """``[epoch, layer]`` λ at the end of each epoch (epochs 1..T)."""
    try:
        rows = [h["lambdas"] for h in result["history"]]
    except KeyError:
        raise ValueError(f"λ-GELU result {result.get('config_hash', '?')} has epochs without 'lambdas'") from None
    return np.asarray(rows, dtype=float)


def _with_init(result: Mapping[str, Any]) -> np.ndarray:
    """``[epoch, layer]`` with the initial λ as epoch 0."""
    hist = _lambda_history(result)
    init = np.asarray(result.get("lambda_init") or [], dtype=float)
    if init.shape != hist.shape[1:]:
        raise ValueError(
            f"result {result.get('config_hash', '?')}: lambda_init has {init.size} layers, history has {hist.shape[1]}"
        )
    return np.vstack([init[None], hist])


def _bvs(result: Mapping[str, Any]) -> tuple[float, int]:
    mode = "max" if result.get("higher_is_better", True) else "min"
    return best_validation_score(_val_metrics(result), mode)


def run_table(results: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per run: its coordinates, BVS and its epoch, final mean λ (``lam_bar``), drift
    ``V_λ``, and the ReLU substitution (``original``, ``substituted``) when recorded."""
    rows = []
    for result in results:
        info = run_info(result)
        bvs, epoch = _bvs(result)
        row: dict[str, Any] = {
            **info.__dict__,
            "act": ACT_LABELS.get(info.activation, info.activation),
            "mode_label": MODE_ABBREVIATIONS.get(info.mode or "", "-"),
            "bvs": bvs,
            "bvs_epoch": epoch,
            "higher_is_better": bool(result.get("higher_is_better", True)),
            "lam_bar": np.nan,
            "drift": np.nan,
            "lam_at_best": np.nan,
            "original": np.nan,
            "substituted": np.nan,
        }
        if info.activation == "lambda_gelu":
            hist = _lambda_history(result)
            row["lam_bar"] = float(hist[-1].mean())
            row["drift"] = hardness_drift(hist)
            row["lam_at_best"] = float(hist[epoch - 1].mean())
        sub = result.get("substitution")
        if sub:
            row["original"], row["substituted"] = float(sub["original"]), float(sub["substituted"])
        rows.append(row)
    if not rows:
        raise ValueError("no results given")
    return pd.DataFrame(rows)


def pair_label(pair: str, dataset: str | None = None) -> str:
    """``"MLP/FMNIST"``; with ``dataset`` differing from the paper's, the stand-in is named."""
    spec = PAIRS.get(pair)
    if spec is None:
        raise ValueError(f"unknown pair {pair!r}; choose one of {list(PAIRS)}")
    label = f"{_MODEL_LABELS.get(spec.model, spec.model)}/{spec.paper_dataset}"
    if dataset is not None and _dataset_key(dataset) != _dataset_key(spec.paper_dataset):
        label += f" (on {dataset})"
    return label


def claim_pair_label(pair: str, profile: str) -> str:
    """The pair as a claim names it: our model and data set, with the paper's when we stand in
    (``"DeiT-tiny on CIFAR-10 (stand-in for TinyImageNet)"``)."""
    spec = PAIRS[pair]
    model = _MODEL_LABELS.get(spec.model, spec.model)
    used = spec.scale(profile).dataset
    if _dataset_key(used) == _dataset_key(spec.paper_dataset):
        return f"{model}/{spec.paper_dataset}"
    return f"{model} on {DATASET_LABELS.get(used, used)} (stand-in for {spec.paper_dataset})"


def scale_note(pair: str, profile: str, *, figures: bool = False) -> str:
    """How ``pair``'s runs of ``profile`` differ from the paper's ("as in the paper" when they do not);
    ``figures``: at the scale Figs. 1-2 run at (:func:`helpers.lambda_gelu.protocol.figure_scale`)."""
    scale = figure_scale(pair, profile) if figures else PAIRS[pair].scale(profile)
    return scale.note or "as in the paper"


def scale_text(pairs: Sequence[str], profile: str, *, figures: bool = False) -> str:
    """Each pair's :func:`scale_note`, labelled: a claim's scale."""
    return "; ".join(f"{pair_label(p)}: {scale_note(p, profile, figures=figures)}" for p in pairs)


def _dataset_key(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "").replace("fashionmnist", "fmnist")


def _pair_order(pair: str) -> int:
    return list(PAIRS).index(pair)


def _side_by_side(ours: pd.DataFrame, paper: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    merged = paper.merge(ours, on="paper_dataset", how="outer", suffixes=(" paper", " ours"))
    merged["pair"] = merged["pair ours"].fillna(merged["pair paper"])
    merged = merged.iloc[merged["pair"].map(_pair_order).argsort()].reset_index(drop=True)
    return merged[["pair", "paper_dataset"] + [f"{c}{s}" for c in columns for s in (" paper", " ours")]]


# ------------------------------------------------------------------- what the claim modules share
def load_committed(configs: Iterable[Any]) -> list[dict]:
    """The committed results of ``configs`` (a missing one is an error naming it). A row loads its own
    runs with this, so that :mod:`helpers.core.run_reads` finds the row's runs for it."""
    results = []
    for cfg in configs:
        if is_hidden(cfg):  # a tool left it out on purpose (helpers.core.run_reads)
            continue
        result = load_result(cfg)
        if result is None:
            raise ValueError(f"{cfg.experiment}: a run of a committed family is missing ({cfg})")
        results.append(result)
    return results


def fmt_list(values: Iterable[float], digits: int = 3) -> str:
    """``"0.861, 0.872"``: ``values`` at ``digits`` decimals, as a claim lists them."""
    return ", ".join(f"{v:.{digits}f}" for v in values)


def seed_map(frame: pd.DataFrame, value: str = "bvs") -> dict[int, float]:
    """``{seed: value}`` of the runs of one arm (one run per seed)."""
    if frame["seed"].duplicated().any():
        raise ValueError("two runs share a seed in one arm; cannot pair by seed")
    return {int(k): float(v) for k, v in zip(frame["seed"], frame[value])}


_NOT_RUN_NOTE = "results of this profile are not committed"


def _claim(
    key: str,
    claim: str,
    where: str,
    paper: SourceValue,
    ours: str | None,
    ok: bool | str | None,
    notebook: str,
    scale: str,
    profile: str,
    note: str = "",
    *,
    reading: str = "",
    **stats: str,
) -> Claim:
    """A run-based row; ``ours=None`` means the runs are missing ("not run here"). ``ok`` is an explicit
    verdict string, or a bool for a descriptive rule without a confidence interval (True:
    confirmed; False: inconclusive, since a scaled run that misses a descriptive threshold
    neither supports nor excludes the claim). ``reading``: the book's reading the verdict rests on
    (:attr:`helpers.core.report.Claim.reading`). ``stats``: the claim's ``effect, ci, n, test, mde``
    (see :func:`helpers.core.report.comparison_fields`) and ``basis``."""

    if ours is None:
        verdict, ours, note = "not run here", "–", (note + " " if note else "") + f"({_NOT_RUN_NOTE})"
        stats = {k: v for k, v in stats.items() if k == "basis"}
    elif isinstance(ok, str):
        verdict = ok
    else:
        verdict = "confirmed" if ok else "inconclusive"
    return source_row(
        key, claim, where, paper, ours, verdict, note, scale, profile,
        source=SOURCE, notebook=notebook, anchor=ANCHORS.get(notebook, ""), reading=reading, **stats,
    )  # fmt: skip


Judged = tuple[str, dict[str, Any], Comparison | None]


def decide_parts(
    makers: Mapping[str, Callable[[], Comparison]],
    *,
    shown: Callable[[Mapping[str, Judged]], str] | None = None,
    what: str = "pair",
    **rule: Any,
) -> tuple[str, dict[str, Any]]:
    """Verdict over several comparisons (``{label: () -> Comparison}``, each judged by
    :func:`helpers.core.verdicts.judge` with ``rule``) that must all hold: their
    :func:`~helpers.core.verdicts.family_verdict` (Holm-adjusted contradiction). The row shows every
    part's fields merged, or, with ``shown``, the fields of the part it picks (its effect labelled);
    inconclusive when there is no part (no ``what`` with runs)."""
    if not makers:
        return "inconclusive", {"n": f"no {what} with runs", "test": "no interval"}
    judged = {}
    for name, make in makers.items():
        with warnings.catch_warnings():  # a pair whose 3 seeds give (nearly) the same ρ: scipy's moment
            warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)  # note; the t is fine
            judged[name] = judge(make, label=name if shown else "", **rule)
    verdict = family_verdict([d for _, fields, _ in judged.values() for d in fields.get("design", ())])
    if shown is not None:
        return verdict, judged[shown(judged)][1]
    return verdict, merge_fields({name: fields for name, (_, fields, _) in judged.items()})

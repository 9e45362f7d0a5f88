"""What every λ-GELU run-based claim shares: the row builder (:func:`_claim`), the pages and their
anchors, the scale text, the pair labels, per-seed values of one arm, and the protocol loaders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from helpers.core.attribution import SourceValue
from helpers.core.claim import Claim, source_row
from helpers.core.comparison import Comparison
from helpers.core.results_cache import load_result
from helpers.core.run_reads import is_hidden
from helpers.core.statistics import tost
from helpers.core.verdicts import family_verdict, judge
from helpers.lambda_gelu.paper import SOURCE
from helpers.lambda_gelu.protocol import figure_scale
from helpers.lambda_gelu.records import (
    _MODEL_LABELS,
    _dataset_key,
    _pairs,
    pair_label,
)


def load_committed(configs: Iterable[Any]) -> list[dict]:
    """The committed results of ``configs`` (a missing one is an error naming it). A pair's row loads
    its own runs with this, so that :mod:`helpers.core.run_reads` finds the pair's runs for it."""
    results = []
    for cfg in configs:
        if is_hidden(cfg):  # a tool left it out on purpose (helpers.core.run_reads)
            continue
        result = load_result(cfg)
        if result is None:
            raise ValueError(f"{cfg.experiment}: a run of a committed family is missing ({cfg})")
        results.append(result)
    return results


_NB_GRID = "notebooks/10_lambda_gelu_tc_grid"
_NB_PROFILES = "notebooks/11_lambda_gelu_profiles"
_NB_ANNEAL = "notebooks/12_lambda_gelu_annealing"


#: MyST label (``(label)=`` before the heading) of the section of each page that computes its claims.
ANCHORS: dict[str, str] = {
    _NB_GRID: "lambda-gelu-grid-claims",
    _NB_PROFILES: "lambda-gelu-profiles-claims",
    _NB_ANNEAL: "lambda-gelu-annealing-claims",
}


_NOT_RUN_NOTE = "results of this profile are not committed"


#: A "severe" deterioration of perplexity after the ReLU swap (Section IV-C, GPT-2): +10 %.
SEVERE_PERPLEXITY_INCREASE: float = 0.10


#: "Matches the pre-replacement score": within half a point, the rounding of Table II's digits.
MATCH_TOL: float = 0.005


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
    """A Claim; ``ours=None`` means the runs are missing ("not run here"). ``ok`` is an explicit
    verdict string, or a bool for a descriptive rule without a confidence interval (True:
    confirmed; False: inconclusive, since a scaled run that misses a descriptive threshold
    neither supports nor excludes the claim). ``reading``: the book's reading the verdict rests on
    (:attr:`helpers.core.claim.Claim.reading`). ``stats``: the claim's ``effect, ci, n, test, mde``
    (see :func:`helpers.core.verdicts.comparison_fields`) and ``basis``."""

    if ours is None:
        verdict, ours, note = "not run here", "–", (note + " " if note else "") + f"({_NOT_RUN_NOTE})"
        stats = {k: v for k, v in stats.items() if k == "basis"}
    elif isinstance(ok, str):
        verdict = ok
    else:
        verdict = "confirmed" if ok else "inconclusive"
    anchor = ANCHORS.get(notebook, "")
    return source_row(
        key, claim, where, paper, ours, verdict, note, scale, profile,
        source=SOURCE, notebook=notebook, anchor=anchor, reading=reading, **stats,
    )  # fmt: skip


def _pair_claim_label(pair: str, profile: str) -> str:
    """The pair as a claim names it: our model and data set, with the paper's when we stand in
    (``"DeiT-tiny on CIFAR-10 (stand-in for TinyImageNet)"``)."""
    spec = _pairs()[pair]
    model = _MODEL_LABELS.get(spec.model, spec.model)
    used = spec.scale(profile).dataset
    if _dataset_key(used) == _dataset_key(spec.paper_dataset):
        return f"{model}/{spec.paper_dataset}"
    return f"{model} on {_DATASET_LABELS.get(used, used)} (stand-in for {spec.paper_dataset})"


_DATASET_LABELS = {
    "cifar10": "CIFAR-10",
    "cifar100": "CIFAR-100",
    "tinyshakespeare": "Tiny Shakespeare",
    "fmnist": "FMNIST",
    "fashion_mnist": "FMNIST",
    "adult": "Adult",
}


def _seed_map(frame: pd.DataFrame, value: str = "bvs") -> dict[int, float]:
    if frame["seed"].duplicated().any():
        raise ValueError("two runs share a seed in one arm; cannot pair by seed")
    return {int(k): float(v) for k, v in zip(frame["seed"], frame[value])}


def _combine(judged: Mapping[str, tuple[str, Mapping[str, Any], Comparison | None]]) -> str:
    """The family verdict of parts judged by :func:`judge` (:func:`family_verdict`: Holm-adjusted
    contradiction)."""
    return family_verdict([d for _, fields, _ in judged.values() for d in fields.get("design", ())])


def _equivalence_parts(makers: Mapping[str, Any], margin: float, digits: int = 3) -> tuple[str, dict[str, str]]:
    """Verdict over several comparisons (``{label: () -> Comparison}``) that must each be within
    ``± margin`` (TOST), and the claim fields of the part that decides (least shown equivalent)."""

    judged = {k: judge(m, claim="equivalence", margin=margin, digits=digits, label=k) for k, m in makers.items()}
    key = max(judged, key=lambda k: _equivalence_doubt(judged[k][2], margin))
    return _combine(judged), judged[key][1]


def _equivalence_doubt(comp: Comparison | None, margin: float) -> tuple[bool, float, float]:
    """How far one part is from being shown within ``± margin``, to order the parts: no interval
    first, then the larger TOST p, then the larger |effect|."""
    return (comp is None, tost(comp, margin).p if comp else 1.0, abs(comp.effect) if comp else 0.0)


def _scale_text(pairs: Sequence[str], profile: str, *, figures: bool = False) -> str:
    """Each pair's scale note; ``figures``: the scale Figs. 1-2 run at (``figure_scale``)."""
    return "; ".join(f"{pair_label(p)}: {_scale_note(p, profile, figures=figures)}" for p in pairs)


def _scale_note(pair: str, profile: str, *, figures: bool = False) -> str:
    """How ``pair``'s runs of ``profile`` differ from the paper's ("as in the paper" when they do not)."""
    scale = (figure_scale(pair, profile) if figures else None) or _pairs()[pair].scale(profile)
    return scale.note or "as in the paper"


def _fmt_list(values: Iterable[float], digits: int = 3) -> str:
    return ", ".join(f"{v:.{digits}f}" for v in values)


def _family_text(df: pd.DataFrame) -> tuple[str, bool]:
    a, b = df[df["family"] == "MLP/CNN"], df[df["family"] == "transformer"]
    text = f"MLP/CNN λ̄ {_fmt_list(a['lam_bar'], 2)}; transformers {_fmt_list(b['lam_bar'], 2)}"
    return text, bool(len(a) and len(b) and a["lam_bar"].min() > b["lam_bar"].max())

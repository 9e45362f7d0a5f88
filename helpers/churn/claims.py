"""The churn chapter's four claims, decided from committed results (never trained here).

A claim is decided over the models whose replicas are all committed (the retrain's claims "n",
MLP, and "o", the convolutional network); its note counts the runs of a model still training, and
with neither model its verdict is "not run here". Churn is the U-statistic over the replicas of
the source "both" (init and data order varied together), compared between arms paired by replica
(:func:`helpers.churn.measures.two_way_u_comparison`), in percentage points of the test set, and
judged by :func:`helpers.core.verdicts.judge`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

import numpy as np

from helpers.churn import measures as M
from helpers.churn.predictions import N_CLASSES, Predictions, decode_predictions
from helpers.churn.protocol import ARM_BY_KEY, MODELS, REPLICAS, churn_configs
from helpers.core.claim import Claim, RunDesign, source_row
from helpers.core.comparison import Comparison
from helpers.core.results_cache import load_result, result_path
from helpers.core.statistics import paired_comparison
from helpers.core.verdicts import intersection_union, judge

SOURCE = "Shamir & Lin (arXiv 2202.06499) and this book (beyond the papers)"
NOTEBOOK = "notebooks/42_churn"
ANCHOR = "churn-claims"
_row = partial(source_row, source=SOURCE, notebook=NOTEBOOK, anchor=ANCHOR)
#: "Matches" margin of churn, in percentage points (the book's half-point tolerance for accuracy).
MARGIN = 0.5
#: This chapter's "matches" margin, for the rules page (:func:`helpers.claims.margin_rules`).
MARGINS: tuple[tuple[str, str, str, str], ...] = (
    (
        "Churn: S-ReLU keeps ReLU's churn, annealing keeps the smooth arm's",
        r"churn-.*-keeps-.*",
        f"±{MARGIN:g} points of test examples whose prediction changes",
        "absolute: churn is a rate of test examples (half a point is 50 of 10,000)",
    ),
)
#: Churn's line of the report's table of smallest effects of interest (its direction claims use MARGIN).
SMALLEST_EFFECT: dict[str, tuple[str, str]] = {
    "churn": ("0.5 points", "absolute, of test examples whose prediction changes; the churn match margin")
}
CLAIM_SOURCE = "both"  # the source of nondeterminism the claims use
HYPOTHESIS = "hypothesis of this book (no source measures it)"


def replica_predictions(model: str, arm: str, source: str = CLAIM_SOURCE) -> dict[int, Predictions]:
    """The decoded predictions of the committed replicas of ``arm`` (replica -> predictions); the
    annealed arm is judged by the network it deploys, its ReLU swap (``predictions_relu``)."""
    key = "predictions_relu" if ARM_BY_KEY[arm].anneal else "predictions"
    out = {}
    for k, cfg in enumerate(churn_configs(model, arm, source)):
        result = load_result(cfg)  # verified: a damaged file raises, naming it
        if result is not None:
            try:
                out[k] = decode_predictions(result[key], N_CLASSES.get(cfg.dataset))
            except ValueError as err:  # a payload edited and restamped: name the file
                raise ValueError(f"{result_path(cfg)}: {key}: {err}") from None
    return out


def churn_matrix(preds: Mapping[int, Predictions], replicas: list[int], measure: str = "churn") -> np.ndarray:
    """The pair matrix of ``measure`` ("churn", "errors" or "pd") over ``replicas``."""
    items = [preds[k] for k in replicas]
    if len({p.targets_sha256 for p in items}) > 1:
        raise ValueError("replicas were evaluated on different examples (targets differ)")
    kernels: dict[str, Callable[[Predictions, Predictions], float]] = {
        "churn": lambda a, b: M.top1_churn(a.labels, b.labels),
        "errors": lambda a, b: M.churn_on_errors(a.labels, b.labels, a.correct, b.correct),
        "pd": lambda a, b: M.relative_pd(a.true_prob, b.true_prob),
    }
    return M.pair_matrix(items, kernels[measure])


def _scale(models: tuple[str, ...] = tuple(MODELS)) -> str:
    return "; ".join(f"{MODELS[m].label}: {MODELS[m].scale.note}" for m in models)


def _loaded(
    model_arms: dict[str, tuple[str, ...]],
) -> tuple[dict[tuple[str, str], dict[int, Predictions]], tuple[str, ...]]:
    """The predictions of every (model, arm) the claim needs, and the models whose every replica
    of every arm is there."""
    preds = {(m, a): replica_predictions(m, a) for m, arms in model_arms.items() for a in arms}
    complete = tuple(m for m, arms in model_arms.items() if all(len(preds[(m, a)]) == REPLICAS for a in arms))
    return preds, complete


def _churn_diff(preds, model: str, a: str, b: str) -> Callable[[], Comparison]:
    """Churn of arm ``a`` minus arm ``b`` in points, paired by replica; its interval covers another
    draw of test examples as well as of seeds (:func:`~helpers.churn.measures.two_way_u_comparison`)."""
    replicas = sorted(set(preds[(model, a)]) & set(preds[(model, b)]))
    for arm in (a, b):
        churn_matrix(preds[(model, arm)], replicas)  # refuses replicas evaluated on other examples
    return lambda: M.two_way_u_comparison(
        [preds[(model, a)][k].labels for k in replicas], [preds[(model, b)][k].labels for k in replicas], scale=100.0
    )


def _claim(
    key: str,
    text: str,
    model_arms: dict[str, tuple[str, ...]],
    parts: Callable[[dict, tuple[str, ...]], dict[str, tuple]],
    ours: Callable[[dict, tuple[str, ...]], str],
    *,
    reading: Callable[[dict, tuple[str, ...], tuple[RunDesign, ...]], str] | None = None,
) -> Claim:
    """The claim decided over the models whose replicas are complete (``parts`` and ``ours`` take
    the predictions and those models); pending while there are none. ``reading``: the book's reading
    a contradiction rests on (:attr:`Claim.reading`), asked only when the row is contradicted, with
    the predictions, the models and the parts' designs (it may answer "" when the parts that
    contradict do not rest on it)."""
    preds, complete = _loaded(model_arms)
    missing = [m for m in model_arms if m not in complete]
    have = sum(len(preds[(m, a)]) for m in missing for a in model_arms[m])
    need = sum(len(model_arms[m]) for m in missing) * REPLICAS
    if not complete:
        note = (
            f'The runs are listed in the retrain protocol (issue "Churn", claims n and o) and pending: '
            f'{have} of the {need} replicas this claim compares are committed (source "{CLAIM_SOURCE}").'
        )
        return _row(key, text, "churn", HYPOTHESIS, "pending", "not run here", note, _scale())
    verdict, fields = intersection_union(parts(preds, complete), what="parts")
    if missing:
        labels = ", ".join(MODELS[m].label for m in missing)
        note = (
            f"Decided on {', '.join(MODELS[m].label for m in complete)} only: the replicas of {labels} are still "
            f"training ({have} of {need} committed; retrain batch o), and the row is decided over both models "
            "once they are."
        )
        fields = {**fields, "note": " ".join(filter(None, (fields.get("note", ""), note)))}
    shown_reading = (
        reading(preds, complete, tuple(fields.get("design", ()))) if reading and verdict == "contradicted" else ""
    )
    return _row(
        key,
        text,
        "churn",
        HYPOTHESIS,
        ours(preds, complete),
        verdict,
        scale=_scale(complete),
        reading=shown_reading,
        **fields,
    )


def _mean_churn(preds, model: str, arm: str) -> float:
    p = preds[(model, arm)]
    return 100 * M.u_statistic(churn_matrix(p, sorted(p)))


def smooth_reduces_churn() -> Claim:
    """Shamir & Lin: smooth activations (SmeLU at both widths, GELU) have less churn than ReLU."""
    smooth = ("smelu_0.5", "smelu_2", "gelu")
    arms = {m: ("relu", *smooth) for m in MODELS}
    return _claim(
        "churn-smooth-lower-than-relu",
        "smooth activations (SmeLU β = 0.5 and 2, GELU) have lower top-1 churn than ReLU",
        arms,
        lambda p, ms: {
            f"{m} {a}": judge(
                _churn_diff(p, m, a, "relu"), direction=-1, unit="points", label=f"{a} − ReLU", negligible=MARGIN
            )
            for m in ms
            for a in smooth
        },
        lambda p, ms: "; ".join(
            f"{MODELS[m].label}: ReLU {_mean_churn(p, m, 'relu'):.2f} %, "
            + ", ".join(f"{ARM_BY_KEY[a].label} {_mean_churn(p, m, a):.2f} %" for a in smooth)
            for m in ms
        ),
        reading=_reading_if_only(
            lambda label: label.startswith("gelu"), "GELU (the book's addition) counted with SmeLU in one family"
        ),
    )


def _accuracy_cost(preds, model: str, a: str, b: str) -> Callable[[], Comparison]:
    replicas = sorted(set(preds[(model, a)]) & set(preds[(model, b)]))
    return lambda: paired_comparison(
        {k: 100 * preds[(model, a)][k].accuracy for k in replicas},
        {k: 100 * preds[(model, b)][k].accuracy for k in replicas},
    )


def churn_falls_with_width() -> Claim:
    """Churn falls from ReLU (β = 0) to SmeLU β = 0.5 to β = 2, and β = 2 costs accuracy against ReLU."""
    arms = {m: ("relu", "smelu_0.5", "smelu_2") for m in MODELS}

    steps = (
        ("β 0.5 vs 0", _churn_diff, "smelu_0.5", "relu"),
        ("β 2 vs 0.5", _churn_diff, "smelu_2", "smelu_0.5"),
        ("accuracy β 2 vs 0", _accuracy_cost, "smelu_2", "relu"),
    )

    def parts(p, ms):
        return {
            f"{m} {label}": judge(diff(p, m, a, b), direction=-1, unit="points", negligible=MARGIN)
            for m in ms
            for label, diff, a, b in steps
        }

    return _claim(
        "churn-falls-with-width",
        "churn falls as SmeLU's width β grows (0 → 0.5 → 2), at an accuracy cost (β = 2 below ReLU)",
        arms,
        parts,
        lambda p, ms: "; ".join(
            f"{MODELS[m].label}: churn " + " → ".join(f"{_mean_churn(p, m, a):.2f}" for a in arms[m]) + " %" for m in ms
        ),
        reading=_reading_if_only(
            lambda label: "accuracy" in label,
            "the accuracy-cost part is the book's addition (the source says smooth activations can even give "
            "accuracy gains)",
        ),
    )


def _keeps(key: str, text: str, arm: str, reference: str, reading: Callable | None = None) -> Claim:
    """``arm`` has the churn of ``reference``, within ±MARGIN points (an equivalence test per model)."""
    return _claim(
        key,
        text,
        {m: (reference, arm) for m in MODELS},
        lambda p, ms: {
            m: judge(_churn_diff(p, m, arm, reference), claim="equivalence", margin=MARGIN, unit="points") for m in ms
        },
        lambda p, ms: "; ".join(
            f"{MODELS[m].label}: {_mean_churn(p, m, arm):.2f} vs {_mean_churn(p, m, reference):.2f} %" for m in ms
        ),
        reading=reading,
    )


def srelu_keeps_relu_churn() -> Claim:
    """S-ReLU at the paper's δ = 0.001 has ReLU's churn."""
    text = f"S-ReLU at δ = 0.001 has ReLU's churn (within ±{MARGIN} points)"
    return _keeps("churn-srelu-keeps-relu", text, "srelu_0.001", "relu")


def annealed_keeps_smooth_churn() -> Claim:
    """The annealed λ-GELU network swapped to ReLU keeps the churn of λ-GELU trained without annealing."""
    text = f"annealed λ-GELU → ReLU keeps the smooth (λ-GELU) network's churn (within ±{MARGIN} points)"
    return _keeps("churn-annealed-keeps-smooth", text, "lgelu_anneal", "lgelu", _margin_miss_reading)


def _reading_if_only(
    rests_on: Callable[[str], bool], reading: str
) -> Callable[[dict, tuple[str, ...], tuple[RunDesign, ...]], str]:
    """``reading`` when every contradicted part (by its label) is one that ``rests_on`` it, else ""."""

    def shown(preds, models, design) -> str:
        against = [d.label for d in design if d.verdict == "contradicted"]
        return reading if against and all(rests_on(label) for label in against) else ""

    return shown


def _margin_miss_reading(preds, models: tuple[str, ...], design: tuple[RunDesign, ...] = ()) -> str:
    """The reading the annealed row's contradiction rests on, worded by the side on which the models
    whose churn differs by more than ``MARGIN`` miss it (lower churn after annealing is favourable)."""
    diffs = [_mean_churn(preds, m, "lgelu_anneal") - _mean_churn(preds, m, "lgelu") for m in models]
    missed = [d for d in diffs if abs(d) > MARGIN] or diffs
    if all(d < 0 for d in missed):
        side = "the miss is in the favourable direction (less churn after annealing)"
    elif all(d > 0 for d in missed):
        side = "the miss is in the unfavourable direction (more churn after annealing)"
    else:
        side = "the miss is on both sides"
    return f"a two-sided ±{MARGIN:g}-point margin (ours); {side}"


def claims() -> list[Claim]:
    """The chapter's four claims (the page's table)."""
    return [smooth_reduces_churn(), churn_falls_with_width(), srelu_keeps_relu_churn(), annealed_keeps_smooth_churn()]


#: The rows the report lists: the chapter's claims.
report_claims = claims

"""The ReLU-ization chapter's findings as claims: the book's own hypotheses, not a paper's.

No source measures what ReLU-ization buys, so every row states a hypothesis of this book
(:data:`SOURCE`) and decides it with the book's one verdict rule (:func:`helpers.core.verdicts.judge`),
with the "matches" margins of :data:`helpers.relu_ization.protocol.MARGINS` (:func:`matches_margin`).

:func:`pair_claims` builds the rows of one pair from its results, each by its own ``_<name>_claim``
function over the data they share (:class:`_PairData`); :func:`claims` loads the committed results
(never trains) for the report, each pair's from the cpu profile until all its paper-profile runs are
committed, and says "not run here" for what is missing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from helpers.core.claim import Claim, claim_key
from helpers.core.comparison import ALPHA, Comparison
from helpers.core.data import TEST_EXAMPLES
from helpers.core.profiles import decided_profile
from helpers.core.results_cache import has_result, load_results
from helpers.core.statistics import one_sample, paired_comparison
from helpers.core.verdicts import comparison_fields, judge, spent
from helpers.lambda_gelu.paper import QUOTES as LGELU_QUOTES
from helpers.lambda_gelu.paper import SWITCH_FRACTION
from helpers.relu_ization import analysis as A
from helpers.relu_ization.experiment import reluization_configs
from helpers.relu_ization.latency import MARGINS as LATENCY_MARGINS
from helpers.relu_ization.latency import SOURCE, hypothesis_row, latency_claims
from helpers.relu_ization.protocol import (
    LAMBDA_TARGET,
    REGION_MARGIN_PCT,
    RELU_PAIRS,
    SMALLEST_EFFECT,
    SPARSITY_MARGIN,
    TARGET_SMALLEST_EFFECT,
    cpu_pairs,
    matches_margin,
    pair_scale,
)
from helpers.relu_ization.protocol import MARGINS as PAIR_MARGINS

__all__ = ["SMALLEST_EFFECT", "SOURCE", "NOTEBOOKS", "ANCHORS", "MARGINS", "pair_claims", "claims"]

NB_MLP = "notebooks/40_reluization_mlp"
NB_PAIRS = "notebooks/41_reluization_pairs"
NOTEBOOKS = {"fmnist": NB_MLP}
ANCHORS = {NB_MLP: "reluization-mlp-claims", NB_PAIRS: "reluization-pairs-claims"}
#: Every "matches" margin of this chapter's rows, for the rules page (:func:`helpers.claims.margin_rules`).
MARGINS = PAIR_MARGINS + LATENCY_MARGINS
#: The arms whose linear regions a pair with ``linear_regions`` compares with ReLU from scratch.
REGION_ARMS = (("lgelu_anneal", "annealed λ-GELU → ReLU"), ("srelu_anneal", "annealed S-ReLU → ReLU"))


def _notebook(pair: str) -> str:
    return NOTEBOOKS.get(pair, NB_PAIRS)


def _claim(
    pair: str, name: str, text: str, verdict: str, ours: str, profile: str, note: str = "", **fields: Any
) -> Claim:
    nb = _notebook(pair)
    return hypothesis_row(
        claim_key("reluization", pair, name),
        f"{RELU_PAIRS[pair].label}: {text}",
        ours=ours,
        verdict=verdict,
        note=note,
        scale=pair_scale(pair, profile).note,
        profile=profile,
        notebook=nb,
        anchor=ANCHORS[nb],
        **fields,
    )


def _judged(
    d: _PairData, name: str, text: str, make: Callable, *, ours: Callable, note: str = "", reading: str = "", **kw: Any
) -> Claim:
    """A row decided by :func:`judge` (``kw``: its rule); ``ours(comparison)`` shows our value; ``reading``:
    the book's reading a contradiction rests on (kept only when the row is contradicted)."""
    verdict, fields, comp = judge(make, looks=pair_scale(d.pair, d.profile).looks, **kw)
    shown = ours(comp) if comp is not None else "one seed: no interval"
    reading = reading if verdict == "contradicted" else ""
    return _claim(d.pair, name, text, verdict, shown, d.profile, note, reading=reading, **fields)


def _metric_row(
    d: _PairData, name: str, text: str, how: int | str, arms: str | tuple[str, str], col: str = "value", **kw: Any
) -> Claim:
    """A row on the pair's metric, judged with its "matches" margin: as the equivalence margin
    (``how="equivalence"``) or as the smallest effect of interest of a direction (``how=±1``). It
    compares ``col`` of the two ``arms`` by seed, or tests one arm's swap cost; ``ours`` defaults to
    the two arms' means."""
    rule = (
        dict(claim="equivalence", margin=d.margin) if how == "equivalence" else dict(direction=how, negligible=d.margin)
    )
    one = isinstance(arms, str)
    make = (lambda: A.cost_of_swap(d.rows, arms)) if one else (lambda: A.compare_arms(d.rows, *arms, col))
    kw.setdefault("ours", lambda c: d.vs(*arms, col))
    return _judged(d, name, text, make, note=d.margin_note, unit=d.unit, examples=d.examples, **rule, **kw)


def _sparsity_row(d: _PairData, name: str, text: str, a: tuple[str, str], b: tuple[str, str], **kw: Any) -> Claim:
    """Exact zeros of (arm, stage) ``a`` against ``b``: equivalent within :data:`SPARSITY_MARGIN` points?"""
    frame = A.sparsity_frame(d.results)
    va, vb = A.sparsity_values(frame, *a), A.sparsity_values(frame, *b)
    ours = lambda c: f"{np.mean(list(va.values())):.1f} % vs {np.mean(list(vb.values())):.1f} % zeros"  # noqa: E731
    rule = dict(claim="equivalence", margin=SPARSITY_MARGIN, unit="points")
    return _judged(d, name, text, lambda: paired_comparison(va, vb), ours=ours, **rule, **kw)


class _PairData:
    """What the claims of one pair share, each frame computed from ``results`` when a row first reads
    it (a row built from some arms' runs computes only what it uses)."""

    def __init__(self, pair: str, results: Sequence[Mapping[str, Any]], profile: str) -> None:
        self.pair, self.results, self.profile = pair, list(results), profile

    @functools.cached_property
    def rows(self) -> pd.DataFrame:
        return A.arm_rows(self.results)

    @functools.cached_property
    def higher_is_better(self) -> bool:
        return bool(self.rows["higher_is_better"].iloc[0])

    @property
    def unit(self) -> str:
        return A.unit(self.higher_is_better)

    @property
    def examples(self) -> int | None:
        """The test examples an accuracy was measured on (None for perplexity)."""
        scale = pair_scale(self.pair, self.profile)
        return (scale.n_val or TEST_EXAMPLES.get(scale.dataset or "")) if self.higher_is_better else None

    @property
    def margin(self) -> float:
        """The "matches" margin in the metric's unit (:func:`matches_margin`)."""
        return matches_margin(self.rows, self.higher_is_better)[0]

    @property
    def margin_note(self) -> str:
        return f"Margin {matches_margin(self.rows, self.higher_is_better)[1]}."

    @functools.cached_property
    def targets(self) -> pd.DataFrame:
        return A.layer_lambda_frame(self.results)

    def mean(self, arm: str, col: str = "value") -> float:
        """One arm's column, averaged over seeds."""
        return float(np.mean(list(A.arm_values(self.rows, arm, col).values())))

    def vs(self, a: str, b: str, col: str = "value", sign: str = "") -> str:
        """``"<mean of a> vs <mean of b>"``, two decimals (``sign="+"``: signed)."""
        return f"{self.mean(a, col):{sign}.2f} vs {self.mean(b, col):{sign}.2f}"


def pair_claims(pair: str, results: Sequence[Mapping[str, Any]], profile: str) -> list[Claim]:
    """The claims of one pair from its results (every training arm and seed)."""
    d = _PairData(pair, results, profile)
    return [build(pair, d, profile) for build, _, _ in _rows_of(pair)]


def _gelu_swap_cost_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """gelu-swap-cost: swapping a trained GELU network's activations for ReLU costs accuracy (raises perplexity)."""
    text = "swapping a trained GELU network's activations for ReLU " + (
        "costs accuracy" if d.higher_is_better else "raises perplexity"
    )
    ours = lambda c: f"cost {c.effect:+.2f} {d.unit} (GELU {d.mean('gelu'):.2f} → {d.mean('gelu_swap'):.2f})"  # noqa: E731
    return _metric_row(d, "gelu-swap-cost", text, 1, "gelu_swap", ours=ours)


def _lgelu_swap_cheaper_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """lgelu-swap-cheaper: annealed λ-GELU costs less at its swap to ReLU than GELU does."""
    text = "annealed λ-GELU → ReLU costs less at its swap than GELU → ReLU"
    ours = lambda c: f"swap cost {d.vs('lgelu_anneal', 'gelu_swap', 'swap_cost', '+')} {d.unit}"  # noqa: E731
    return _metric_row(d, "lgelu-swap-cheaper", text, -1, ("lgelu_anneal", "gelu_swap"), "swap_cost", ours=ours)


def _srelu_swap_free_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """srelu-swap-free: annealed S-ReLU's swap to ReLU costs nothing, within the margin."""
    text = f"annealed S-ReLU (δ → 0) → ReLU: the swap costs nothing (within ±{d.margin} {d.unit})"
    ours = lambda c: _swap_cost_text(c, d.unit)  # noqa: E731
    return _metric_row(d, "srelu-swap-free", text, "equivalence", "srelu_anneal", ours=ours, digits=3)


def _lgelu_matches_relu_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """lgelu-matches-relu: annealed λ-GELU → ReLU matches ReLU from scratch in float32."""
    text = f"annealed λ-GELU → ReLU matches ReLU trained from scratch, float32 (within ±{d.margin} {d.unit})"
    return _metric_row(d, "lgelu-matches-relu", text, "equivalence", ("lgelu_anneal", "relu"))


def _srelu_matches_relu_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """srelu-matches-relu: annealed S-ReLU → ReLU matches ReLU from scratch in float32."""
    text = f"annealed S-ReLU → ReLU matches ReLU trained from scratch, float32 (within ±{d.margin} {d.unit})"
    return _metric_row(d, "srelu-matches-relu", text, "equivalence", ("srelu_anneal", "relu"))


def _lgelu_int8_matches_relu_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """lgelu-int8-matches-relu: after x86 static int8, annealed λ-GELU → ReLU matches ReLU from scratch."""
    metric = "accuracy" if d.higher_is_better else "perplexity"
    text = f"annealed λ-GELU → ReLU keeps its int8 {metric} within ±{d.margin} {d.unit} of ReLU from scratch"
    ours = lambda c: f"int8 {d.vs('lgelu_anneal', 'relu', 'int8')}"  # noqa: E731
    arms = ("lgelu_anneal", "relu")
    return _metric_row(
        d, "lgelu-int8-matches-relu", text + " (x86 static int8)", "equivalence", arms, "int8", ours=ours
    )


def _gelu_int8_cost_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """gelu-int8-cost: int8 costs the GELU network (GELU left in float32) more than ReLU from scratch."""
    text = "int8 quantisation costs the GELU network (GELU left in float32) more than ReLU from scratch"
    ours = lambda c: f"int8 cost {d.vs('gelu', 'relu', 'int8_cost', '+')} {d.unit}"  # noqa: E731
    return _metric_row(d, "gelu-int8-cost", text, 1, ("gelu", "relu"), "int8_cost", ours=ours)


def _layerwise_no_worse_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """layerwise-no-worse: per-layer λ targets give a ReLU network no worse than the global target.

    Tested on ``arm − ref`` oriented so that positive is better, but shown as ``arm − ref`` in the
    metric's own units like its neighbours (for perplexity, positive = worse), with the intervals of
    that same difference."""
    arm, ref, m, u = "lgelu_layerwise", "lgelu_anneal", d.margin, d.unit
    looks = pair_scale(pair, profile).looks
    better = (arm, ref) if d.higher_is_better else (ref, arm)
    verdict, fields, comp = judge(
        lambda: paired_comparison(*(A.arm_values(d.rows, x) for x in better)),
        claim="non-inferiority",
        margin=m,
        unit=u,
        looks=looks,
    )
    if comp is not None and not d.higher_is_better:
        same_difference = spent(A.compare_arms(d.rows, arm, ref), looks)
        shown = comparison_fields(same_difference, unit=u, claim="non-inferiority", alpha=ALPHA / looks)
        fields.update(effect=shown["effect"], ci=shown["ci"])
        fields["test"] += (
            f"; shown as {arm} − {ref} (positive = worse); tested as {ref} − {arm} > −{m:g}, "
            "the upper end of the shown 90% interval below +margin"
        )
    text = (
        "per-layer, distribution-aware λ targets give a ReLU network no worse than the "
        f"global λ_target does (non-inferiority, margin {m} {u})"
    )
    ours = d.vs(arm, ref) if comp is not None else "one seed: no interval"
    return _claim(pair, "layerwise-no-worse", text, verdict, ours, profile, d.margin_note, **fields)


def _layer_targets_smaller_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """layer-targets-smaller: the per-layer targets are, on average, below the global λ_target."""
    per_seed = {int(k): float(v) - LAMBDA_TARGET for k, v in d.targets.groupby("seed")["target"].mean().items()}
    layers = d.targets.groupby("layer")["target"].mean()
    return _judged(
        d,
        "layer-targets-smaller",
        f"the per-layer, distribution-aware targets are smaller than the global λ_target ≈ {LAMBDA_TARGET:.0f} "
        "(mean over layers)",
        lambda: one_sample(per_seed),
        direction=-1,
        negligible=TARGET_SMALLEST_EFFECT * LAMBDA_TARGET,
        digits=1,
        ours=lambda c: f"mean target {LAMBDA_TARGET + c.effect:.1f} (layers {layers.min():.0f} to {layers.max():.0f})",
        note="Each target: the smallest λ whose expected gate error E|H(x) − Φ(λx)| on the layer's inputs "
        "during the last learning epoch is at most ε = 0.005 (the paper's ε). Motivation: the λ-GELU paper, "
        f"{LGELU_QUOTES['layer_targets'].where}: “{LGELU_QUOTES['layer_targets'].text}”",
        reading=f"layer targets measured at the switch epoch ({SWITCH_FRACTION:.0%} of training)",
    )


def _lgelu_sparse_as_relu_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """lgelu-sparse-as-relu: deployed λ-GELU → ReLU has as many exact zeros as ReLU from scratch."""
    return _sparsity_row(
        d,
        "lgelu-sparse-as-relu",
        f"annealed λ-GELU → ReLU is as sparse as ReLU from scratch (exact zeros, within ±{SPARSITY_MARGIN:g} points)",
        ("lgelu_anneal", "deployed"),
        ("relu", "deployed"),
    )


def _lgelu_sparse_before_swap_claim(pair: str, d: _PairData, profile: str) -> Claim:
    """lgelu-sparse-before-swap: λ-GELU at λ_target has as many exact zeros before its swap as after."""
    return _sparsity_row(
        d,
        "lgelu-sparse-before-swap",
        f"λ-GELU at λ_target ≈ {LAMBDA_TARGET:.0f} is already as sparse before its swap as after it "
        f"(within ±{SPARSITY_MARGIN:g} points)",
        ("lgelu_anneal", "before swap"),
        ("lgelu_anneal", "deployed"),
        note="1 + erf(λx/√2) rounds to exactly 0 in float32 once λx is below about −5.5 "
        "(sparsity.float32_zero_threshold), so a hard λ-GELU writes exact zeros too.",
    )


def _regions_claim(pair: str, d: _PairData, profile: str, arm: str, label: str) -> Claim:
    """regions-<arm>: the annealed arm crosses as many linear regions along a line as ReLU from scratch."""
    pct = A.region_change(A.regions_frame(d.results), arm)
    return _judged(
        d,
        f"regions-{arm}",
        f"{label} crosses as many linear regions along a line as ReLU from scratch (within ±{REGION_MARGIN_PCT:g} %)",
        lambda: one_sample(pct),
        claim="equivalence",
        margin=REGION_MARGIN_PCT,
        unit="%",
        digits=1,
        ours=lambda c: f"{c.effect:+.1f} % regions per line vs ReLU from scratch",
        note="Exact count of the pieces of each segment between two validation images (16 lines, the same "
        "for every arm and seed); effect per seed: the relative difference of the mean count.",
    )


#: Each row of a pair: its function, the training arms whose runs decide it, and whether it judges
#: with the pair's "matches" margin (on a perplexity, that margin's base, ReLU from scratch, is
#: then read too: :func:`_row`).
_ROWS: tuple[tuple[Callable[..., Claim], tuple[str, ...], bool], ...] = (
    (_gelu_swap_cost_claim, ("gelu",), True),
    (_lgelu_swap_cheaper_claim, ("gelu", "lgelu_anneal"), True),
    (_srelu_swap_free_claim, ("srelu_anneal",), True),
    (_lgelu_matches_relu_claim, ("lgelu_anneal", "relu"), True),
    (_srelu_matches_relu_claim, ("srelu_anneal", "relu"), True),
    (_lgelu_int8_matches_relu_claim, ("lgelu_anneal", "relu"), True),
    (_gelu_int8_cost_claim, ("gelu", "relu"), True),
    (_layerwise_no_worse_claim, ("lgelu_anneal", "lgelu_layerwise"), True),
    (_layer_targets_smaller_claim, ("lgelu_layerwise",), False),
    (_lgelu_sparse_as_relu_claim, ("lgelu_anneal", "relu"), False),
    (_lgelu_sparse_before_swap_claim, ("lgelu_anneal",), False),
) + tuple((functools.partial(_regions_claim, arm=arm, label=label), (arm, "relu"), False) for arm, label in REGION_ARMS)


def _rows_of(pair: str) -> list[tuple[Callable[..., Claim], tuple[str, ...], bool]]:
    """The rows of ``pair``: the region rows only for a pair that counts linear regions."""
    regions = RELU_PAIRS[pair].linear_regions
    return [row for row in _ROWS if regions or getattr(row[0], "func", None) is not _regions_claim]


def _swap_cost_text(comp: Comparison, unit: str) -> str:
    """The swap cost; an exact result (the same metric before and after the swap on every seed)
    as a count. The results store the metric, not per-example predictions, so an unchanged
    accuracy is stated as that, not as "no prediction changed"."""
    if comp.exact:
        return (
            f"swap cost exactly {comp.effect:+g} {unit}: the metric is identical before and after the swap "
            f"on all {comp.n} seeds (per-example predictions are not stored)"
        )
    return f"swap cost {comp.effect:+.3f} {unit}"


def _not_run(pair: str, profile: str, why: str) -> Claim:
    return _claim(
        pair, "not-run", "what ReLU-ization buys (swap, sparsity, int8, latency)", "not run here", "–", profile, why
    )


def _pair_rows(pair: str, spec: Any, profile: str) -> list[Claim]:
    """One pair's rows from its committed results (each by :func:`_row`), or its "not run here" row."""
    if profile == "cpu" and pair not in cpu_pairs():
        return [_not_run(pair, profile, spec.cpu_pending)]
    configs = reluization_configs(pair, profile)
    missing = sum(not has_result(cfg) for cfg in configs)
    if missing:
        return [_not_run(pair, profile, f"{missing} of {len(configs)} results of this profile are not committed")]
    return [_row(pair, build, arms, uses_margin, profile) for build, arms, uses_margin in _rows_of(pair)]


def _row(pair: str, build: Callable[..., Claim], arms: tuple[str, ...], uses_margin: bool, profile: str) -> Claim:
    """One row from the runs of its own arms, loaded here, so that the runs
    :mod:`helpers.core.run_reads` finds for it (and a rerun retrains) are exactly these."""
    d = _PairData(pair, load_results(reluization_configs(pair, profile, arms)), profile)  # type: ignore[arg-type]
    if uses_margin and not d.higher_is_better and "relu" not in arms:  # a perplexity margin's base
        relu = load_results(reluization_configs(pair, profile, ("relu",)))
        d = _PairData(pair, d.results + relu, profile)  # type: ignore[operator]
    return build(pair, d, profile)


def claims(profile: str | None = None) -> list[Claim]:
    """Every pair's claims from committed results (loads only), then the latency claims of the
    committed benchmark record; a pair whose runs are not committed gets one "not run here" row.

    With ``profile``, every pair reads that profile's results; without, each pair reads the profile
    its committed results decide (:func:`helpers.core.profiles.decided_profile`: cpu until all of
    the pair's paper-profile runs are committed). The latency claims time the cpu runs' weights."""
    out: list[Claim] = []
    for pair, spec in RELU_PAIRS.items():
        decide = functools.partial(reluization_configs, pair)
        pair_profile = decided_profile(f"reluization_{pair}", decide) if profile is None else profile
        out.extend(_pair_rows(pair, spec, pair_profile))
    out.extend(latency_claims("cpu" if profile is None else profile))
    return out

"""The Flex-Act claims the book tests, with our value beside the paper's (:mod:`helpers.flexact.paper`).

Our values come from the committed cpu-profile results under ``results/flexact_synthetic/`` (see
:mod:`helpers.flexact.synthetic`) and of the CIFAR-10 protocol (:mod:`helpers.flexact.protocol`); a
claim whose runs are missing is reported as "not run here", never trained on the fly."""

from __future__ import annotations

from collections.abc import Callable

from helpers.core import tables as T
from helpers.core.attribution import Derived, SourceValue
from helpers.core.report import (
    Claim,
    combine_verdicts,
    comparison_fields,
    judge,
    merge_fields,
    proportion_verdict,
    run_verdict,
)
from helpers.core.results_cache import load_result
from helpers.core.runtime import current_profile
from helpers.core.statistics import ALPHA, compare, proportion, tost
from helpers.flexact import protocol as P
from helpers.flexact import readings as RD
from helpers.flexact.paper import (
    _FIXED_LABELS,
    ANCHOR_CIFAR,
    ANCHOR_READINGS,
    ANCHOR_SYNTHETIC,
    GROUND_TRUTHS,
    MATCH_MARGIN,
    N_SEEDS,
    NOTEBOOK_CIFAR,
    NOTEBOOK_SYNTHETIC,
    QUOTES,
    READINGS_MARGIN_PP,
    SOURCE,
    TABLE1,
    TABLE2,
)
from helpers.flexact.selections import flexact_selections
from helpers.flexact.synthetic import profile_settings, synthetic_configs
from helpers.flexact.synthetic_analysis import (
    majority_picks,
    mark_ranks,
    picks_ground_truth,
    results_frame,
    table1_stats,
)

__all__ = [
    "READINGS_TRIED",
    "fixed_cells_within",
    "proportion_fields",
    "synthetic_claims",
    "readings_claims",
    "claims",
    "cifar_claims",
]


# --------------------------------------------------------------------------------------------
# Claims
# --------------------------------------------------------------------------------------------


#: The readings of Section 4.1 the paper leaves open, which decide the α comparisons: what we
#: tried (see the sensitivity table of the synthetic page) and what we did not.
READINGS_TRIED = (
    "Readings tried (the page's section on readings the paper leaves open): soft and hard "
    "(straight-through) Gumbel samples; temperature 1 → 0.1 exponential per step, linear, and constant "
    "τ = 1; KL(p̃ ‖ p) as written and the reverse KL(p ‖ p̃); constant α, α warmed up over the first "
    "half, and α decayed to 0 by mid-training; λ ∈ {0.1, 1, 10}; α ∈ {0, 0.03, 0.1, 0.3, 1} at λ = 1. "
    "Not tried: other optimisers and learning rates, other τ end values, α switched on late."
)


def _claim(
    key: str,
    claim: str,
    where: str,
    paper: SourceValue,
    ours: str,
    verdict: str,
    note: str = "",
    scale: str = "",
    profile: str = "cpu",
    **fields: str,
) -> Claim:
    return Claim(
        key=key,
        claim=claim,
        source=f"{SOURCE}, {where}",
        paper_value=paper,
        our_value=ours,
        profile=profile,
        scale=scale,
        verdict=verdict,  # type: ignore[arg-type]
        notebook=NOTEBOOK_SYNTHETIC,
        note=note,
        anchor=ANCHOR_SYNTHETIC,
        **fields,
    )


def _cpu_results() -> tuple[list[dict], str] | None:
    """Committed cpu-profile results of Table 1's grid, or None when any run is missing."""

    results = [load_result(cfg) for cfg in synthetic_configs("cpu")]
    if any(r is None for r in results):
        return None
    return results, profile_settings("cpu")["note"]  # type: ignore[return-value]


def fixed_cells_within(ours: float, paper: float) -> bool:
    """Agreement rule for one Table 1 cell: within 0.0005 absolute or 2 % relative."""
    return abs(ours - paper) <= max(5e-4, 0.02 * abs(paper))


#: Test text of a count claim: a binomial interval has no minimal detectable effect.
_BINOMIAL_TEST = "exact binomial (Clopper-Pearson) 95% CI of the rate; no MDE for a count"


def proportion_fields(k: int, n: int, unit: str, *, test: str = _BINOMIAL_TEST) -> dict[str, str]:
    """The ``effect, ci, n, test`` fields of a count claim "``k`` of ``n`` ``unit``" with its exact
    binomial 95 % interval (:func:`helpers.core.statistics.proportion`); ``mde`` stays empty."""

    rate = proportion(int(k), int(n))
    return {
        "effect": f"{k}/{n} {unit} = {rate.rate:.0%}",
        "ci": f"95% {rate.ci_text()}",
        "n": f"{n} {unit}",
        "test": test,
    }


#: The rate "selects" must beat: a strict majority, Table 1's own rule per target.
SELECTION_THRESHOLD: float = 0.5


def _per_seed_means(results: list[dict]):
    """Held-out MSE per (ground truth, seed) row and model column (λ = 1 for Flex-Act)."""

    df = results_frame(results)
    df = df[(df["method"] != "flexact") | (df["lam"] == 1.0)]
    return df.pivot_table(index=["ground_truth", "seed"], columns="model", values="mse", aggfunc="first")


def synthetic_claims() -> list[Claim]:
    """Claims of Section 4.1 / Table 1 / Figs. 1-2 / Appendix A, checked on our cpu runs."""
    loaded = _cpu_results()
    builders: list[tuple[str, str, str, SourceValue, Callable]] = [
        (
            "flexact-matched-fixed-best",
            "The matched fixed-activation model is the best fixed model of its column and reaches ~0 MSE",
            "Table 1 / Section 4.1.1",
            (QUOTES["matched_fixed"],),
            _claim_matched_fixed,
        ),
        (
            "flexact-table1-fixed-cells",
            "Fixed-model entries of Table 1 (25 cells, MSE)",
            "Table 1",
            "25 printed values",
            _claim_fixed_cells,
        ),
        (
            "flexact-table1-std-meaning",
            "Table 1's ± is the standard deviation over the 5 seeds",
            "Table 1 caption / Section 4.1",
            "std over 5 seeds",
            _claim_std_meaning,
        ),
        (
            "flexact-selects-ground-truth",
            "Flex-Act (α=0.3) selects the ground-truth activation",
            "Abstract / Section 4.1.1 / Fig. 2",
            (QUOTES["selects_abstract"], QUOTES["fig2_caption"]),
            _claim_picks,
        ),
        (
            "flexact-alpha0-bias",
            "Without the regulariser (α=0) selection is biased towards ReLU/LeakyReLU on the Sigmoid task",
            "Section 4.1.1 / Fig. 1",
            "ReLU or LeakyReLU",
            _claim_bias,
        ),
        (
            "flexact-alpha-effect",
            "Flex-Act (α=0) has a higher MSE than α=0.3 on Sigmoid and Tanh",
            "Section 4.1.1 / Table 1",
            _paper_alpha_pair(),
            _claim_alpha_effect,
        ),
        (
            "flexact-rank",
            "Flex-Act (α=0.3) has the lowest or second-lowest MSE in every column",
            "Appendix A / Table 1",
            Derived(
                "5/5 columns",
                "our count of the † and lowest entries of Table 1's printed means (its bold "
                "marks did not survive the extraction)",
            ),
            _claim_rank,
        ),
    ]
    out = []
    for key, claim, where, paper, build in builders:
        if loaded is None:
            out.append(_claim(key, claim, where, paper, "—", "not run here", note="cpu-profile results not committed"))
            continue
        results, scale = loaded
        built = build(results)
        ours, verdict, note = built[:3]
        fields = built[3] if len(built) > 3 else {}
        out.append(_claim(key, claim, where, paper, ours, verdict, note, scale=scale, **fields))
    return out


def _paper_alpha_pair() -> str:
    t = TABLE1
    return (
        f"Sigmoid {t['Flex-Act (α=0)']['sigmoid'][0]:.4f} vs {t['Flex-Act (α=0.3)']['sigmoid'][0]:.4f}; "
        f"Tanh {t['Flex-Act (α=0)']['tanh'][0]:.4f} vs {t['Flex-Act (α=0.3)']['tanh'][0]:.4f}"
    )


def _claim_matched_fixed(results: list[dict]) -> tuple[str, str, str]:
    means = table1_stats(results)["mean"]
    ok = 0
    worst = 0.0
    for gt in GROUND_TRUTHS:
        fixed = means.loc[list(_FIXED_LABELS.values()), gt]
        matched = fixed[_FIXED_LABELS[gt]]
        worst = max(worst, matched)
        ok += int(fixed.idxmin() == _FIXED_LABELS[gt] and matched < 1e-3)
    per_seed = _per_seed_means(results)
    fixed_cols = list(_FIXED_LABELS.values())
    k = sum(
        int(row[fixed_cols].astype(float).idxmin() == _FIXED_LABELS[gt] and row[_FIXED_LABELS[gt]] < 1e-3)
        for (gt, _seed), row in per_seed.iterrows()
    )
    fields = proportion_fields(
        k,
        len(per_seed),
        "seed-columns",
        test="per seed and column: the matched model has the lowest fixed-model MSE and "
        "< 0.001 (exact optimum 0); " + _BINOMIAL_TEST,
    )
    return (
        f"{ok}/5 columns (largest matched MSE {worst:.1e}); {k}/{len(per_seed)} seed-columns",
        "confirmed" if ok == 5 and k == len(per_seed) else "contradicted",
        "Confirmed when the rule holds on the column means and on every seed.",
        fields,
    )


def _claim_fixed_cells(results: list[dict]) -> tuple[str, str, str]:
    means = table1_stats(results)["mean"]
    misses = []
    for gt in GROUND_TRUTHS:
        for label in _FIXED_LABELS.values():
            ours, paper = float(means.loc[label, gt]), TABLE1[label][gt][0]
            if not fixed_cells_within(ours, paper):
                misses.append(f"{label}/{gt}: {ours:.4f} vs {paper:.4f}")
    n_ok = 25 - len(misses)
    note = (
        "agreement: within 0.0005 or 2 %. The fixed-model cells are the closed-form optima of one neuron "
        "(see the page), reached on every seed, so a tolerance is a comparison with an exact value, not a "
        "test of a seed effect. " + ("; ".join(misses) if misses else "")
    )
    fields = proportion_fields(
        n_ok,
        25,
        "cells",
        test=f"per-cell tolerance against the paper's printed mean (means of {N_SEEDS} seeds); " + _BINOMIAL_TEST,
    )
    return (f"{n_ok}/25 cells agree", "confirmed" if not misses else "contradicted", note.strip(), fields)


def _claim_std_meaning(results: list[dict]) -> tuple[str, str, str]:
    """Compare the paper's ± with our seed std and our per-sample std on the fixed-model cells
    whose MSE is not ~0 (where both readings differ)."""

    stats = table1_stats(results)
    near_sample, near_seed, n = 0, 0, 0
    for gt in GROUND_TRUTHS:
        for label in _FIXED_LABELS.values():
            paper_mean, paper_std, _ = TABLE1[label][gt]
            if paper_mean < 1e-3:
                continue
            n += 1
            sample = float(stats["sample_std"].loc[label, gt])
            seed = float(stats["std"].loc[label, gt])
            near_sample += int(abs(sample - paper_std) <= max(5e-4, 0.05 * paper_std))
            near_seed += int(abs(seed - paper_std) <= max(5e-4, 0.05 * paper_std))
    ours = (
        f"per-sample std of the squared error matches {near_sample}/{n} cells; std over seeds matches {near_seed}/{n}"
    )

    seed_rate, sample_rate = proportion(near_seed, n), proportion(near_sample, n)
    if near_sample > near_seed and seed_rate.ci_high < 0.5:
        verdict = "contradicted"
    elif near_seed > near_sample and seed_rate.ci_low > 0.5:
        verdict = "confirmed"
    else:
        verdict = "inconclusive"
    fields = proportion_fields(near_seed, n, "cells matched by the std over seeds")
    fields["n"] = f"{n} cells"
    fields["effect"] += f" (per-sample std: {near_sample}/{n}, 95% CI {sample_rate.ci_text()})"
    return (
        ours,
        verdict,
        (
            "cells with paper MSE ≥ 0.001; match: within 5 % (or 0.0005). Contradicted when the "
            "per-sample reading matches more cells and the 95% CI of the seed-std reading's match rate "
            "lies below 50 %; confirmed in the mirror case."
        ),
        fields,
    )


def _claim_picks(results: list[dict]) -> tuple[str, str, str]:
    per_gt = picks_ground_truth(results, 0.3)
    k = majority_picks(results, 0.3)
    runs = sum(per_gt.values())
    total = sum(1 for r in results if r["config"]["method"] == "flexact" and r["config"]["alpha"] == 0.3)

    detail = ", ".join(f"{gt} {n}" for gt, n in per_gt.items())
    rate = proportion(runs, total)
    fields = {
        "effect": f"{runs}/{total} runs = {rate.rate:.0%}",
        "ci": f"95% {rate.ci_text()}",
        "n": f"{total} runs ({N_SEEDS} seeds × 5 ground truths)",
        "test": f"exact binomial (Clopper-Pearson) 95% CI of the rate against {SELECTION_THRESHOLD:.0%}, and per "
        "ground truth (a target whose own CI lies below it contradicts)",
    }
    per_target = {gt: proportion(int(n), N_SEEDS) for gt, n in per_gt.items()}
    below = [gt for gt, r in per_target.items() if proportion_verdict(r, SELECTION_THRESHOLD) == "contradicted"]

    df = results_frame(results)
    miss = df[(df["method"] == "flexact") & (df["alpha"] == 0.3) & (df["lam"] == 1.0) & ~df["picked_truth"]]
    twins = {("relu", "leaky_relu"), ("leaky_relu", "relu")}
    only_twins = bool(len(miss)) and all((r.ground_truth, r.chosen) in twins for r in miss.itertuples())
    # one rule: the pooled rate's interval against the threshold; every target must also keep a
    # majority of its seeds to confirm, and a target whose own interval is below it contradicts
    pooled = proportion_verdict(rate, SELECTION_THRESHOLD)
    if below or pooled == "contradicted":
        verdict = "contradicted"
    elif pooled == "confirmed" and k == 5:
        verdict = "confirmed"
    else:
        verdict = "inconclusive"
    why = ""
    if verdict != "confirmed" and only_twins:
        why = (
            "Every miss picks LeakyReLU for ReLU or the reverse: at slope 0.01 the two fit this task almost "
            "equally (the paper's Fig. 2 caption concedes it), so the runs cannot tell them apart."
        )
    elif verdict != "confirmed":
        why = READINGS_TRIED
    rule = (
        f"Rule: the 95% CI of the selection rate over all runs against {SELECTION_THRESHOLD:.0%}; confirmed when "
        "it lies above and every ground truth has a majority of its seeds, contradicted when it (or one ground "
        "truth's own CI) lies below, inconclusive otherwise."
    )
    return (
        f"{k}/5 ground truths (majority of seeds); {runs}/{total} runs",
        verdict,
        f"seeds picking the truth: {detail}; λ = 1. {rule} {why}".strip(),
        fields,
    )


def _claim_bias(results: list[dict]) -> tuple[str, str, str]:
    df = results_frame(results)
    sel = df[(df["method"] == "flexact") & (df["alpha"] == 0.0) & (df["ground_truth"] == "sigmoid")]

    n_bias = int(sel["chosen"].isin(["relu", "leaky_relu"]).sum())
    rate = proportion(n_bias, len(sel))
    chance = 2 / len(GROUND_TRUTHS)  # two of the candidates, picked uniformly at random
    fields = {
        "effect": f"{n_bias}/{len(sel)} seeds",
        "ci": f"95% {rate.ci_text()}",
        "n": f"{len(sel)} seeds",
        "test": f"exact binomial (Clopper-Pearson) 95% CI against the chance rate "
        f"{chance:.0%} (2 of {len(GROUND_TRUTHS)} candidates)",
    }
    return (
        f"{n_bias}/{len(sel)} seeds end on ReLU/LeakyReLU",
        proportion_verdict(rate, chance),
        '"Biased towards" read as a rate above picking at random among the candidates: confirmed when the '
        "95% CI lies above that rate, contradicted when below, inconclusive when it contains it.",
        fields,
    )


def _claim_alpha_effect(results: list[dict]) -> tuple[str, str, str]:

    means = table1_stats(results)["mean"]
    df = results_frame(results)
    df = df[(df["method"] == "flexact") & (df["lam"] == 1.0)] if "lam" in df.columns else df[df["method"] == "flexact"]
    a0, a3 = "Flex-Act (α=0)", "Flex-Act (α=0.3)"
    parts, verdicts, per = [], [], {}
    for gt in ("sigmoid", "tanh"):
        v0, v3 = float(means.loc[a0, gt]), float(means.loc[a3, gt])
        parts.append(f"{gt.capitalize()} {v0:.4f} vs {v3:.4f}")
        sel = df[df["ground_truth"] == gt]
        arm = {
            alpha: {int(r.seed): float(r.mse) for r in sel[sel["alpha"] == alpha].itertuples()} for alpha in (0.0, 0.3)
        }
        verdict_gt, per[gt.capitalize()], _ = judge(
            lambda arm=arm: compare(arm[0.0], arm[0.3]), direction=1, digits=4
        )  # same seeds: paired
        verdicts.append(verdict_gt)
    fields = merge_fields(per)
    verdict = combine_verdicts(verdicts)
    note = (
        "held-out MSE, α=0 − α=0.3 paired by seed; confirmed when both 95% CIs are above 0, contradicted when "
        "one lies below 0 (α = 0.3 the worse setting), inconclusive otherwise. "
        + (
            ""
            if verdict == "confirmed"
            else "The outcome may depend on choices the paper leaves open (the "
            "page's sensitivity table shows α and λ). " + READINGS_TRIED
        )
    )
    return "; ".join(parts), verdict, note, fields


def _claim_rank(results: list[dict]) -> tuple[str, str, str]:
    means = table1_stats(results)["mean"]
    marks = mark_ranks(means)
    row = marks.loc["Flex-Act (α=0.3)"]
    good = [gt for gt in GROUND_TRUTHS if row[gt] in ("best", "second")]
    per_seed = _per_seed_means(results)
    seed_marks = mark_ranks(per_seed.T).T  # rank each (ground truth, seed) row across the models
    k = int(seed_marks["Flex-Act (α=0.3)"].isin(["best", "second"]).sum())
    fields = proportion_fields(
        k,
        len(per_seed),
        "seed-columns",
        test="per seed and column: Flex-Act (α=0.3) ranks best or second of the 7 models "
        "(competition ranking at 4 decimals); " + _BINOMIAL_TEST,
    )
    rate = proportion_verdict(proportion(k, len(per_seed)), SELECTION_THRESHOLD)
    verdict = (
        "confirmed"
        if rate == "confirmed" and len(good) == 5
        else "contradicted"
        if rate == "contradicted"
        else "inconclusive"
    )
    return (
        f"{len(good)}/5 columns (on the seed means); {k}/{len(per_seed)} seed-columns",
        verdict,
        "competition ranking at 4 decimals: ties share a rank, a tie for best leaves no second. Rule: the 95% CI "
        f"of the per-seed rate against {SELECTION_THRESHOLD:.0%} (a majority of seeds, Table 1's rule); confirmed "
        "when it lies above and every column of seed means agrees, contradicted when it lies below, "
        "inconclusive otherwise. " + ("" if len(good) == 5 else READINGS_TRIED),
        fields,
    )


def cifar_claims(profile: str = "cpu") -> list[Claim]:
    """Table 2 (CIFAR-10) claims from the stored results of ``profile`` (loaded, never trained;
    missing runs give "not run here"). Accuracy is the best validation accuracy (%), mean over
    seeds, with the rules of :mod:`helpers.core.tables`."""

    profile = current_profile(profile)
    notebook = NOTEBOOK_CIFAR
    not_run = f"{profile}-profile results are not stored"
    scale = P.scale_note(profile) + "; " + P.paper_gaps_text(profile)
    out: list[Claim] = []

    def add(
        key: str,
        claim: str,
        paper: str,
        ours: str,
        verdict: str,
        note: str,
        run_profile: str | None = None,
        where: str = "Section 4.2 / Table 2",
        **fields: str,
    ) -> None:
        out.append(
            Claim(
                key=key,
                claim=claim,
                source=f"{SOURCE}, {where}",
                paper_value=paper,
                our_value=ours,
                profile=run_profile or profile,
                scale=scale if verdict != "not run here" else "",
                verdict=verdict,
                notebook=notebook,
                note=note,
                anchor=ANCHOR_CIFAR,  # type: ignore[arg-type]
                **fields,
            )
        )

    gains = {m: (TABLE2[f"{m} + Flex-Act"], TABLE2[m]) for m in ("ResNet18", "ResNet34")}
    # The paper's gain against the sampling noise of one accuracy on CIFAR-10's 10,000 test images.
    noise = {m: T.binomial_se(plain, 10_000) for m, (_, plain) in gains.items()}
    paper_text = {
        m: f"{flex:.2f} vs {plain:.2f} ({flex - plain:+.2f} points; no spread given)"
        for m, (flex, plain) in gains.items()
    }
    match_margin = MATCH_MARGIN
    noise_note = {
        m: (
            f"The paper's gain is {gains[m][0] - gains[m][1]:.2f} points, "
            f"{(gains[m][0] - gains[m][1]) / noise[m]:.2f} of the binomial standard error "
            f"({noise[m]:.2f} points) of one accuracy on 10,000 test images: 'improves' is not "
            "testable from it, so we test 'matches': non-inferiority of Flex-Act against plain with a "
            f"margin of {match_margin:g} point (more than twice that standard error), paired by seed."
        )
        for m in gains
    }
    loaded = T.load_all(P.table2_configs(profile))
    r18 = [r for r in loaded or [] if r["config"]["model"] == "resnet18"]
    key18, key_fallback = "flexact-resnet18-matches", "flexact-fallback-to-relu"
    claim18 = (
        f"ResNet-18 + Flex-Act (penultimate layer) matches or improves ResNet-18 on CIFAR-10 (not worse by "
        f"more than {match_margin:g} point; our ResNet-18 is narrowed to cpu scale)"
    )
    fallback = (
        "Flex-Act 'can recover the identity function or fall back to ReLU if no better choice "
        "exists' (at the penultimate layer)"
    )
    same = (
        "The pooled features of a ReLU ResNet are non-negative, where ReLU, LeakyReLU and Identity "
        "coincide: choosing any of them gives back the plain network."
    )
    if not r18:
        add(key18, claim18, paper_text["ResNet18"], "—", "not run here", not_run + ". " + noise_note["ResNet18"])
        add(key_fallback, fallback, "qualitative", "—", "not run here", not_run + ". " + same, where="Section 4.2")
    else:
        rows = T.accuracy_rows(r18)
        verdict, fields, comp = judge(
            lambda: T.compare_groups(rows, "penultimate", "flexact", "none"),
            claim="non-inferiority",
            margin=match_margin,
            unit="points",
        )
        summary = T.summarize(rows, "penultimate")
        gap = float(summary.loc["flexact", "best_mean"] - summary.loc["none", "best_mean"])
        per_seed = (
            ""
            if comp is None or not comp.paired
            else " (per seed: " + ", ".join(f"{a - b:+.2f}" for a, b in zip(comp.values_a, comp.values_b)) + ")"
        )
        add(
            key18,
            claim18,
            paper_text["ResNet18"],
            f"+ Flex-Act − plain = {gap:+.2f} points{per_seed}",
            verdict,
            noise_note["ResNet18"],
            **fields,
        )
        picks = flexact_selections([r for r in r18 if r["config"]["penultimate_activation"] == "flexact"])
        chosen = picks.sort_values("seed")
        plain_like = chosen["chosen"].isin(["relu", "leaky_relu", "identity"])
        add(
            key_fallback,
            fallback,
            "qualitative",
            "chosen per seed: "
            + ", ".join(f"seed {r.seed}: {r.chosen} (p = {r.p_chosen:.2f})" for r in chosen.itertuples()),
            "confirmed" if plain_like.all() else "inconclusive",
            same + " Rule: confirmed when every seed chooses one of them.",
            where="Section 4.2",
            **proportion_fields(
                int(plain_like.sum()),
                len(chosen),
                "seeds",
                test="every seed must choose one of them; " + _BINOMIAL_TEST,
            ),
        )
    add(
        "flexact-resnet34-matches",
        "ResNet-34 + Flex-Act (penultimate layer) matches or improves ResNet-34 on CIFAR-10",
        paper_text["ResNet34"],
        "—",
        "not run here",
        "ResNet-34 runs only in the paper profile (2 CPU cores). " + noise_note["ResNet34"],
        run_profile="paper",
    )
    return out


def claims() -> list[Claim]:
    """All Flex-Act claims: synthetic study, the readings it leaves open, then CIFAR-10."""
    return synthetic_claims() + readings_claims() + cifar_claims()


# --------------------------------------------------------------------------------------------
# The readings the paper leaves open (helpers.flexact.readings)
# --------------------------------------------------------------------------------------------

_READINGS_WHERE = "Abstract / Section 4.1.1 / Conclusion"
_NOT_RUN_READINGS = "the readings sweep's cpu-profile results are not committed"


def readings_claims() -> list[Claim]:
    """Does Table 1's conclusion survive the readings the paper leaves open? Two claims: the
    selection of the ground truth, and "α = 0.3 beats α = 0 on Sigmoid and Tanh", each judged
    under every reading of :data:`helpers.flexact.readings.READINGS` against the baseline reading
    (Table 1's runs), from committed cpu-profile results."""
    key_selection, key_alpha = "flexact-readings-selection", "flexact-readings-alpha-effect"
    selection = (
        "Flex-Act (α=0.3) selects the ground truth as well under every reading the paper leaves open "
        "(hard/soft samples, τ schedule, KL direction, α schedule, λ)"
    )
    alpha = (
        "Table 1's α result (α=0 has a higher MSE than α=0.3 on Sigmoid and Tanh) holds under every reading "
        "the paper leaves open"
    )
    paper_sel = (
        "'consistently selects the most suitable activation function' without 'manual hyperparameter "
        "sweeps'; readings unstated"
    )
    paper_alpha = _paper_alpha_pair() + " (one unstated reading)"
    runs = RD.load_readings("cpu")
    scale = profile_settings("cpu")["note"]
    out = []
    if runs is None:
        for key, claim, paper in ((key_selection, selection, paper_sel), (key_alpha, alpha, paper_alpha)):
            out.append(_readings_claim(key, claim, paper, "—", "not run here", _NOT_RUN_READINGS))
        return out
    frame = RD.readings_frame(runs)
    out.append(_readings_claim(key_selection, selection, paper_sel, *_claim_selection_readings(frame), scale=scale))
    out.append(_readings_claim(key_alpha, alpha, paper_alpha, *_claim_alpha_readings(frame), scale=scale))
    return out


def _readings_claim(
    key: str, claim: str, paper: str, ours: str, verdict: str, note: str, fields: dict | None = None, scale: str = ""
) -> Claim:
    return Claim(
        key=key,
        claim=claim,
        source=f"{SOURCE}, {_READINGS_WHERE}",
        paper_value=paper,
        our_value=ours,
        profile="cpu",
        scale=scale,
        verdict=verdict,  # type: ignore[arg-type]
        notebook=NOTEBOOK_SYNTHETIC,
        note=note,
        anchor=ANCHOR_READINGS,
        **(fields or {}),
    )


def _claim_selection_readings(frame) -> tuple[str, str, str, dict]:
    """Selection accuracy up to the ReLU/LeakyReLU twin (the reading of Table 1's selection claim)
    under each reading against the baseline reading, paired over runs (target, seed). Contradicted
    when some reading's difference lies below 0 with Bonferroni-adjusted 95 % confidence (over the
    readings); confirmed when every reading is equivalent to the baseline within
    ± :data:`READINGS_MARGIN_PP` points (TOST each; all must pass, so no adjustment); inconclusive
    otherwise."""
    k = len(RD.READINGS)
    level = 1 - ALPHA / k
    parts, comps, lower, equivalent, fails = [], {}, [], [], []
    for reading in (RD.BASELINE, *RD.READINGS):
        acc = RD.selection_accuracy(frame, reading.key, twins=True)
        majority = RD.majority_targets(frame, reading.key)
        missed = [
            f"{gt.capitalize()} → {choice or 'no majority'}"
            for gt, choice in majority.items()
            if not (choice and (choice == gt or {choice, gt} <= RD.TWINS))
        ]
        parts.append(f"{reading.label} {acc.k}/{acc.n}" + (f" ({', '.join(missed)})" if missed else ""))
        if missed:
            fails.append(reading.label)
        if reading is RD.BASELINE:
            continue
        comp = RD.selection_difference(frame, reading.key, twins=True)
        adj = RD.selection_difference(frame, reading.key, twins=True, confidence=level)
        if comp is None or adj is None:
            continue
        comps[reading.key] = (comp, adj)
        if adj.ci_high < 0:
            lower.append(reading.label)
        if tost(comp, READINGS_MARGIN_PP).equivalent:
            equivalent.append(reading.label)
    ours = "truth (or its twin) picked at α = 0.3: " + "; ".join(parts)
    if not comps:
        return ours, "inconclusive", "one seed per reading: no interval", {"n": "too few runs"}
    if lower:
        verdict = "contradicted"
    elif len(equivalent) == k:
        verdict = "confirmed"
    else:
        verdict = "inconclusive"
    key = min(comps, key=lambda r: comps[r][0].effect)  # the reading that lowers the accuracy most
    comp, adj = comps[key]
    label = RD.reading_by_key(key).label
    fields = comparison_fields(
        comp,
        digits=0,
        unit="points",
        test_extra=(
            f"exact McNemar p = {RD.mcnemar_p(frame, key, twins=True):.3f}; Bonferroni {level:.2%} CI "
            f"{adj.ci_text(0)} over {k} readings; " + tost(comp, READINGS_MARGIN_PP).describe()
        ),
    )
    fields["effect"] = f"{label} − baseline: {fields['effect']}"
    fields["n"] = f"{comp.n} pairs of runs (5 targets × {comp.n // 5} seeds)"
    note = (
        "picked = the argmax candidate is the ground truth, or its twin (ReLU and LeakyReLU at slope 0.01, "
        "which the paper's Fig. 2 caption concedes are confused); per target, a strict majority of seeds "
        "(Table 1's rule). Differences are paired over runs (target, seed). Contradicted when a reading's "
        f"Bonferroni-adjusted CI lies below 0; confirmed when every reading is within ±{READINGS_MARGIN_PP:g} "
        "points of the baseline (TOST). "
        + (f"The majority rule fails under: {', '.join(fails)}. " if fails else "")
        + (f"Readings below the baseline after adjustment: {', '.join(lower)}. " if lower else "")
        + f"Shown equivalent to the baseline: {len(equivalent)}/{k} readings. The statistics shown are the "
        "reading with the lowest accuracy; the page's table has every reading, strict and up to the twin."
    )
    return ours, verdict, note, fields


def _claim_alpha_readings(frame) -> tuple[str, str, str, dict]:
    """Table 1's α comparison (MSE at α = 0 − at α = 0.3, Sigmoid and Tanh, paired by seed) within
    each reading, the baseline included. Holds under a reading when both 95 % CIs lie above 0
    (the rule of the Table 1 claim); reversed when a CI lies below 0."""
    holds, reversed_, per_reading = [], [], {}
    for reading in (RD.BASELINE, *RD.READINGS):
        per = {gt: RD.alpha_effect(frame, reading.key, gt) for gt in RD.ALPHA_TARGETS}
        if any(c is None for c in per.values()):
            continue
        verdicts = [run_verdict(c, direction=1) for c in per.values()]  # type: ignore[arg-type]
        per_reading[reading.key] = per
        if all(v == "confirmed" for v in verdicts):
            holds.append(reading.label)
        elif any(c.ci_high < 0 for c in per.values()):  # type: ignore[union-attr]
            reversed_.append(reading.label)
    n_readings = len(RD.READINGS) + 1
    if not per_reading:
        return "—", "inconclusive", "one seed per reading: no interval", {"n": "too few runs"}
    # "under every reading": intersection-union over the readings, by the same CI rule as any row
    if len(holds) == n_readings:
        verdict = "confirmed"
    elif reversed_:
        verdict = "contradicted"
    else:
        verdict = "inconclusive"
    # The statistics shown: the reading most favourable to the paper (largest smaller effect).
    key = max(per_reading, key=lambda r: min(c.effect for c in per_reading[r].values()))  # type: ignore[union-attr]
    label = RD.reading_by_key(key).label
    fields = merge_fields(
        {
            gt.capitalize(): comparison_fields(c, digits=4)  # type: ignore[arg-type]
            for gt, c in per_reading[key].items()
        }
    )
    fields["effect"] = f"{label}: {fields['effect']}"
    best = []  # the lowest α=0.3 MSE any reading reaches, against the paper's
    for gt in RD.ALPHA_TARGETS:
        sel = frame[(frame["alpha"] == RD.BASELINE_ALPHA) & (frame["ground_truth"] == gt)]
        means = sel.groupby("reading")["mse"].mean()
        best.append(
            f"{gt.capitalize()} {means.min():.4f} ({RD.reading_by_key(means.idxmin()).label}; paper "
            f"{TABLE1['Flex-Act (α=0.3)'][gt][0]:.4f})"
        )
    ours = (
        f"holds under {len(holds)} of {n_readings} readings (baseline included)"
        + (f": {', '.join(holds)}" if holds else "")
        + f"; α=0.3 worse (a CI below 0) under {len(reversed_)}. Lowest α=0.3 MSE of any reading: "
        + "; ".join(best)
    )
    note = (
        "MSE at α=0 − at α=0.3 per target, paired by seed; holds under a reading when both the Sigmoid and the "
        "Tanh CI lie above 0. Readings that change the α=0 model (hard samples, τ schedules) re-run α=0 under "
        "them. The statistics shown are the reading most favourable to the paper. "
        + (f"α=0.3 worse under: {', '.join(reversed_)}. " if reversed_ else "")
        + READINGS_TRIED
    )
    return ours, verdict, note, fields

"""Flex-Act's CIFAR-10 claims (Section 4.2, Table 2): ResNet + Flex-Act at the penultimate layer
matches the plain ResNet, and the layer falls back to a ReLU-like choice.

:func:`proportion_fields` gives the report fields of a count of runs (shared with the synthetic rows)."""

from __future__ import annotations

from typing import Any

from helpers.core import tables as T
from helpers.core.claim import Claim, source_row
from helpers.core.profiles import decided_profile
from helpers.core.runtime import current_profile
from helpers.core.statistics import proportion
from helpers.core.verdicts import judge
from helpers.flexact import protocol as P
from helpers.flexact.paper import ANCHOR_CIFAR, MATCH_MARGIN, NOTEBOOK_CIFAR, QUOTES, SOURCE, TABLE2
from helpers.flexact.selections import flexact_selections

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


def cifar_claims(profile: str | None = None) -> list[Claim]:
    """Table 2 (CIFAR-10) claims from the stored results of ``profile`` (missing runs: "not run
    here"; without a profile, the cpu profile's until every paper-profile run of Table 2 is
    committed). Accuracy is the best validation accuracy (%), mean over seeds."""

    profile = decided_profile("flexact_cifar", P.table2_configs) if profile is None else current_profile(profile)
    not_run = f"{profile}-profile results are not stored"
    scale = P.scale_note(profile) + "; " + P.paper_gaps_text(profile)
    out: list[Claim] = []

    place = {"source": SOURCE, "notebook": NOTEBOOK_CIFAR, "anchor": ANCHOR_CIFAR}

    def add(*row: Any, run_profile: str | None = None, where: str = "Section 4.2 / Table 2", **fields: str) -> None:
        """Add the row ``key, claim, paper, ours, verdict, note`` (its scale only when it was run)."""
        key, claim, paper, ours, verdict, note = row
        shown = scale if verdict != "not run here" else ""
        out.append(
            source_row(key, claim, where, paper, ours, verdict, note, shown, run_profile or profile, **place, **fields)
        )

    def noise_note(model: str) -> str:
        """The paper's gain against the sampling noise of one accuracy on CIFAR-10's 10,000 test images."""
        gain, noise = TABLE2[f"{model} + Flex-Act"] - TABLE2[model], T.binomial_se(TABLE2[model], 10_000)
        return (
            f"The paper's gain is {gain:.2f} points, {gain / noise:.2f} of the binomial standard error "
            f"({noise:.2f} points) of one accuracy on 10,000 test images: 'improves' is not "
            "testable from it, so we test 'matches': non-inferiority of Flex-Act against plain with a "
            f"margin of {MATCH_MARGIN:g} point (more than twice that standard error), paired by seed."
        )

    # Table 2 gives no spread
    paper_text = {m: (QUOTES[f"table2_{m.lower()}"], QUOTES["table2_caption"]) for m in ("ResNet18", "ResNet34")}
    loaded = T.load_all(P.table2_configs(profile))
    r18 = [r for r in loaded or [] if r["config"]["model"] == "resnet18"]
    key18, key_fallback = "flexact-resnet18-matches", "flexact-fallback-to-relu"
    claim18 = (
        f"ResNet-18 + Flex-Act (penultimate layer) matches or improves ResNet-18 on CIFAR-10 (not worse by "
        f"more than {MATCH_MARGIN:g} point; our ResNet-18 is narrowed to cpu scale)"
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
        add(key18, claim18, paper_text["ResNet18"], "—", "not run here", not_run + ". " + noise_note("ResNet18"))
        add(
            key_fallback, fallback, QUOTES["fall_back"], "—", "not run here", not_run + ". " + same, where="Section 4.2"
        )
    else:
        rows = T.accuracy_rows(r18)
        verdict, fields, comp = judge(
            lambda: T.compare_groups(rows, "penultimate", "flexact", "none"),
            claim="non-inferiority",
            margin=MATCH_MARGIN,
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
            noise_note("ResNet18"),
            **fields,
        )
        picks = flexact_selections([r for r in r18 if r["config"]["penultimate_activation"] == "flexact"])
        chosen = picks.sort_values("seed")
        plain_like = chosen["chosen"].isin(["relu", "leaky_relu", "identity"])
        add(
            key_fallback,
            fallback,
            QUOTES["fall_back"],
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
        "ResNet-34 runs only in the paper profile (2 CPU cores). " + noise_note("ResNet34"),
        run_profile="paper",
    )
    return out

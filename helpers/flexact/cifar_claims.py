"""Flex-Act's CIFAR-10 claims (Section 4.2, Table 2): ResNet + Flex-Act at the penultimate layer
matches the plain ResNet, and the layer falls back to a ReLU-like choice. One function per row."""

from __future__ import annotations

from functools import partial
from typing import Any

from helpers.core import tables as T
from helpers.core.claim import BINOMIAL_TEST, Claim, proportion_fields, source_row
from helpers.core.profiles import decided_profile
from helpers.core.runtime import current_profile
from helpers.core.verdicts import judge
from helpers.flexact import protocol as P
from helpers.flexact.paper import ANCHOR_CIFAR, MATCH_MARGIN, NOTEBOOK_CIFAR, QUOTES, SOURCE, TABLE2
from helpers.flexact.selections import flexact_selections

_claim = partial(source_row, source=SOURCE, notebook=NOTEBOOK_CIFAR, anchor=ANCHOR_CIFAR)

#: Table 2 gives no spread: the paper's value of a model is its printed accuracy and the caption.
_PAPER = {m: (QUOTES[f"table2_{m.lower()}"], QUOTES["table2_caption"]) for m in ("ResNet18", "ResNet34")}

_SAME = (
    "The pooled features of a ReLU ResNet are non-negative, where ReLU, LeakyReLU and Identity "
    "coincide: choosing any of them gives back the plain network."
)


def cifar_claims(profile: str | None = None) -> list[Claim]:
    """Table 2 (CIFAR-10) claims from the stored results of ``profile`` (missing runs: "not run
    here"; without a profile, the cpu profile's until every paper-profile run of Table 2 is
    committed). Accuracy is the best validation accuracy (%), mean over seeds."""

    profile = decided_profile("flexact_cifar", P.table2_configs) if profile is None else current_profile(profile)
    loaded = T.load_all(P.table2_configs(profile))
    r18 = [r for r in loaded or [] if r["config"]["model"] == "resnet18"]
    return [_resnet18_matches_claim(r18, profile), _fallback_to_relu_claim(r18, profile), _resnet34_matches_claim()]


def _row(*row: Any, profile: str, where: str = "Section 4.2 / Table 2", **fields: Any) -> Claim:
    """The row ``key, claim, paper, ours, verdict, note`` of ``profile`` (its scale only when it was run)."""
    key, claim, paper, ours, verdict, note = row
    scale = "" if verdict == "not run here" else P.scale_note(profile) + "; " + P.paper_gaps_text(profile)
    return _claim(key, claim, where, paper, ours, verdict, note, scale, profile, **fields)


def _not_run(profile: str, note: str) -> str:
    """The note of a row whose runs of ``profile`` are missing."""
    return f"{profile}-profile results are not stored. {note}"


def _noise_note(model: str) -> str:
    """The paper's gain against the sampling noise of one accuracy on CIFAR-10's 10,000 test images."""
    gain, noise = TABLE2[f"{model} + Flex-Act"] - TABLE2[model], T.binomial_se(TABLE2[model], 10_000)
    return (
        f"The paper's gain is {gain:.2f} points, {gain / noise:.2f} of the binomial standard error "
        f"({noise:.2f} points) of one accuracy on 10,000 test images: 'improves' is not "
        "testable from it, so we test 'matches': non-inferiority of Flex-Act against plain with a "
        f"margin of {MATCH_MARGIN:g} point (more than twice that standard error), paired by seed."
    )


def _resnet18_matches_claim(r18: list[dict], profile: str) -> Claim:
    """ResNet-18 + Flex-Act is not worse than the plain ResNet-18 by more than the margin (paired by seed)."""
    key = "flexact-resnet18-matches"
    claim = (
        f"ResNet-18 + Flex-Act (penultimate layer) matches or improves ResNet-18 on CIFAR-10 (not worse by "
        f"more than {MATCH_MARGIN:g} point; our ResNet-18 is narrowed to cpu scale)"
    )
    note = _noise_note("ResNet18")
    if not r18:
        return _row(key, claim, _PAPER["ResNet18"], "—", "not run here", _not_run(profile, note), profile=profile)
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
    ours = f"+ Flex-Act − plain = {gap:+.2f} points{per_seed}"
    return _row(key, claim, _PAPER["ResNet18"], ours, verdict, note, profile=profile, **fields)


def _fallback_to_relu_claim(r18: list[dict], profile: str) -> Claim:
    """Every seed's Flex-Act layer chooses ReLU, LeakyReLU or Identity (the plain network)."""
    key, where = "flexact-fallback-to-relu", "Section 4.2"
    claim = (
        "Flex-Act 'can recover the identity function or fall back to ReLU if no better choice "
        "exists' (at the penultimate layer)"
    )
    if not r18:
        note = _not_run(profile, _SAME)
        return _row(key, claim, QUOTES["fall_back"], "—", "not run here", note, profile=profile, where=where)
    chosen = flexact_selections([r for r in r18 if r["config"]["penultimate_activation"] == "flexact"])
    chosen = chosen.sort_values("seed")
    plain_like = chosen["chosen"].isin(["relu", "leaky_relu", "identity"])
    ours = "chosen per seed: " + ", ".join(
        f"seed {r.seed}: {r.chosen} (p = {r.p_chosen:.2f})" for r in chosen.itertuples()
    )
    test = "every seed must choose one of them; " + BINOMIAL_TEST
    return _row(
        key,
        claim,
        QUOTES["fall_back"],
        ours,
        "confirmed" if plain_like.all() else "inconclusive",
        _SAME + " Rule: confirmed when every seed chooses one of them.",
        profile=profile,
        where=where,
        **proportion_fields(int(plain_like.sum()), len(chosen), "seeds", test=test),
    )


def _resnet34_matches_claim() -> Claim:
    """ResNet-34 runs only in the paper profile: not run here."""
    return _row(
        "flexact-resnet34-matches",
        "ResNet-34 + Flex-Act (penultimate layer) matches or improves ResNet-34 on CIFAR-10",
        _PAPER["ResNet34"],
        "—",
        "not run here",
        "ResNet-34 runs only in the paper profile (2 CPU cores). " + _noise_note("ResNet34"),
        profile="paper",
    )

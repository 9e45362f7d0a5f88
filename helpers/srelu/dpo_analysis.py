"""Tables, paired statistics, figures and claims for S-ReLU's Table 3 at our scale.

Reads the results of :mod:`helpers.srelu.dpo_experiment` (one per activation and seed) and the
paper's Table 3 read out of its excerpts (:data:`PAPER_TABLE3`). Every comparison is S-ReLU − GELU, paired by
seed (the two models of a seed share their initial weights, pre-training batches, preference
pairs and DPO batch order), with the book's statistics (:mod:`helpers.core.statistics`) and verdicts
(:func:`helpers.core.report.judge`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from helpers.core.attribution import Quoted
from helpers.core.claim import claim_key, source_row
from helpers.core.comparison import InsufficientData
from helpers.core.models import GPT
from helpers.core.statistics import paired_comparison
from helpers.core.verdicts import NEGLIGIBLE_ACCURACY_POINTS, family_verdict, judge, merge_fields
from helpers.srelu.paper import QUOTES, TABLE3_ROWS

#: Table 3's four metrics on the validation pairs (names as in the result files).
METRICS: tuple[str, ...] = ("chosen_reward", "rejected_reward", "reward_margin", "preference_accuracy")
METRIC_LABELS = {
    "chosen_reward": "chosen reward",
    "rejected_reward": "rejected reward",
    "reward_margin": "reward margin",
    "preference_accuracy": "preference accuracy",
}
#: What the paper says of S-ReLU against GELU for each metric (+1: higher, −1: lower).
CLAIMED_DIRECTION = {"chosen_reward": +1, "rejected_reward": -1, "reward_margin": +1, "preference_accuracy": +1}

_BETA = re.compile(r"^\$\\beta = [^$]*\$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def paper_table3(quotes: Mapping[str, Quoted]) -> dict[float, dict[str, dict[str, Any]]]:
    """The paper's Table 3 by β and activation, read out of its rows' excerpts (``table3_beta<β>_<act>``).

    Each row's text holds, after the β, five numbers: the chosen reward (its ± lost), one further
    column whose header is lost (the rejected reward or the margin) with its SD, and the preference
    accuracy with its SD. The text extraction dropped one whole column."""
    table: dict[float, dict[str, dict[str, Any]]] = {}
    for key, quote in quotes.items():
        if not key.startswith("table3_beta"):
            continue
        beta, activation = key.removeprefix("table3_beta").split("_")
        numbers = [float(n) for n in _NUMBER.findall(_BETA.sub("", quote.text))]
        if len(numbers) != 5:
            raise ValueError(
                f"{key}: expected five numbers after the β (chosen reward, the unlabelled column's mean and SD, "
                f"preference accuracy's mean and SD), found {numbers} in {quote.text!r}"
            )
        chosen, unlabelled, unlabelled_sd, accuracy, accuracy_sd = numbers
        table.setdefault(float(beta), {})[activation] = {
            "chosen_reward": chosen,
            "unlabelled": (unlabelled, unlabelled_sd),
            "preference_accuracy": (accuracy, accuracy_sd),
        }
    return table


#: Table 3 as page 22 and a claim lay it out; its numbers are typed once, in the excerpts of :mod:`helpers.srelu.paper`.
PAPER_TABLE3 = paper_table3(QUOTES)

NOTEBOOK = "notebooks/22_srelu_dpo"
SOURCE = "S-ReLU paper"  # as in helpers.srelu.paper, so the report groups the rows with that paper


def _settings(results: Sequence[dict]) -> Iterator[tuple[dict, str, float, dict]]:
    """``(result, family, β, run)`` for each DPO setting of each result (keys ``family/beta=β``)."""
    for r in results:
        for key, run in r["dpo"].items():
            family, beta = key.split("/beta=")
            yield r, family, float(beta), run


def _row(r: dict, family: str, beta: float, **values: object) -> dict:
    return {
        "activation": r["config"]["activation"],
        "seed": r["config"]["seed"],
        "family": family,
        "beta": beta,
        **values,
    }


def metrics_frame(results: Sequence[dict]) -> pd.DataFrame:
    """One row per (activation, seed, family, β): Table 3's metrics on the validation pairs and
    the pre-training validation loss."""
    return pd.DataFrame(
        _row(
            r,
            family,
            beta,
            **{m: run["val"][m] for m in METRICS},
            n_pairs=run["val"]["n_pairs"],
            pretrain_val_loss=r["pretrain_val_loss"],
        )
        for r, family, beta, run in _settings(results)
    )


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean ± SD over seeds of each metric, by family, β and activation (as Table 3 prints)."""
    grouped = frame.groupby(["family", "beta", "activation"])[list(METRICS)]
    mean, sd = grouped.mean(), grouped.std(ddof=1)
    out = mean.copy().astype(object)
    for m in METRICS:
        out[m] = [f"{a:+.4f} ± {b:.4f}" if pd.notna(b) else f"{a:+.4f}" for a, b in zip(mean[m], sd[m])]
    return out.rename(columns=METRIC_LABELS)


def pretrain_losses(frame: pd.DataFrame) -> pd.DataFrame:
    """Pre-training validation loss per seed (columns: activation); the page compares S-ReLU and GELU
    paired by seed."""
    return frame.drop_duplicates(["activation", "seed"]).pivot(
        index="seed", columns="activation", values="pretrain_val_loss"
    )


def _by_seed(frame: pd.DataFrame, activation: str, family: str, beta: float, metric: str) -> dict[int, float]:
    sel = frame[(frame.activation == activation) & (frame.family == family) & (frame.beta == beta)]
    return dict(zip(sel.seed, sel[metric]))


def paired_table(frame: pd.DataFrame) -> pd.DataFrame:
    """S-ReLU − GELU for every (family, β, metric), paired by seed: effect, 95 % CI, MDE, p."""

    rows = []
    for (family, beta), _ in frame.groupby(["family", "beta"]):
        for m in METRICS:
            try:
                c = paired_comparison(
                    _by_seed(frame, "srelu", family, beta, m), _by_seed(frame, "gelu", family, beta, m)
                )
            except InsufficientData:
                continue
            rows.append(
                {
                    "family": family,
                    "beta": beta,
                    "metric": METRIC_LABELS[m],
                    "S-ReLU − GELU": c.effect,
                    "95% CI": c.ci_text(4),
                    "MDE": c.mde,
                    "p": c.p,
                    "pairs": c.n,
                }
            )
    return pd.DataFrame(rows)


def grad_norm_frame(results: Sequence[dict]) -> pd.DataFrame:
    """Long frame of the DPO gradient norm (before clipping) per step, run and setting."""
    rows = [
        _row(r, family, beta, step=i + 1, grad_norm=g)
        for r, family, beta, run in _settings(results)
        for i, g in enumerate(run["grad_norm"])
    ]
    return pd.DataFrame(rows)


def grad_norm_table(results: Sequence[dict]) -> pd.DataFrame:
    """Per (family, β): the mean over DPO steps of log10 of the gradient norm, S-ReLU − GELU,
    paired by seed (a positive effect: S-ReLU's gradients are larger), with its 95 % CI."""

    frame = grad_norm_frame(results)
    frame["log10_norm"] = np.log10(frame.grad_norm)
    per_run = frame.groupby(["family", "beta", "activation", "seed"]).log10_norm.mean()
    rows = []
    for (family, beta), _ in frame.groupby(["family", "beta"]):
        a, b = (per_run[(family, beta, act)].to_dict() for act in ("srelu", "gelu"))
        try:
            c = paired_comparison(a, b)
        except InsufficientData:
            continue
        rows.append(
            {
                "family": family,
                "beta": beta,
                "S-ReLU / GELU (geometric mean)": 10**c.effect,
                "log10 ratio, 95% CI": c.ci_text(3),
                "pairs": c.n,
            }
        )
    return pd.DataFrame(rows)


def plot_grad_norms(results: Sequence[dict]):
    """Gradient norm over DPO steps, GELU vs S-ReLU (mean over seeds, band = min..max), one
    panel per (family, β). Returns the matplotlib figure."""
    import matplotlib.pyplot as plt  # lazy: matplotlib only for the figure; the analysis runs without it

    frame = grad_norm_frame(results)
    families, betas = sorted(frame.family.unique()), sorted(frame.beta.unique())
    fig, axes = plt.subplots(
        len(families), len(betas), figsize=(3.6 * len(betas), 2.8 * len(families)), sharex=True, squeeze=False
    )
    colours = {"gelu": "tab:blue", "srelu": "tab:orange"}
    for i, family in enumerate(families):
        for j, beta in enumerate(betas):
            ax = axes[i][j]
            for act, colour in colours.items():
                sel = frame[(frame.family == family) & (frame.beta == beta) & (frame.activation == act)]
                g = sel.groupby("step").grad_norm
                label = {"gelu": "GELU", "srelu": "S-ReLU"}[act]
                ax.plot(g.mean().index, g.mean().values, color=colour, lw=1.2, label=label)
                ax.fill_between(g.mean().index, g.min().values, g.max().values, color=colour, alpha=0.2, lw=0)
            ax.set_title(f"{family}, β = {beta:g}", fontsize=9)
            ax.set_yscale("log")
            if i == len(families) - 1:
                ax.set_xlabel("DPO step")
            if j == 0:
                ax.set_ylabel("gradient norm")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def _paper_rows(cells: Callable[[dict], dict]) -> pd.DataFrame:
    """One row per (β, activation) of :data:`PAPER_TABLE3`, its columns ``cells`` of the printed values."""
    rows = [
        {"beta": beta, "activation": act, **cells(values)}
        for beta, acts in PAPER_TABLE3.items()
        for act, values in acts.items()
    ]
    return pd.DataFrame(rows).set_index(["beta", "activation"])


def paper_rejected_reward_readings() -> pd.DataFrame:
    """The paper's rejected reward under both readings of its unlabelled column: the column *is*
    the rejected reward, or it is the margin (then rejected = chosen − margin)."""
    return _paper_rows(
        lambda v: {
            "if the column is the rejected reward": v["unlabelled"][0],
            "if the column is the margin": v["chosen_reward"] - v["unlabelled"][0],
        }
    )


def accuracy_as_fraction(value: float, decimals: int = 4, max_denominator: int = 256) -> tuple[int, int] | None:
    """The fraction ``k/n`` with the smallest ``n <= max_denominator`` that rounds to ``value``
    at ``decimals`` places (``None`` if there is none): a preference accuracy measured on ``n``
    pairs is such a fraction."""
    half = 0.5 * 10.0**-decimals
    for n in range(1, max_denominator + 1):
        k = round(value * n)
        if abs(k / n - value) <= half + 1e-12:
            return k, n
    return None


def gpt2_small_parameters() -> int:
    """Parameters of the book's GPT decoder at GPT-2 small's shape (12 layers, width 768, 1,024
    positions, 50,257 tokens), counted on the meta device (nothing is allocated)."""

    with torch.device("meta"):
        model = GPT(50257, block_size=1024, layers=12, dim=768, heads=12)
    return sum(p.numel() for p in model.parameters())


def paper_accuracy_fractions(max_denominator: int = 64) -> pd.DataFrame:
    """Each printed Table 3 preference accuracy as the simplest fraction ``k/n``,
    ``n <= max_denominator``, that rounds to it ("—": none)."""

    def cells(values: dict) -> dict:
        mean, sd = values["preference_accuracy"]
        frac = accuracy_as_fraction(mean, max_denominator=max_denominator)
        return {"accuracy": mean, "sd": sd, "simplest fraction": f"{frac[0]}/{frac[1]}" if frac else "—"}

    return _paper_rows(cells)


#: The smallest effect of interest of the DPO metrics: a preference accuracy is a rate (half a point,
#: as for accuracy); a reward has no unit of its own, so 10 % of GELU's mean size at that β.
SMALLEST_EFFECT: dict[str, tuple[str, str]] = {
    "DPO preference accuracy": ("0.005 (half a point)", "absolute: the book's accuracy tolerance, as a rate"),
    "DPO rewards (chosen, rejected, margin)": (
        "10 % of GELU's",
        "relative to GELU's mean |reward| at the same β: a reward has no unit of its own",
    ),
}


def smallest_effect(metric: str, gelu: Mapping[int, float]) -> float | None:
    """The smallest S-ReLU − GELU difference of interest in ``metric`` (:data:`SMALLEST_EFFECT`),
    from GELU's per-seed values at that β; ``None`` when GELU's mean is 0 (nothing to scale by)."""
    if metric == "preference_accuracy":
        return NEGLIGIBLE_ACCURACY_POINTS / 100
    size = abs(float(np.mean(list(gelu.values())))) if gelu else 0.0
    return 0.1 * size if size > 0 else None


def claims(results: Sequence[dict] | None, profile: str = "cpu") -> list:
    """The report's rows for Table 3: one per (metric, rejected family) from our runs, and one
    from the paper's own numbers (its rejected rewards)."""

    scale = (
        "stand-in: character-level GPT pre-trained on Tiny Shakespeare (for GPT-2 + SFT), "
        "preference pairs from unseen Shakespeare text (for SHP/HH)"
    )
    row = functools.partial(
        source_row, where="Sec. 5.2 / Table 3", source=SOURCE, notebook=NOTEBOOK, anchor="srelu-dpo-claims"
    )
    readings = paper_rejected_reward_readings()
    srelu_higher = all((readings.loc[(b, "srelu")] > readings.loc[(b, "gelu")]).all() for b in PAPER_TABLE3)
    out = [
        row(
            key="srelu-dpo-paper-rejected-reward",
            claim="Table 3 (GPT-2 on SHP/HH): S-ReLU has lower rejected rewards than GELU (the paper's own numbers)",
            paper=QUOTES["table3_text"],
            ours=(
                "the table's own values give S-ReLU the higher rejected reward at every β, under both "
                "readings of its unlabelled column"
                if srelu_higher
                else "not decidable from the table"
            ),
            profile="any",
            scale="the paper's Table 3",
            verdict="contradicted" if srelu_higher else "inconclusive",
            basis="source",
            note="the text extraction of Table 3 lost one column; both readings are computed on the page",
        )
    ]
    if not results:
        claim = (
            "Table 3 stand-in (character GPT, synthetic preference pairs): S-ReLU beats GELU on the four DPO metrics"
        )
        note = "results missing for this profile"
        stand_in = dict(key="srelu-dpo-stand-in", claim=claim, paper=QUOTES["table3_text"], ours="no results")
        return [*out, row(**stand_in, profile=profile, scale=scale, verdict="not run here", note=note)]
    frame = metrics_frame(results)
    betas = sorted(frame.beta.unique())
    for family in sorted(frame.family.unique()):
        for m in METRICS:
            parts = {}
            for beta in betas:
                a, b = (_by_seed(frame, act, family, beta, m) for act in ("srelu", "gelu"))
                _, parts[f"β={beta:g}"], _ = judge(
                    lambda a=a, b=b: paired_comparison(a, b),
                    direction=CLAIMED_DIRECTION[m],
                    digits=3,
                    negligible=smallest_effect(m, b),
                )
            fields = merge_fields(parts)
            word = "higher" if CLAIMED_DIRECTION[m] > 0 else "lower"
            # the chosen reward and accuracy columns are legible; the other two are not (the text says which is higher)
            paper = TABLE3_ROWS if m in ("chosen_reward", "preference_accuracy") else QUOTES["table3_text"]
            means = frame[frame.family == family].groupby(["beta", "activation"])[m].mean()
            out.append(
                row(
                    key=claim_key("srelu-dpo", family, m),
                    claim=(
                        f"Table 3 stand-in (character GPT, '{family}' rejected continuations): S-ReLU has a "
                        f"{word} {METRIC_LABELS[m]} than GELU at every β"
                    ),
                    paper=paper,
                    ours=", ".join(f"β={b:g}: {means[(b, 'srelu')]:+.3f} vs {means[(b, 'gelu')]:+.3f}" for b in betas),
                    profile=profile,
                    scale=scale,
                    verdict=family_verdict(fields["design"]),
                    **fields,
                )
            )
    return out

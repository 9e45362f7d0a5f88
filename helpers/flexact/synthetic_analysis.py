"""The synthetic study's results as the paper's Table 1 and Figs. 1-3 (means, ranks, selections,
trajectories, prediction panels), and the single-neuron optimum that told us the paper's setup
(Appendix A). Runs are made by :mod:`helpers.flexact.synthetic`; nothing here trains."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import torch

from helpers.core.registry import get_activation
from helpers.flexact.activation import DEFAULT_CANDIDATES
from helpers.flexact.paper import ALPHAS, K_SCALE, table1_frame
from helpers.flexact.selections import flexact_trajectory
from helpers.flexact.synthetic import DISPLAY, FIXED_METHODS, FlexActSyntheticConfig
from helpers.flexact.synthetic_task import GROUND_TRUTHS, INFORMATIVE_DISTRIBUTIONS, _target_function

# Tables and summaries


def _runs(results: list[dict], **where: object) -> list[dict]:
    """The results whose stored config has every ``field=value`` of ``where``."""
    return [r for r in results if all(r["config"][name] == value for name, value in where.items())]


def label_of(config: dict) -> str:
    """Table 1 row label of a result's stored config."""
    return FlexActSyntheticConfig(**{k: v for k, v in config.items() if k != "config_class"}).label


def results_frame(results: list[dict]) -> pd.DataFrame:
    """One row per run: ground truth, model label, α, λ, seed, held-out MSE, per-sample std, choice."""
    rows = []
    for r in results:
        c = r["config"]
        rows.append(
            {
                "ground_truth": c["ground_truth"],
                "model": label_of(c),
                "method": c["method"],
                "alpha": c["alpha"],
                "lam": c["lam"],
                "seed": c["seed"],
                "mse": r["val_mse"],
                "sample_std": r["val_sq_err_std"],
                "chosen": r["chosen_activation"],
                "picked_truth": r["chosen_activation"] == c["ground_truth"],
            }
        )
    if not rows:
        raise ValueError("no results given")
    return pd.DataFrame(rows)


def row_order(labels: list[str]) -> list[str]:
    """Table 1's order: Flex-Act rows (α descending) first, then the fixed models."""
    flex = sorted((lab for lab in labels if lab.startswith("Flex-Act")), reverse=True)
    fixed = [f"{DISPLAY[m]} Model" for m in FIXED_METHODS if f"{DISPLAY[m]} Model" in labels]
    return flex + fixed


def table1_stats(results: list[dict]) -> pd.DataFrame:
    """Mean and std over seeds of the held-out MSE, plus the mean per-sample std, per cell."""
    df = results_frame(results)
    stats = df.groupby(["model", "ground_truth"]).agg(
        mean=("mse", "mean"),
        std=("mse", lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else 0.0),
        sample_std=("sample_std", "mean"),
        n=("mse", "size"),
    )
    table = stats.unstack("ground_truth")
    table = table.reindex(row_order(list(table.index)))
    gts = [g for g in GROUND_TRUTHS if g in df["ground_truth"].unique()]
    return table.reindex(columns=pd.MultiIndex.from_product([["mean", "std", "sample_std", "n"], gts]))


def mark_ranks(means: pd.DataFrame, decimals: int = 4) -> pd.DataFrame:
    """``"best"``/``"second"``/``""`` per cell by competition ranking of each column at the printed
    precision: rank = 1 + number of strictly smaller entries, so ties share a rank and a tie for
    best leaves no second (this reproduces every † of the paper's Table 1)."""
    marks = pd.DataFrame("", index=means.index, columns=means.columns)
    for col in means.columns:
        values = means[col].round(decimals)
        ranks = values.map(lambda v: 1 + int((values < v).sum()) if pd.notna(v) else 0)
        marks.loc[ranks == 1, col] = "best"
        marks.loc[ranks == 2, col] = "second"
    return marks


def format_table(means: pd.DataFrame, stds: pd.DataFrame, decimals: int = 4) -> pd.DataFrame:
    """``"mean ± std"`` strings; best per column marked ★, second-best †."""
    marks = mark_ranks(means, decimals)
    symbol = {"best": " ★", "second": " †", "": ""}
    out = pd.DataFrame(index=means.index, columns=[DISPLAY.get(c, c) for c in means.columns], dtype=object)
    for col in means.columns:
        for row in means.index:
            m, s = means.loc[row, col], stds.loc[row, col]
            text = "—" if pd.isna(m) else f"{m:.{decimals}f} ± {s:.{decimals}f}{symbol[marks.loc[row, col]]}"
            out.loc[row, DISPLAY.get(col, col)] = text
    out.index.name = "Model"
    return out


def table1(results: list[dict], decimals: int = 4) -> pd.DataFrame:
    """Our Table 1: held-out MSE mean ± std over seeds, best ★ and second-best † per column."""
    stats = table1_stats(results)
    return format_table(stats["mean"], stats["std"], decimals)


def selection_summary(results: list[dict]) -> pd.DataFrame:
    """For each Flex-Act variant and ground truth: how many seeds picked each candidate."""
    df = results_frame(results)
    df = df[df["method"] == "flexact"]
    counts = df.groupby(["model", "ground_truth", "chosen"]).size().unstack("chosen", fill_value=0)
    counts = counts.reindex(columns=list(DEFAULT_CANDIDATES), fill_value=0)
    order = [(m, gt) for m in row_order(list(df["model"].unique())) for gt in GROUND_TRUTHS if (m, gt) in counts.index]
    return counts.reindex(pd.MultiIndex.from_tuples(order, names=["model", "ground_truth"]))


def picks_ground_truth(results: list[dict], alpha: float, lam: float = 1.0) -> dict[str, int]:
    """``{ground truth: number of seeds whose Flex-Act (α, λ) picked it}``."""
    df = results_frame(results)
    sel = df[(df["method"] == "flexact") & (df["alpha"] == alpha) & (df["lam"] == lam)]
    if sel.empty:
        raise ValueError(f"no Flex-Act results with alpha={alpha}, lam={lam}")
    return {
        gt: int(sel[sel["ground_truth"] == gt]["picked_truth"].sum())
        for gt in GROUND_TRUTHS
        if gt in set(sel["ground_truth"])
    }


def majority_picks(results: list[dict], alpha: float, lam: float = 1.0) -> int:
    """Number of ground truths where a strict majority of seeds picked the right activation."""
    df = results_frame(results)
    sel = df[(df["method"] == "flexact") & (df["alpha"] == alpha) & (df["lam"] == lam)]
    hits = sel.groupby("ground_truth")["picked_truth"].agg(lambda v: v.sum() * 2 > len(v))
    return int(hits.sum())


def sensitivity_table(results: list[dict]) -> pd.DataFrame:
    """Per Flex-Act setting (α, λ) and ground truth: the seeds that picked the truth (``picked``) of
    its ``seeds``, and the mean held-out MSE (argmax)."""
    df = results_frame(results)
    df = df[df["method"] == "flexact"]
    rows = []
    for (alpha, lam), group in df.groupby(["alpha", "lam"]):
        row: dict[str, Any] = {"α": alpha, "λ": lam}
        for gt in GROUND_TRUTHS:
            sel = group[group["ground_truth"] == gt]
            if sel.empty:
                continue
            row[(DISPLAY[gt], "picked")] = int(sel["picked_truth"].sum())
            row[(DISPLAY[gt], "seeds")] = len(sel)
            row[(DISPLAY[gt], "MSE")] = float(sel["mse"].mean())
        rows.append(row)
    table = pd.DataFrame(rows).set_index(["α", "λ"])
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table


def trajectories(results: list[dict], ground_truth: str, alpha: float, lam: float = 1.0) -> dict[str, np.ndarray]:
    """:func:`~helpers.flexact.selections.flexact_trajectory` of the Flex-Act runs of ``(ground truth, α, λ)``,
    stacked over seeds."""
    runs = _runs(results, method="flexact", ground_truth=ground_truth, alpha=alpha, lam=lam)
    if not runs:
        raise ValueError(f"no Flex-Act runs for {ground_truth}, alpha={alpha}, lam={lam}")
    return flexact_trajectory(sorted(runs, key=lambda r: r["config"]["seed"]))


def prediction_panels(
    results: list[dict], seed: int = 0, lam: float = 1.0, alphas: tuple[float, ...] = ALPHAS
) -> dict[str, dict]:
    """Fig. 3 data: per ground truth, the grid, the target and every model's predictions (one seed)."""
    panels: dict[str, dict] = {}
    for gt in GROUND_TRUTHS:
        runs = [
            r
            for r in _runs(results, ground_truth=gt, seed=seed)
            if r["config"]["method"] != "flexact" or (r["config"]["alpha"] in alphas and r["config"]["lam"] == lam)
        ]
        if not runs:
            continue
        by_label = {label_of(r["config"]): r for r in runs}
        order = row_order(list(by_label))
        first = runs[0]["grid"]
        panels[DISPLAY[gt]] = {
            "x": first["x1"],
            "truth": first["truth"],
            "fits": {lab: by_label[lab]["grid"]["pred"] for lab in order},
        }
    if not panels:
        raise ValueError(f"no results for seed {seed}")
    return panels


def final_probability_of_choice(results: list[dict], alpha: float, lam: float = 1.0) -> float:
    """Mean (over Flex-Act runs with this α, λ) of the final probability of the chosen candidate."""
    values = [max(r["final_probs"]) for r in _runs(results, method="flexact", alpha=alpha, lam=lam)]
    if not values:
        raise ValueError(f"no Flex-Act results with alpha={alpha}, lam={lam}")
    return float(np.mean(values))


# What the paper's numbers imply: the best single neuron, computed by quadrature


def single_neuron_optimum(
    ground_truth: str, activation: str, *, k: float = K_SCALE, n_grid: int = 4000, informative: str = "uniform"
) -> dict[str, float]:
    """Best population MSE of ``φ(w·x₁ + b)`` fitted to ``a(k·x₁)`` (distractor weights zero).

    ``x₁ ~ U(−1, 1)`` (or ``N(0, 1)``, truncated to ``[−8, 8]``) is integrated with the midpoint
    rule on ``n_grid`` cells, in float64. ``(w, b)`` is found by a coarse search over
    ``w ∈ [−25, 25]``, ``b ∈ [−10, 10]`` followed by L-BFGS from the three best grid points.
    Returns ``mse``, ``sq_err_std`` (std of the per-sample squared error at the optimum), ``w``
    and ``b``. For saturating ``φ`` and unbounded targets the infimum is reached only as
    ``|w| → ∞``; L-BFGS then stops at a large finite ``w`` within ~1e-3 of the infimum.
    """

    if activation not in FIXED_METHODS:
        raise ValueError(f"activation must be one of {FIXED_METHODS}, got {activation!r}")
    target = _target_function(ground_truth)
    if not isinstance(n_grid, int) or n_grid < 100:
        raise ValueError(f"n_grid must be an int >= 100, got {n_grid!r}")
    cells = (torch.arange(n_grid, dtype=torch.float64) + 0.5) / n_grid
    if informative == "uniform":
        x = cells * 2 - 1
        weights = torch.full_like(x, 1.0 / n_grid)
    elif informative == "normal":
        x = cells * 16 - 8
        weights = torch.exp(-x.square() / 2)
        weights = weights / weights.sum()
    else:
        raise ValueError(f"informative must be one of {INFORMATIVE_DISTRIBUTIONS}, got {informative!r}")
    y = target(k * x)
    phi = get_activation(activation)

    def mse_of(w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # broadcast over leading dims
        return ((phi(w[..., None] * x + b[..., None]) - y).square() * weights).sum(-1)

    with torch.no_grad():  # coarse search on every 4th quadrature point
        ws = torch.linspace(-25, 25, 101, dtype=torch.float64)
        bs = torch.linspace(-10, 10, 81, dtype=torch.float64)
        coarse = slice(None, None, 4)
        xc, yc, wc = x[coarse], y[coarse], weights[coarse] / weights[coarse].sum()
        grid = ((phi(ws[:, None, None] * xc + bs[None, :, None]) - yc).square() * wc).sum(-1)
        starts = torch.topk(grid.flatten(), 3, largest=False).indices.tolist()
    best: dict[str, float] | None = None
    for index in starts:
        params = torch.tensor(
            [float(ws[index // len(bs)]), float(bs[index % len(bs)])], dtype=torch.float64, requires_grad=True
        )
        opt = torch.optim.LBFGS(
            [params], lr=1.0, max_iter=300, tolerance_grad=1e-12, tolerance_change=1e-15, line_search_fn="strong_wolfe"
        )

        def closure() -> torch.Tensor:
            opt.zero_grad()
            loss = mse_of(params[0], params[1])
            loss.backward()
            return loss

        opt.step(closure)
        with torch.no_grad():
            sq = (phi(params[0] * x + params[1]) - y).square()
            mse = float((weights * sq).sum())
            std = float(torch.sqrt((weights * (sq - mse).square()).sum()))
        if math.isfinite(mse) and (best is None or mse < best["mse"]):
            w_opt, b_opt = params.detach().tolist()
            best = {"mse": mse, "sq_err_std": std, "w": w_opt, "b": b_opt}
    assert best is not None
    return best


def optimum_table(*, k: float = K_SCALE, informative: str = "uniform") -> pd.DataFrame:
    """:func:`single_neuron_optimum` for every (fixed model, ground truth): columns mse/sq_err_std."""
    rows = {}
    for act in FIXED_METHODS:
        for gt in GROUND_TRUTHS:
            opt = single_neuron_optimum(gt, act, k=k, informative=informative)
            rows[(f"{DISPLAY[act]} Model", gt)] = (opt["mse"], opt["sq_err_std"])
    df = pd.DataFrame.from_dict(rows, orient="index", columns=["mse", "sq_err_std"])
    df.index = pd.MultiIndex.from_tuples(df.index, names=["model", "ground_truth"])
    return df.unstack("ground_truth").reindex(
        columns=pd.MultiIndex.from_product([["mse", "sq_err_std"], list(GROUND_TRUTHS)])
    )


def table1_display() -> pd.DataFrame:
    """The paper's Table 1 formatted like ours (best ★ and second † recomputed from its means)."""
    frame = table1_frame()
    return format_table(frame["mean"], frame["std"])

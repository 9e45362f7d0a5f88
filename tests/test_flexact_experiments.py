"""Flex-Act synthetic study: data, configs, runner/cache, tables, optimum check, paper data, plots."""

from __future__ import annotations

import math

import matplotlib
import pandas as pd
import pytest
import torch

matplotlib.use("Agg")

from refusals import refusal_fault  # noqa: E402

from helpers.core.claim import Claim  # noqa: E402
from helpers.experiments import config_hash, run_or_load  # noqa: E402
from helpers.flexact.activation import FlexAct  # noqa: E402
from helpers.flexact.synthetic import (  # noqa: E402
    GROUND_TRUTHS,
    FlexActSyntheticConfig,
    SyntheticNet,
    batch_loader,
    build_model,
    sensitivity_configs,
    synthetic_config,
    synthetic_configs,
    synthetic_data,
)
from helpers.flexact.synthetic_analysis import (  # noqa: E402
    format_table,
    majority_picks,
    mark_ranks,
    picks_ground_truth,
    results_frame,
    selection_summary,
    sensitivity_table,
    single_neuron_optimum,
    table1,
    table1_stats,
    trajectories,
)

# ------------------------------------------------------------------------------ data and model


def test_synthetic_data_follows_the_generating_rule():
    x, y = synthetic_data("tanh", 500, torch.Generator().manual_seed(0))
    assert x.shape == (500, 4) and y.shape == (500, 1)
    assert x[:, 0].abs().max() <= 1.0  # informative feature ~ U(-1, 1)
    assert x[:, 1:].abs().max() > 1.0  # distractors are Gaussian
    torch.testing.assert_close(y, torch.tanh(5 * x[:, :1]))
    x2, _ = synthetic_data("tanh", 500, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)
    _, y_leaky = synthetic_data("leaky_relu", 500, torch.Generator().manual_seed(0))
    torch.testing.assert_close(y_leaky, torch.nn.functional.leaky_relu(5 * x[:, :1], 0.01))
    xn, _ = synthetic_data("relu", 2000, torch.Generator().manual_seed(1), informative="normal")
    assert xn[:, 0].abs().max() > 1.0


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(ground_truth="gelu"), ValueError),
        (dict(n=0), ValueError),
        (dict(n_features=0), ValueError),
        (dict(informative="cauchy"), ValueError),
        (dict(k=float("inf")), ValueError),
    ],
)
def test_synthetic_data_rejects_bad_arguments(kwargs, error):
    args = dict(ground_truth="relu", n=10, generator=torch.Generator().manual_seed(0))
    with pytest.raises(error):
        synthetic_data(**{**args, **kwargs})


def test_model_shapes():
    single = SyntheticNet(4, 0, torch.nn.Tanh())
    assert single(torch.randn(5, 4)).shape == (5, 1)
    assert sum(p.numel() for p in single.parameters()) == 5  # w (4) and b: one neuron
    wide = SyntheticNet(4, 8, FlexAct())
    assert wide(torch.randn(5, 4)).shape == (5, 1)
    with pytest.raises(ValueError):
        SyntheticNet(4, -1, torch.nn.Tanh())


def test_batch_loader_covers_every_sample_once_per_epoch():
    x = torch.arange(10.0).reshape(10, 1)
    loader = batch_loader(x, x, 4, shuffle=True, seed=0)
    assert len(loader) == 3
    first = torch.cat([b[0] for b in loader]).flatten()
    second = torch.cat([b[0] for b in loader]).flatten()
    assert sorted(first.tolist()) == list(range(10)) and not torch.equal(first, second)
    again = torch.cat([b[0] for b in batch_loader(x, x, 4, shuffle=True, seed=0)]).flatten()
    assert torch.equal(first, again)
    with pytest.raises(ValueError):
        batch_loader(x, x[:5], 4, shuffle=False, seed=0)


# ------------------------------------------------------------------------------ configs


def test_grids_have_the_papers_shape():
    for profile, n_seeds in (("smoke", 1), ("cpu", 5), ("paper", 5)):
        cfgs = synthetic_configs(profile)
        assert len(cfgs) == 5 * 7 * n_seeds
        assert len({config_hash(c) for c in cfgs}) == len(cfgs)
        assert {c.ground_truth for c in cfgs} == set(GROUND_TRUTHS)
        assert {c.alpha for c in cfgs if c.method == "flexact"} == {0.0, 0.3}
    sens = sensitivity_configs("cpu")
    assert {(c.alpha, c.lam) for c in sens} == {(0.03, 1.0), (0.1, 1.0), (1.0, 1.0), (0.3, 0.1), (0.3, 10.0)}
    assert {c.seed for c in sens} == {0, 1, 2} and len(sens) == 5 * 5 * 3
    assert not {config_hash(c) for c in sens} & {config_hash(c) for c in synthetic_configs("cpu")}
    assert (
        synthetic_config("paper", "relu", "flexact", 0, alpha=0.3).n_train
        > synthetic_config("cpu", "relu", "flexact", 0, alpha=0.3).n_train
    )


def test_paper_profile_constructs_its_model():
    cfg = synthetic_config("paper", "sigmoid", "flexact", 0, alpha=0.3)
    model = build_model(cfg)
    assert isinstance(model.act, FlexAct) and model.head is None


def _call_text(name: str, kwargs: dict) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"


def test_config_validation():
    bad_configs = [
        dict(method="gelu"),
        dict(ground_truth="swish"),
        dict(method="relu", alpha=0.3),
        dict(alpha=-1.0),
        dict(lam=0.0),
        dict(epochs=0),
        dict(batch_size=1.5),
        dict(profile="gpu"),
        dict(lr=0.0),
        dict(lr_schedule="step"),
        dict(tau_min=2.0),
        dict(informative="t"),
        dict(seed=-1),
    ]
    problems = [
        fault
        for kwargs in bad_configs
        if (
            fault := refusal_fault(
                _call_text("FlexActSyntheticConfig", kwargs), lambda: FlexActSyntheticConfig(**kwargs), ValueError
            )
        )
    ]
    assert not problems, "\n".join(problems)


def test_labels_match_table1_rows():
    assert synthetic_config("cpu", "relu", "flexact", 0, alpha=0.3).label == "Flex-Act (α=0.3)"
    assert synthetic_config("cpu", "relu", "flexact", 0, alpha=0.0).label == "Flex-Act (α=0)"
    assert synthetic_config("cpu", "relu", "flexact", 0, alpha=0.3, lam=0.1).label == "Flex-Act (α=0.3, λ=0.1)"
    assert synthetic_config("cpu", "relu", "leaky_relu", 0).label == "LeakyReLU Model"


# ------------------------------------------------------------------------------ runner


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    """The whole smoke grid (35 tiny runs), cached in a temporary results folder."""
    mp = pytest.MonkeyPatch()
    mp.setenv("REPRO_RESULTS_DIR", str(tmp_path_factory.mktemp("results")))
    mp.setenv("REPRO_QUIET", "1")
    try:
        yield [run_or_load(cfg) for cfg in synthetic_configs("smoke")]
    finally:
        mp.undo()


def test_run_records_what_the_notebook_needs(smoke_results):
    r = next(r for r in smoke_results if r["config"]["method"] == "flexact")
    assert r["status"] == "ok"
    assert len(r["history"]) == 2
    row = r["history"][-1]
    assert set(row["flexact"]["act"]) >= {"probs", "pseudo_probs", "grad_norms", "kl"}
    assert r["chosen_activation"] in GROUND_TRUTHS and len(r["final_probs"]) == 5
    assert r["initial_probs"] == pytest.approx([0.2] * 5)
    assert len(r["grid"]["pred"]) == len(r["grid"]["x1"]) == 201
    assert math.isfinite(r["val_mse"]) and r["val_sq_err_std"] >= 0
    assert math.isfinite(r["val_mse_expected"])
    fixed = next(r for r in smoke_results if r["config"]["method"] == "tanh")
    assert fixed["chosen_activation"] == "tanh" and fixed["final_probs"] is None


def test_seeded_runs_are_bit_identical(tmp_path, monkeypatch):
    cfg = synthetic_config("smoke", "sigmoid", "flexact", 0, alpha=0.3)
    first = run_or_load(cfg)
    second = run_or_load(cfg, rerun=True)
    for key in ("history", "val_mse", "final_probs", "weight", "bias", "grid"):
        assert first[key] == second[key], key


def test_fixed_model_learns_its_own_activation():
    """The matched fixed model recovers w = (5, 0, 0, 0), b = 0 (a short run at a high rate)."""
    cfg = FlexActSyntheticConfig(
        profile="smoke", ground_truth="relu", method="relu", n_train=256, n_val=512, epochs=30, batch_size=32, lr=0.2
    )
    r = run_or_load(cfg)
    assert r["val_mse"] < 1e-4
    assert abs(r["weight"][0] - 5.0) < 0.05 and max(abs(w) for w in r["weight"][1:]) < 0.01


# ------------------------------------------------------------------------------ tables


def test_table1_layout_and_marks(smoke_results):
    table = table1(smoke_results)
    assert list(table.columns) == ["ReLU", "Sigmoid", "Tanh", "LeakyReLU", "Identity"]
    assert list(table.index)[:2] == ["Flex-Act (α=0.3)", "Flex-Act (α=0)"]
    assert len(table) == 7
    for col in table.columns:
        assert sum("★" in cell for cell in table[col]) >= 1
    stats = table1_stats(smoke_results)
    assert (stats["n"] == 1).all().all()
    df = results_frame(smoke_results)
    assert len(df) == 35 and set(df["model"]) == set(table.index)


def test_mark_ranks_ties_share_a_rank():
    means = pd.DataFrame({"a": [0.00001, 0.00004, 0.0002, 0.5], "b": [0.0, 0.1, 0.1, 0.2]}, index=list("wxyz"))
    marks = mark_ranks(means)
    assert marks["a"].tolist() == ["best", "best", "", ""]  # a tie for best leaves no second
    assert marks["b"].tolist() == ["best", "second", "second", ""]
    text = format_table(means, means * 0)
    assert text.loc["w", "a"].endswith("★") and text.loc["x", "b"].endswith("†")
    assert not text.loc["y", "a"].endswith(("★", "†"))


def test_rank_rule_reproduces_the_papers_daggers():
    from helpers.flexact import paper

    frame = paper.table1_frame()
    marks = mark_ranks(frame["mean"])
    printed = frame["dagger"].astype(bool)
    assert ((marks == "second") == printed).all().all()


def test_selection_helpers(smoke_results):
    counts = selection_summary(smoke_results)
    assert counts.to_numpy().sum() == 10  # 2 Flex-Act variants × 5 ground truths × 1 seed
    picks = picks_ground_truth(smoke_results, 0.3)
    assert set(picks) == set(GROUND_TRUTHS) and all(v in (0, 1) for v in picks.values())
    assert majority_picks(smoke_results, 0.3) == sum(picks.values())
    sens = sensitivity_table(smoke_results)
    assert list(sens.index) == [(0.0, 1.0), (0.3, 1.0)]
    assert sens.loc[(0.3, 1.0), ("Sigmoid", "picked")] in (0, 1) and sens.loc[(0.3, 1.0), ("Sigmoid", "seeds")] == 1
    assert sens[("Sigmoid", "picked")].dtype.kind == "i"
    traj = trajectories(smoke_results, "sigmoid", 0.0)
    assert traj["probs"].shape == (1, 3, 5) and list(traj["epochs"]) == [0, 1, 2]
    with pytest.raises(ValueError):
        picks_ground_truth(smoke_results, 0.7)
    with pytest.raises(ValueError):
        trajectories(smoke_results, "sigmoid", 0.7)


def test_plots(smoke_results):
    from helpers.flexact.plots import plot_function_fits, plot_selection_trajectories

    fig = plot_selection_trajectories({"sigmoid": trajectories(smoke_results, "sigmoid", 0.3)})
    assert len(fig.axes) >= 1
    r = smoke_results[0]
    fig2 = plot_function_fits(
        {"relu": {"x": r["grid"]["x1"], "truth": r["grid"]["truth"], "fits": {"model": r["grid"]["pred"]}}}
    )
    assert len(fig2.axes) >= 1
    with pytest.raises(ValueError):
        plot_selection_trajectories({})
    with pytest.raises(ValueError):
        plot_function_fits({})


# ------------------------------------------------------------------------------ optimum check


def test_single_neuron_optimum_closed_forms():
    # Best line through relu(5x), x ~ U(-1, 1): 25·(1/6 − 1/16 − 3·(1/6)²) = 25/48.
    lin = single_neuron_optimum("relu", "identity")
    assert lin["mse"] == pytest.approx(25 / 48, rel=1e-5)
    # Its residual is uniform on (-1.25, 1.25), so the squared error has std sqrt(1.25⁴/5 − (1.25²/3)²).
    assert lin["sq_err_std"] == pytest.approx(math.sqrt(1.25**4 / 5 - (1.25**2 / 3) ** 2), rel=1e-4)
    # relu(w·x + b) cannot go negative: best is relu(5x), error E[relu(−5x)²] = 25/6.
    assert single_neuron_optimum("identity", "relu")["mse"] == pytest.approx(25 / 6, rel=1e-5)
    # The matched activation fits exactly.
    exact = single_neuron_optimum("sigmoid", "sigmoid")
    assert exact["mse"] < 1e-12 and exact["w"] == pytest.approx(5.0, rel=1e-4)
    with pytest.raises(ValueError):
        single_neuron_optimum("relu", "gelu")


# ------------------------------------------------------------------------------ paper data and claims


def test_paper_tables_are_complete():
    from helpers.flexact import paper, synthetic_analysis

    assert set(paper.TABLE1) == {
        "Flex-Act (α=0.3)",
        "Flex-Act (α=0)",
        "ReLU Model",
        "Sigmoid Model",
        "Tanh Model",
        "LeakyReLU Model",
        "Identity Model",
    }
    for row in paper.TABLE1.values():
        assert set(row) == set(GROUND_TRUTHS)
    assert paper.TABLE1["Identity Model"]["relu"][:2] == (0.5209, 0.4659)
    assert paper.TABLE2["ResNet34 + Flex-Act"] == 95.44
    shown = synthetic_analysis.table1_display()
    assert shown.loc["ReLU Model", "ReLU"].endswith("★")


def test_claims_without_committed_results_are_not_run_here():
    from helpers.flexact import claims as flexact_claims
    from helpers.flexact.claims import cifar_claims

    claims = flexact_claims.claims()
    assert claims and all(isinstance(c, Claim) for c in claims)
    assert {c.verdict for c in claims} == {"not run here"}  # tests use an empty results folder
    assert cifar_claims() and {c.verdict for c in cifar_claims()} == {"not run here"}
    assert all(c.notebook in ("notebooks/30_flexact_synthetic", "notebooks/31_flexact_cifar") for c in claims)


def test_the_readings_of_the_synthetic_rows_name_existing_rows():
    from helpers.flexact.claims import _READINGS, synthetic_claims

    keys = {c.key for c in synthetic_claims()}
    assert set(_READINGS) == {"flexact-table1-std-meaning", "flexact-alpha-effect", "flexact-rank"} <= keys


def test_cell_agreement_rule():
    from helpers.flexact.claims import fixed_cells_within

    assert fixed_cells_within(0.5208, 0.5209)
    assert fixed_cells_within(0.0002, 0.0000)
    assert not fixed_cells_within(0.60, 0.5209)


def test_count_claims_carry_a_binomial_interval(smoke_results):
    """Every count claim of the synthetic study carries effect, exact binomial CI, n and test (no MDE)."""
    from helpers.core.claim import proportion_fields
    from helpers.flexact.claims import (
        _claim_fixed_cells,
        _claim_matched_fixed,
        _claim_rank,
        _claim_std_meaning,
    )

    fields = proportion_fields(3, 5, "seeds")
    assert fields == {
        "effect": "3/5 seeds = 60%",
        "ci": "95% [15%, 95%]",
        "n": "5 seeds",
        "test": "exact binomial (Clopper-Pearson) 95% CI of the rate; no MDE for a count",
    }
    assert proportion_fields(0, 18, "cells")["ci"] == "95% [0%, 19%]"
    for build in (_claim_matched_fixed, _claim_fixed_cells, _claim_std_meaning, _claim_rank):
        ours, verdict, note, f = build(smoke_results)
        assert verdict in ("confirmed", "contradicted", "inconclusive")  # run-based: the interval rule only
        assert f["effect"] and f["ci"].startswith("95% [") and f["n"] and "Clopper-Pearson" in f["test"], build
        assert "mde" not in f
    _, _, _, seed_cols = _claim_rank(smoke_results)
    assert seed_cols["n"] == "5 seed-columns"  # 1 seed × 5 ground truths in the smoke grid

"""Tests for helpers.core.tables, the Flex-Act CIFAR protocol, and the claims built on them.

Results are fabricated dicts (or JSON files in the temporary results folder of conftest), so no
test trains a network except the one that checks how ``build_run`` wires the temperature schedule.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from helpers.core import tables as T
from helpers.core.findings import setup_frame
from helpers.core.registry import display_names
from helpers.core.runs import TrainConfig
from helpers.experiments import MissingResult, config_hash, hash_payload, store_result
from helpers.flexact import protocol as FC
from helpers.flexact import selections
from helpers.flexact.options import FlexActOptions
from helpers.srelu import protocol as SP


def fake_result(cfg: TrainConfig | dict, accs: list[float], flexact_probs: list[list[float]] | None = None) -> dict:
    """A run_or_load-shaped result with validation accuracies ``accs`` (fractions) per epoch."""
    from helpers.experiments import config_dict

    config = config_dict(cfg) if isinstance(cfg, TrainConfig) else cfg
    history = []
    for i, acc in enumerate(accs):
        row = {"epoch": i + 1, "train_loss": 2.0 - 0.1 * i, "val_loss": 1.5, "val_metric": acc}
        if flexact_probs is not None:
            row["tau"] = 0.5
            row["flexact"] = {
                "penultimate": {
                    "probs": flexact_probs[i],
                    "grad_norms": [8.0, 1.7, 5.1, 8.0, 8.0],
                    "pseudo_probs": [0.15, 0.33, 0.22, 0.15, 0.15],
                }
            }
        history.append(row)
    best = int(np.argmax(accs))
    return {
        "config": config,
        "history": history,
        "best_epoch": best + 1,
        "best_val_metric": accs[best],
        "higher_is_better": True,
        "n_params": 10,
        "status": "ok",
        "data_source": "fake",
    }


def cfg_dict(**kw) -> dict:
    base = {
        "experiment": "x",
        "model": "vit",
        "dataset": "cifar10",
        "activation": "gelu",
        "activation_kwargs": {},
        "penultimate_activation": None,
        "seed": 0,
    }
    return {**base, **kw}


# --------------------------------------------------------------------------------------------
# rows, summaries, tables


def test_rows_and_summary_mean_std_over_seeds():
    results = [fake_result(cfg_dict(activation="gelu", seed=s), [0.5, a]) for s, a in enumerate((0.6, 0.7, 0.8))]
    results.append(fake_result(cfg_dict(activation="srelu", activation_kwargs={"delta": 0.01}), [0.9, 0.4]))
    rows = T.accuracy_rows(results)
    assert list(rows["best"]) == pytest.approx([60.0, 70.0, 80.0, 90.0])
    assert list(rows["final"]) == pytest.approx([60.0, 70.0, 80.0, 40.0])  # last epoch, not best
    # the core's columns are generic: a method's knob (S-ReLU's δ here) is no column of its own
    assert list(rows.columns) == [
        "experiment", "model", "dataset", "activation", "penultimate",
        "seed", "best", "final", "best_epoch", "epochs", "n_params",
    ]  # fmt: skip
    summary = T.summarize(rows, "activation")
    assert list(summary.index) == ["gelu", "srelu"]  # first-appearance order
    assert summary.loc["gelu", "best_mean"] == pytest.approx(70.0)
    assert summary.loc["gelu", "best_std"] == pytest.approx(10.0)  # ddof = 1
    assert summary.loc["gelu", "n"] == 3
    assert math.isnan(summary.loc["srelu", "best_std"])  # a single seed has no spread


def test_accuracy_rows_rejects_bad_input():
    with pytest.raises(ValueError, match="no results"):
        T.accuracy_rows([])
    lower = fake_result(cfg_dict(), [0.5])
    lower["higher_is_better"] = False
    with pytest.raises(ValueError, match="higher is better"):
        T.accuracy_rows([lower])
    with pytest.raises(TypeError, match="run_or_load result"):
        T.accuracy_rows([{"history": []}])
    with pytest.raises(ValueError, match="lack columns"):
        T.summarize(pd.DataFrame({"a": [1]}), "a")
    with pytest.raises(ValueError, match=r"extra columns \['seed'\] would replace"):
        T.accuracy_rows([fake_result(cfg_dict(), [0.5])], extra={"seed": lambda r: 0})


def test_accuracy_rows_adds_a_column_per_extra_function_of_the_result():
    results = [fake_result(cfg_dict(activation_kwargs={"width": w}, seed=s), [0.5]) for s, w in enumerate((1, 2))]
    rows = T.accuracy_rows(results, extra={"width": lambda r: r["config"]["activation_kwargs"]["width"]})
    assert list(rows["width"]) == [1, 2] and list(rows.columns)[-1] == "width"


@pytest.mark.parametrize(
    "mean,std,digits,expected",
    [
        (72.44, 0.66, 1, "72.4 ± 0.7"),
        (72.44, math.nan, 1, "72.4"),
        (math.nan, 1.0, 1, "—"),
        (95.391, 0.0, 2, "95.39 ± 0.00"),
    ],
)
def test_format_mean_std(mean, std, digits, expected):
    assert T.format_mean_std(mean, std, digits) == expected


def test_side_by_side_ranks_and_missing_keys():
    rows = T.accuracy_rows(
        [
            fake_result(cfg_dict(activation=a, seed=s), [acc + 0.01 * s])
            for a, acc in (("gelu", 0.6), ("srelu", 0.7), ("relu", 0.65))
            for s in (0, 1)
        ]
    )
    summary = T.summarize(rows, "activation")
    paper = {"gelu": (64.9, 0.4), "srelu": (89.9, 0.1), "elu": (59.8, 0.5)}
    table = T.side_by_side(summary, paper, labels={"srelu": "S-ReLU"})
    assert list(table.index) == ["gelu", "S-ReLU", "relu", "elu"]
    assert table.loc["S-ReLU", "paper"] == "89.9 ± 0.1"
    assert table.loc["S-ReLU", "ours − paper"] == f"{70.5 - 89.9:+.1f}"
    assert table.loc["relu", "paper"] == "—" and table.loc["elu", "ours, best"] == "—"
    assert table.loc["S-ReLU", "rank (ours)"] == 1 and table.loc["gelu", "rank (paper)"] == 2
    with pytest.raises(ValueError, match="mean, std"):
        T.side_by_side(summary, {"gelu": 64.9})


def test_rank_correlation():
    summary = pd.DataFrame({"best_mean": [1.0, 2.0, 3.0], "final_mean": [3.0, 2.0, 1.0]}, index=["a", "b", "c"])
    paper = {"a": (10.0, 1.0), "b": (20.0, 1.0), "c": (30.0, 1.0)}
    assert T.rank_correlation(summary, paper) == (pytest.approx(1.0), 3)
    assert T.rank_correlation(summary, paper, "final")[0] == pytest.approx(-1.0)
    rho, n = T.rank_correlation(summary.iloc[:2], paper)
    assert math.isnan(rho) and n == 2


def test_sweep_and_setup_frames():
    summary = pd.DataFrame(
        {
            "n": [2, 2],
            "best_mean": [80.0, 60.0],
            "best_std": [1.0, 2.0],
            "final_mean": [79.0, 59.0],
            "final_std": [1.0, 2.0],
        },
        index=pd.Index([0.001, 10.0], name="delta"),
    )
    frame = T.sweep_frame(summary, "final")
    assert list(frame.columns) == ["x", "mean", "std"] and list(frame["mean"]) == [79.0, 59.0]
    paper = T.sweep_frame({0.001: (81.0, 0.6), 10.0: (58.5, 0.3)})
    assert list(paper["x"]) == [0.001, 10.0]
    cfg = SP.srelu_config("vit", "smoke", "srelu", 0)
    shown = setup_frame({"a": cfg, "b": SP.srelu_config("vit", "paper", "srelu", 0)}, ["epochs", "n_train"])
    assert shown.loc["training samples", "b"] == "—" and shown.loc["epochs", "b"] == "100"
    with pytest.raises(ValueError, match="no fields"):
        setup_frame({"a": cfg}, ["nonsense"])


# --------------------------------------------------------------------------------------------
# differences and statements


def test_difference_welch_interval_from_printed_numbers():
    from scipy import stats

    d = T.Difference("a", "b", 82.3, 76.4, 0.4, 0.3, 3, 3)
    assert d.diff == pytest.approx(5.9)
    w = d.welch()
    assert w.se == pytest.approx(math.sqrt(0.4**2 / 3 + 0.3**2 / 3))
    p = stats.ttest_ind_from_stats(82.3, 0.4, 3, 76.4, 0.3, 3, equal_var=False).pvalue
    assert w.test == "Welch t from printed mean ± sd" and w.p == pytest.approx(p) and w.effect == pytest.approx(5.9)
    assert w.ci_low > 0 and 2 < w.df < 4
    text = d.describe({"a": "S-ReLU", "b": "PReLU"})
    assert text.startswith("S-ReLU − PReLU = +5.9 points, 95% CI [") and "3 vs 3 runs" in text and "MDE" in text
    assert "z =" not in text and "standard error" not in text
    single = T.Difference("a", "b", 1.0, 0.0, math.nan, math.nan, 1, 1)
    assert "no interval" in single.describe()
    assert not hasattr(T, "margin_statement") and not hasattr(T, "Z_SIGNIFICANT") and not hasattr(T, "run_statement")


def test_margin_over_rest_and_paper_difference():
    summary = pd.DataFrame(
        {
            "n": [3, 3, 3],
            "best_mean": [70.0, 75.0, 74.0],
            "best_std": [1.0, 1.0, 1.0],
            "final_mean": [70.0, 75.0, 74.0],
            "final_std": [1.0, 1.0, 1.0],
        },
        index=["srelu", "relu", "gelu"],
    )
    assert T.margin_over_rest(summary, "srelu").b == "relu"
    m = T.margin_over_rest(summary, "srelu", exclude=["relu"])
    assert m.b == "gelu" and m.diff == pytest.approx(-4.0)
    with pytest.raises(ValueError, match="no group"):
        T.margin_over_rest(summary, "srelu", exclude=["relu", "gelu"])
    with pytest.raises(KeyError, match="not in the summary"):
        T.difference(summary, "srelu", "mish")
    from helpers.srelu import paper

    table2 = T.rekey(paper.TABLE2["CIFAR-10"], display_names())
    p = T.paper_difference(table2, "srelu", n_runs=paper.PAPER_RUNS)
    assert p.b == "gelu" and p.diff == pytest.approx(89.9 - 64.9)  # GELU is Table 2's runner-up
    assert p.n_a == paper.PAPER_RUNS == 3
    assert T.paper_difference(table2, "srelu", "elu", n_runs=3).diff == pytest.approx(89.9 - 59.8)


def test_binomial_se():
    assert T.binomial_se(95.39, 10_000) == pytest.approx(100 * math.sqrt(0.9539 * 0.0461 / 10_000))
    with pytest.raises(ValueError):
        T.binomial_se(101.0, 10)
    with pytest.raises(ValueError):
        T.binomial_se(50.0, 0)


# --------------------------------------------------------------------------------------------
# curves and Flex-Act records


def test_training_curves_average_over_seeds():
    results = [fake_result(cfg_dict(seed=s), [0.5 + 0.1 * s, 0.6 + 0.1 * s]) for s in (0, 1)]
    curves = T.training_curves(results, key=lambda c: c["activation"])
    assert list(curves["epoch"]) == [1, 2]
    assert curves["val_metric_mean"].tolist() == pytest.approx([55.0, 65.0])
    assert curves["val_metric_std"].tolist() == pytest.approx([math.sqrt(50.0)] * 2)
    with pytest.raises(KeyError, match="no 'lambdas'"):
        T.training_curves(results, key=lambda c: 0, metrics=("lambdas",))


def test_flexact_selections_and_trajectory():
    probs = [[0.2, 0.3, 0.2, 0.15, 0.15], [0.1, 0.5, 0.2, 0.1, 0.1]]
    cfg = FC.flexact_cifar_config("cpu", "resnet18", True, 0)
    results = [fake_result(replace(cfg, seed=s), [0.5, 0.6], probs) for s in (0, 1)]
    picks = selections.flexact_selections(results)
    assert list(picks["chosen"]) == ["sigmoid", "sigmoid"] and picks["p_chosen"][0] == pytest.approx(0.5)
    traj = selections.flexact_trajectory(results)
    assert traj["probs"].shape == (2, 3, 5) and traj["pseudo_probs"].shape == (2, 2, 5)
    assert traj["probs"][0, 0].tolist() == pytest.approx([0.2] * 5)  # logits start at zero
    assert traj["candidates"] == ["relu", "sigmoid", "tanh", "leaky_relu", "identity"]
    plain = fake_result(FC.flexact_cifar_config("cpu", "resnet18", False, 0), [0.5])
    with pytest.raises(ValueError, match="no Flex-Act records"):
        selections.flexact_selections([plain])


# --------------------------------------------------------------------------------------------
# loading


def test_gather_results_loads_only_and_names_the_command(monkeypatch):
    configs = FC.table2_configs("cpu")
    assert T.load_all(configs) is None
    with pytest.raises(MissingResult, match=r"python -m tools.run flexact_cifar --profile cpu"):
        T.gather_results(configs, protocol="flexact_cifar", train=False)
    monkeypatch.setenv("CI", "true")  # by default a page trains what is missing, but never under CI
    with pytest.raises(MissingResult, match=r"6 of 6 cpu-profile results are missing"):
        T.gather_results(configs, protocol="flexact_cifar")
    for cfg in configs:
        store_result(cfg, fake_result(cfg, [0.5]))
    assert len(T.gather_results(configs, protocol="flexact_cifar")) == len(configs)
    assert len(T.load_all(configs)) == len(configs)
    with pytest.raises(TypeError, match="run configs"):
        T.gather_results("flexact_cifar")


# --------------------------------------------------------------------------------------------
# the Flex-Act CIFAR protocol


def test_lambda_scales_with_the_root_of_the_pooled_width():
    from helpers.models import build_model

    for profile in ("smoke", "cpu", "paper"):
        cfg = FC.flexact_cifar_config(profile, "resnet18", True, 0)
        width = build_model("resnet18", input_shape=(3, 32, 32), num_classes=10, **cfg.model_kwargs).fc.in_features
        assert FC.penultimate_width(cfg.model_kwargs) == width
        opts = cfg.option(FlexActOptions)
        assert opts.flexact_lam == pytest.approx(math.sqrt(width))
        assert opts.flexact_tau_min == FC.TAU_MIN and opts.flexact_alpha == FC.FLEXACT_ALPHA
    with pytest.raises(ValueError, match="width"):
        FC.regularizer_lambda(0)
    with pytest.raises(ValueError, match="model"):
        FC.flexact_cifar_config("cpu", "vgg", True, 0)


def test_plain_runs_keep_flexact_fields_at_their_defaults():
    plain = FC.flexact_cifar_config("cpu", "resnet18", False, 0)
    payload = hash_payload(plain)
    assert not any(k.startswith("flexact") for k in payload) and plain.options == ()
    flex = FC.flexact_cifar_config("cpu", "resnet18", True, 0)
    assert {"flexact_alpha", "flexact_lam", "flexact_tau_min"} <= set(hash_payload(flex))
    assert len(FC.table2_configs("paper")) == 2 * 2 * 3 and {c.model for c in FC.table2_configs("cpu")} == {"resnet18"}


def test_new_tau_field_leaves_existing_cache_keys_alone():
    cfg = TrainConfig(experiment="e", dataset="adult", model="mlp")
    assert "flexact_tau_min" not in hash_payload(cfg)
    assert config_hash(cfg) == config_hash(cfg.with_options(FlexActOptions(flexact_tau_min=None)))
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="flexact_tau_min"):
            FlexActOptions(flexact_tau_min=bad)


def test_build_run_anneals_the_temperature_over_all_steps():
    from helpers.core.data import available
    from helpers.core.runs import build_run
    from helpers.flexact.hook import FlexActHook

    if not available("cifar10"):
        pytest.skip("CIFAR-10 not found: set REPRO_DATA_DIR to the offline mirror (shared/data)")
    cfg = FC.flexact_cifar_config("smoke", "resnet18", True, 0)
    hook = next(h for h in build_run(cfg)["hooks"] if isinstance(h, FlexActHook))
    steps = cfg.epochs * math.ceil(cfg.n_train / cfg.batch_size)
    assert hook.schedule.total == steps and hook.schedule(steps) == pytest.approx(FC.TAU_MIN)
    opts = cfg.option(FlexActOptions)
    assert hook.schedule(0) == 1.0 and hook.lam == opts.flexact_lam
    untempered = cfg.with_options(replace(opts, flexact_tau_min=None))
    plain = next(h for h in build_run(untempered)["hooks"] if isinstance(h, FlexActHook))
    assert plain.schedule is None  # the old behaviour: τ stays 1


# --------------------------------------------------------------------------------------------
# claims


def test_claims_without_results_are_not_run_here():
    from helpers.flexact.claims import cifar_claims
    from helpers.srelu.claims import experiment_claims

    s_claims = experiment_claims("cpu")
    by_verdict = {c.claim: c.verdict for c in s_claims}
    paper_data = {c.claim: c.verdict for c in s_claims if c.basis == "source"}
    assert len(paper_data) == 2  # decided from the paper's own numbers, whatever our runs
    assert [v for c, v in paper_data.items() if "Average row" in c] == ["confirmed"]  # Table 1's Average is a mean
    assert [v for c, v in paper_data.items() if "rejected rewards" in c] == ["contradicted"]  # Table 3's own values
    assert {v for c, v in by_verdict.items() if c not in paper_data} == {"not run here"}
    assert {c.verdict for c in cifar_claims("cpu")} == {"not run here"}
    assert all(c.notebook == "notebooks/31_flexact_cifar" for c in cifar_claims("cpu"))


def _store(configs, acc_of, probs=None):
    for cfg in configs:
        flex = cfg.penultimate_activation == "flexact"
        store_result(cfg, fake_result(cfg, [acc_of(cfg) * 0.9, acc_of(cfg)], probs if flex else None))


def test_srelu_claims_from_stored_results():
    from helpers.srelu.claims import experiment_claims

    noise = {0: -0.002, 1: 0.0, 2: 0.002, 3: -0.001, 4: 0.001}  # ConvNeXt's decisive scale has 5 seeds
    # S-ReLU ahead of the others by 1 point, ReLU equal to S-ReLU; accuracy falls with δ.
    level = {"srelu": 0.50, "relu": 0.50, "gelu": 0.49, "prelu": 0.48}
    _store(SP.compare_configs("cpu"), lambda c: level.get(c.activation, 0.45) + noise[c.seed])
    _store(
        SP.delta_configs("cpu"),
        lambda c: 0.50 - 0.01 * math.log10(c.activation_kwargs["delta"] / 0.001) + noise[c.seed],
    )
    claims = {c.claim: c for c in experiment_claims("cpu")}
    best_vit = next(c for k, c in claims.items() if k.startswith("S-ReLU beats every other activation on ViT"))
    size_vit = next(
        c for k, c in claims.items() if k.startswith("S-ReLU's margin over the best other activation on ViT")
    )
    relu = next(c for k, c in claims.items() if k.startswith("S-ReLU's advantage comes from smoothing"))
    delta_best = next(c for k, c in claims.items() if k.startswith("δ = 0.001 is (one of) the best"))
    drop = next(c for k, c in claims.items() if k.startswith("Large δ lowers accuracy"))
    # the same seed noise in every arm: paired differences are exact, so the CIs collapse
    assert best_vit.verdict == "confirmed" and "S-ReLU − GELU = +1.0" in best_vit.our_value.replace(
        " (best other by mean)", ""
    )
    assert best_vit.ci.startswith("none: exact") and "paired t" in best_vit.test and best_vit.n == "3 pairs of runs"
    # +1 vs +5.9, the paper's margin carried to our network: a reading of ours
    assert (
        size_vit.verdict == "contradicted" and size_vit.verdict_label == "contradicted at our scale, under our reading"
    )
    assert "carried to our scaled-down network" in size_vit.reading
    assert size_vit.note.endswith("the same paired intervals give: confirmed.")  # by sign only, S-ReLU is ahead
    assert relu.verdict == "contradicted" and "S-ReLU − ReLU = +0.0" in relu.our_value
    assert relu.reading == "the paper has no ReLU arm; the threshold is ours"
    assert relu.note.endswith("the same paired intervals give: inconclusive.")  # a difference of exactly 0
    assert delta_best.verdict == "confirmed" and drop.verdict == "confirmed"
    assert "Spearman" in drop.note


def test_flexact_claims_from_stored_results():
    from helpers.flexact.claims import cifar_claims

    probs = [[0.2, 0.3, 0.2, 0.15, 0.15], [0.1, 0.5, 0.2, 0.1, 0.1]]  # ends on Sigmoid
    noise = {0: -0.002, 1: 0.0, 2: 0.002}
    _store(FC.table2_configs("cpu"), lambda c: (0.70 if c.penultimate_activation else 0.71) + noise[c.seed], probs)
    claims = cifar_claims("cpu")
    match, fallback, r34 = claims
    assert match.verdict == "contradicted" and "-1.00" in match.our_value  # 1 point worse on every seed
    assert "non-inferiority" in match.test and match.ci == "none: exact, the same difference on all 3 seeds"
    assert fallback.verdict == "inconclusive" and "seed 0: sigmoid" in fallback.our_value
    # every seed ends on Sigmoid: 0 of 3 seeds plain-like, with its exact binomial interval
    assert fallback.effect == "0/3 seeds = 0%" and fallback.ci == "95% [0%, 71%]" and fallback.n == "3 seeds"
    assert "Clopper-Pearson" in fallback.test and not fallback.mde
    assert r34.verdict == "not run here"

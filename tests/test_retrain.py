"""The decisive-scale retrain list (tools.retrain) and the cpu scales it trains."""

from __future__ import annotations

import pytest
import torch

from helpers.core.results_cache import config_hash
from helpers.lambda_gelu import protocol as lgelu
from helpers.lambda_gelu.options import LambdaGeluOptions
from tools import retrain
from tools import retrain_status as RS
from tools.batches import Batch


def test_every_claim_is_seed_major_and_has_no_duplicate_run():
    for claim in retrain.BATCHES.values():
        configs = claim.configs()
        seeds = [c.seed for c in configs]
        assert seeds == sorted(seeds), claim.key
        assert len({config_hash(c) for c in configs}) == len(configs), claim.key


def test_decisive_pairs_train_on_all_data_and_the_figures_keep_their_earlier_scale():
    for pair in lgelu.DECISIVE_PAIRS:
        configs = lgelu.table1_configs("cpu", (pair,)) + lgelu.table2_configs("cpu", (pair,))
        assert {(c.n_train, c.n_val) for c in configs} == {(None, None)}, pair
    for pair, figure in (("fmnist", lgelu.grid_configs), ("cifar10_resnet", lgelu.c_sweep_configs)):
        assert lgelu.figure_scale(pair, "cpu") is lgelu.FIGURE_CPU[pair]
        assert {c.scale_note for c in figure("cpu")} == {lgelu.FIGURE_CPU[pair].note}
        assert lgelu.FIGURE_CPU[pair].note != lgelu.PAIRS[pair].scale("cpu").note
    assert lgelu.figure_scale("fmnist", "smoke") is lgelu.PAIRS["fmnist"].scale("smoke")


def test_every_grid_cell_has_every_seed_in_the_cpu_profile():
    seeds = lgelu.FIGURE_CPU["fmnist"].seeds
    cells = len(lgelu.GRID_T) * len(lgelu.GRID_C) * len(lgelu.INIT_MODES)
    assert len(lgelu.grid_configs("cpu")) == len(seeds) * (1 + cells)
    assert len(lgelu.grid_configs("smoke")) < len(lgelu.grid_configs("cpu"))


def test_unknown_claims_are_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        retrain.main(["z", "--status"])
    assert stop.value.code == 2 and "unknown batch z" in capsys.readouterr().err


def test_srelu_cpu_tables_run_at_the_full_data_scale_and_table4_at_table1s_vit():
    from helpers.srelu import protocol as srelu

    for model in srelu.SCALES:
        configs = srelu.compare_configs("cpu", model)
        assert {(c.n_train, c.n_val, c.augment) for c in configs} == {(None, None, "crop_flip")}
    assert srelu.table4_scale("cpu") is srelu.SCALES["vit"]["cpu"]
    assert {c.scale_note for c in srelu.delta_configs("cpu")} == {srelu.SCALES["vit"]["cpu"].note}
    assert len(srelu.delta_configs("cpu")) == 4 * len(srelu.SCALES["vit"]["cpu"].seeds)


def test_srelu_cheap_check_keeps_the_earlier_vit_scale():
    from helpers.srelu import protocol as srelu

    cfg = srelu.cheap_check_config()
    assert cfg.scale_note == srelu.EARLIER_VIT_CPU.note != srelu.SCALES["vit"]["cpu"].note
    assert (cfg.epochs, cfg.n_train, cfg.augment) == (5, 2000, "none")


def test_resnet_decisive_scale_is_bf16_channels_last_with_five_table2_and_three_table1_seeds():
    scale = lgelu.PAIRS["cifar10_resnet"].scale("cpu")
    assert scale.precision == "bf16" and scale.channels_last and scale.augment == "crop_flip"
    assert scale.n_train is None and scale.n_val is None  # full CIFAR-10
    t1 = lgelu.table1_configs("cpu", ("cifar10_resnet",))
    t2 = lgelu.table2_configs("cpu", ("cifar10_resnet",))
    assert sorted(c.seed for c in t1 if c.activation == "gelu") == [0, 1, 2, 3, 4]
    assert sorted(c.seed for c in t2) == [0, 1, 2, 3, 4]
    others = [c for c in t1 if c.activation != "gelu"]
    assert len(others) == 3 * 4 and {c.seed for c in others} == {0, 1, 2}
    assert all(c.precision == "bf16" and c.channels_last for c in t1 + t2)
    # the claims of the retrain carry them: (c) GELU + annealed at 5 seeds, (d) the other arms at 3
    c_hashes = {config_hash(c) for c in retrain.BATCHES["c"].configs()}
    d_hashes = {config_hash(c) for c in retrain.BATCHES["d"].configs()}
    assert {config_hash(c) for c in t2} <= c_hashes and {config_hash(c) for c in others} <= d_hashes


def test_bf16_runs_are_skipped_where_bf16_is_emulated(monkeypatch):
    from helpers.core import provenance

    bf16 = lgelu.table2_configs("cpu", ("cifar10_resnet",))[0]
    fp32 = lgelu.table2_configs("cpu", ("fmnist",))[0]
    monkeypatch.delenv(provenance.ALLOW_EMULATED_BF16_ENV, raising=False)
    monkeypatch.setattr(provenance, "bf16_is_native", lambda: False)
    monkeypatch.setattr(retrain, "resolve_device", lambda: torch.device("cpu"))  # as on a GPU node
    assert retrain.split_runnable([bf16, fp32]) == ([fp32], [bf16])
    monkeypatch.setenv(provenance.ALLOW_EMULATED_BF16_ENV, "1")
    assert retrain.split_runnable([bf16, fp32]) == ([bf16, fp32], [])
    monkeypatch.delenv(provenance.ALLOW_EMULATED_BF16_ENV)
    monkeypatch.setattr(provenance, "bf16_is_native", lambda: True)
    assert retrain.split_runnable([bf16, fp32]) == ([bf16, fp32], [])


def test_bf16_runs_train_on_a_bf16_gpu_whatever_the_host_cpu(monkeypatch):
    """A GPU node whose host CPU lacks native bf16 (an AVX2-only EPYC beside an A100) trains the
    bf16 runs on its GPU; a GPU without bf16 skips them, and the emulation escape hatch is the
    CPU's alone."""
    from helpers.core import device as device_mod
    from helpers.core import provenance

    bf16 = lgelu.table2_configs("cpu", ("cifar10_resnet",))[0]
    fp32 = lgelu.table2_configs("cpu", ("fmnist",))[0]
    gpu = torch.device("cuda", 0)
    monkeypatch.setattr(provenance, "bf16_is_native", lambda: False)
    monkeypatch.setattr(device_mod.torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert retrain.split_runnable([bf16, fp32], gpu) == ([bf16, fp32], [])
    monkeypatch.setattr(retrain, "resolve_device", lambda: gpu)  # REPRO_DEVICE=auto on a GPU node
    assert retrain.split_runnable([bf16, fp32]) == ([bf16, fp32], [])
    monkeypatch.setattr(device_mod.torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    monkeypatch.setenv(provenance.ALLOW_EMULATED_BF16_ENV, "1")
    assert retrain.split_runnable([bf16, fp32], gpu) == ([fp32], [bf16])
    assert retrain.split_runnable([bf16, fp32], torch.device("cpu")) == ([bf16, fp32], [])


def test_the_skip_message_names_the_device_without_bf16(monkeypatch, capsys):
    from helpers.core import provenance

    monkeypatch.delenv(provenance.ALLOW_EMULATED_BF16_ENV, raising=False)
    monkeypatch.setattr(provenance, "bf16_is_native", lambda: False)
    monkeypatch.setattr(retrain, "resolve_device", lambda: torch.device("cpu"))
    monkeypatch.setenv(retrain.KEEP_FINAL_WEIGHTS_ENV, "1")  # main sets it for its workers
    trained: list = []
    monkeypatch.setattr(retrain, "run_many", lambda configs, **kw: trained.extend(configs))
    retrain.main(["u", "--workers", "1"])
    out = capsys.readouterr().out
    assert "skipping 25 bf16 runs" in out and "this CPU (" in out and "has no native bf16" in out
    assert trained == []


def test_claim_g_shares_its_paper_delta_runs_with_claim_b():
    from helpers.srelu import protocol as srelu

    g = {config_hash(c) for c in retrain.BATCHES["g"].configs()}
    b_srelu = {config_hash(c) for c in retrain.BATCHES["b"].configs() if c.activation == "srelu"}
    seeds, deltas = srelu.SCALES["vit"]["cpu"].seeds, srelu.table4_deltas("cpu")
    assert len(g) == len(deltas) * len(seeds)
    assert b_srelu <= g and len(g - b_srelu) == (len(deltas) - 1) * len(seeds)


def test_total_core_hours_counts_a_shared_run_once(monkeypatch):
    fake = {"train_seconds": 3600.0}
    monkeypatch.setattr(RS, "load_result", lambda cfg: fake)
    runs, hours = RS.total_core_hours(["b", "g"])
    distinct = {config_hash(c) for k in ("b", "g") for c in retrain.BATCHES[k].configs()}
    assert runs == len(distinct) < len(retrain.BATCHES["b"].configs()) + len(retrain.BATCHES["g"].configs())
    assert hours == pytest.approx(len(distinct))


def test_status_table_has_a_row_per_batch_a_total_per_issue_and_a_total():
    table = RS.status_table()
    assert len(table) == len(retrain.BATCHES) + len(retrain.ISSUES) + 1
    assert table.index[-1].startswith("all batches") and table.index.name == "batch"
    assert {c.issue for c in retrain.BATCHES.values()} == set(retrain.ISSUES)


def test_the_estimate_left_is_the_mean_of_finished_runs_of_the_same_kind(monkeypatch):
    claim = retrain.BATCHES["b"]
    configs = claim.configs()
    done = {config_hash(c): 600.0 * (1 + i % 2) for i, c in enumerate(configs[: len(configs) // 2])}
    monkeypatch.setattr(
        RS,
        "load_result",
        lambda cfg: {"train_seconds": done[config_hash(cfg)]} if config_hash(cfg) in done else None,
    )
    st = RS.batch_status(claim)
    assert st.done == len(done) and st.core_hours == pytest.approx(sum(done.values()) / 3600)
    by_arm: dict = {}
    for c in configs[: len(configs) // 2]:
        by_arm.setdefault(RS._run_kinds(c)[0], []).append(done[config_hash(c)])
    scale = [t for c in configs[: len(configs) // 2] for t in [done[config_hash(c)]]]
    expected = 0.0
    for c in configs[len(configs) // 2 :]:
        times = by_arm.get(RS._run_kinds(c)[0]) or scale  # else: the same model and scale
        expected += sum(times) / len(times)
    assert st.hours_left == pytest.approx(expected / 3600)
    monkeypatch.setattr(RS, "load_result", lambda cfg: None)
    assert RS.batch_status(claim).hours_left is None  # nothing finished: no basis for an estimate


def test_an_arm_at_another_scale_does_not_price_this_one(monkeypatch):
    """The DeiT pair's runs (1-2 minutes) share their experiment name with the ReLU-ization ViT's
    (10-20 minutes): the estimate goes by the same arm at the same scale, else the same scale."""
    from dataclasses import replace

    cfg = retrain.BATCHES["r"].configs()[0]
    wider = replace(cfg, model_kwargs={**cfg.model_kwargs, "dim": 2 * cfg.model_kwargs["dim"]})
    same_arm_elsewhere, same_scale = RS._run_kinds(wider), RS._run_kinds(cfg)[1]
    assert same_arm_elsewhere[0] != RS._run_kinds(cfg)[0]
    finished = {same_arm_elsewhere[0]: [1200.0], same_arm_elsewhere[1]: [1200.0], same_scale: [60.0]}
    monkeypatch.setattr(RS, "load_result", lambda cfg: None)
    claim = Batch("x", "one DeiT run", lambda: [cfg], issue="CPU budget")
    assert RS.batch_status(claim, finished).hours_left == pytest.approx(60.0 / 3600)


def test_claim_f_is_the_flexact_pair_at_the_decisive_resnet_scale():
    configs = retrain.BATCHES["f"].configs()
    resnet = lgelu.PAIRS["cifar10_resnet"].scale("cpu")
    assert len(configs) == 2 * 3 and sum(c.penultimate_activation == "flexact" for c in configs) == 3
    for c in configs:
        assert c.model_kwargs == resnet.model_kwargs and c.n_train is None and c.epochs == resnet.epochs
        assert (c.precision, c.channels_last, c.augment) == (resnet.precision, resnet.channels_last, resnet.augment)
        assert (c.optimizer, c.lr, c.schedule) == ("sgd", 0.1, "cosine")  # this paper's optimiser


def test_claims_c_and_d_cover_the_vision_pairs_only():
    pairs = {(c.model, c.dataset) for k in ("c", "d") for c in retrain.BATCHES[k].configs()}
    assert pairs == {("mlp", "fashion_mnist"), ("resnet18", "cifar10")}


def test_claim_i_is_the_gpt_pair_at_its_floor_scale():
    from helpers.core.floors import floor_for

    configs = retrain.BATCHES["i"].configs()
    scale = lgelu.PAIRS["wikitext_gpt"].scale("cpu")
    # GELU, ReLU and λ-GELU in three modes (Table I) plus annealed λ-GELU (Table II), every seed
    assert len(configs) == 6 * len(scale.seeds)
    assert sum(c.option(LambdaGeluOptions).anneal_target is not None for c in configs) == len(scale.seeds)
    for c in configs:
        assert (c.model, c.dataset) == ("gpt", "tinyshakespeare") and floor_for(c.model, c.dataset) is not None
        assert c.n_train is None and c.n_val is None  # every block of the corpus
        assert c.model_kwargs["dim"] == 128 and c.schedule == "cosine" and c.precision == "float32"


def test_reluization_claims_are_their_pairs_at_the_decisive_scales():
    from helpers.relu_ization import protocol as relu

    assert {retrain.BATCHES[k].issue for k in ("h", "j", "k", "l")} == {"ReLU-ization"}
    j = retrain.BATCHES["j"].configs()
    assert len(j) == 5 * 3 and {c.pair for c in j} == {"cifar10_resnet"}
    assert all(c.train_config().model_kwargs == lgelu.PAIRS["cifar10_resnet"].scale("cpu").model_kwargs for c in j)
    k = retrain.BATCHES["k"].configs()
    assert len(k) == 5 * 3 and all(c.train_config().model_kwargs == relu.VIT_CPU.model_kwargs for c in k)
    # the GPT pair at batch (i)'s floor scale, the three seeds batch (l) trained: its GELU, ReLU and
    # annealed arms are batch (i)'s runs
    gpt = retrain.BATCHES["l"].configs()
    assert len(gpt) == 5 * 3 and {c.pair for c in gpt} == {"gpt"}
    claim_i = {config_hash(c) for c in retrain.BATCHES["i"].configs()}
    shared = [c for c in gpt if config_hash(c.train_config()) in claim_i]
    assert sorted({c.arm for c in shared}) == ["gelu", "lgelu_anneal", "relu"] and len(shared) == 3 * 3
    assert {c.seed for c in retrain.BATCHES["h"].configs()} == set(range(5))
    # switched: the chapter's cpu pairs are exactly the claims that trained their seeds, (h) and
    # (q) for the MLP, (l), (s) and (t) for the GPT decoder, (j) and (k)
    from helpers.relu_ization.experiment import reluization_configs

    for pair, claims in (("fmnist", "hq"), ("gpt", "lst"), ("cifar10_resnet", "j"), ("vit", "k")):
        assert {config_hash(c) for c in reluization_configs(pair, "cpu")} == {
            config_hash(c) for k in claims for c in retrain.BATCHES[k].configs()
        }, pair


def test_flexact_stated_augmentation_follows_each_profiles_scale():
    """The Table 2 page states the augmentation its runs use: crop + flip at the cpu scale, none
    in the smoke and paper profiles."""
    from helpers.flexact import protocol as flexact

    for profile in ("cpu", "smoke", "paper"):
        augment = {c.augment for c in flexact.table2_configs(profile)}
        stated = dict((d, o) for d, o, _ in flexact.paper_gaps(profile))["data augmentation"]
        assert augment == {flexact.SCALES["resnet18"][profile].augment}
        assert ("random crop" in stated) == (augment == {"crop_flip"})
        assert (stated == "none") == (augment == {"none"})
    assert flexact.scale_note("cpu") == flexact.SCALES["resnet18"]["cpu"].note


def test_the_convnext_page_stands_on_the_floor_scale_and_claim_a_keeps_its_runs(monkeypatch):
    """Table 2's page moved from batch (a)'s 12-epoch ConvNeXt to the pilot's floor scale (batch (p)),
    on the seeds every activation has committed; batch (a) still lists its own 25 runs."""
    monkeypatch.delenv("REPRO_RESULTS_DIR")  # the committed results
    from helpers.core.results_cache import load_result
    from helpers.srelu import protocol as srelu

    seeds = srelu.CONVNEXT_FLOOR_SEEDS_ON_PAGE
    page = srelu.compare_configs("cpu", "convnext")
    floor = [c for c in retrain.BATCHES["p"].configs() if c.seed in seeds]
    assert {config_hash(c) for c in page} == {config_hash(c) for c in floor}
    assert len(page) == len(srelu.CONVNEXT_FLOOR.activations) * len(seeds)
    assert set(seeds) <= set(srelu.CONVNEXT_FLOOR.seeds)
    assert all(load_result(c) is not None for c in page), "the page's seeds must all be committed"
    earlier = retrain.BATCHES["a"].configs()
    assert len(earlier) == 25 and {(c.epochs, c.precision) for c in earlier} == {(12, "float32")}
    assert not {config_hash(c) for c in earlier} & {config_hash(c) for c in page}
    # the pilot's levers are measured from batch (a)'s scale, whatever the page runs
    assert {c.warmup_start_lr for c in srelu.convnext_pilot_configs()} == {srelu.EARLIER_CONVNEXT_CPU.warmup_start_lr}


def test_claim_t_adds_three_gpt_seeds_to_claim_s_and_keeps_its_runs():
    """The seed plan's int8 row (GELU vs ReLU from scratch) needs n = 8: batch (t) is the GPT pair's
    five arms at seeds 0-7, whose first five seeds are batch (s)'s committed runs."""
    s = {config_hash(c) for c in retrain.BATCHES["s"].configs()}
    t = retrain.BATCHES["t"].configs()
    assert len(s) == 5 * 5 and len(t) == 5 * 8 and retrain.BATCHES["t"].issue == "CPU budget"
    assert s < {config_hash(c) for c in t}
    assert {c.seed for c in t} == set(range(8)) and {c.train_config().precision for c in t} == {"float32"}


def test_claim_u_gives_table1s_resnet_arms_the_seeds_its_gelu_runs_have():
    """The plan's Table I ResNet row needs n = 5: batch (u) is GELU, ReLU and λ-GELU in three init
    modes at seeds 0-4, bf16, whose committed part is Table I's runs at seeds 0-2 and GELU's at 3-4."""
    u = retrain.BATCHES["u"].configs()
    table1 = {config_hash(c) for c in lgelu.table1_configs("cpu", ("cifar10_resnet",))}
    assert len(u) == 5 * 5 and table1 < {config_hash(c) for c in u}
    assert {c.seed for c in u} == set(range(5)) and {c.precision for c in u} == {"bf16"}
    new = [c for c in u if config_hash(c) not in table1]
    assert len(new) == 4 * 2 and {c.seed for c in new} == {3, 4} and "gelu" not in {c.activation for c in new}


def test_an_issue_counts_the_runs_it_added_not_those_an_earlier_issue_trained(monkeypatch):
    """Batch (u) lists batches (c)/(d)'s ResNet runs at seeds 0-2: they were paid for under
    "Decisive scale" and must not spend the "CPU budget" a second time; batch (r)'s first three
    DeiT seeds were trained before the retrain and spend no budget."""
    monkeypatch.setattr(RS, "load_result", lambda cfg: {"train_seconds": 3600.0})
    decisive = {
        config_hash(c) for k, cl in retrain.BATCHES.items() if cl.issue == "Decisive scale" for c in cl.configs()
    }
    u = {config_hash(c) for c in retrain.BATCHES["u"].configs()}
    runs, hours = RS.issue_core_hours("CPU budget")
    budget_runs = {config_hash(c) for cl in retrain.BATCHES.values() if cl.issue == "CPU budget" for c in cl.configs()}
    earlier = {
        config_hash(c)
        for k, cl in retrain.BATCHES.items()
        if cl.issue in ("Decisive scale", "ReLU-ization")
        for c in cl.configs()
    }
    before_retrain = {config_hash(c) for c in retrain.BATCHES["r"].configs() if c.seed in (0, 1, 2)}
    assert u & decisive and before_retrain and not before_retrain & earlier
    assert runs == len(budget_runs - earlier - before_retrain) and hours == pytest.approx(runs)
    with pytest.raises(ValueError, match="unknown issue"):
        RS.issue_core_hours("no such issue")


def test_the_status_says_how_much_wall_time_runs_spent_off_the_cpu(monkeypatch):
    """A run paused while CI ran records an hour of wall time but half an hour of CPU time: the
    budget still counts the hour, and the status line says half of it was off the CPU; runs that
    predate ``cpu_seconds`` are not guessed at."""
    paused = {"train_seconds": 3600.0, "cpu_seconds": 1800.0}
    busy = {"train_seconds": 3600.0, "cpu_seconds": 3650.0}  # a second thread: never negative
    old = {"train_seconds": 3600.0}
    t_runs = {config_hash(c) for c in retrain.BATCHES["t"].configs()}
    monkeypatch.setattr(
        RS, "load_result", lambda cfg: (paused if cfg.seed == 7 else busy) if config_hash(cfg) in t_runs else old
    )
    runs, hours = RS.issue_core_hours("CPU budget")
    timed, off = RS.off_cpu_hours(RS._issue_results("CPU budget"))
    seed7 = {config_hash(c) for c in retrain.BATCHES["t"].configs() if c.seed == 7}
    assert 0 < timed < runs and hours == pytest.approx(runs) and off == pytest.approx(len(seed7) / 2)
    assert f"{timed} of them record their CPU time, and {off:.2f} of their hours were spent off the CPU" in (
        RS._issue_line("CPU budget")
    )
    monkeypatch.setattr(RS, "load_result", lambda cfg: old)
    assert RS.off_cpu_hours(RS._issue_results("CPU budget")) == (0, 0.0)
    assert "CPU time" not in RS._issue_line("CPU budget")


def test_the_rows_a_claim_buys_are_report_rows_and_the_plan_names_the_claim(monkeypatch):
    import pandas as pd

    from helpers.claims import report_claims

    monkeypatch.delenv("REPRO_RESULTS_DIR", raising=False)  # the committed results: every row exists
    keys = {c.key for c in report_claims()}
    decided = [k for claim in retrain.BATCHES.values() for k in claim.decides]
    assert decided and set(decided) <= keys
    stub = pd.DataFrame({"key": ["reluization-gpt-gelu-int8-cost", "other"], "bought by": [None] * 2}, dtype=object)
    monkeypatch.setattr(retrain, "plan_frame", lambda *a, **k: stub.copy())
    frame = retrain.seed_plan()
    assert frame.loc[0, "bought by"].startswith("batch (t) of the retrain: ") and pd.isna(frame.loc[1, "bought by"])

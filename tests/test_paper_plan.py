"""The paper-profile plan: every paper run listed once with GPU-hours from counted FLOPs, and
``retrain --status --profile paper`` printing it with the GPU and the assumption named."""

from __future__ import annotations

import dataclasses

import pytest

from helpers.core.results_cache import config_hash
from helpers.core.runtime import repo_root
from tools import paper_plan, retrain
from tools.run import all_experiments


def _paper_runs() -> list:
    return paper_plan.paper_configs()


def test_every_paper_profile_run_of_every_protocol_is_in_the_plan():
    planned = {config_hash(c) for c in _paper_runs()}
    for name, configs in all_experiments().items():
        missing = [c for c in configs("paper") if config_hash(c) not in planned]
        assert not missing, f"{len(missing)} paper-profile runs of {name} are in no plan group"


def test_the_counted_flops_of_an_mlp_are_its_matrix_products():
    cfg = next(c for c in all_experiments()["lgelu_table1"]("paper") if c.dataset == "adult")
    width, depth = cfg.model_kwargs["width"], cfg.model_kwargs["depth"]
    per_example = 2 * (107 * width + (depth - 1) * width * width + width * 2)
    data = paper_plan.DATA["adult"]
    assert paper_plan.run_flops(cfg) == per_example * cfg.epochs * (3 * data.n_train + data.n_val)


def test_gpu_hours_follow_the_stated_peak_and_utilisation():
    cfg = next(c for c in all_experiments()["srelu_compare"]("paper") if c.model == "convnext")
    hours = paper_plan.gpu_hours(cfg)
    assert cfg.precision == "float32"  # TF32 off: the float32 peak, not the tensor cores
    assert hours == pytest.approx(paper_plan.run_flops(cfg) / (67e12 * 0.35) / 3600)
    bf16 = dataclasses.replace(cfg, precision="bf16")
    assert paper_plan.gpu_hours(bf16) == pytest.approx(paper_plan.run_flops(cfg) / (989e12 * 0.35) / 3600)
    assert paper_plan.gpu_hours(dataclasses.replace(cfg, epochs=2 * cfg.epochs)) == pytest.approx(2 * hours)
    slower = dataclasses.replace(paper_plan.GPU, mfu=paper_plan.GPU.mfu / 2)
    assert paper_plan.gpu_hours(cfg, slower) == pytest.approx(2 * hours)


@pytest.mark.slow
def test_status_at_the_paper_profile_lists_every_group_with_its_gpu_hours(capsys):
    retrain.main(["--status", "--profile", "paper"])
    out = capsys.readouterr().out
    assert "estimate from counted FLOPs, the GPU measured only bf16 steps" in out and "H100" in out and "35%" in out
    assert "float32 67" in out and "bf16 989" in out
    for group in paper_plan.GROUPS:
        line = next(ln for ln in out.splitlines() if ln.startswith(f"[{group.key}]"))
        assert "GPU-hours" in line and "decides" in line
    assert f"{len(_paper_runs())} distinct runs" in out


def test_an_unknown_paper_group_is_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit) as exit_info:
        retrain.main(["--status", "--profile", "paper", "lgelu_tabel1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "lgelu_tabel1" in err and "lgelu_table1" in err


def test_the_page_shows_the_plan_the_protocols_give_now():
    page = (repo_root() / paper_plan.PAGE).read_text()
    assert paper_plan.page_with_table(page, paper_plan.plan_markdown()) == page, (
        f"{paper_plan.PAGE}'s plan table is stale: python -m tools.paper_plan --write"
    )

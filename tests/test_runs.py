"""The standard run pipeline: config validation, LM blocks, schedules, an end-to-end tiny run."""

import math

import pytest
import torch
from refusals import refusal_fault

from helpers.core.runs import TrainConfig, lm_blocks, make_scheduler
from helpers.experiments import run_or_load
from helpers.lambda_gelu.options import LambdaGeluOptions


def _cfg(**kw):
    base = dict(experiment="t", dataset="adult", model="mlp", profile="smoke")
    base.update(kw)
    return TrainConfig(**base)


def test_lm_blocks_are_shifted_by_one():
    tokens = torch.arange(23)
    ds = lm_blocks(tokens, 5)
    x, y = ds.tensors
    assert x.shape == (4, 5) and torch.equal(y, x + 1)
    assert len(lm_blocks(tokens, 5, limit=2)) == 2
    with pytest.raises(ValueError, match="too few"):
        lm_blocks(torch.arange(3), 5)


def test_invalid_configs_are_rejected():
    bad_configs = [
        ({"optimizer": "adam"}, "optimizer"),
        ({"schedule": "step"}, "schedule"),
        ({"epochs": 0}, "epochs"),
        ({"lr": -1.0}, "lr"),
        ({"profile": "gpu"}, "profile"),
        ({"weight_decay": -1.0}, "weight_decay"),
    ]
    problems = [
        fault
        for kw, match in bad_configs
        if (
            fault := refusal_fault(
                f"_cfg({', '.join(f'{k}={v!r}' for k, v in kw.items())})", lambda: _cfg(**kw), ValueError, match
            )
        )
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "kw,match",
    [({"hardness_lr_mult": 0.0}, "LambdaGeluOptions.hardness_lr_mult"), ({"anneal_target": 0.5}, "anneal_target")],
)
def test_invalid_method_options_are_rejected(kw, match):
    with pytest.raises(ValueError, match=match):
        _cfg(options=(LambdaGeluOptions(**kw),))


def test_warmup_cosine_schedule_hits_its_endpoints():
    cfg = _cfg(epochs=10, lr=1e-3, schedule="warmup_cosine", warmup_epochs=2, warmup_start_lr=1e-6, min_lr=1e-5)
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=cfg.lr)
    sched = make_scheduler(opt, cfg)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(cfg.epochs):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs[0] == pytest.approx(1e-6)
    assert lrs[2] == pytest.approx(1e-3)  # warmup done
    assert lrs[10] == pytest.approx(1e-5)  # cosine reaches min_lr
    assert all(a >= b for a, b in zip(lrs[2:], lrs[3:]))


def test_tiny_end_to_end_run_is_cached_and_records_substitution(tmp_path, monkeypatch):
    data_dir = pytest.importorskip("helpers.core.data").available
    if not data_dir("adult"):
        pytest.skip("Adult not found: set REPRO_DATA_DIR to the offline mirror (shared/data)")
    cfg = _cfg(
        activation="lambda_gelu",
        activation_kwargs={"t": 0.1},
        model_kwargs={"depth": 2, "width": 16},
        n_train=256,
        n_val=128,
        epochs=2,
        batch_size=64,
        options=(LambdaGeluOptions(hardness_lr_mult=9.0, init_mode="increasing"),),
    )
    result = run_or_load(cfg)
    assert result["status"] == "ok" and len(result["history"]) == 2
    assert len(result["lambda_init"]) == 2 and result["lambda_init"][0] < result["lambda_init"][1]
    assert all(len(row["lambdas"]) == 2 for row in result["history"])
    assert set(result["substitution"]) == {"epoch", "original", "substituted"}
    assert math.isclose(result["substitution"]["original"], result["best_val_metric"])
    assert run_or_load(cfg) == result  # second call: from the cache


def test_training_threads_pin_and_restore(monkeypatch):
    import torch

    from helpers.core.runtime import train_threads, training_threads

    before = torch.get_num_threads()
    monkeypatch.delenv("REPRO_TRAIN_THREADS", raising=False)
    assert train_threads() == 1
    with training_threads() as n:
        assert n == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    for bad in ("0", "-2", "many"):
        monkeypatch.setenv("REPRO_TRAIN_THREADS", bad)
        with pytest.raises(ValueError, match="REPRO_TRAIN_THREADS"):
            train_threads()


def test_progress_bars_do_not_change_the_batch_order(monkeypatch):
    """A shown bar must not consume randomness: with tqdm.auto, iterating the DataLoader itself
    created a second (seed-drawing) iterator per epoch, so results depended on REPRO_QUIET."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from helpers.core.runtime import progress

    def orders(quiet: bool) -> list[list[int]]:
        if quiet:
            monkeypatch.setenv("REPRO_QUIET", "1")
        else:
            monkeypatch.delenv("REPRO_QUIET", raising=False)
            monkeypatch.delenv("CI", raising=False)
        gen = torch.Generator().manual_seed(0)
        loader = DataLoader(TensorDataset(torch.arange(64)), batch_size=8, shuffle=True, generator=gen)
        return [[int(b[0][0]) for b in progress(loader)] for _ in range(3)]

    assert orders(quiet=False) == orders(quiet=True)

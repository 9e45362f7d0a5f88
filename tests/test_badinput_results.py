"""Bad inputs to the results cache and its command lines are refused before anything runs or is
written: a truthy ``rerun``, bad ``workers``/``executor``, a result whose config is another's, a
result path that is a folder or JSON nested too deeply, a git revision that looks like an option,
and a NaN, negative or bool training time."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from refusals import refusal_fault

from helpers import methods
from helpers.core import results_cache
from helpers.core.result_files import CorruptResult
from helpers.experiments import (
    compute_time,
    load_result,
    result_path,
    run_many,
    run_or_load,
    store_result,
)
from tools import moved_rows
from tools.train_distributed import main as train_distributed_main

CALLS: list = []
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture(autouse=True)
def _not_ci(monkeypatch):
    """These tests write cpu-profile results, which CI may not train; the CI rule is set where tested."""
    monkeypatch.delenv("CI", raising=False)
    CALLS.clear()


@dataclass(frozen=True)
class BadInputConfig:
    experiment: str = "badinput"
    profile: str = "cpu"
    x: float = 1.0


def _run(cfg, workdir):
    CALLS.append(cfg)
    return {"best_val_metric": cfg.x / 10}


def test_run_or_load_refuses_a_rerun_that_is_not_a_bool_and_keeps_the_cached_result(tmp_path, monkeypatch):
    """Each bad ``rerun`` against a results folder of its own, as if each were a test of its own."""
    problems = []
    for i, rerun in enumerate(["no", "", 1, 0, 1.0, "False", [True]]):
        with monkeypatch.context() as m:
            m.setenv("REPRO_RESULTS_DIR", str(tmp_path / "reruns" / str(i)))
            CALLS.clear()
            first = run_or_load(BadInputConfig())
            before = result_path(BadInputConfig()).read_text()
            CALLS.clear()
            problems += [
                refusal_fault(
                    f"run_or_load(rerun={rerun!r})",
                    lambda: run_or_load(BadInputConfig(), rerun=rerun),
                    TypeError,
                    "rerun",
                ),
                refusal_fault(
                    f"run_many(rerun={rerun!r})",
                    lambda: run_many([BadInputConfig()], rerun=rerun, workers=1),
                    TypeError,
                    "rerun",
                ),
            ]
            if CALLS != []:
                problems.append(f"rerun={rerun!r}: the runner ran: {CALLS}")
            if result_path(BadInputConfig()).read_text() != before:
                problems.append(f"rerun={rerun!r}: the cached result file changed")
            if run_or_load(BadInputConfig(), rerun=False) != first:
                problems.append(f"rerun={rerun!r}: the cached result no longer loads as it was")
    problems = [problem for problem in problems if problem]
    assert not problems, "\n".join(problems)


def test_rerun_true_false_none_are_accepted():
    run_or_load(BadInputConfig(), rerun=None)
    run_or_load(BadInputConfig(), rerun=False)
    assert len(CALLS) == 1
    run_or_load(BadInputConfig(), rerun=True)
    assert len(CALLS) == 2


@pytest.mark.parametrize("workers", [0, -5, True, False, 2.0, "2"])
def test_run_many_refuses_bad_workers_even_when_everything_is_cached(workers):
    run_or_load(BadInputConfig())
    with pytest.raises((ValueError, TypeError), match="workers"):
        run_many([BadInputConfig()], workers=workers)
    with pytest.raises((ValueError, TypeError), match="workers"):
        run_many([], workers=workers)


@pytest.mark.parametrize("executor", [1, True, object(), "pbs", "local"])
def test_run_many_refuses_a_bad_executor_even_when_everything_is_cached(executor):
    run_or_load(BadInputConfig())
    with pytest.raises((ValueError, TypeError), match="executor"):
        run_many([BadInputConfig()], executor=executor)


def test_run_many_still_loads_cached_results_with_good_arguments():
    first = run_or_load(BadInputConfig())
    assert run_many([BadInputConfig()], workers=1, rerun=False) == [first]


@pytest.mark.parametrize(
    "result",
    [
        {"config": {"x": 1}, "best_val_metric": 0.9},
        {"config": {**results_cache.config_dict(BadInputConfig()), "x": 5.0}, "best_val_metric": 0.9},
        {"config": "BadInputConfig", "best_val_metric": 0.9},
        {"best_val_metric": float("nan")},
    ],
)
def test_store_result_refuses_a_result_load_result_would_reject_and_writes_nothing(result):
    good = store_result(BadInputConfig(), {"best_val_metric": 0.1})
    before = good.read_text()
    with pytest.raises(ValueError):
        store_result(BadInputConfig(), result)
    assert good.read_text() == before
    assert load_result(BadInputConfig())["best_val_metric"] == 0.1
    assert [p.name for p in good.parent.iterdir()] == [good.name]  # no temporary file left


def test_store_result_accepts_its_own_config():
    cfg = BadInputConfig(x=3.0)
    store_result(cfg, {"config": results_cache.config_dict(cfg), "best_val_metric": 0.3})
    assert load_result(cfg)["best_val_metric"] == 0.3


def test_a_result_path_that_is_a_folder_is_a_corrupt_result(monkeypatch):
    path = result_path(BadInputConfig())
    path.mkdir(parents=True)
    with pytest.raises(CorruptResult, match="directory") as err:
        load_result(BadInputConfig())
    assert str(path) in str(err.value)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(CorruptResult):
        run_or_load(BadInputConfig())


def test_a_deeply_nested_result_file_is_a_corrupt_result_and_retrained_outside_ci(monkeypatch):
    path = result_path(BadInputConfig())
    path.parent.mkdir(parents=True)
    path.write_text(DEEP)
    with pytest.raises(CorruptResult, match="nested too deeply"):
        load_result(BadInputConfig())
    with pytest.warns(RuntimeWarning, match="nested too deeply"):
        result = run_or_load(BadInputConfig())
    assert result["best_val_metric"] == 0.1 and len(CALLS) == 1
    path.write_text(DEEP)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(CorruptResult):
        run_or_load(BadInputConfig())


def test_train_distributed_config_json_nested_too_deeply_is_a_clean_error(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    with pytest.raises(SystemExit) as exit_:
        train_distributed_main(["--config-json", str(deep)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err


@pytest.mark.parametrize("since", ["--output=/tmp/x.tar", "-o", "--remote=evil"])
def test_moved_rows_refuses_a_revision_that_looks_like_an_option(since, tmp_path, capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(moved_rows.subprocess, "run", lambda *a, **k: calls.append(a))
    with pytest.raises(SystemExit) as exit_:
        moved_rows.main([f"--since={since}"])
    assert exit_.value.code == 2
    assert "cannot be empty or start with '-'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="start with '-'"):
        moved_rows.results_at(since, tmp_path)
    assert calls == []  # git never ran


def test_moved_rows_ends_git_options_before_the_revision(tmp_path, monkeypatch):
    seen = []

    class Done:
        returncode = 1
        stderr = b"fatal: not a revision"

    monkeypatch.setattr(moved_rows.subprocess, "run", lambda cmd, **k: seen.append(cmd) or Done())
    with pytest.raises(SystemExit):
        moved_rows.results_at("HEAD~1", tmp_path)
    [cmd] = seen
    assert cmd.index("--end-of-options") == cmd.index("HEAD~1") - 1


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), -5, True, "1", None])
def test_compute_time_refuses_a_bad_train_seconds(seconds):
    with pytest.raises(ValueError, match="train_seconds"):
        compute_time([{"config_hash": "a", "train_seconds": seconds}])


def test_compute_time_accepts_zero_and_ints():
    out = compute_time([{"config_hash": "a", "train_seconds": 0}, {"config_hash": "b", "train_seconds": 60}])
    assert out == {"n_runs": 2, "core_minutes": 1.0, "wall_minutes": 1.0}


def test_a_stored_result_file_is_json_readable():
    path = store_result(BadInputConfig(), {"best_val_metric": 0.1})
    assert json.loads(path.read_text())["config_hash"] == path.stem


def test_a_process_that_imports_only_the_core_reads_a_result_with_every_method_option(tmp_path, monkeypatch):
    """A result stored flat with every method's option fields, read by a process that imported the
    core only: the core reads the options table itself, so the file verifies and is never
    taken for damage (and retrained over)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "REPRO_RESULTS_DIR": str(tmp_path), "PYTHONPATH": os.getcwd()}
    env.pop("CI", None)  # outside CI a corrupt file would be retrained: this one must not be
    config = "TrainConfig(experiment='registry_probe', dataset='fashion_mnist', model='mlp', profile='smoke')"
    read = (
        "import sys\n"
        "from helpers.core.runs import TrainConfig\n"
        "from helpers.core.results_cache import load_result, _load_or_discard, result_path\n"
        "assert 'helpers.methods' not in sys.modules\n"
        f"cfg = {config}\n"
        "print(load_result(cfg)['best_val_metric'], _load_or_discard(cfg, result_path(cfg))['best_val_metric'])\n"
    )
    from helpers.core.results_cache import store_result
    from helpers.core.runs import TrainConfig

    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path))
    path = store_result(
        TrainConfig(experiment="registry_probe", dataset="fashion_mnist", model="mlp", profile="smoke"),
        {"best_val_metric": 0.5},
    )  # the config the reading process builds from `config`
    assert "hardness_lr_mult" in json.loads(path.read_text())["config"]  # a method's option, stored flat
    out = subprocess.run([sys.executable, "-c", read], env=env, check=True, capture_output=True, text=True).stdout
    assert out.split() == ["0.5", "0.5"], out


@pytest.fixture(autouse=True)
def _runners(monkeypatch):
    """The toy config classes' lines of the runner table, for each test."""
    monkeypatch.setitem(methods.RUNNERS, BadInputConfig, _run)

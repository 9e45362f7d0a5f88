"""The results cache: hashing, atomic writes, failure records, CI rule for cpu results."""

import json
from dataclasses import dataclass, replace

import pytest

from helpers import experiments, methods
from helpers.experiments import MissingResult, RunFailed, config_hash, run_or_load


@dataclass(frozen=True)
class ToyConfig:
    experiment: str = "toy"
    profile: str = "smoke"
    x: float = 1.0
    fail: bool = False


CALLS = []


def _run_toy(cfg, workdir):
    CALLS.append(cfg)
    if cfg.fail:
        raise RunFailed("diverged")
    return {"value": cfg.x * 2}


def test_hash_is_stable_and_sensitive():
    assert config_hash(ToyConfig()) == config_hash(ToyConfig())
    assert config_hash(ToyConfig(x=1.0)) != config_hash(ToyConfig(x=1.5))
    assert config_hash(ToyConfig(profile="cpu")) != config_hash(ToyConfig())


def test_run_then_load_from_cache():
    CALLS.clear()
    first = run_or_load(ToyConfig(x=3.0))
    second = run_or_load(ToyConfig(x=3.0))
    assert first == second and first["value"] == 6.0 and first["status"] == "ok"
    assert len(CALLS) == 1
    path = experiments.result_path(ToyConfig(x=3.0))
    assert json.loads(path.read_text())["config"]["x"] == 3.0
    run_or_load(ToyConfig(x=3.0), rerun=True)
    assert len(CALLS) == 2


def test_rerun_env(monkeypatch):
    CALLS.clear()
    run_or_load(ToyConfig(x=4.0))
    monkeypatch.setenv("REPRO_RERUN", "1")
    run_or_load(ToyConfig(x=4.0))
    assert len(CALLS) == 2


def test_failed_run_recorded_not_cached():
    cfg = ToyConfig(fail=True)
    with pytest.raises(RunFailed):
        run_or_load(cfg)
    path = experiments.result_path(cfg)
    assert not path.exists()
    failed = json.loads(path.with_suffix(".failed.json").read_text())
    assert failed["status"] == "failed" and "diverged" in failed["error"]


def test_missing_cpu_result_under_ci_is_an_error(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(MissingResult, match="cpu-profile result missing"):
        run_or_load(ToyConfig(profile="cpu", x=7.0))
    run_or_load(ToyConfig(profile="smoke", x=7.0))  # smoke runs are always allowed


def test_bad_inputs():
    with pytest.raises(TypeError, match="needs a run config .* got Other"):

        @dataclass(frozen=True)
        class Other:
            experiment: str = "o"
            profile: str = "smoke"

        run_or_load(Other())
    with pytest.raises(ValueError, match="unknown profile"):
        run_or_load(ToyConfig(profile="gpu"))


# --------------------------------------------------------------------------------------------
# run_many


def test_run_many_in_process_keeps_order_and_caches():
    CALLS.clear()
    configs = [ToyConfig(x=float(v)) for v in (5, 6, 5)]
    out = experiments.run_many(configs, workers=1)
    assert [r["value"] for r in out] == [10.0, 12.0, 10.0]
    assert len(CALLS) == 2  # the repeated config trained once
    experiments.run_many(configs, workers=1)
    assert len(CALLS) == 2  # everything cached now


def test_run_many_raises_a_failure_after_the_other_runs():
    CALLS.clear()
    configs = [ToyConfig(x=8.0, fail=True), ToyConfig(x=9.0)]
    with pytest.raises(RunFailed, match="diverged"):
        experiments.run_many(configs, workers=1)
    assert experiments.result_path(ToyConfig(x=9.0)).exists()


def test_run_many_under_ci_names_missing_cpu_results_before_training(monkeypatch):
    monkeypatch.setenv("CI", "true")
    CALLS.clear()
    configs = [ToyConfig(profile="cpu", x=10.0), ToyConfig(profile="cpu", x=11.0)]
    with pytest.raises(MissingResult, match="2 of 2 cpu-profile results are missing"):
        experiments.run_many(configs)
    assert CALLS == []


def test_run_many_bad_arguments(monkeypatch):
    with pytest.raises(ValueError, match="workers"):
        experiments.run_many([ToyConfig(x=12.0)], workers=0)
    monkeypatch.setenv("REPRO_WORKERS", "two")
    with pytest.raises(ValueError, match="REPRO_WORKERS"):
        experiments.default_workers("cpu")
    with pytest.raises(TypeError, match="needs a run config.*helpers.methods.RUNNERS"):
        experiments.run_many([object()])
    assert experiments.run_many([]) == []


@pytest.mark.slow
def test_run_many_worker_processes_give_the_in_process_results(tmp_path, monkeypatch):
    """Two spawned workers (one thread each) reproduce the in-process runs bit for bit."""
    from helpers.flexact import synthetic as fx

    configs = fx.synthetic_configs("smoke")[:2]
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path / "parallel"))
    parallel = experiments.run_many(configs, workers=2)
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path / "serial"))
    serial = experiments.run_many(configs, workers=1)
    # the checksum covers train_seconds, so it differs too; provenance (threads, backends) must not
    strip = lambda r: {k: v for k, v in r.items() if k not in ("train_seconds", "checksum")}  # noqa: E731
    assert [strip(r) for r in parallel] == [strip(r) for r in serial]


def test_run_many_hands_each_worker_process_its_device(tmp_path, monkeypatch):
    """On several GPUs each worker trains on the device the parent assigned it: a device no worker
    can resolve fails every run with the resolver's message, so the assignment reached them."""
    from helpers.core import results_cache
    from helpers.lambda_gelu import protocol as lgelu

    first = lgelu.table2_configs("smoke", ("fmnist",))[0]  # a training run: it resolves its device first
    configs = [replace(first, seed=s) for s in (0, 1)]  # two runs, so two worker processes
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(results_cache, "worker_devices", lambda n: ("no-such-device",) * n)
    with pytest.raises(ValueError, match="REPRO_DEVICE='no-such-device' is not a device"):
        experiments.run_many(configs, workers=2)


def test_compute_time_simulates_the_workers():
    results = [{"config_hash": h, "train_seconds": s} for h, s in (("a", 60), ("b", 120), ("c", 60), ("a", 60))]
    out = experiments.compute_time(results, workers=2)
    assert out["n_runs"] == 3 and out["core_minutes"] == 4.0
    assert out["wall_minutes"] == 2.0  # a then c on one worker, b on the other
    assert experiments.compute_time(results, workers=1)["wall_minutes"] == 4.0
    with pytest.raises(ValueError, match="workers"):
        experiments.compute_time(results, workers=0)
    with pytest.raises(TypeError, match="config_hash.*train_seconds"):
        experiments.compute_time([{"x": 1}])


def test_the_public_module_knows_every_config_class_of_the_book():
    # run_or_load works with any of them, and a wrong argument's error names them all, without the
    # caller importing the module that defines a runner first
    known = set(experiments.registered_config_classes())
    assert {"TrainConfig", "FlexActSyntheticConfig", "ReluizationConfig"} <= known
    with pytest.raises(TypeError, match="got dict; known: .*ReluizationConfig"):
        experiments.run_or_load({"experiment": "x"})


@pytest.fixture(autouse=True)
def _runners(monkeypatch):
    """The toy config classes' lines of the runner table, for each test."""
    monkeypatch.setitem(methods.RUNNERS, ToyConfig, _run_toy)

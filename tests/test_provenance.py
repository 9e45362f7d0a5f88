"""Provenance of results, the rerun comparison it selects, and precision chosen from the CPU.

These tests cover the CPU type this machine does not have: a committed result "from another
CPU" is made by editing the recorded provenance, and an AVX2-only CPU is simulated by
patching :func:`helpers.core.provenance.bf16_is_native`.
"""

import copy
import json
from dataclasses import dataclass

import pytest
import torch

from helpers import methods
from helpers.core import provenance
from helpers.core.provenance import PrecisionUnavailable, check_precision
from helpers.core.runs import TrainConfig
from helpers.experiments import config_hash, run_or_load
from tools import verify_rerun
from tools.verify_rerun import choose_comparison, float_tolerance, verify


@dataclass(frozen=True)
class StepConfig:
    experiment: str = "prov"
    profile: str = "smoke"
    steps: int = 100


def _run_steps(cfg, workdir):
    from helpers.activations import lambda_gelu, srelu

    provenance.note_steps(cfg.steps)
    x = torch.linspace(-2, 2, 16)
    return {
        "metric": float(lambda_gelu(x, 3.0).sum() + srelu(x, 0.1).sum()),
        "epochs": 3,
        "history": [{"loss": 0.5, "epoch": 1}],
    }


def _fresh() -> dict:
    return json.loads(json.dumps(run_or_load(StepConfig(), rerun=True)))


# ------------------------------------------------------------------------------- recording
def test_every_result_records_where_and_how_it_ran():
    result = _fresh()
    prov = result["provenance"]
    assert prov["cpu_model"] == provenance.cpu_model() and prov["cpu_model"]
    assert prov["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert prov["torch"] == torch.__version__
    assert prov["precision"] == "float32" and prov["optimizer_steps"] == 100
    assert isinstance(prov["threads"], int) and prov["threads"] >= 1
    assert set(prov["backends"]) == {"lambda_gelu", "srelu"}
    assert all(b in ("native", "eager", "eager+native") for b in prov["backends"].values())


def test_backends_are_recorded_as_used():
    from helpers.activations import lambda_gelu

    with provenance.recording() as rec:
        lambda_gelu(torch.ones(4, dtype=torch.float64), 2.0)  # float64 never takes the native path
    assert rec["backends"] == {"lambda_gelu": {"eager"}}
    provenance.note_backend("lambda_gelu", "native")  # outside recording: ignored, no error


@pytest.mark.parametrize(
    "name,kwargs", [("lambda_gelu", {"t": 0.1}), ("srelu", {"delta": 0.001}), ("smelu", {"beta": 2.0})]
)
def test_recording_keeps_a_compiled_model_in_one_graph(name, kwargs):
    """Every training run records inside ``recording()``; under ``REPRO_COMPILE_MODEL=1`` the
    activation is traced, and a record written from inside the trace would break the model's
    graph at each activation site (3 breaks here, before the fix)."""
    from helpers.core.registry import activation_factory
    from helpers.models import build_model

    act = activation_factory(name, **kwargs)
    model = build_model("mlp", act=act, depth=3, width=16, input_shape=(1, 4, 4), num_classes=3)
    torch._dynamo.reset()
    with provenance.recording() as rec:
        explained = torch._dynamo.explain(model)(torch.randn(8, 1, 4, 4))
    torch._dynamo.reset()
    assert explained.graph_break_count == 0, [b.reason for b in explained.break_reasons]
    assert rec["backends"] == {}  # traced calls record nothing; the result says compiled_model


def test_training_run_records_threads_steps_and_backends(monkeypatch, require_dataset):
    require_dataset("adult")
    monkeypatch.setenv("REPRO_TRAIN_THREADS", "1")
    cfg = TrainConfig(
        experiment="t",
        dataset="adult",
        model="mlp",
        profile="smoke",
        epochs=1,
        n_train=256,
        n_val=128,
        batch_size=64,
        activation="lambda_gelu",
        model_kwargs={"depth": 2, "width": 16},
    )
    prov = run_or_load(cfg)["provenance"]
    assert prov["threads"] == 1 and prov["optimizer_steps"] == 4 and prov["precision"] == "float32"
    assert "lambda_gelu" in prov["backends"]


# ------------------------------------------------------------------ the rerun comparison
def _other_cpu(result: dict) -> dict:
    """``result`` as if committed from another CPU type: a model name and an ISA that both differ
    from this machine's, whatever it is (an AMD EPYC with AVX-512 matches a Xeon's ISA)."""
    other = copy.deepcopy(result)
    mine = other["provenance"]
    model = next(m for m in ("Intel(R) Xeon(R) Platinum 8480+", "AMD EPYC") if m != mine["cpu_model"])
    capability = next(c for c in ("AVX512", "AVX2") if c != mine["cpu_capability"])
    mine.update(cpu_model=model, cpu_capability=capability)
    return other


def test_same_provenance_compares_exactly():
    committed, rerun = _fresh(), _fresh()
    comparison, diffs = verify(committed, rerun)
    assert comparison.mode == "exact" and comparison.rel_tol == 0 and diffs == []
    assert "same provenance" in comparison.reason


def test_another_cpu_takes_the_tolerance_path_and_passes():
    rerun = _fresh()
    committed = _other_cpu(rerun)
    committed["metric"] *= 1 + 50 * 2.0**-24  # a last-bits difference, as between two CPUs
    comparison, diffs = verify(committed, rerun)
    assert comparison.mode == "tolerance" and diffs == []
    assert comparison.rel_tol == pytest.approx(float_tolerance(100)) == pytest.approx(100 * 2.0**-24)
    assert "cpu_model" in comparison.reason and "cpu_capability" in comparison.reason


def test_result_without_provenance_counts_as_another_machine():
    rerun = _fresh()
    committed = {k: v for k, v in rerun.items() if k != "provenance"}
    comparison = choose_comparison(committed, rerun)
    assert comparison.mode == "tolerance" and "predates provenance" in comparison.reason


@pytest.mark.parametrize("path", ["exact", "tolerance"])
def test_a_real_change_fails_on_both_paths(path):
    rerun = _fresh()
    committed = copy.deepcopy(rerun) if path == "exact" else _other_cpu(rerun)
    committed["metric"] *= 1.001  # beyond float32 rounding over 100 steps (6e-6)
    comparison, diffs = verify(committed, rerun)
    assert comparison.mode == path
    assert len(diffs) == 1 and diffs[0].startswith("/metric")


@pytest.mark.parametrize("field,value", [("epochs", 4), ("history", [{"loss": 0.5, "epoch": 2}]), ("history", [])])
def test_integers_and_shapes_stay_exact_on_the_tolerance_path(field, value):
    rerun = _fresh()
    committed = _other_cpu(rerun)
    committed[field] = value
    comparison, diffs = verify(committed, rerun)
    assert comparison.mode == "tolerance" and diffs


def test_exact_path_rejects_last_bit_differences():
    rerun = _fresh()
    committed = copy.deepcopy(rerun)
    committed["metric"] = float(
        torch.nextafter(torch.tensor(rerun["metric"], dtype=torch.float64), torch.tensor(1e300, dtype=torch.float64))
    )
    assert verify(committed, rerun)[1]


def test_config_fields_added_later_do_not_count_as_differences():
    cfg = TrainConfig(experiment="t", dataset="adult", model="mlp")
    fresh = {
        "config": {"config_class": "TrainConfig", "precision": "float32", "lr": 0.05},
        "provenance": {"optimizer_steps": 10},
    }
    old = {"config": {"config_class": "TrainConfig", "lr": 0.05}}
    assert verify_rerun.differences(verify_rerun.with_default_fields(old, fresh, type(cfg)), fresh) == []
    old_bf16 = {"config": {"config_class": "TrainConfig", "lr": 0.05}}
    fresh_bf16 = {"config": {**fresh["config"], "precision": "bf16"}}
    assert verify_rerun.differences(
        verify_rerun.with_default_fields(old_bf16, fresh_bf16, type(cfg)), fresh_bf16
    )  # a non-default value is a real difference


def test_the_provenance_compares_devices_and_reads_old_records_as_one_cpu_process():
    old = {"cpu_model": "x", "precision": "float32"}
    cpu_rerun = {**old, "device": "cpu"}
    assert verify_rerun.provenance_mismatch(old, cpu_rerun) == []
    gpu_rerun = {**old, "device": "cuda", "device_name": "NVIDIA H100", "world_size": 2}
    differ = verify_rerun.provenance_mismatch(old, gpu_rerun)
    assert any(d.startswith("device:") for d in differ) and any(d.startswith("world_size:") for d in differ)


def test_float_tolerance_rejects_bad_lengths():
    for bad in (0, -1, 1.5, True, None):
        with pytest.raises(ValueError, match="optimizer_steps"):
            float_tolerance(bad)


# -------------------------------------------------------------------------------- precision
def test_bf16_on_a_cpu_without_native_bf16_stops_with_a_clear_message(monkeypatch):
    monkeypatch.setattr(provenance, "bf16_is_native", lambda: False)
    monkeypatch.setattr(provenance, "cpu_capability", lambda: "AVX2")
    monkeypatch.delenv("REPRO_ALLOW_EMULATED_BF16", raising=False)
    with pytest.raises(PrecisionUnavailable, match=r"no native bf16.*precision='float32'.*REPRO_ALLOW_EMULATED_BF16"):
        check_precision("bf16")
    assert check_precision("float32") == "float32"
    cfg = TrainConfig(
        experiment="t",
        dataset="adult",
        model="mlp",
        profile="smoke",
        epochs=1,
        n_train=64,
        n_val=64,
        batch_size=32,
        precision="bf16",
        model_kwargs={"depth": 1, "width": 8},
    )
    with pytest.raises(PrecisionUnavailable):
        run_or_load(cfg)


def test_bf16_runs_and_is_recorded_where_allowed(monkeypatch, require_dataset):
    require_dataset("adult")
    monkeypatch.setattr(provenance, "bf16_is_native", lambda: False)
    monkeypatch.setenv("REPRO_ALLOW_EMULATED_BF16", "1")
    cfg = TrainConfig(
        experiment="t",
        dataset="adult",
        model="mlp",
        profile="smoke",
        epochs=1,
        n_train=64,
        n_val=64,
        batch_size=32,
        precision="bf16",
        model_kwargs={"depth": 1, "width": 8},
    )
    result = run_or_load(cfg)
    assert result["provenance"]["precision"] == "bf16"
    assert result["config"]["precision"] == "bf16"


def test_bf16_passes_on_a_cpu_with_native_bf16(monkeypatch):
    monkeypatch.setattr(provenance, "bf16_is_native", lambda: True)
    assert check_precision("bf16") == "bf16"


def test_precision_is_part_of_the_cache_key():
    base = dict(experiment="t", dataset="adult", model="mlp")
    fp32, bf16 = TrainConfig(**base), TrainConfig(**base, precision="bf16")
    assert config_hash(fp32) != config_hash(bf16)
    # the default adds nothing to the key, so results committed before the field keep theirs
    assert config_hash(fp32) == config_hash(TrainConfig(**base, precision="float32"))
    with pytest.raises(ValueError, match="precision must be one of"):
        TrainConfig(**base, precision="fp16")
    with pytest.raises(ValueError, match="precision must be one of"):
        check_precision("bfloat16")


def test_describe_names_the_cpu():
    prov = _fresh()["provenance"]
    line = provenance.describe(prov)
    assert prov["cpu_model"] in line and prov["cpu_capability"] in line
    assert provenance.describe(None) == "not recorded"


@pytest.fixture(autouse=True)
def _runners(monkeypatch):
    """The toy config classes' lines of the runner table, for each test."""
    monkeypatch.setitem(methods.RUNNERS, StepConfig, _run_steps)

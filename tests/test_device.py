"""The device of a run (``REPRO_DEVICE``), its precision and determinism, and the activations'
compute paths away from the CPU. This machine has no GPU: CUDA is mocked where a test needs it."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import TensorDataset

from helpers import activations as A
from helpers.core import device as D
from helpers.core import distributed, provenance
from helpers.core.data import make_loader
from helpers.core.kernels import FusedKernel
from helpers.core.train import evaluate, fit


@pytest.fixture
def two_gpus(monkeypatch):
    """Pretend torch sees two CUDA GPUs (no tensor is ever put on them)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


def test_auto_is_the_cpu_without_a_gpu(no_gpu, monkeypatch):
    monkeypatch.delenv(D.DEVICE_ENV, raising=False)
    assert D.resolve_device() == torch.device("cpu")


def test_auto_is_the_first_gpu_when_there_is_one(two_gpus, monkeypatch):
    monkeypatch.setenv(D.DEVICE_ENV, "auto")
    assert D.resolve_device() == torch.device("cuda", 0)


@pytest.mark.parametrize("word,expected", [("cpu", "cpu"), (" CPU ", "cpu"), ("cuda", "cuda:0"), ("cuda:1", "cuda:1")])
def test_each_word_picks_its_device(two_gpus, monkeypatch, word, expected):
    monkeypatch.setenv(D.DEVICE_ENV, word)
    assert D.resolve_device() == torch.device(expected)


@pytest.mark.parametrize("word", [None, "auto", "cuda", " CUDA "])
def test_local_workers_spread_over_the_gpus_left_to_choose(two_gpus, monkeypatch, word):
    if word is None:
        monkeypatch.delenv(D.DEVICE_ENV, raising=False)
    else:
        monkeypatch.setenv(D.DEVICE_ENV, word)
    assert D.local_gpus() == 2
    assert D.worker_devices(3) == ("cuda:0", "cuda:1", "cuda:0")


@pytest.mark.parametrize("word,gpus", [("cuda:1", 1), ("cpu", 0)])
def test_workers_pinned_to_one_device_stay_there(two_gpus, monkeypatch, word, gpus):
    monkeypatch.setenv(D.DEVICE_ENV, word)
    assert D.local_gpus() == gpus and D.worker_devices(3) == ()


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2", None])
def test_worker_devices_wants_a_positive_count(two_gpus, workers):
    with pytest.raises((TypeError, ValueError), match="workers"):
        D.worker_devices(workers)


def test_one_gpu_or_none_needs_no_spreading(no_gpu, monkeypatch):
    monkeypatch.delenv(D.DEVICE_ENV, raising=False)
    assert D.local_gpus() == 0 and D.worker_devices(4) == ()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert D.local_gpus() == 1 and D.worker_devices(4) == ()


def test_default_workers_are_one_per_gpu_where_runs_train_on_gpus(two_gpus, monkeypatch):
    import os

    from helpers.core import results_cache

    monkeypatch.delenv("REPRO_WORKERS", raising=False)
    monkeypatch.delenv(D.DEVICE_ENV, raising=False)
    assert results_cache.default_workers("cpu") == 2 and results_cache.default_workers("smoke") == 1
    monkeypatch.setenv(D.DEVICE_ENV, "cpu")
    assert results_cache.default_workers("cpu") == max(1, os.cpu_count() or 1)
    monkeypatch.setenv("REPRO_WORKERS", "3")
    assert results_cache.default_workers("cpu") == 3


def test_each_worker_takes_the_next_gpu(monkeypatch):
    import multiprocessing
    import os

    from helpers.core import results_cache

    monkeypatch.setenv(D.DEVICE_ENV, "auto")  # restored after the test
    slot = multiprocessing.get_context("spawn").Value("i", 0)
    seen = []
    for _ in range(3):
        results_cache._init_worker(("cuda:0", "cuda:1"), slot)
        seen.append(os.environ[D.DEVICE_ENV])
    assert seen == ["cuda:0", "cuda:1", "cuda:0"]
    results_cache._init_worker((), slot)  # no GPUs to spread over: the variable is left alone
    assert os.environ[D.DEVICE_ENV] == "cuda:0" and slot.value == 3


def test_cuda_without_a_gpu_says_what_to_set(no_gpu, monkeypatch):
    monkeypatch.setenv(D.DEVICE_ENV, "cuda")
    with pytest.raises(D.DeviceUnavailable, match=r"REPRO_DEVICE='cuda'.*no.*set REPRO_DEVICE=cpu or auto"):
        D.resolve_device()


def test_a_gpu_index_beyond_the_count_names_the_valid_ones(two_gpus, monkeypatch):
    monkeypatch.setenv(D.DEVICE_ENV, "cuda:2")
    with pytest.raises(D.DeviceUnavailable, match=r"GPU 2.*has 2 \(cuda:0\.\.cuda:1\)"):
        D.resolve_device()


@pytest.mark.parametrize("word", ["gpu", "cuda:x", "cuda:-1", "tpu"])
def test_an_unknown_device_word_lists_the_known_ones(two_gpus, monkeypatch, word):
    monkeypatch.setenv(D.DEVICE_ENV, word)
    with pytest.raises(ValueError, match="REPRO_DEVICE"):
        D.resolve_device()


def test_mps_without_mps_is_an_error(monkeypatch):
    monkeypatch.setattr(D, "_mps_available", lambda: False)
    with pytest.raises(D.DeviceUnavailable, match="MPS.*REPRO_DEVICE=cpu"):
        D.resolve_device("mps")


def test_under_torchrun_each_process_takes_the_gpu_of_its_local_rank(two_gpus, monkeypatch):
    monkeypatch.setenv(D.DEVICE_ENV, "cuda")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert distributed.process_device() == torch.device("cuda", 1)
    monkeypatch.setenv("WORLD_SIZE", "3")
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("LOCAL_RANK", "2")
    with pytest.raises(ValueError, match="LOCAL_RANK=2 needs GPU 2.*has 2"):
        distributed.process_device()


def test_bf16_on_a_gpu_without_bf16_is_refused(two_gpus, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Tesla V100")
    gpu = torch.device("cuda", 0)
    assert D.preferred_precision(gpu) == "float32"
    assert D.check_device_precision("float32", gpu) == "float32"
    with pytest.raises(D.DeviceUnavailable, match="V100 has no bf16"):
        D.check_device_precision("bf16", gpu)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert D.preferred_precision(gpu) == "bf16"
    assert D.check_device_precision("bf16", gpu) == "bf16"


def test_the_cpu_keeps_the_native_bf16_rule(monkeypatch):
    monkeypatch.setattr(provenance, "bf16_is_native", lambda: False)
    monkeypatch.delenv(provenance.ALLOW_EMULATED_BF16_ENV, raising=False)
    assert D.preferred_precision(torch.device("cpu")) == "float32"
    with pytest.raises(provenance.PrecisionUnavailable):
        D.check_device_precision("bf16", torch.device("cpu"))
    monkeypatch.setattr(provenance, "bf16_is_native", lambda: True)
    assert D.preferred_precision(torch.device("cpu")) == "bf16"


def test_cuda_determinism_sets_the_cudnn_and_cublas_flags(monkeypatch):
    before = (
        torch.backends.cudnn.deterministic,
        torch.backends.cudnn.benchmark,
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
    )
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    torch.backends.cudnn.benchmark = True
    try:
        D.set_determinism(torch.device("cuda", 0))
        import os

        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
        assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
        assert torch.are_deterministic_algorithms_enabled()
        assert not torch.is_deterministic_algorithms_warn_only_enabled()
    finally:
        (
            torch.backends.cudnn.deterministic,
            torch.backends.cudnn.benchmark,
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
        ) = before


def test_the_gpu_provenance_names_the_card_and_the_versions(two_gpus, monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA H100")
    monkeypatch.setattr(torch.backends.cudnn, "is_available", lambda: True)
    monkeypatch.setattr(torch.backends.cudnn, "version", lambda: 91002)
    record = D.device_provenance(torch.device("cuda", 0))
    assert record == {"device": "cuda", "device_name": "NVIDIA H100", "cuda": torch.version.cuda, "cudnn": 91002}
    assert D.device_provenance(torch.device("cpu")) == {"device": "cpu"}


def test_moving_a_cpu_batch_to_the_cpu_returns_the_same_tensors():
    x, y = torch.randn(3, 2), torch.arange(3)
    moved = D.move_to((x, y), torch.device("cpu"))
    assert moved[0] is x and moved[1] is y


def test_a_cpu_loader_is_the_plain_single_process_one():
    data = TensorDataset(torch.arange(10.0))
    loader = make_loader(data, 4, shuffle=True, seed=3, device=torch.device("cpu"))
    assert loader.num_workers == 0 and not loader.pin_memory
    plain = make_loader(data, 4, shuffle=True, seed=3)
    assert [b[0].tolist() for b in loader] == [b[0].tolist() for b in plain]


def test_a_gpu_loader_pins_memory_and_uses_workers(monkeypatch):
    monkeypatch.setenv("REPRO_LOADER_WORKERS", "1")
    loader = make_loader(TensorDataset(torch.arange(10.0)), 4, shuffle=True, device=torch.device("cuda", 0))
    assert loader.pin_memory and loader.num_workers == 1


def test_fit_on_an_explicit_cpu_device_matches_fit_without_one():
    def run(device):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 3))
        g = torch.Generator().manual_seed(1)
        data = TensorDataset(torch.randn(64, 4, generator=g), torch.randint(0, 3, (64,), generator=g))
        out = fit(
            model,
            make_loader(data, 16, True, 0),
            make_loader(data, 32, False),
            epochs=2,
            task="classification",
            optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            device=device,
        )
        return [row["train_loss"] for row in out["history"]], evaluate(
            model, make_loader(data, 32, False), "classification", device
        )

    assert run(None) == run(torch.device("cpu"))


# Activations whose forward reads a tensor's value on the host (one GPU synchronisation per
# call on CUDA; impossible on "meta"): kept listed so that removing the read updates this test.
HOST_READS = {
    "flexact": "the Gumbel draws are read with .tolist()",
}


@pytest.mark.parametrize("name", sorted(A.available_activations()))
def test_every_activation_keeps_its_device_and_dtype(name):
    module = A.activation_factory(name)()
    x = torch.randn(4, 8, requires_grad=True)
    y = module(x)
    y.sum().backward()
    assert y.device == x.device and y.dtype == x.dtype and x.grad.device == x.device
    meta = A.activation_factory(name)().to("meta")
    xm = torch.empty(4, 8, device="meta", requires_grad=True)
    if name in HOST_READS:
        with pytest.raises((RuntimeError, NotImplementedError)):
            meta(xm)
        return
    ym = meta(xm)
    ym.sum().backward()
    assert ym.device.type == "meta" and xm.grad.device.type == "meta"


def test_fused_kernels_run_eagerly_on_devices_without_a_compiler():
    kernel = FusedKernel("test", lambda x: x * 2)
    assert not kernel.compiles(torch.empty(1 << 17, device="meta"))
    assert not kernel.compiles(torch.empty(1 << 17, dtype=torch.bfloat16))  # the CPU compiles float32 only
    assert kernel(torch.empty(8, device="meta")).device.type == "meta"


def test_one_kernels_compile_failure_leaves_the_others_compiled(monkeypatch):
    """A kernel that fails to compile (as Flex-Act's did on an H100) falls back alone, on its device."""
    from helpers.core import kernels

    def broken(*args):
        raise RuntimeError("cannot launch (simulated)")

    calls = []
    monkeypatch.setattr(kernels, "_compile_errors", {})
    failing, working = FusedKernel("failing", lambda x: x * 2), FusedKernel("working", lambda x: x * 3)
    monkeypatch.setattr(failing, "_compiled", broken)
    monkeypatch.setattr(working, "_compiled", lambda x: calls.append(x) or x * 3)
    x = torch.ones(1 << 17)
    with pytest.warns(RuntimeWarning, match="failing on cpu.*simulated"):
        assert torch.equal(failing(x), x * 2)  # the eager formula
    assert not failing.compiles(x)
    assert (id(failing), "cpu") in kernels._compile_errors and "simulated" in kernels.compile_unavailable_reason()
    assert working.compiles(x) and torch.equal(working(x), x * 3) and len(calls) == 1


# Activations whose forward cannot be traced into one graph by torch.compile(model): a host read
# breaks the graph (listed so that adding one updates this test). None now: Flex-Act, whose fused
# nodes read the Gumbel draws with .tolist(), takes a plain tensor path while traced.
GRAPH_BREAKS: dict[str, str] = {}


def _annealed_lambda_gelu() -> torch.nn.Module:
    module = A.activation_factory("lambda_gelu")()
    module.set_fixed_lambda(160.0)  # Table II's annealing target: the override path
    return module


# The method activations in the settings the book trains them with, beside their defaults.
CONFIGURED = {
    "lambda_gelu annealed": _annealed_lambda_gelu,
    "lambda_gelu per neuron": lambda: A.activation_factory("lambda_gelu", granularity="neuron", neuron_shape=16)(),
    "srelu learnable": lambda: A.activation_factory("srelu", delta=0.01, learnable=True)(),
    "flexact expected (eval)": lambda: A.activation_factory("flexact", eval_mode="expected")().eval(),
}


@pytest.mark.parametrize("name", sorted(A.available_activations()) + sorted(CONFIGURED))
def test_every_activation_compiles_into_a_whole_model_graph(name):
    """``torch.compile(model, fullgraph=True)`` traces forward and backward through every activation:
    on a GPU, compiling the model fuses the custom autograd functions instead of paying their
    Python overhead at each call. ``aot_eager`` traces as Inductor does, without generating code."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    act = CONFIGURED[name]() if name in CONFIGURED else A.activation_factory(name)()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), act, torch.nn.Linear(16, 2))
    x = torch.randn(32, 8)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    if name in GRAPH_BREAKS:
        with pytest.raises(Exception, match="(?i)graph break|unsupported|tolist|item"):
            compiled(x)
        return
    torch.manual_seed(1)  # Flex-Act draws its mixture in training: the same draws on both sides
    expected = model(x)
    expected.square().sum().backward()
    trained = [p for p in model.parameters() if p.requires_grad]
    grads = [p.grad.clone() for p in trained]
    model.zero_grad()
    torch.manual_seed(1)
    got = compiled(x)
    got.square().sum().backward()
    torch.testing.assert_close(got, expected)
    for g, p in zip(grads, trained):
        torch.testing.assert_close(p.grad, g)


def test_a_compiled_model_draws_its_random_numbers_as_an_eager_one(monkeypatch):
    """Inductor's own generator draws other numbers from the same seed (dropout masks differed by
    0.33 here): the compiled training module uses torch's, so compiled and eager runs agree."""
    monkeypatch.setenv(D.COMPILE_MODEL_ENV, "1")
    torch._dynamo.reset()
    net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 2))
    x = torch.randn(4, 8)
    torch.manual_seed(1)
    eager = net(x)
    compiled = D.compiled_training_module(net)
    torch.manual_seed(1)
    torch.testing.assert_close(compiled(x), eager)
    torch._dynamo.reset()


def _small_fit(**fit_kwargs):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), A.activation_factory("lambda_gelu")(), torch.nn.Linear(8, 3))
    g = torch.Generator().manual_seed(1)
    data = TensorDataset(torch.randn(64, 4, generator=g), torch.randint(0, 3, (64,), generator=g))
    out = fit(
        model,
        make_loader(data, 16, True, 0),
        make_loader(data, 32, False),
        epochs=2,
        task="classification",
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        **fit_kwargs,
    )
    return model, out["history"]


def test_the_gpu_loss_sum_read_once_per_epoch_equals_the_per_step_sum(monkeypatch):
    """The GPU path sums the loss on the device (no wait per step): the same float64 arithmetic."""
    from helpers.core import train

    _, per_step = _small_fit()
    monkeypatch.setattr(train, "_reads_loss_at_the_end", lambda device: True)
    _, per_epoch = _small_fit()
    assert per_epoch == per_step  # bit for bit, train_loss included


def test_a_non_finite_loss_read_at_the_end_of_the_epoch_names_its_step(monkeypatch):
    from helpers.core import train
    from helpers.core.results_cache import RunFailed

    class PoisonAtStep(train.TrainHook):
        def on_step(self, step, model):
            if step == 5:
                with torch.no_grad():
                    model[0].weight.fill_(float("nan"))

    monkeypatch.setattr(train, "_reads_loss_at_the_end", lambda device: True)
    with pytest.raises(RunFailed, match=r"epoch 2, step 5 \(read at the end of the epoch\)"):
        _small_fit(hooks=[PoisonAtStep()])


def test_compile_model_trains_through_torch_compile_and_records_it(monkeypatch, tmp_path, require_dataset):
    """REPRO_COMPILE_MODEL=1: the run trains through torch.compile(model), agrees with the eager
    run to float32 rounding, and its provenance says so (off: nothing recorded, as before)."""
    from helpers.core.runs import TrainConfig, train_model

    require_dataset("adult")
    monkeypatch.setattr(D, "_COMPILE_BACKEND", "aot_eager")  # Dynamo + AOTAutograd, no code generation
    cfg = TrainConfig(
        experiment="t", dataset="adult", model="mlp", profile="smoke", epochs=2, n_train=256, n_val=128,
        batch_size=64, activation="lambda_gelu", model_kwargs={"depth": 2, "width": 16},
    )  # fmt: skip
    from torch._dynamo.utils import counters

    histories, records, graphs = {}, {}, {}
    for flag in ("0", "1"):
        monkeypatch.setenv(D.COMPILE_MODEL_ENV, flag)
        torch._dynamo.reset()
        counters.clear()
        with provenance.recording() as rec:
            _, _, result = train_model(cfg, tmp_path / flag)
        histories[flag], records[flag] = result["history"], rec["device"]
        graphs[flag] = counters["stats"]["unique_graphs"]
    assert "compiled_model" not in records["0"] and records["1"]["compiled_model"] is True
    assert graphs["0"] == 0 and graphs["1"] >= 1  # the model really went through Dynamo
    for eager, compiled in zip(histories["0"], histories["1"]):
        assert compiled["train_loss"] == pytest.approx(eager["train_loss"], rel=1e-5)
        assert compiled["val_loss"] == pytest.approx(eager["val_loss"], rel=1e-5)
    monkeypatch.setenv(D.COMPILE_MODEL_ENV, "maybe")
    with pytest.raises(ValueError, match=D.COMPILE_MODEL_ENV):
        D.compile_model_requested()

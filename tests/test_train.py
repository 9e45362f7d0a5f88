"""The training loop: learning, determinism, resume, NaN handling, metrics."""

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from helpers.core.runtime import seed_everything
from helpers.core.train import TrainHook, evaluate, fit
from helpers.experiments import RunFailed


def _blobs(n: int = 256, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 2, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    return TensorDataset(x, y)


def _setup(seed: int = 0, lr: float = 0.1):
    gen = seed_everything(seed)
    train = DataLoader(_blobs(256, 1), batch_size=32, shuffle=True, generator=gen)
    val = DataLoader(_blobs(128, 2), batch_size=64)
    model = nn.Sequential(nn.Linear(2, 16), nn.GELU(), nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return model, train, val, opt


def test_loss_decreases_and_accuracy_high():
    model, train, val, opt = _setup()
    out = fit(model, train, val, optimizer=opt, epochs=5, task="classification")
    hist = out["history"]
    assert [r["epoch"] for r in hist] == [1, 2, 3, 4, 5]
    assert hist[-1]["train_loss"] < hist[0]["train_loss"]
    assert out["best_val_metric"] > 0.9


def test_seeded_runs_are_bit_identical():
    runs = []
    for _ in range(2):
        model, train, val, opt = _setup(seed=3)
        out = fit(model, train, val, optimizer=opt, epochs=3, task="classification")
        runs.append((out["history"], [p.detach().clone() for p in model.parameters()]))
    assert runs[0][0] == runs[1][0]
    for p, q in zip(runs[0][1], runs[1][1]):
        assert torch.equal(p, q)


class _Counter(TrainHook):
    """A stateful hook: resume must restore its state too."""

    def __init__(self):
        self.steps = 0

    def on_step(self, step, model):
        self.steps += 1

    def epoch_record(self, model):
        return {"hook_steps": self.steps}

    def state_dict(self):
        return {"steps": self.steps}

    def load_state_dict(self, state):
        self.steps = state["steps"]


def test_resume_after_kill_equals_uninterrupted(tmp_path):
    model, train, val, opt = _setup(seed=5)
    full = fit(model, train, val, optimizer=opt, epochs=4, task="classification", hooks=[_Counter()])
    full_params = [p.detach().clone() for p in model.parameters()]

    ckpt = tmp_path / "run.ckpt"
    model, train, val, opt = _setup(seed=5)
    fit(
        model, train, val, optimizer=opt, epochs=2, task="classification", hooks=[_Counter()], checkpoint_path=ckpt
    )  # the "killed" run got through 2 epochs
    # a fresh process: new objects, different global RNG state, same checkpoint
    model, train, val, opt = _setup(seed=99)
    torch.manual_seed(1234)
    resumed = fit(
        model, train, val, optimizer=opt, epochs=4, task="classification", hooks=[_Counter()], checkpoint_path=ckpt
    )
    assert resumed["history"] == full["history"]
    for p, q in zip(full_params, model.parameters()):
        assert torch.equal(p, q)


def test_a_resumed_run_reports_the_time_of_its_epochs_before_the_kill(tmp_path):
    ckpt = tmp_path / "run.ckpt"
    model, train, val, opt = _setup(seed=5)
    first = fit(model, train, val, optimizer=opt, epochs=2, task="classification", checkpoint_path=ckpt)
    payload = torch.load(ckpt, weights_only=True)
    payload["train_seconds"] = 1000.0  # as if the first two epochs had taken 1,000 s
    payload["cpu_seconds"] = 400.0  # of which 600 s paused
    torch.save(payload, ckpt)
    model, train, val, opt = _setup(seed=5)
    resumed = fit(model, train, val, optimizer=opt, epochs=3, task="classification", checkpoint_path=ckpt)
    assert 0 < first["train_seconds"] < 1000 < resumed["train_seconds"] < 1000 + 60
    assert 0 < first["cpu_seconds"] < 400 < resumed["cpu_seconds"] < 400 + 60


def test_nan_loss_stops_with_clear_error():
    model, train, val, opt = _setup(lr=1e30)
    with pytest.raises(RunFailed, match="non-finite loss"):
        fit(model, train, val, optimizer=opt, epochs=3, task="classification")


def test_extra_loss_hook_is_added():
    class Penalty(TrainHook):
        def extra_loss(self, model):
            return 1e3 * sum((p**2).sum() for p in model.parameters())

    model, train, val, opt = _setup()
    out = fit(model, train, val, optimizer=opt, epochs=1, task="classification", hooks=[Penalty()])
    assert out["history"][0]["train_loss"] > 1.0  # dominated by the penalty


def test_regression_and_lm_metrics():
    x = torch.randn(64, 3)
    reg = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=16)
    m = nn.Linear(3, 1)
    with torch.no_grad():
        m.weight.fill_(1.0)
        m.bias.zero_()
    assert evaluate(m, reg, "regression")["val_metric"] == pytest.approx(0.0, abs=1e-10)

    tokens = torch.randint(0, 5, (8, 4))
    lm = DataLoader(TensorDataset(tokens, tokens), batch_size=4)
    uniform = nn.Sequential(nn.Embedding(5, 5))
    with torch.no_grad():
        uniform[0].weight.zero_()
    assert evaluate(uniform, lm, "lm")["val_metric"] == pytest.approx(5.0)  # ppl of uniform = V


def test_invalid_arguments():
    model, train, val, opt = _setup()
    with pytest.raises(ValueError, match="task"):
        fit(model, train, val, optimizer=opt, epochs=1, task="ranking")
    with pytest.raises(ValueError, match="epochs"):
        fit(model, train, val, optimizer=opt, epochs=0, task="classification")
    with pytest.raises(TypeError, match="nn.Module"):
        fit("model", train, val, optimizer=opt, epochs=1, task="classification")

"""helpers.core.runtime.progress: a bar in a terminal or kernel, plain lines in a log, nothing under CI,
and in every mode exactly one iter() of the iterable (each iter() of a DataLoader draws a seed)."""

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from helpers.core import runtime
from helpers.core.runtime import progress


@pytest.fixture
def shown(monkeypatch):
    """Progress output on (no CI, no REPRO_QUIET); stderr is pytest's capture, not a TTY."""
    monkeypatch.delenv("REPRO_QUIET", raising=False)
    monkeypatch.delenv("CI", raising=False)


class _CountingIterable:
    """An iterable with a length that counts how often iter() is called on it."""

    def __init__(self, n: int):
        self.n, self.iters = n, 0

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        self.iters += 1
        return iter(range(self.n))


MODES = ("quiet", "lines", "bar")


def _set_mode(monkeypatch, mode: str) -> None:
    if mode == "quiet":
        monkeypatch.setenv("REPRO_QUIET", "1")
        return
    monkeypatch.delenv("REPRO_QUIET", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(runtime, "interactive_stderr", lambda: mode == "bar")


@pytest.mark.parametrize("mode", MODES)
def test_iter_is_called_once_in_every_mode(monkeypatch, mode):
    _set_mode(monkeypatch, mode)
    data = _CountingIterable(5)
    assert list(progress(data, desc="x")) == [0, 1, 2, 3, 4]
    assert data.iters == 1


def test_batch_order_is_the_same_in_every_mode(monkeypatch):
    def orders(mode: str) -> list[list[int]]:
        _set_mode(monkeypatch, mode)
        gen = torch.Generator().manual_seed(0)
        loader = DataLoader(TensorDataset(torch.arange(64)), batch_size=8, shuffle=True, generator=gen)
        return [[int(b[0][0]) for b in progress(loader)] for _ in range(3)]

    reference = orders("quiet")
    assert orders("lines") == reference
    assert orders("bar") == reference


def test_not_a_terminal_means_one_line_per_loop_and_no_carriage_returns(shown, capsys):
    assert not runtime.interactive_stderr()  # pytest captures stderr: not a TTY, not a kernel
    for epoch in range(1, 4):
        assert sum(progress(range(1000), desc=f"run epoch {epoch}/3")) == 499500
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.splitlines()
    assert len(lines) == 3
    assert [line.split(":")[0] for line in lines] == [f"run epoch {e}/3" for e in (1, 2, 3)]
    assert all("1000/1000 it in" in line for line in lines)


def test_each_writes_one_line_per_item(shown, capsys):
    assert list(progress(iter("abc"), desc="runs", each=True, unit="run")) == ["a", "b", "c"]
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.splitlines() == [line for line in err.splitlines() if line.startswith("runs: ")]
    assert [line.split(" run ")[0] for line in err.splitlines()] == ["runs: 1", "runs: 2", "runs: 3"]


def test_quiet_writes_nothing(monkeypatch, capsys):
    monkeypatch.setenv("CI", "true")
    assert list(progress(range(3), desc="x")) == [0, 1, 2]
    assert capsys.readouterr().err == ""


def test_training_log_has_at_most_one_line_per_epoch(shown, capsys):
    from helpers.core.train import fit

    torch.manual_seed(0)
    x = torch.randn(256, 2)
    y = (x[:, 0] > 0).long()
    train = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(0))
    val = DataLoader(TensorDataset(x[:64], y[:64]), batch_size=64)
    model = nn.Sequential(nn.Linear(2, 8), nn.GELU(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    fit(model, train, val, optimizer=opt, epochs=3, task="classification", desc="tiny")
    err = capsys.readouterr().err
    assert "\r" not in err
    epoch_lines = [line for line in err.splitlines() if "epoch" in line]
    assert len(epoch_lines) == 3, err
    assert len(err.splitlines()) <= 3


def test_a_jupyter_kernel_counts_as_interactive(monkeypatch):
    import sys
    import types

    kernel_shell = types.SimpleNamespace(kernel=object())
    fake = types.SimpleNamespace(get_ipython=lambda: kernel_shell)
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert runtime.interactive_stderr()
    fake.get_ipython = lambda: None  # IPython imported, but no kernel (a plain script)
    assert not runtime.interactive_stderr()


def test_run_many_workers_log_their_epochs_only_outside_a_terminal(monkeypatch):
    """A worker of run_many stays quiet when the parent draws one bar for all runs (a terminal or
    a notebook), and writes its per-epoch lines when the parent's stderr is a log file."""
    import os

    from helpers.core import results_cache

    seen = []
    monkeypatch.setattr(
        results_cache, "run_or_load", lambda config, rerun: seen.append(os.environ.get("REPRO_QUIET")) or {}
    )
    monkeypatch.delenv("REPRO_QUIET", raising=False)  # restored after the test
    results_cache._run_in_worker(object(), False, False)
    results_cache._run_in_worker(object(), False, True)
    assert seen == [None, "1"]

"""Faults around a run: another run's checkpoint, a failure record with non-finite values,
leftovers of a killed write, and every kind of damaged file the project reads (empty, truncated,
random bytes, a folder instead of a file, edited in place), each refused with the file named."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
import torch
from refusals import refusal_fault
from torch.utils.data import TensorDataset

from helpers import methods
from helpers.core.data import make_loader
from helpers.core.models import MLP
from helpers.core.result_files import STALE_TEMP_MARGIN_S
from helpers.core.results_cache import (
    RunFailed,
    result_path,
    run_or_load,
)
from helpers.core.train import fit
from tools import preflight

T = TypeVar("T")

MIRROR = Path(os.environ.get("REPRO_DATA_DIR") or Path(__file__).resolve().parents[2].parent / "shared" / "data")


# ------------------------------------------------------------------------ checkpoints bound to their run
def _fit(ckpt: Path, epochs: int, run_key: dict[str, str] | None) -> dict:
    torch.manual_seed(3)
    g = torch.Generator().manual_seed(0)
    xs, ys = torch.randn(64, 4, generator=g), torch.randint(0, 2, (64,), generator=g)
    model = MLP(4, 2, depth=1, width=8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train = make_loader(TensorDataset(xs, ys), 16, True, seed=1)
    val = make_loader(TensorDataset(xs, ys), 32, False)
    return fit(
        model, train, val, optimizer=opt, epochs=epochs, task="classification", checkpoint_path=ckpt, run_key=run_key
    )


A = {"config_hash": "aaaaaaaaaaaaaaaa", "code_version": "1"}
B = {"config_hash": "bbbbbbbbbbbbbbbb", "code_version": "1"}


def test_a_checkpoint_of_another_run_is_moved_aside_with_both_keys_named(tmp_path):
    ckpt = tmp_path / "checkpoint.ckpt"
    _fit(ckpt, 3, A)  # another configuration's run, killed after its 3rd epoch
    fresh = _fit(tmp_path / "fresh.ckpt", 2, B)
    with pytest.warns(RuntimeWarning) as record:
        out = _fit(ckpt, 2, B)
    message = str(record[0].message)
    assert str(ckpt) in message and A["config_hash"] in message and B["config_hash"] in message
    assert "checkpoint.ckpt.foreign" in message
    assert len(out["history"]) == 2 and out["history"] == fresh["history"]  # trained from scratch
    assert (tmp_path / "checkpoint.ckpt.foreign").exists()  # moved, not deleted


def test_a_checkpoint_without_a_run_key_is_not_resumed_by_a_keyed_run(tmp_path):
    ckpt = tmp_path / "checkpoint.ckpt"
    _fit(ckpt, 1, None)
    with pytest.warns(RuntimeWarning, match="no run key"):
        out = _fit(ckpt, 2, A)
    assert [row["epoch"] for row in out["history"]] == [1, 2]


def test_the_same_run_resumes_its_own_checkpoint_silently(tmp_path):
    ckpt = tmp_path / "checkpoint.ckpt"
    full = _fit(tmp_path / "full.ckpt", 3, A)
    _fit(ckpt, 2, A)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resumed = _fit(ckpt, 3, A)
    assert resumed["history"] == full["history"]
    assert torch.load(ckpt, weights_only=True)["run_key"] == A


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda s: s.update(epoch=99), "it is at epoch 99 of a run of 3 epochs"),
        (lambda s: s.update(history=[]), "its history holds 0 epoch rows, not one for each of the 2 epochs"),
        (lambda s: s.update(history=s["history"][:1] * 2), "its history holds 2 epoch rows, not one for each"),
        (lambda s: s.update(step=0), "it counts 0 optimiser steps after 2 epochs"),
        (lambda s: s.update(optimizer={"state": {}, "param_groups": []}), "it holds no optimiser state"),
    ],
)
def test_a_checkpoint_of_this_run_in_an_impossible_state_is_refused_not_resumed(tmp_path, edit, why):
    """The run's own key, but a state no run of it reaches: resuming would store a short or long
    history as the run's result. Refused like another run's file, and trained from scratch."""
    ckpt = tmp_path / "checkpoint.ckpt"
    full = _fit(tmp_path / "full.ckpt", 3, A)
    _fit(ckpt, 2, A)
    saved = torch.load(ckpt, weights_only=True)
    edit(saved)
    torch.save(saved, ckpt)
    with pytest.warns(RuntimeWarning, match="does not fit this run") as record:
        out = _fit(ckpt, 3, A)
    assert why in str(record[0].message) and str(ckpt) in str(record[0].message)
    assert out["history"] == full["history"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux) for a real ENOSPC")
def test_a_full_disk_names_the_file_and_keeps_the_previous_one(tmp_path, monkeypatch):
    """Every write to /dev/full fails with ENOSPC, as a full disk does: the checkpoint (torch's
    own RuntimeError underneath) and a result file each fail with an OSError naming the path, and
    the file written before stays as it was."""
    import helpers.core.result_files as atomic

    ckpt = tmp_path / "checkpoint.ckpt"
    _fit(ckpt, 1, A)
    before = ckpt.read_bytes()
    result = tmp_path / "run.json"
    atomic.write_json_atomic(result, {"ok": 1})
    real_fdopen = os.fdopen

    def full_disk(fd, mode="r", *args, **kwargs):
        os.close(fd)
        return real_fdopen(os.open("/dev/full", os.O_WRONLY), mode, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", full_disk)  # both writers open their temporary file with it
    with pytest.raises(OSError, match=rf"could not write the checkpoint {ckpt}: .*disk full.*previous file"):
        _fit(ckpt, 2, A)
    with pytest.raises(OSError, match=rf"could not write the result {result}: No space left on device"):
        atomic.write_json_atomic(result, {"ok": 2}, "result")
    assert ckpt.read_bytes() == before and result.read_text() == '{"ok":1}\n'
    assert not list(tmp_path.glob("*.tmp"))  # no half-written temporary file left behind


@pytest.mark.parametrize("bad", [{"config_hash": 1}, "abc", [("a", "b")]])
def test_a_malformed_run_key_is_refused(tmp_path, bad):
    with pytest.raises(TypeError, match="run_key must be a mapping of str to str"):
        _fit(tmp_path / "c.ckpt", 1, bad)


@pytest.mark.parametrize("epochs", [True, 0, 1.0])
def test_fit_refuses_epochs_that_are_not_a_positive_int(tmp_path, epochs):
    with pytest.raises(ValueError, match="epochs must be a positive int"):
        fit(
            MLP(2, 2, depth=1, width=2),
            [],
            [],
            optimizer=torch.optim.SGD(MLP(2, 2).parameters(), lr=0.1),
            epochs=epochs,
            task="classification",
        )


def test_fit_refuses_a_bad_max_grad_norm():
    problems = [
        fault
        for bad in [float("nan"), float("inf"), 0.0, -1.0, True, "1"]
        if (
            fault := refusal_fault(
                f"fit(..., max_grad_norm={bad!r})",
                lambda: fit(
                    MLP(2, 2, depth=1, width=2),
                    [],
                    [],
                    optimizer=torch.optim.SGD(MLP(2, 2).parameters(), lr=0.1),
                    epochs=1,
                    task="classification",
                    max_grad_norm=bad,
                ),
                ValueError,
                "max_grad_norm must be None or a finite number > 0",
            )
        )
    ]
    assert not problems, "\n".join(problems)


def test_train_model_binds_the_checkpoint_to_the_config(tmp_path, require_dataset, monkeypatch):
    """The real runner: a 3-epoch config's checkpoint in a 2-epoch config's workdir."""
    require_dataset("adult")
    from helpers.core.runs import TrainConfig, train_model

    monkeypatch.setenv("REPRO_QUIET", "1")
    base = dict(
        experiment="bind",
        dataset="adult",
        model="mlp",
        profile="smoke",
        n_train=64,
        n_val=32,
        batch_size=32,
        model_kwargs={"depth": 1, "width": 8},
    )
    other, mine = TrainConfig(**base, epochs=3), TrainConfig(**base, epochs=2)
    workdir = result_path(mine).with_suffix("")
    train_model(other, workdir)  # leaves the other run's checkpoint in this run's workdir
    with pytest.warns(RuntimeWarning, match="belongs to another run"):
        result = run_or_load(mine)
    assert len(result["history"]) == 2
    assert (workdir / "checkpoint.ckpt.foreign").exists()


# ------------------------------------------------------------------------ failure records and leftovers
@dataclass(frozen=True)
class _ProbeConfig:
    experiment: str = "probe"
    profile: str = "smoke"
    value: float = 0.0
    fail: bool = False


def _probe_runner(cfg: _ProbeConfig, workdir: Path) -> dict:
    if cfg.fail:
        raise RunFailed(f"diverged with value {cfg.value}")
    return {"value_seen": 1}


def test_a_failure_record_with_non_finite_values_keeps_the_run_failed_error():
    cfg = _ProbeConfig(value=float("nan"), fail=True)
    with pytest.raises(RunFailed, match="diverged"):
        run_or_load(cfg)
    failed = result_path(cfg).with_suffix(".failed.json")
    assert '"value":"nan"' in failed.read_text()
    assert not result_path(cfg).with_suffix("").exists()  # no empty workdir left


def test_an_empty_workdir_is_removed_after_a_successful_run():
    cfg = _ProbeConfig(value=1.0)
    run_or_load(cfg)
    assert result_path(cfg).exists() and not result_path(cfg).with_suffix("").exists()


def test_temp_files_of_a_killed_write_are_removed_on_the_next_run():
    cfg = _ProbeConfig(value=2.0)
    folder = result_path(cfg).parent
    workdir = result_path(cfg).with_suffix("")
    workdir.mkdir(parents=True)
    stale = [folder / f"{result_path(cfg).name}abc.tmp", workdir / ".checkpoint.ckpt.xyz.tmp"]
    for path in stale:
        path.write_bytes(b"half a file")
        past = time.time() - STALE_TEMP_MARGIN_S - 3600
        os.utime(path, (past, past))
    current = folder / "someone-writing-now.tmp"
    current.write_bytes(b"in progress")
    run_or_load(cfg)
    assert not any(p.exists() for p in stale)
    assert current.exists()  # another process's write in progress is left alone


# ------------------------------------------------------------------------ dataset files
@pytest.fixture
def data_env(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REPRO_OFFLINE", "1")
    monkeypatch.setenv("REPRO_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    return tmp_path / "data"


@pytest.mark.parametrize("content", [b"", b"\n"], ids=["empty", "blank-line"])
def test_an_empty_adult_file_names_the_path(data_env, monkeypatch, content):
    from helpers.core.data import load_adult
    from helpers.core.data.sources import DataError

    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")
    (data_env / "adult").mkdir()
    path = data_env / "adult" / "adult.csv"
    path.write_bytes(content)
    with pytest.raises(DataError, match=f"{path}: empty file"):
        load_adult()


class _Planted:
    def __reduce__(self):
        return (os.system, ("echo planted",))


@pytest.mark.parametrize("payload", ["malicious", "truncated", "not-a-dict"])
def test_a_bad_cifar_batch_names_the_file(data_env, monkeypatch, capfd, payload):
    from helpers.core.data import load_cifar10
    from helpers.core.data.sources import DataError

    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")
    folder = data_env / "cifar10" / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    good = pickle.dumps({b"data": [[0] * 3072], b"labels": [0]})
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        (folder / name).write_bytes(good)
    bad = {
        "malicious": pickle.dumps({b"data": _Planted()}),
        "truncated": good[: len(good) // 2],
        "not-a-dict": pickle.dumps([1, 2]),
    }[payload]
    (folder / "data_batch_1").write_bytes(bad)
    with pytest.raises(DataError) as info:
        load_cifar10()
    assert str(folder / "data_batch_1") in str(info.value)
    assert "planted" not in capfd.readouterr().out  # the planted payload never ran


@pytest.mark.parametrize("fault", ["no-labels", "3000-columns", "label-10", "float-pixels", "constant-pixels"])
def test_preflight_decodes_a_copy_taken_on_trust_and_names_what_is_malformed(data_env, monkeypatch, capsys, fault):
    """With REPRO_VERIFY_DATA=0 a copy is not checked against digests, so preflight decodes it:
    a batch that would fail an hour into a run (a KeyError, a shape error) stops the command now."""
    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")
    folder = data_env / "cifar10" / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rows = np.arange(2 * 3072, dtype=np.uint8).reshape(2, 3072)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        (folder / name).write_bytes(pickle.dumps({b"data": rows, b"labels": [0, 9]}))
    assert preflight.check(["cifar10"]) == 0, capsys.readouterr().err  # well formed, if tiny
    bad = {
        "no-labels": {b"data": rows},
        "3000-columns": {b"data": np.zeros((2, 3000), dtype=np.uint8), b"labels": [0, 1]},
        "label-10": {b"data": rows, b"labels": [0, 10]},
        "float-pixels": {b"data": rows.astype(np.float32), b"labels": [0, 1]},
        "constant-pixels": {b"data": np.zeros((2, 3072), dtype=np.uint8), b"labels": [0, 1]},
    }[fault]
    if fault == "constant-pixels":  # every training image one colour: normalising divides by zero
        for name in [f"data_batch_{i}" for i in range(1, 6)]:
            (folder / name).write_bytes(pickle.dumps(bad))
    (folder / "data_batch_3").write_bytes(pickle.dumps(bad))
    assert preflight.check(["cifar10"]) == 1
    err = capsys.readouterr().err
    assert (
        "not readable" in err
        and str(folder / ("data_batch_1" if fault == "constant-pixels" else "data_batch_3")) in err
    ), err


def _shakespeare(data_env: Path) -> Path:
    source = MIRROR / "tinyshakespeare" / "input.txt"
    if not source.is_file():
        pytest.skip("no offline mirror: set REPRO_DATA_DIR (CI and repro.sh do)")
    (data_env / "tinyshakespeare").mkdir()
    target = data_env / "tinyshakespeare" / "input.txt"
    shutil.copyfile(source, target)
    return target


@pytest.mark.parametrize("damage", ["truncated", "empty", "random-bytes", "a-folder", "one-byte-edited"])
def test_preflight_refuses_a_damaged_dataset_file_and_names_it(data_env, capsys, damage):
    path = _shakespeare(data_env)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "random-bytes":
        path.write_bytes(os.urandom(len(data)))
    elif damage == "a-folder":
        path.unlink()
        path.mkdir()
    else:  # relabelled: one character changed, same size
        path.write_bytes(data[:100] + (b"X" if data[100:101] != b"X" else b"Y") + data[101:])
    assert preflight.check(["tinyshakespeare"]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and "not intact" in err


def _within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``'s result (or its exception), failing the test if it takes longer than
    ``seconds``: a regression that opens a FIFO or reads /dev/zero blocks for ever, and a test
    must fail rather than hang. The daemon thread left behind dies with the test process."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as err:  # noqa: BLE001 - handed back to the test's thread
            outcome["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s: a FIFO or device was opened and read")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def _special_file(path: Path, kind: str) -> str:
    """Put a FIFO or a symlink to /dev/zero at ``path``; return how the refusal names it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        return "is a FIFO (named pipe), not a regular file"
    path.symlink_to("/dev/zero")
    return "is a symlink to /dev/zero, a character device, not a regular file"


SPECIAL_FILES = ["fifo", "symlink-to-dev-zero"]


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs POSIX FIFOs")
@pytest.mark.parametrize("kind", SPECIAL_FILES)
def test_preflight_refuses_a_fifo_or_device_unopened_and_names_it(data_env, capsys, kind):
    path = data_env / "tinyshakespeare" / "input.txt"
    what = _special_file(path, kind)
    assert _within(30, lambda: preflight.check(["tinyshakespeare"])) == 1
    err = capsys.readouterr().err
    assert "not intact" in err and f"{path}: {what}" in err, err


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs POSIX FIFOs")
@pytest.mark.parametrize("verify", ["1", "0"])
@pytest.mark.parametrize("kind", SPECIAL_FILES)
def test_the_loaders_refuse_a_fifo_or_device_unopened_even_unverified(data_env, monkeypatch, kind, verify):
    """``REPRO_VERIFY_DATA=0`` skips checksums, not this: the loader would hang, not fail."""
    from helpers.core.data import load_dataset
    from helpers.core.data.sources import DataError

    monkeypatch.setenv("REPRO_VERIFY_DATA", verify)
    path = data_env / "tinyshakespeare" / "input.txt"
    what = _special_file(path, kind)
    with pytest.raises(DataError, match=re.escape(f"{path}: {what}")):
        _within(30, lambda: load_dataset("tinyshakespeare", download=False))


def test_preflight_notices_an_edit_in_place_after_a_cached_check(data_env, capsys):
    """Same size, and the modification time set back: the change time still moves."""
    path = _shakespeare(data_env)
    assert preflight.check(["tinyshakespeare"]) == 0  # hashed once, remembered
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[200] = ord("Z") if data[200] != ord("Z") else ord("Q")
    time.sleep(0.01)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert preflight.check(["tinyshakespeare"]) == 1
    assert str(path) in capsys.readouterr().err


def test_preflight_says_when_it_did_not_check_content(data_env, monkeypatch, capsys):
    path = _shakespeare(data_env)
    path.write_bytes(b"not shakespeare")
    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")
    assert preflight.check(["tinyshakespeare"]) == 0
    assert "not checked against their checksums" in capsys.readouterr().err


@pytest.fixture(autouse=True)
def _runners(monkeypatch):
    """The toy config classes' lines of the runner table, for each test."""
    monkeypatch.setitem(methods.RUNNERS, _ProbeConfig, _probe_runner)

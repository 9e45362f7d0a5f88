"""Result files verify themselves: edited, swapped, truncated, empty, failed and NaN files are
caught on load, named, and (outside CI) retrained; ``verify_results`` checks a whole folder."""

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import methods
from helpers.core.result_files import CorruptResult, content_checksum
from helpers.experiments import load_result, result_path, run_or_load
from tools import verify_results

CALLS: list = []


@pytest.fixture(autouse=True)
def _not_ci(monkeypatch):
    """These tests write cpu-profile results, which CI may not train; the CI rule is set where tested."""
    monkeypatch.delenv("CI", raising=False)


@dataclass(frozen=True)
class FileConfig:
    experiment: str = "files"
    profile: str = "cpu"
    x: float = 1.0


def _run(cfg, workdir):
    CALLS.append(cfg)
    return {"best_val_metric": cfg.x / 10, "history": [{"epoch": 1, "val_metric": cfg.x / 10}]}


def _written(x: float = 1.0) -> Path:
    run_or_load(FileConfig(x=x))
    return result_path(FileConfig(x=x))


def _edit(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def test_a_written_result_carries_a_checksum_and_loads():
    path = _written()
    data = json.loads(path.read_text())
    assert data["checksum"] == content_checksum(data) and data["checksum"].startswith("sha256:")
    assert load_result(FileConfig())["best_val_metric"] == 0.1


CORRUPTIONS = {
    "one number edited": (lambda p: _edit(p, lambda d: d.__setitem__("best_val_metric", 0.9)), "checksum"),
    "empty object": (lambda p: p.write_text("{}"), "missing"),
    "truncated": (lambda p: p.write_text(p.read_text()[:40]), "not valid JSON"),
    "status failed": (lambda p: _edit(p, lambda d: d.__setitem__("status", "failed")), "status"),
    "NaN metric": (lambda p: _edit(p, lambda d: d.__setitem__("best_val_metric", float("nan"))), "non-finite"),
    "not an object": (lambda p: p.write_text("[1, 2]"), "not a JSON object"),
    "config edited": (lambda p: _edit(p, lambda d: d["config"].__setitem__("x", 5.0)), "hashes to"),
}


def test_corrupt_files_are_errors_naming_the_file_under_ci(tmp_path, monkeypatch):
    """Each corruption in a results folder of its own, as if each were a test of its own."""
    problems = []
    for i, name in enumerate(sorted(CORRUPTIONS)):
        corrupt, fragment = CORRUPTIONS[name]
        with monkeypatch.context() as m:
            m.setenv("REPRO_RESULTS_DIR", str(tmp_path / "corruptions" / str(i)))
            path = _written()
            corrupt(path)
            try:
                load_result(FileConfig())
            except CorruptResult as err:
                if not re.search(fragment, str(err)):
                    problems.append(f"{name}: {fragment!r} not in the message: {str(err)[:300]}")
                if str(path) not in str(err):
                    problems.append(f"{name}: the message does not name {path}: {str(err)[:300]}")
            except Exception as err:  # noqa: BLE001 - a different error is a failure to list
                problems.append(f"{name}: load_result raised {type(err).__name__} instead of CorruptResult: {err}")
            else:
                problems.append(f"{name}: load_result accepted it")
            m.setenv("CI", "true")
            try:
                run_or_load(FileConfig())
            except CorruptResult:
                pass
            except Exception as err:  # noqa: BLE001 - a different error is a failure to list
                problems.append(f"{name}: run_or_load under CI raised {type(err).__name__} instead of CorruptResult")
            else:
                problems.append(f"{name}: run_or_load under CI accepted it")
    assert not problems, "\n".join(problems)


def test_another_runs_file_copied_over_is_caught():
    mine, other = _written(1.0), _written(2.0)
    shutil.copy(other, mine)
    with pytest.raises(CorruptResult, match="is not the file name"):
        load_result(FileConfig(x=1.0))


def test_outside_ci_a_corrupt_file_is_reported_and_retrained(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    path = _written()
    path.write_text("{")
    CALLS.clear()
    with pytest.warns(RuntimeWarning, match="Retraining"):
        result = run_or_load(FileConfig())
    assert len(CALLS) == 1 and result["best_val_metric"] == 0.1
    assert load_result(FileConfig())["checksum"] == result["checksum"]


def test_verify_results_checks_every_file_of_a_folder(tmp_path, capsys):
    good = _written(1.0)
    bad = _written(3.0)
    _edit(bad, lambda d: d["history"][0].__setitem__("val_metric", 0.5))
    folder = good.parent
    # FileConfig has a line of the runner table (the fixture below), so its stored configs are re-hashed too
    assert verify_results.main([str(folder)]) == 1
    out = capsys.readouterr().out
    assert f"FAILED {bad}" in out and "checksum" in out and "1 passed, 1 failed" in out
    bad.unlink()
    assert verify_results.main([str(folder)]) == 0


def test_committed_results_all_verify():
    """Every file under the checkout's results/ passes (CI also runs the command itself)."""
    root = Path(__file__).resolve().parent.parent / "results"
    classes = verify_results._config_classes()
    files = verify_results.result_files(root)
    assert len(files) > 400
    for path in files:
        verify_results.verify_file(path, classes)


# ------------------------------------------------------------------ weights kept beside results
def test_weights_round_trip_and_refuse_stale_or_damaged_files(tmp_path):
    import warnings

    import torch

    from helpers.core.checkpoint import checksum_path, load_weights, save_weights

    path = tmp_path / "run.weights.ckpt"
    state = {"w": torch.arange(4.0)}
    assert load_weights(path, "abc") is None  # missing: silently None, the caller trains
    save_weights(path, state, "abc")
    assert torch.equal(load_weights(path, "abc")["w"], state["w"])
    with pytest.warns(RuntimeWarning, match="trained by config 'abc'"):
        assert load_weights(path, "other") is None
    raw = bytearray(path.read_bytes())
    raw[-10] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.warns(RuntimeWarning, match="checksum"):
        assert load_weights(path, "abc") is None
    checksum_path(path).unlink()
    with pytest.warns(RuntimeWarning, match="no checksum"):
        assert load_weights(path, "abc") is None
    with pytest.raises(ValueError, match="config_hash"):
        save_weights(path, state, "")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save_weights(path, state, "abc")
        assert load_weights(path, "abc") is not None


def test_a_provenance_precision_other_than_the_configs_is_caught(tmp_path):
    """A result whose provenance says float32 while its config (or the TrainConfig it wraps, as a
    ReLU-ization arm stores it) asks for bf16 fails, named; matching records pass."""
    from helpers.core.result_files import config_precision, find_problems, with_checksum

    assert config_precision({"precision": "bf16"}) == "bf16"
    assert config_precision({"train": {"precision": "bf16"}}) == "bf16"
    assert config_precision({"train": {}}) == config_precision({}) == "float32"
    path = tmp_path / "abc.json"
    data = {
        "config": {"train": {"precision": "bf16"}},
        "config_hash": "abc",
        "status": "ok",
        "provenance": {"precision": "float32"},
    }
    problems = find_problems(path, with_checksum(data), None, "v")
    assert len(problems) == 1 and "'float32'" in problems[0] and "'bf16'" in problems[0]
    data["provenance"]["precision"] = "bf16"
    assert find_problems(path, with_checksum(data), None, "v") == []


def test_a_reluization_arm_reports_its_training_precision():
    from helpers.relu_ization.experiment import reluization_config

    resnet = reluization_config("cifar10_resnet", "gelu", 0, "cpu")
    assert resnet.precision == resnet.train_config().precision == "bf16"
    assert reluization_config("fmnist", "gelu", 0, "smoke").precision == "float32"


def test_strict_reading_reports_every_malformed_entry_and_checks_all_the_others(tmp_path, capsys):
    """A forged value before the original of a duplicate key, a future ``schema_version`` (with a
    valid checksum), a FIFO, a directory, a symlink to /dev/zero, a 5,000-digit integer and an
    oversize file, all named like results: each is reported with what it is, nothing is opened
    that is not a regular file (a FIFO would hang the reader), and the sound file still passes."""
    import os
    import signal

    from helpers.core.result_files import MAX_RESULT_BYTES, OtherFormat, with_checksum

    good = _written(1.0)
    folder = good.parent
    forged = _written(2.0)
    original = json.loads(forged.read_text())["best_val_metric"]
    forged.write_text('{"best_val_metric": 0.99, ' + forged.read_text()[1:])
    assert json.loads(forged.read_text())["best_val_metric"] == original  # plain json keeps the last
    future = _written(4.0)
    data = json.loads(future.read_text())
    data["schema_version"] = 2
    future.write_text(json.dumps(with_checksum(data)))
    os.mkfifo(folder / "fifo.json")
    (folder / "directory.json").mkdir()
    (folder / "zero.json").symlink_to("/dev/zero")
    (folder / "huge_int.json").write_text('{"config": {}, "n": ' + "9" * 5000 + "}")
    with open(folder / "oversize.json", "w") as fh:
        fh.truncate(MAX_RESULT_BYTES + 1)  # sparse: no disk used
    expected = {
        forged: "the key best_val_metric is given twice",
        future: "result format (schema_version) 2, but this code reads format 1",
        folder / "fifo.json": "a FIFO, not a result file; it was not opened",
        folder / "directory.json": "a directory, not a result file",
        folder / "zero.json": "a character device, not a result file",
        folder / "huge_int.json": "a number too large for a result file",
        folder / "oversize.json": "more than any result file",
    }

    def hung(*_):
        raise AssertionError("verify_results opened something that never ends (a FIFO or a device)")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        code = verify_results.main([str(folder)])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    out = capsys.readouterr().out
    lines = {line.split(": ", 1)[0]: line for line in out.splitlines() if line.startswith("FAILED ")}
    missing = [
        f"{path.name}: {phrase}" for path, phrase in expected.items() if phrase not in lines.get(f"FAILED {path}", "")
    ]
    assert code == 1 and not missing, (missing, out)
    assert f"1 passed, {len(expected)} failed" in out
    # a file of another format is not damage: loading it raises, and it is never retrained over
    before = future.read_text()
    CALLS.clear()
    with pytest.raises(OtherFormat, match="update this checkout"):
        run_or_load(FileConfig(x=4.0))
    assert future.read_text() == before and not CALLS


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda h: h[:3] + h[4:],
            "history is not one row per epoch 1, 2, ... in order (epochs [1, 2, 3, 5, 6, 7, 8, 9])",
        ),
        (lambda h: [h[0], *h], "history is not one row per epoch 1, 2, ... in order (epochs [1, 1, 2, 3, 4, 5, 6, 7])"),
        (
            lambda h: [h[1], h[0], *h[2:]],
            "history is not one row per epoch 1, 2, ... in order (epochs [2, 1, 3, 4, 5, 6, 7, 8])",
        ),
        (lambda h: {"1": h[0]}, "history is not one row per epoch 1, 2, ... in order (epochs dict)"),
    ],
)
def test_a_restamped_history_that_is_not_one_row_per_trained_epoch_is_refused(tmp_path, edit, problem):
    """A committed result (20 epochs) whose history rows were cut out, repeated, reordered or reshaped
    and whose checksum was recomputed: verify_results names the file and the problem."""
    from helpers.core.result_files import with_checksum
    from helpers.core.runtime import repo_root

    source = sorted((repo_root() / "results" / "lgelu_adult").glob("*.json"))[0]
    data = json.loads(source.read_text())
    assert data["config"]["epochs"] == 20 and len(data["history"]) == 20
    path = tmp_path / source.name
    path.write_text(json.dumps(with_checksum({**data, "history": edit(data["history"])})))
    with pytest.raises(CorruptResult, match=re.escape(f"{path}: {problem}")):
        verify_results.verify_file(path, verify_results._config_classes())


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda d: {**d, "history": d["history"][:3], "best_epoch": 10},
            "best_epoch 10 is not an epoch of its 3-epoch",
        ),
        (lambda d: {**d, "best_epoch": 0}, "best_epoch 0 is not an epoch"),
        (lambda d: {**d, "best_val_metric": "0.9"}, "best_val_metric '0.9' is not a number"),
        (lambda d: {**d, "best_val_metric": True}, "best_val_metric True is not a number"),
    ],
)
def test_a_restamped_best_epoch_or_metric_that_its_history_cannot_hold_is_refused(tmp_path, edit, problem):
    """From the hostile probe: a history cut to 3 epochs loaded with best_epoch 10, and a string
    metric loaded as a result, once their checksum was recomputed."""
    from helpers.core.result_files import with_checksum
    from helpers.core.runtime import repo_root

    source = sorted((repo_root() / "results" / "lgelu_adult").glob("*.json"))[0]
    data = json.loads(source.read_text())
    path = tmp_path / source.name
    path.write_text(json.dumps(with_checksum(edit(data))))
    with pytest.raises(CorruptResult, match=re.escape(problem)):
        verify_results.verify_file(path, verify_results._config_classes())


def test_verify_results_refuses_a_file_outside_its_experiments_folder_or_without_its_class(tmp_path, capsys):
    """From the probe: a result in another experiment's folder, nested deeper, or restamped without
    its config_class (so its hash went unchecked) passed."""
    from helpers.core.result_files import with_checksum
    from helpers.core.runtime import repo_root

    source = sorted((repo_root() / "results" / "lgelu_adult").glob("*.json"))[0]
    data = json.loads(source.read_text())
    elsewhere = tmp_path / "results" / "srelu_compare" / source.name
    nested = tmp_path / "results" / "lgelu_adult" / "old" / source.name
    for path in (elsewhere, nested):
        path.parent.mkdir(parents=True)
        path.write_text(source.read_text())
    no_class = tmp_path / "results" / "lgelu_adult" / source.name
    config = {k: v for k, v in data["config"].items() if k != "config_class"}
    no_class.write_text(json.dumps(with_checksum({**data, "config": config})))
    assert verify_results.main([str(tmp_path / "results")]) == 1
    out = capsys.readouterr().out
    assert f"FAILED {elsewhere}: a result of experiment 'lgelu_adult' in folder 'srelu_compare'" in out
    assert f"FAILED {nested}: a result of experiment 'lgelu_adult' in folder 'old'" in out
    assert f"FAILED {no_class}: its config names no config_class" in out and "0 passed, 3 failed" in out


@pytest.fixture(autouse=True)
def _runners(monkeypatch):
    """The toy config classes' lines of the runner table, for each test."""
    monkeypatch.setitem(methods.RUNNERS, FileConfig, _run)

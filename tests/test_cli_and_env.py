"""Every CLI has --help and refuses unknown flags; every flag does what its help says; every
boolean environment variable is parsed by the one strict parser."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from helpers.core.env import bool_env, under_ci
from helpers.core.runtime import quiet, repo_root, training_threads

CLI_MODULES = [
    "helpers.protocols",
    "helpers.protocols.retrain",
    "helpers.verify_results",
    "helpers.verify_rerun",
    "helpers.preflight",
]
SCRIPTS = sorted(p.name for p in (repo_root() / "scripts").glob("*.py"))


def _main(module: str) -> Callable:
    if module.startswith("scripts/"):
        path = repo_root() / module
        spec = importlib.util.spec_from_file_location(f"_script_{path.stem}", path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = loaded  # dataclasses look their module up there
        spec.loader.exec_module(loaded)
        return loaded.main
    return importlib.import_module(module).main


ALL_CLIS = CLI_MODULES + [f"scripts/{name}" for name in SCRIPTS]


@pytest.mark.parametrize("module", ALL_CLIS)
def test_every_cli_has_help(module, capsys):
    with pytest.raises(SystemExit) as info:
        _main(module)(["--help"])
    assert info.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("module", ALL_CLIS)
def test_every_cli_refuses_an_unknown_flag(module, capsys):
    positional = ["srelu_delta"] if module == "helpers.protocols" else []  # its required argument
    with pytest.raises(SystemExit) as info:
        _main(module)([*positional, "--no-such-flag"])
    assert info.value.code == 2
    assert "--no-such-flag" in capsys.readouterr().err


def test_protocols_threads_flag_sets_the_training_threads(monkeypatch):
    import helpers.protocols as protocols

    monkeypatch.setenv("REPRO_TRAIN_THREADS", "1")  # restored after the test
    seen = []

    def fake_run_or_load(cfg):
        with training_threads() as n:
            seen.append((n, torch.get_num_threads()))
        return {"best_val_metric": 0.0, "best_epoch": 1}

    monkeypatch.setattr(protocols, "run_or_load", fake_run_or_load)
    protocols.main(["srelu_delta", "--profile", "smoke", "--threads", "2", "--shard", "0/1000"])
    assert seen == [(2, 2)]


@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5"])
def test_retrain_workers_must_be_a_positive_integer(value, capsys):
    from helpers.protocols import retrain

    with pytest.raises(SystemExit) as info:
        retrain.main(["--workers", value])
    assert info.value.code == 2
    assert f"--workers must be a positive integer, got '{value}'" in capsys.readouterr().err


def test_verify_rerun_parses_its_arguments_before_training(monkeypatch):
    import helpers.verify_rerun as verify_rerun

    monkeypatch.setattr(verify_rerun, "cheap_check_configs", lambda: pytest.fail("started retraining"))
    with pytest.raises(SystemExit) as info:
        verify_rerun.main(["--bogus"])
    assert info.value.code == 2


def test_preflight_unknown_dataset_is_a_usage_error(capsys):
    from helpers.preflight import main

    with pytest.raises(SystemExit) as info:
        main(["bogusdataset"])
    assert info.value.code == 2
    assert "unknown dataset 'bogusdataset'" in capsys.readouterr().err


def test_verifying_an_empty_folder_is_an_error(tmp_path, capsys):
    from helpers.verify_results import main

    assert main([str(tmp_path)]) == 1
    assert "nothing was verified" in capsys.readouterr().out


def test_verification_says_what_the_checksum_guards_against(tmp_path, capsys):
    from helpers.verify_results import main

    committed = sorted((repo_root() / "results").rglob("*.json"))
    committed = [p for p in committed if not p.name.endswith(".failed.json")]
    if not committed:
        pytest.skip("no committed results")
    shutil.copy(committed[0], tmp_path / committed[0].name)
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 passed, 0 failed" in out and "not a signature" in out and "git log -p results/" in out


# ------------------------------------------------------------------------ boolean environment variables
def _reader(name: str) -> Callable[[], bool]:
    from helpers.core.data.sources import offline, verification_enabled
    from helpers.core.results_cache import _rerun_requested

    return {
        "CI": under_ci,
        "REPRO_QUIET": quiet,
        "REPRO_RERUN": _rerun_requested,
        "REPRO_OFFLINE": offline,
        "REPRO_VERIFY_DATA": verification_enabled,
    }.get(name, lambda: bool_env(name, False))


BOOL_VARIABLES = [
    "CI",
    "REPRO_QUIET",
    "REPRO_RERUN",
    "REPRO_OFFLINE",
    "REPRO_VERIFY_DATA",
    "REPRO_KEEP_FINAL_WEIGHTS",
    "REPRO_ALLOW_EMULATED_BF16",
    "REPRO_REQUIRE_BROWSER",
]


@pytest.mark.parametrize("name", BOOL_VARIABLES)
@pytest.mark.parametrize("word", ["false", "0", "no", "OFF"])
def test_false_words_mean_off(name, word, monkeypatch):
    for other in ("CI", "REPRO_QUIET"):
        monkeypatch.delenv(other, raising=False)  # quiet() reads both
    monkeypatch.setenv(name, word)
    assert _reader(name)() is False


@pytest.mark.parametrize("name", BOOL_VARIABLES)
def test_unknown_words_name_the_variable_and_the_accepted_words(name, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("REPRO_QUIET", raising=False)
    monkeypatch.setenv(name, "maybe")
    with pytest.raises(ValueError, match=f"{name}='maybe' is not a boolean; use one of 1, true, yes, on"):
        _reader(name)()


def test_ci_false_lets_a_missing_cpu_result_train(monkeypatch):
    """``CI=false`` is a local run: no MissingResult (the run itself is replaced by a stub)."""
    from helpers.core import results_cache
    from helpers.core.runs import TrainConfig

    cfg = TrainConfig(experiment="ci_probe", dataset="adult", model="mlp")
    monkeypatch.setitem(results_cache._RUNNERS, TrainConfig, lambda c, w: {"history": []})
    monkeypatch.setenv("CI", "true")
    with pytest.raises(results_cache.MissingResult):
        results_cache.run_or_load(cfg)
    monkeypatch.setenv("CI", "false")
    assert results_cache.run_or_load(cfg)["status"] == "ok"


#: Variables read as text (paths, names, numbers), each by its own strict reader.
NON_BOOLEAN_VARIABLES = {
    "REPRO_PROFILE",
    "REPRO_RESULTS_DIR",
    "REPRO_CACHE_DIR",
    "REPRO_DATA_DIR",
    "REPRO_KERNELS",
    "REPRO_TRAIN_THREADS",
    "REPRO_WORKERS",
    "REPRO_BOOK_HTML",
}


def test_every_environment_read_goes_through_a_strict_reader():
    """No module reads a variable with ``os.environ.get``/``os.getenv`` except the non-boolean
    ones: a boolean read directly would treat ``CI=false`` as on. (Tests may read back what they set.)"""
    offenders = []
    files = [
        *Path(repo_root() / "helpers").rglob("*.py"),
        *Path(repo_root() / "scripts").glob("*.py"),
        *Path(repo_root() / "benchmarks").rglob("*.py"),
        repo_root() / "tests" / "browser" / "conftest.py",
    ]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            func = ast.unparse(node.func)
            if func in ("os.environ.get", "os.getenv", "environ.get") and isinstance(node.args[0].value, str):
                name = node.args[0].value
                if name.startswith(("REPRO_", "CI")) and name not in NON_BOOLEAN_VARIABLES:
                    offenders.append(f"{path.relative_to(repo_root())}: {name}")
    assert offenders == []

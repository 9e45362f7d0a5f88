"""Every CLI has --help and refuses unknown flags; every flag does what its help says; every
boolean environment variable is parsed by the one strict parser."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from helpers.core.env import bool_env, under_ci
from helpers.core.runtime import quiet, repo_root, training_threads

CLI_MODULES = [
    "tools.run",
    "tools.retrain",
    "tools.verify_results",
    "tools.verify_rerun",
    "tools.preflight",
    "tools.train_distributed",
    "tools.paper_plan",
    "tools.rerun",
]
SCRIPTS = sorted(p.name for p in (repo_root() / "scripts").glob("*.py"))
BENCHMARKS = sorted(f"benchmarks/{p.name}" for p in (repo_root() / "benchmarks").glob("*.py"))


def _main(module: str) -> Callable:
    if module.endswith(".py"):  # a script or a benchmark, run from its path
        path = repo_root() / module
        spec = importlib.util.spec_from_file_location(f"_script_{path.stem}", path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = loaded  # dataclasses look their module up there
        spec.loader.exec_module(loaded)
        return loaded.main
    return importlib.import_module(module).main


#: The positional arguments a CLI requires (an unknown flag must be refused after them).
REQUIRED = {"tools.run": ["srelu_delta"], "tools.rerun": ["some-key"]}
ALL_CLIS = CLI_MODULES + [f"scripts/{name}" for name in SCRIPTS] + BENCHMARKS


def _exit(call: Callable[[], object], capsys) -> tuple[object, str, str]:
    """The exit code a CLI's ``main`` ends with (``None`` when it returns), and what it printed."""
    try:
        call()
        code = None
    except SystemExit as info:
        code = info.code
    out, err = capsys.readouterr()
    return code, out, err


def test_every_cli_has_help(capsys):
    problems = []
    for module in ALL_CLIS:
        code, out, err = _exit(lambda m=module: _main(m)(["--help"]), capsys)
        if code != 0 or "usage:" not in out:
            problems.append(f"{module}: exit {code}, {err[-300:]!r}")
    assert not problems, "\n".join(problems)


def test_every_cli_refuses_an_unknown_flag(capsys):
    problems = []
    for module in ALL_CLIS:
        positional = REQUIRED.get(module, [])
        code, _, err = _exit(lambda m=module, p=positional: _main(m)([*p, "--no-such-flag"]), capsys)
        if code != 2 or "--no-such-flag" not in err:
            problems.append(f"{module}: exit {code}, {err[-300:]!r}")
    assert not problems, "\n".join(problems)


def test_protocols_threads_flag_sets_the_training_threads(monkeypatch):
    import tools.run as protocols

    monkeypatch.setenv("REPRO_TRAIN_THREADS", "1")  # restored after the test
    seen = []

    def fake_run_or_load(cfg):
        with training_threads() as n:
            seen.append((n, torch.get_num_threads()))
        return {"best_val_metric": 0.0, "best_epoch": 1}

    monkeypatch.setattr(protocols, "run_or_load", fake_run_or_load)
    protocols.main(["srelu_delta", "--profile", "smoke", "--threads", "2", "--shard", "0/1000"])
    assert seen == [(2, 2)]


def test_retrain_workers_must_be_a_positive_integer(capsys):
    from tools import retrain

    for value in ["0", "-1", "x", "1.5"]:
        code, _, err = _exit(lambda v=value: retrain.main(["--workers", v]), capsys)
        assert code == 2 and f"--workers must be a positive integer, got '{value}'" in err, (value, err)


def test_retrain_reports_refuse_the_flags_of_how_to_train(capsys):
    from tools import retrain

    for argv in (["--status", "--executor", "slurm"], ["--plan", "--workers", "2"], ["--status", "--nodes", "2"]):
        code, _, err = _exit(lambda a=argv: retrain.main(a), capsys)
        assert code == 2 and f"{argv[1]} choose how runs train; --status and --plan train nothing" in err, (argv, err)


def test_verify_rerun_parses_its_arguments_before_training(monkeypatch):
    import tools.verify_rerun as verify_rerun

    monkeypatch.setattr(verify_rerun, "cheap_check_configs", lambda: pytest.fail("started retraining"))
    with pytest.raises(SystemExit) as info:
        verify_rerun.main(["--bogus"])
    assert info.value.code == 2


def test_preflight_unknown_dataset_is_a_usage_error(capsys):
    from tools.preflight import main

    with pytest.raises(SystemExit) as info:
        main(["bogusdataset"])
    assert info.value.code == 2
    assert "unknown dataset 'bogusdataset'" in capsys.readouterr().err


def test_verifying_an_empty_folder_is_an_error(tmp_path, capsys):
    from tools.verify_results import main

    assert main([str(tmp_path)]) == 1
    assert "nothing was verified" in capsys.readouterr().out


def test_verification_says_what_the_checksum_guards_against(tmp_path, capsys):
    from tools.verify_results import main

    committed = sorted((repo_root() / "results").rglob("*.json"))
    committed = [p for p in committed if not p.name.endswith(".failed.json")]
    if not committed:
        pytest.skip("no committed results")
    (tmp_path / committed[0].parent.name).mkdir()  # a result lies in its experiment's folder
    shutil.copy(committed[0], tmp_path / committed[0].parent.name / committed[0].name)
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 passed, 0 failed" in out and "not a signature" in out and "git log -p results/" in out


# ------------------------------------------------------------------------ boolean environment variables
def _reader(name: str) -> Callable[[], bool]:
    from helpers.core.data.sources import offline, verification_enabled

    return {
        "CI": under_ci,
        "REPRO_QUIET": quiet,
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


def test_false_words_mean_off(monkeypatch):
    for other in ("CI", "REPRO_QUIET"):
        monkeypatch.delenv(other, raising=False)  # quiet() reads both
    on = []
    for name in BOOL_VARIABLES:
        for word in ["false", "0", "no", "OFF"]:
            with monkeypatch.context() as m:
                m.setenv(name, word)
                if _reader(name)() is not False:
                    on.append(f"{name}={word}")
    assert not on, f"read as on: {on}"


def test_unknown_words_name_the_variable_and_the_accepted_words(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("REPRO_QUIET", raising=False)
    for name in BOOL_VARIABLES:
        with monkeypatch.context() as m:
            m.setenv(name, "maybe")
            with pytest.raises(ValueError, match=f"{name}='maybe' is not a boolean; use one of 1, true, yes, on"):
                _reader(name)()


def test_ci_false_lets_a_missing_cpu_result_train(monkeypatch):
    """``CI=false`` is a local run: no MissingResult (the run itself is replaced by a stub)."""
    from helpers import methods
    from helpers.core import results_cache
    from helpers.core.runs import TrainConfig

    cfg = TrainConfig(experiment="ci_probe", dataset="adult", model="mlp")
    monkeypatch.setitem(methods.RUNNERS, TrainConfig, lambda c, w: {"history": []})
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


def _cli_sources() -> list[Path]:
    root = repo_root()
    return [p for d in ("helpers", "tools", "scripts", "benchmarks") for p in (root / d).rglob("*.py")]


def test_every_cli_refuses_a_flag_given_twice(capsys):
    """argparse keeps the last of a repeated flag silently; every CLI refuses it instead."""
    problems = []
    for module in ALL_CLIS:
        positional = REQUIRED.get(module, [])
        code, _, err = _exit(lambda m=module, p=positional: _main(m)([*p, "--help", "--help"]), capsys)
        if code != 2 or "--help given twice" not in err:
            problems.append(f"{module}: exit {code}, {err[-300:]!r}")
    assert not problems, "\n".join(problems)
    code, _, err = _exit(lambda: _main("tools.rerun")(["k", "--seeds", "0", "--seeds=1"]), capsys)
    assert code == 2 and "--seeds given twice (after --seeds)" in err
    code, _, err = _exit(lambda: _main("tools.rerun")(["k", "--see", "0"]), capsys)
    assert code == 2 and "unrecognized arguments: --see" in err  # no abbreviations either


def test_every_flag_has_help_and_nothing_reads_argv_by_hand():
    """Every ``add_argument`` says what the flag does (``help=``); no CLI reads ``sys.argv`` or
    uses ``parse_known_args``, either of which would let an unknown or misspelt flag through."""
    offenders = []
    for path in _cli_sources():
        rel = path.relative_to(repo_root())
        if rel.as_posix() == "tools/cli.py":  # the parser itself reads argv to refuse a repeat
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "parse_known_args":
                offenders.append(f"{rel}:{node.lineno}: parse_known_args")
            if isinstance(node, ast.Attribute) and ast.unparse(node) == "sys.argv":
                offenders.append(f"{rel}:{node.lineno}: sys.argv")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
                and not any(k.arg == "help" for k in node.keywords)
            ):
                offenders.append(f"{rel}:{node.lineno}: add_argument without help=")
    assert offenders == []


def test_benchmark_rounds_must_be_a_positive_integer(capsys):
    problems = []
    for cli in [b for b in BENCHMARKS if b != "benchmarks/activations.py"]:
        for value in ["0", "-1", "x"]:
            code, _, err = _exit(lambda c=cli, v=value: _main(c)(["--rounds", v]), capsys)
            if code != 2 or f"--rounds must be a positive integer, got '{value}'" not in err:
                problems.append(f"{cli} --rounds {value}: exit {code}, {err[-300:]!r}")
    assert not problems, "\n".join(problems)


def test_benchmark_threads_must_be_a_positive_integer(capsys):
    with pytest.raises(SystemExit) as info:
        _main("benchmarks/activations.py")(["--threads", "0"])
    assert info.value.code == 2
    assert "--threads must be a positive integer, got '0'" in capsys.readouterr().err


def test_latency_benchmark_refuses_an_unknown_pair(capsys):
    with pytest.raises(SystemExit) as info:
        _main("benchmarks/relu_ization_latency.py")(["--pairs", "no_such_pair"])
    assert info.value.code == 2
    assert "unknown pair(s) ['no_such_pair']" in capsys.readouterr().err


def _command(cli: str) -> list[str]:
    if cli.endswith(".py"):
        return [sys.executable, str(repo_root() / cli)]
    return [sys.executable, "-m", cli]


#: Run in one fresh interpreter: each entry point as a program (``python -m`` or the file, via
#: runpy with its own argv), so the ``__main__`` wiring is what is tested, at one torch import.
_ENTRY_POINT_PROBE = """
import json, runpy, sys
results = {}
for cli, argv in json.loads(sys.argv[1]):
    sys.argv = [cli, *argv]
    try:
        if cli.endswith(".py"):
            runpy.run_path(cli, run_name="__main__")
        else:
            runpy.run_module(cli, run_name="__main__", alter_sys=True)
        code = None
    except SystemExit as stop:
        code = stop.code
    results.setdefault(cli, []).append(code)
print(json.dumps(results))
"""


@pytest.mark.slow
def test_every_entry_point_passes_its_command_line_to_argparse():
    """Run as a program, each CLI answers ``--help`` (exit 0) and refuses an unknown flag with
    argparse's usage error (exit 2), before any work starts: one subprocess for all of them."""
    calls = []
    for cli in ALL_CLIS:
        positional = REQUIRED.get(cli, [])
        calls += [(cli, ["--help"]), (cli, [*positional, "--no-such-flag"])]
    env = {**os.environ, "REPRO_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _ENTRY_POINT_PROBE, json.dumps(calls)],
        capture_output=True,
        text=True,
        cwd=repo_root(),
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    codes = json.loads(done.stdout.splitlines()[-1])
    wrong = {cli: got for cli, got in codes.items() if got != [0, 2]}
    assert set(codes) == set(ALL_CLIS) and not wrong, (wrong, done.stderr[-3000:])
    assert done.stderr.count("--no-such-flag") >= len(ALL_CLIS)


@pytest.mark.parametrize(("only", "named"), [("srelu,no_such_act", "no_such_act"), (",", "no name given")])
def test_train_distributed_only_refuses_a_name_that_matches_no_activation(only, named, capsys):
    from tools.train_distributed import main

    with pytest.raises(SystemExit) as info:
        main(["srelu_delta", "--profile", "smoke", "--only", only, "--list"])
    assert info.value.code == 2
    assert f"{named} not in srelu_delta's activations" in capsys.readouterr().err


@pytest.mark.parametrize("only", ["", " ", ","])
def test_run_only_refuses_a_value_that_names_no_activation(only, monkeypatch, capsys):
    """``--only ''`` (an unset shell variable) names no activation: refused like ``','``, never
    taken as "all" (which trained every config)."""
    from tools import run

    def no_training(cfg: object) -> None:  # a regression fails here, not after training the grid
        raise AssertionError(f"--only {only!r} was accepted and started {cfg}")

    monkeypatch.setattr(run, "run_or_load", no_training)
    code, _, err = _exit(lambda: run.main(["lgelu_grid", "--profile", "smoke", "--only", only]), capsys)
    assert code == 2 and f"--only {only!r}: no name given not in lgelu_grid's activations" in err


def test_retrain_refuses_a_claim_named_twice_and_two_reports_at_once(capsys):
    from tools import retrain

    first = next(iter(retrain.BATCHES))
    code, _, err = _exit(lambda: retrain.main(["--status", first, first]), capsys)
    assert code == 2 and f"claim {first} given twice" in err
    code, _, err = _exit(lambda: retrain.main(["--status", "--plan"]), capsys)
    assert code == 2 and "--plan and --status are two reports" in err

"""``python -m tools.rerun KEY``: from a report row to its runs, retrained in a scratch
folder, and the row recomputed beside the committed one (never touching ``results/``)."""

import hashlib
from pathlib import Path

import pytest

from helpers.claims import report_claims, report_runs
from helpers.core.run_reads import RunRead, RunReads, note_claim, note_read, watching_runs
from helpers.core.runs import TrainConfig
from helpers.core.runtime import repo_root
from tools import rerun, rerun_runs


@pytest.fixture(autouse=True)
def _committed_results(monkeypatch):
    """These tests read the committed results (the stored report, the runs of a row); the tool
    itself writes only under ``--into``, which the tests point at a temporary folder."""
    monkeypatch.delenv("REPRO_RESULTS_DIR", raising=False)


#: The cheapest run-based row (5 Flex-Act synthetic runs: α = 0 on the Sigmoid task, seconds each).
CHEAP_ROW = "flexact-alpha0-bias"


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _first_key(basis: str) -> str:
    return next(c.key for c in report_claims() if c.basis == basis and c.verdict != "not run here")


@pytest.mark.parametrize("basis, says", [("exact", "exact computation"), ("source", "the source's own numbers")])
def test_a_row_without_runs_is_recomputed_and_shown_beside_the_committed_one(basis, says, capsys):
    key = _first_key(basis)
    assert rerun.main([key]) == 0
    out = capsys.readouterr().out
    assert f"decided by {says}: no runs to retrain" in out
    assert "committed | recomputed" in out and "verdict came back: yes" in out


@pytest.mark.slow
def test_a_run_based_row_reruns_in_the_smoke_profile_resumes_and_leaves_results_alone(tmp_path, capsys):
    committed = repo_root() / "results"
    before = _tree_digest(committed)
    argv = [CHEAP_ROW, "--go", "--profile", "smoke", "--into", str(tmp_path / "scratch"), "--workers", "1"]
    assert rerun.main(argv) == 0
    out = capsys.readouterr().out
    assert "5 runs" in out and "training 5 runs" in out and "(0 already there)" in out
    lines = out.splitlines()
    table = lines[lines.index(next(line for line in lines if "committed | smoke rerun" in line)) :]
    fields = [line.split()[0] for line in table[1:6]]
    assert fields == ["our", "effect", "CI", "n", "verdict"]
    assert any(line.startswith("verdict came back: ") for line in table)
    assert "says nothing about the claim" in out
    assert (tmp_path / "scratch" / "smoke" / "flexact_synthetic").is_dir()
    # again on two seeds: the runs are found in the scratch folder (nothing trains) and the row is
    # computed on those two alone, the others hidden rather than missing
    assert rerun.main([*argv, "--seeds", "0,1"]) == 0
    out = capsys.readouterr().out
    assert "training 0 runs" in out and "computed on seeds 0,1 only" in out
    assert next(line for line in out.splitlines() if line.startswith("n ")).endswith("| 2 seeds")
    assert _tree_digest(committed) == before


def test_each_row_lists_exactly_the_runs_it_is_computed_from():
    runs = report_runs()
    assert len(runs[CHEAP_ROW]) == 5  # α = 0 on the Sigmoid task, 5 seeds: not Table 1's 175 runs
    # a ReLU-ization row reads its own arms (the GELU network and its swap), not its pair's five
    assert {r["experiment"] for r in runs["reluization-fmnist-gelu-swap-cost"]} == {"reluization_fmnist"}
    assert len(runs["reluization-fmnist-gelu-swap-cost"]) * 2 == len(runs["reluization-fmnist-gelu-int8-cost"])
    # a latency row: the two timed networks of its pair
    assert len(runs["reluization-latency-gpt-same-speed-float32"]) == 2
    # Fig. 3's vision row: the vision pairs' runs only
    assert {r["experiment"] for r in runs["lambda-gelu-fig3-rho-vision"]} == {
        "lgelu_fmnist",
        "lgelu_cifar10_resnet",
        "lgelu_tinyimagenet_deit",
    }


def test_a_smoke_rerun_cuts_the_method_options_too():
    from helpers.srelu.dpo_experiment import DPOOptions, dpo_configs

    cfg = rerun_runs.smoke_config(dpo_configs("cpu")[0])
    dpo = cfg.option(DPOOptions)
    assert (cfg.profile, cfg.epochs, cfg.n_train) == ("smoke", 2, rerun_runs.SMOKE_LIMITS["n_train"])
    assert (dpo.train_pairs, dpo.val_pairs, dpo.dpo_steps) == (32, 16, 4)  # from 400, 400, 100
    assert dpo.dpo_betas == (0.1, 2.0, 5.0)  # what it runs is kept, only how much is cut


def test_listing_names_the_runs_and_their_recorded_cost(capsys):
    assert rerun.main([CHEAP_ROW]) == 0
    out = capsys.readouterr().out
    assert "5 runs" in out and "core-hours as recorded" in out
    assert "ground_truth=sigmoid, method=flexact, alpha=0.0" in out and "seed 0, 1, 2, 3, 4" in out
    assert f"python -m tools.rerun {CHEAP_ROW} --go" in out


def test_an_unknown_key_names_the_nearest_keys(capsys):
    assert rerun.main(["srelu-beats-every-othr"]) == 2
    err = capsys.readouterr().err
    assert "no report row has the key 'srelu-beats-every-othr'" in err and "srelu-beats-every-other-vit" in err


def test_the_scratch_folder_cannot_be_the_committed_results(capsys):
    assert rerun.main([CHEAP_ROW, "--go", "--into", str(repo_root() / "results" / "x")]) == 2
    assert "inside the committed results" in capsys.readouterr().err


def test_bf16_runs_on_a_cpu_without_native_bf16_are_refused_before_anything_trains(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(rerun_runs, "bf16_is_native_on", lambda device: False)
    key = next(k for k, runs in report_runs().items() if any(r["precision"] == "bf16" for r in runs))
    config = TrainConfig(experiment="t", dataset="cifar10", model="resnet18", precision="bf16")
    bf16_run = RunRead(config, {"config_hash": "x", "train_seconds": 60.0})
    monkeypatch.setattr(rerun, "committed_runs", lambda claim: [bf16_run])  # no recompute needed
    monkeypatch.setattr(rerun, "run_many", lambda *a, **k: pytest.fail("started training"))
    assert rerun.main([key, "--go", "--into", str(tmp_path)]) == 2
    assert "train in bf16" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_bad_seeds_are_an_argparse_error(capsys):
    with pytest.raises(SystemExit):
        rerun.main([CHEAP_ROW, "--seeds", "0,x"])
    assert "--seeds must be seeds separated by commas" in capsys.readouterr().err


def test_seeds_the_row_does_not_have_are_refused(capsys):
    """From the probe: a seed outside the row listed "0 of N runs" and exited 0, and with --go
    ended in a traceback."""
    assert rerun.main([CHEAP_ROW, "--seeds", "999"]) == 2
    assert "--seeds 999: not a seed of" in capsys.readouterr().err


def test_every_decided_run_based_row_has_its_runs_and_no_other_row_does():
    runs = report_runs()
    for claim in report_claims():
        decided = claim.basis == "runs" and claim.verdict != "not run here"
        assert bool(runs.get(claim.key)) == decided, claim.key


class _Row:
    basis, verdict = "runs", "confirmed"

    def __init__(self, key: str) -> None:
        self.key = key


class _Cfg:
    def __init__(self, name: str) -> None:
        self.name = name


def _load(name: str) -> None:
    note_read(_Cfg(name), {"config_hash": name})


def _build(key: str) -> None:
    note_claim(_Row(key))


def _own_loader() -> None:
    _load("c")
    _build("own")


def _family() -> None:
    _load("a")
    _load("b")
    _build("family-1")
    _build("family-2")
    _own_loader()


def test_a_row_gets_the_runs_read_below_the_innermost_function_of_its_stack_that_read_any():
    with watching_runs() as watch:
        _family()
    assert isinstance(watch, RunReads)
    found = {key: [r.result["config_hash"] for r in reads] for key, reads in watch.runs_by_key().items()}
    assert found == {"family-1": ["a", "b", "c"], "family-2": ["a", "b", "c"], "own": ["c"]}

"""Committed paper-profile results take over the report rows they decide, family by family.

``conftest.py`` points ``REPRO_RESULTS_DIR`` at a fresh folder per test, so each test writes the
(fake but verified) results it needs and nothing else is committed there.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.core.claim import Claim
from helpers.core.profiles import clear_decided_profiles, decided_profile, profile_rows
from helpers.experiments import config_dict, store_result
from helpers.flexact import protocol as FC
from helpers.lambda_gelu import claims as lgelu_claims
from helpers.methods import CLAIM_SOURCES
from helpers.relu_ization import claims as relu_claims
from helpers.srelu import claims as srelu_claims

_PROBS = [[0.2, 0.3, 0.2, 0.15, 0.15], [0.1, 0.5, 0.2, 0.1, 0.1]]  # the Flex-Act layer ends on Sigmoid
_R18 = ("flexact-resnet18-matches", "flexact-fallback-to-relu")


@pytest.fixture(autouse=True)
def _fresh_decisions():
    clear_decided_profiles()
    yield
    clear_decided_profiles()


def _fake_result(cfg) -> dict:
    """A verified-shape result: two epochs of validation accuracy, Flex-Act's record when it has one."""
    acc = (0.70 if cfg.penultimate_activation else 0.71) + 0.001 * cfg.seed
    flex = cfg.penultimate_activation == "flexact"
    history = []
    for i, a in enumerate([acc * 0.9, acc]):
        row = {"epoch": i + 1, "train_loss": 2.0 - 0.1 * i, "val_loss": 1.5, "val_metric": a}
        if flex:
            row["tau"] = 0.5
            row["flexact"] = {
                "penultimate": {
                    "probs": _PROBS[i],
                    "grad_norms": [8.0, 1.7, 5.1, 8.0, 8.0],
                    "pseudo_probs": [0.15, 0.33, 0.22, 0.15, 0.15],
                }
            }
        history.append(row)
    best = int(np.argmax([r["val_metric"] for r in history]))
    return {
        "config": config_dict(cfg),
        "history": history,
        "best_epoch": best + 1,
        "best_val_metric": history[best]["val_metric"],
        "higher_is_better": True,
        "n_params": 10,
        "status": "ok",
        "data_source": "fake",
    }


def _flexact_rows() -> list[Claim]:
    """Flex-Act's rows as the report collects them (through ``helpers.methods``)."""
    clear_decided_profiles()  # results were written since the last answer
    method = next(m for m in CLAIM_SOURCES if m.package == "flexact")
    return method.claims()


def test_a_family_switches_to_paper_only_when_all_its_paper_runs_are_committed():
    paper = FC.table2_configs("paper")
    assert len(paper) > 1 and all(c.profile == "paper" for c in paper)
    before = _flexact_rows()
    by_key = {c.key: c for c in before}
    assert all(by_key[k].profile == "cpu" and by_key[k].verdict == "not run here" for k in _R18)

    for cfg in paper[:-1]:
        store_result(cfg, _fake_result(cfg))
    partial = {c.key: c for c in _flexact_rows()}
    # one paper run missing: the family stays on cpu, never a mix of profiles
    assert all(partial[k].profile == "cpu" and partial[k].verdict == "not run here" for k in _R18)

    store_result(paper[-1], _fake_result(paper[-1]))
    after = _flexact_rows()
    taken = {c.key: c for c in after}
    assert all(taken[k].profile == "paper" for k in _R18)
    assert taken["flexact-resnet18-matches"].verdict == "contradicted"  # 1 point worse on every seed
    assert "seed 0: sigmoid" in taken["flexact-fallback-to-relu"].our_value
    # the other families (Table 1, the readings) have no paper runs here: untouched
    others = [k for k in by_key if k not in _R18 and k != "flexact-resnet34-matches"]
    assert others and all(taken[k] == by_key[k] for k in others)
    # the report keeps its rows, keys and order
    assert [c.key for c in after] == [c.key for c in before]


def test_decided_profile_reads_verified_results_and_caches_per_family():
    calls = []

    def configs(profile: str) -> list:
        calls.append(profile)
        return FC.table2_configs(profile)[:2]

    assert decided_profile("two_runs", configs) == "cpu"
    for cfg in configs("paper"):
        store_result(cfg, _fake_result(cfg))
    assert decided_profile("two_runs", configs) == "cpu"  # the answer is cached for the process
    clear_decided_profiles()
    assert decided_profile("two_runs", configs) == "paper"
    assert set(calls) == {"paper"}  # only the paper runs are asked for
    assert decided_profile("no_paper_runs", lambda profile: []) == "cpu"


@pytest.mark.parametrize(
    ("family", "configs", "error"),
    [("", FC.table2_configs, ValueError), (None, FC.table2_configs, ValueError), ("x", "lgelu_grid", TypeError)],
)
def test_decided_profile_rejects_bad_input(family, configs, error):
    with pytest.raises(error, match="decided_profile"):
        decided_profile(family, configs)


def test_profile_rows_counts_the_decided_run_rows_of_each_profile():
    def row(key: str, profile: str, verdict: str = "inconclusive") -> Claim:
        return Claim(
            key=key,
            claim=key,
            source="S, Table 1",
            paper_value="1",
            our_value="1" if verdict != "not run here" else "—",
            profile=profile,
            scale="",
            verdict=verdict,  # type: ignore[arg-type]
            notebook="notebooks/31_flexact_cifar",
        )

    theory = row("t", "theory", "confirmed")
    not_run = row("n", "paper", "not run here")  # decided by nothing: not counted
    assert profile_rows([theory, not_run, row("a", "cpu"), row("b", "cpu")]) == {"cpu": 2}
    assert profile_rows([theory, not_run]) == {}
    three = [row("a", "paper"), row("b", "cpu"), row("c", "cpu")]
    assert list(profile_rows(three).items()) == [("cpu", 2), ("paper", 1)]
    assert list(profile_rows([row("a", "paper"), row("b", "cpu")])) == ["cpu", "paper"]  # a tie: by name


def _only(family: str):
    """A stand-in for ``decided_profile`` under which only ``family`` has all its paper runs."""
    return lambda name, configs: "paper" if name == family else "cpu"


@pytest.mark.parametrize(
    ("module", "collect", "family", "switched"),
    [
        (
            lgelu_claims,
            lgelu_claims.experiment_claims,
            "lgelu_csweep",
            {"lambda-gelu-fig2-drift-c", "lambda-gelu-fig2-bvs-small"},
        ),
        (
            lgelu_claims,
            lgelu_claims.experiment_claims,
            "lgelu_grid",
            {"lambda-gelu-fig1-drift-t", "lambda-gelu-fig1-drift-c", "lambda-gelu-fig1-bvs-close"},
        ),
        (srelu_claims, srelu_claims.experiment_claims, "srelu_dpo", {"srelu-dpo-stand-in"}),
        (
            srelu_claims,
            srelu_claims.experiment_claims,
            "srelu_delta",
            {"srelu-table4-best-delta", "srelu-table4-large-delta-drop"},
        ),
        (relu_claims, relu_claims.claims, "reluization_fmnist", {"reluization-fmnist-not-run"}),
    ],
)
def test_each_family_switches_alone(monkeypatch, module, collect, family, switched):
    cpu = collect()
    monkeypatch.setattr(module, "decided_profile", _only(family))
    mixed = collect()
    assert [c.key for c in mixed] == [c.key for c in cpu]  # these families keep their keys at paper scale
    changed = {c.key for c, b in zip(mixed, cpu) if c.profile != b.profile}
    assert changed == switched and all(c.profile == "paper" for c in mixed if c.key in switched)

"""The S-ReLU Table 3 stand-in: config validation, a smoke run end to end, pairing by seed."""

import pytest
from refusals import refusal_fault

from helpers.experiments import run_or_load
from helpers.srelu.dpo_experiment import DPOOptions, dpo_config, dpo_configs
from helpers.srelu.paper import APPENDIX_H_DELTA


def test_configs_pair_gelu_and_srelu_by_seed():
    configs = dpo_configs("cpu")
    assert [(c.activation, c.seed) for c in configs] == [(a, s) for s in (0, 1, 2) for a in ("gelu", "srelu")]
    assert all(c.activation_kwargs == ({"delta": APPENDIX_H_DELTA} if c.activation == "srelu" else {}) for c in configs)
    dpo = configs[0].option(DPOOptions)
    assert dpo.dpo_betas == (0.1, 2.0, 5.0) and set(dpo.families) == {"swap", "corrupt"}
    assert len(dpo_configs("smoke")) == 2 and dpo_configs("paper")[0].model_kwargs["dim"] == 768


def test_bad_configs_are_rejected():
    bad_configs = [
        ({"activation": "relu"}, "activation"),
        ({"dpo_betas": ()}, "dpo_betas"),
        ({"dpo_betas": (0.1, -2.0)}, "dpo_betas"),
        ({"dpo_betas": None, "dpo_steps": 5}, "dpo_betas"),  # None: no DPO, so the other fields are refused
        ({"families": ("shuffle",)}, "families"),
        ({"dpo_steps": 0}, "dpo_steps"),
        ({"dpo_lr": float("nan")}, "dpo_lr"),
        ({"prompt_len": 60}, "block_size"),
        ({"dpo_batch": 500}, "dpo_batch"),
        ({"seed": -1}, "seed"),
        ({"profile": "gpu"}, "profile"),
    ]
    base = {"profile": "cpu", "activation": "gelu", "seed": 0}
    problems = [
        fault
        for kw, match in bad_configs
        if (
            fault := refusal_fault(
                f"dpo_config({', '.join(f'{k}={v!r}' for k, v in kw.items())})",
                lambda: dpo_config(**{**base, **kw}),
                ValueError,
                match,
            )
        )
    ]
    assert not problems, "\n".join(problems)


def test_dpo_options_belong_to_the_gpt_on_tiny_shakespeare():
    from helpers.core.runs import TrainConfig

    with pytest.raises(ValueError, match="not model 'mlp' on 'adult'"):
        TrainConfig(experiment="t", dataset="adult", model="mlp", options=(DPOOptions(dpo_betas=(0.1,)),))


def test_smoke_run_records_pretraining_dpo_and_table3_metrics(require_dataset):
    require_dataset("tinyshakespeare")
    cfg = dpo_configs("smoke")[1]
    dpo = DPOOptions(**{**cfg.option(DPOOptions).__dict__, "dpo_betas": (0.1, 5.0), "families": ("corrupt",)})
    cfg = cfg.with_options(dpo)
    result = run_or_load(cfg)
    assert result["history"] and result["pretrain_val_loss"] > 0
    assert "substitution" not in result  # the DPO grid, not Table II's test of the pre-trained model
    assert set(result["dpo"]) == {"corrupt/beta=0.1", "corrupt/beta=5"}
    run = result["dpo"]["corrupt/beta=5"]
    assert len(run["train_loss"]) == len(run["grad_norm"]) == dpo.dpo_steps
    val = run["val"]
    assert val["n_pairs"] == dpo.val_pairs and 0 <= val["preference_accuracy"] <= 1
    assert val["reward_margin"] == pytest.approx(val["chosen_reward"] - val["rejected_reward"], abs=1e-5)
    assert "srelu" in result["provenance"]["backends"]  # S-ReLU ran, natively or eagerly
    pre_steps = len(result["history"]) * -(-cfg.n_train // cfg.batch_size)
    assert result["provenance"]["optimizer_steps"] == pre_steps + 2 * dpo.dpo_steps  # 2 DPO settings


def test_gelu_and_srelu_of_a_seed_start_from_the_same_weights():
    import torch

    from helpers.core.runs import _activation
    from helpers.models import build_model

    gelu, srelu = dpo_configs("smoke")
    states = []
    for cfg in (gelu, srelu):
        torch.manual_seed(cfg.seed)
        model = build_model(
            "gpt", act=_activation(cfg.activation, cfg.activation_kwargs), vocab_size=65, **cfg.model_kwargs
        )
        states.append(model.state_dict())
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])


# ------------------------------------------------------------------------------ analysis
def _fake_result(activation: str, seed: int, shift: float) -> dict:
    runs = {}
    for family in ("swap", "corrupt"):
        for beta in (0.1, 2.0):
            chosen, rejected = 0.1 * beta + shift, -0.1 * beta - shift
            runs[f"{family}/beta={beta:g}"] = {
                "grad_norm": [1.0, 0.5],
                "train_loss": [0.69, 0.6],
                "val": {
                    "chosen_reward": chosen + 0.01 * seed,
                    "rejected_reward": rejected,
                    "reward_margin": chosen + 0.01 * seed - rejected,
                    "preference_accuracy": 0.6 + shift / 10,
                    "n_pairs": 400,
                },
            }
    return {"config": {"activation": activation, "seed": seed}, "dpo": runs, "pretrain_val_loss": 2.0}


def test_claims_pair_by_seed_and_follow_the_claimed_direction():
    from helpers.srelu.dpo_analysis import claims, metrics_frame, paired_table, summary_table

    results = [_fake_result(a, s, 0.05 if a == "srelu" else 0.0) for s in range(3) for a in ("gelu", "srelu")]
    frame = metrics_frame(results)
    assert len(frame) == 6 * 4 and set(frame.family) == {"swap", "corrupt"}
    table = paired_table(frame)
    chosen = table[(table.metric == "chosen reward") & (table.family == "swap") & (table.beta == 0.1)]
    assert chosen["S-ReLU − GELU"].item() == pytest.approx(0.05)  # identical per-seed offsets: exact
    rows = {c.claim: c for c in claims(results)}
    by = lambda s: [c for k, c in rows.items() if s in k]  # noqa: E731
    assert all(c.verdict == "confirmed" for c in by("higher chosen reward"))
    assert all(c.verdict == "confirmed" for c in by("a lower rejected reward"))  # S-ReLU's is lower here
    assert all(c.n for c in by("Table 3 stand-in"))
    assert by("paper's own numbers")[0].verdict == "contradicted"
    assert "±" in summary_table(frame).iloc[0, 0]


def test_one_seed_is_inconclusive_not_an_error():
    from helpers.srelu.dpo_analysis import claims

    results = [_fake_result(a, 0, 0.05 if a == "srelu" else 0.0) for a in ("gelu", "srelu")]
    assert all(c.verdict == "inconclusive" for c in claims(results, "smoke") if "stand-in" in c.claim)


def test_accuracy_fractions_and_gpt2_size():
    from helpers.srelu.dpo_analysis import accuracy_as_fraction, gpt2_small_parameters, paper_accuracy_fractions

    assert accuracy_as_fraction(0.5938) == (19, 32) and accuracy_as_fraction(0.5156) == (33, 64)
    assert accuracy_as_fraction(0.5080, max_denominator=64) is None
    assert accuracy_as_fraction(0.5) == (1, 2)
    table = paper_accuracy_fractions()
    assert table.loc[(0.1, "gelu"), "simplest fraction"] == "17/32"
    assert gpt2_small_parameters() == 124_439_808  # GPT-2 small with a tied head

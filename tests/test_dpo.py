"""DPO: log 2 and zero rewards at initialisation, a hand-computed case, gradients to the policy
only, the continuation's log-probability against a direct sum, and invalid inputs."""

import math

import pytest
import torch
from refusals import refusal_fault

from helpers.models import GPT
from helpers.srelu.dpo import DPOBatch, continuation_logprob, dpo_loss, dpo_step_outputs, frozen_reference


def _gpt(seed: int = 0) -> GPT:
    torch.manual_seed(seed)
    return GPT(12, block_size=16, layers=1, dim=8, heads=2)


def _batch(seed: int = 1) -> DPOBatch:
    g = torch.Generator().manual_seed(seed)
    return DPOBatch(
        prompt=torch.randint(0, 12, (3, 5), generator=g),
        chosen=torch.randint(0, 12, (3, 4), generator=g),
        rejected=torch.randint(0, 12, (3, 4), generator=g),
    )


def test_at_initialisation_the_loss_is_log2_and_every_reward_is_zero():
    policy = _gpt()
    out = dpo_step_outputs(policy, frozen_reference(policy), _batch(), beta=0.1)
    assert out.loss.item() == pytest.approx(math.log(2), abs=1e-6)
    assert torch.equal(out.chosen_rewards, torch.zeros(3)) and torch.equal(out.rejected_rewards, torch.zeros(3))
    m = out.metrics()
    assert m["reward_margin"] == 0 and m["preference_accuracy"] == 0  # ties are not preferences


def test_hand_computed_case():
    # β = 2; pair 1: policy favours chosen by +0.5 nats over the reference, rejected −0.25
    out = dpo_loss(
        torch.tensor([-1.0, -3.0]),
        torch.tensor([-2.25, -1.0]),
        torch.tensor([-1.5, -3.0]),
        torch.tensor([-2.0, -2.0]),
        beta=2.0,
    )
    assert out.chosen_rewards.tolist() == [1.0, 0.0]
    assert out.rejected_rewards.tolist() == [-0.5, 2.0]
    margins = [1.5, -2.0]
    expected = sum(-math.log(1 / (1 + math.exp(-m))) for m in margins) / 2
    assert out.loss.item() == pytest.approx(expected, rel=1e-6)
    m = out.metrics()
    assert m["chosen_reward"] == pytest.approx(0.5) and m["rejected_reward"] == pytest.approx(0.75)
    assert m["reward_margin"] == pytest.approx(-0.25) and m["preference_accuracy"] == 0.5


def test_large_margins_stay_finite():
    out = dpo_loss(torch.tensor([0.0]), torch.tensor([-1e4]), torch.tensor([0.0]), torch.tensor([0.0]), beta=5.0)
    assert out.loss.item() == 0.0
    out = dpo_loss(torch.tensor([-1e4]), torch.tensor([0.0]), torch.tensor([0.0]), torch.tensor([0.0]), beta=5.0)
    assert out.loss.item() == pytest.approx(5e4)


def test_gradients_flow_only_to_the_policy():
    policy = _gpt()
    reference = frozen_reference(policy)
    with torch.no_grad():  # make the two differ so the loss is not at its symmetric point
        for p in policy.parameters():
            p.add_(0.05 * torch.randn_like(p))
    out = dpo_step_outputs(policy, reference, _batch(), beta=2.0)
    out.loss.backward()
    assert all(p.grad is not None for p in policy.parameters())
    assert any(p.grad.abs().sum() > 0 for p in policy.parameters())
    assert all(p.grad is None and not p.requires_grad for p in reference.parameters())
    assert not reference.training


def test_continuation_logprob_is_the_sum_of_next_token_logprobs():
    model = _gpt().eval()
    batch = _batch()
    got = continuation_logprob(model, batch.prompt, batch.chosen)
    expected = torch.zeros(3)
    for i in range(batch.chosen.shape[1]):  # token by token, recomputing the prefix each time
        prefix = torch.cat([batch.prompt, batch.chosen[:, :i]], dim=1)
        logp = torch.log_softmax(model(prefix)[:, -1], dim=-1)
        expected += logp.gather(1, batch.chosen[:, i : i + 1]).squeeze(1)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_beta_must_be_positive_and_finite():
    z = torch.zeros(2)
    problems = [
        fault
        for beta in [0, -1.0, float("nan"), float("inf"), True, "0.1"]
        if (fault := refusal_fault(f"beta={beta!r}", lambda: dpo_loss(z, z, z, z, beta), ValueError, "beta"))
    ]
    assert not problems, "\n".join(problems)


def test_mismatched_logprob_shapes_are_rejected():
    with pytest.raises(ValueError, match="same shape"):
        dpo_loss(torch.zeros(2), torch.zeros(3), torch.zeros(2), torch.zeros(2), 0.1)


#: One bad batch per row: the fields that replace a good batch's, the error and what its message must contain.
BAD_BATCHES = [
    ({"prompt": torch.zeros(3, 5)}, TypeError, "prompt must be a 2-D tensor of token ids"),
    ({"chosen": torch.zeros(3, dtype=torch.long)}, TypeError, "chosen"),
    ({"rejected": torch.zeros(3, 5, dtype=torch.long)}, ValueError, "must share"),
    ({"prompt": torch.zeros(2, 5, dtype=torch.long)}, ValueError, "must share"),
    ({"prompt": torch.zeros(3, 0, dtype=torch.long)}, ValueError, "at least one"),
]


def _shapes(kw: dict) -> str:
    return ", ".join(f"{k}={v.dtype} {tuple(v.shape)}" for k, v in kw.items())


def test_bad_batches_are_rejected():
    good = dict(
        prompt=torch.zeros(3, 5, dtype=torch.long),
        chosen=torch.zeros(3, 4, dtype=torch.long),
        rejected=torch.zeros(3, 4, dtype=torch.long),
    )
    problems = [
        fault
        for kw, exc, match in BAD_BATCHES
        if (fault := refusal_fault(_shapes(kw), lambda: DPOBatch(**{**good, **kw}), exc, match))
    ]
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------- preference pairs
from helpers.srelu.dpo import preference_pairs, split_stream  # noqa: E402

STREAM = torch.randint(0, 20, (2_000,), generator=torch.Generator().manual_seed(7))


@pytest.mark.parametrize("family", ["swap", "corrupt"])
def test_pairs_are_deterministic_and_shaped(family):
    kw = dict(n_pairs=8, prompt_len=12, continuation_len=6, family=family, vocab_size=20)
    a, b = preference_pairs(STREAM, seed=3, **kw), preference_pairs(STREAM, seed=3, **kw)
    assert torch.equal(a.prompt, b.prompt) and torch.equal(a.rejected, b.rejected)
    assert a.prompt.shape == (8, 12) and a.chosen.shape == a.rejected.shape == (8, 6)
    assert not torch.equal(a.prompt, preference_pairs(STREAM, seed=4, **kw).prompt)
    # every chosen continuation is the true text right after its prompt
    text = STREAM.tolist()
    for p, c in zip(a.prompt.tolist(), a.chosen.tolist()):
        starts = [i for i in range(len(text) - 18) if text[i : i + 12] == p]
        assert any(text[s + 12 : s + 18] == c for s in starts)
    assert (a.rejected != a.chosen).any(dim=1).all()


def test_corrupt_changes_exactly_n_characters_and_swap_takes_another_window():
    corrupt = preference_pairs(
        STREAM, n_pairs=8, prompt_len=12, continuation_len=6, family="corrupt", vocab_size=20, seed=0, n_corrupt=2
    )
    assert ((corrupt.rejected != corrupt.chosen).sum(dim=1) == 2).all()
    swap = preference_pairs(STREAM, n_pairs=8, prompt_len=12, continuation_len=6, family="swap", vocab_size=20, seed=0)
    assert torch.equal(swap.rejected, swap.chosen.roll(1, dims=0))


def test_split_stream_does_not_overlap():
    train, val = split_stream(STREAM, 0.5)
    assert train.numel() + val.numel() == STREAM.numel() and torch.equal(torch.cat([train, val]), STREAM)


#: One bad request per row: the arguments that replace a good request's, and what the ValueError must contain.
BAD_PAIR_REQUESTS = [
    ({"family": "shuffle"}, "family"),
    ({"n_pairs": 0}, "n_pairs"),
    ({"n_pairs": 1000}, "non-overlapping"),
    ({"family": "swap", "n_pairs": 1}, "n_pairs >= 2"),
    ({"n_corrupt": 7}, "n_corrupt"),
    ({"vocab_size": 10}, r"token ids must lie in \[0, 10\)"),
    ({"seed": -1}, "seed"),
]


def test_bad_pair_requests_are_rejected():
    args = dict(n_pairs=4, prompt_len=12, continuation_len=6, family="corrupt", vocab_size=20, seed=0)
    faults = [
        refusal_fault(
            ", ".join(f"{k}={v!r}" for k, v in kw.items()),
            lambda: preference_pairs(STREAM, **{**args, **kw}),
            ValueError,
            match,
        )
        for kw, match in BAD_PAIR_REQUESTS
    ]
    faults.append(
        refusal_fault("a float stream", lambda: preference_pairs(STREAM.float(), **args), TypeError, "1-D tensor")
    )
    problems = [fault for fault in faults if fault]
    assert not problems, "\n".join(problems)

"""helpers.core.findings: the "What this page finds" lines, readable setup tables, intro headlines."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from helpers.core import findings as F
from helpers.core.claim import Claim


def _claims() -> list[Claim]:
    return [
        Claim(
            "Lipschitz constant of GELU",
            "S-ReLU paper, Fact 1",
            "1.084",
            "1.12890",
            "theory",
            "exact",
            "contradicted",
            "notebooks/04_x",
            anchor="lip-claims",
            key="findings-claim-1",
        ),
        Claim(
            "S-ReLU' on -δ < x < δ",
            "S-ReLU paper, App. F",
            "1/2 + 3*x/(4*delta)",
            "1/2 + 3*x/(4*delta)",
            "theory",
            "exact",
            "confirmed",
            "notebooks/04_x",
            anchor="lip-claims",
            key="findings-claim-2",
        ),
        Claim(
            "margin over ReLU",
            "S-ReLU paper, Table 1",
            "+5.9 points",
            "-0.1 points",
            "cpu",
            "small",
            "contradicted",
            "notebooks/21_x",
            key="findings-claim-3",
        ),
        Claim(
            "FLOPs",
            "GELU blog, section 'Honest Limitations'",
            "3-4×",
            "",
            "theory",
            "exact",
            "not run here",
            "notebooks/01_x",
            key="findings-claim-4",
        ),
    ]


def test_findings_markdown_lists_both_values_and_links_the_section():
    text = F.findings_markdown(F.page_claims(_claims(), "04_x"), ["findings-claim-1", "findings-claim-2"])
    assert text.startswith("**2 claims: 1 confirmed, 1 contradicted.**")
    assert "- **contradicted**: Lipschitz constant of GELU. Ours: 1.12890; the paper: 1.084." in text
    assert "{ref}`details <lip-claims>`" in text
    assert "``1/2 + 3*x/(4*delta)``" in text  # a formula as code, not emphasis


def test_select_claims_picks_one_per_verdict_without_keys():
    claims = _claims()
    auto = F.select_claims(claims, max_items=3)
    assert [c.verdict for c in auto] == ["contradicted", "confirmed", "not run here"]  # one per verdict first


def test_not_run_here_names_the_post_and_escapes_markdown():
    line = F.finding_line(_claims()[3])
    assert "The post: 3-4×; not run here." in line
    assert F.md_escape("a*b_[c]$") == r"a\*b\_\[c\]\$"


def test_readable_values_and_setup_frame():
    assert F.readable_value({"dim": 48, "depth": 4}) == "dim 48, depth 4"
    assert F.readable_value(None) == "—" and F.readable_value(0.00025) == "0.00025"
    assert F.readable_value([1, 2]) == "1, 2"

    @dataclass
    class Cfg:
        model_kwargs: dict
        lr: float
        n_train: int | None

    frame = F.setup_frame(
        {"paper": Cfg({"dim": 192}, 2.5e-4, None), "cpu": Cfg({"dim": 48}, 1e-3, 2000)},
        ["model_kwargs", "lr", "n_train"],
    )
    assert frame.loc["model settings", "cpu"] == "dim 48"
    assert frame.loc["training samples", "paper"] == "—"


def test_headline_values_and_verdict_tally():
    claims = _claims()
    assert F.headline_values(F.find_claim_by_key(claims, "findings-claim-1")) == {
        "paper": "the paper 1.084",
        "ours": "1.12890",
        "verdict": "contradicted",
    }
    assert F.verdict_tally(claims) == {
        "confirmed": 1,
        "contradicted": 1,
        "contradicted at our scale": 1,
        "not run here": 1,
    }


def test_a_finding_of_the_book_itself_shows_no_source_value():
    own = Claim(
        "MLP: annealed λ-GELU → ReLU matches ReLU",
        "This book (beyond the papers), ReLU-ization",
        "hypothesis of this book",
        "83.99 vs 83.74",
        "cpu",
        "small",
        "inconclusive",
        "notebooks/40_x",
        key="findings-claim-5",
    )
    line = F.finding_line(own, link=False)
    assert line.endswith("Ours: 83.99 vs 83.74 (the book's own finding).") and "the paper" not in line
    missing = Claim(
        "ViT: ReLU-ization",
        "This book (beyond the papers), ReLU-ization",
        "hypothesis",
        "–",
        "cpu",
        "",
        "not run here",
        "notebooks/41_x",
        key="findings-claim-6",
    )
    assert F.finding_line(missing, link=False).endswith("Not run here.")


def test_a_page_finds_its_claims_by_key_in_the_order_it_lists_them():
    claims = _claims()
    assert F.find_claim_by_key(claims, "findings-claim-3") is claims[2]
    with pytest.raises(KeyError, match="no claim has the key 'findings-claim-9'"):
        F.find_claim_by_key(claims, "findings-claim-9")
    assert F.select_claims(claims, keys=["findings-claim-4", "findings-claim-1"]) == [claims[3], claims[0]]
    with pytest.raises(KeyError, match="no claim has the keys"):
        F.select_claims(claims, keys=["absent-key"])
    assert F.select_claims(claims, keys=["absent-key", "findings-claim-2"], strict=False) == [claims[1]]
    text = F.findings_markdown(F.page_claims(claims, "04_x"), keys=["findings-claim-2"])
    assert "- **confirmed**: S-ReLU' on" in text and "Lipschitz" not in text


def test_a_rows_own_result_reads_from_its_own_fields():
    run = Claim(
        "a beats b",
        "P, Table 1",
        "+1",
        "+0.5",
        "cpu",
        "small",
        "inconclusive",
        "notebooks/20_x",
        key="toy-run",
        effect="+0.5 points",
        ci="95% [-0.2, +1.2]",
        n="3 pairs of runs",
        mde="1.4 points",
    )
    assert F.claim_parts(run) == (F.ClaimPart("", "+0.5 points", "95% [-0.2, +1.2]", "3 pairs of runs", "1.4 points"),)
    assert F.ours_text(run) == "+0.5 points, 95% [-0.2, +1.2] (3 pairs of runs; MDE 1.4 points)"
    missing = Claim(
        "a beats b",
        "P",
        "+1",
        "—",
        "cpu",
        "",
        "not run here",
        "notebooks/20_x",
        key="toy-missing",
        note="results are not stored",
    )
    assert F.claim_parts(missing) == ()
    assert F.ours_text(missing) == "—"
    margin = dataclasses.replace(run, mde="margin 0.3 points for 80 % non-inferiority power")
    assert F.ours_text(margin).endswith("(3 pairs of runs; margin 0.3 points for 80 % non-inferiority power)")


def test_a_claim_judged_in_parts_states_each_part_with_its_own_interval():
    parts = Claim(
        "s beats r on both",
        "P",
        "+1",
        "x",
        "cpu",
        "small",
        "contradicted",
        "notebooks/21_x",
        key="toy-parts",
        effect="ViT: -0.1 points; CNN: +0.3 points",
        ci="ViT: 95% [-0.5, +0.3]; CNN: 95% [-0.1, +0.7]",
        n="ViT: 3 pairs of runs; CNN: 5 pairs of runs",
        mde="ViT: 0.5 points; CNN: 0.6 points",
    )
    assert [p.label for p in F.claim_parts(parts)] == ["ViT", "CNN"]
    cnn = F.ClaimPart("CNN", "+0.3 points", "95% [-0.1, +0.7]", "5 pairs of runs", "0.6 points")
    assert F.claim_parts(parts)[1] == cnn
    assert F.ours_text(parts) == (
        "ViT: -0.1 points, 95% [-0.5, +0.3] (3 pairs of runs; MDE 0.5 points); "
        "CNN: +0.3 points, 95% [-0.1, +0.7] (5 pairs of runs; MDE 0.6 points)"
    )
    one_label = dataclasses.replace(parts, effect="S-ReLU − GELU: +0.003 points", ci="95% [-0.2, +0.2]")
    assert [p.label for p in F.claim_parts(one_label)] == [""]  # fields not all split alike: one part

"""Every claim has a stable key: the committed fixture's keys are all still in the report, once
each and in report order. Adding claims is fine: rewrite the fixture with
``python scripts/claim_keys_fixture.py --write``. Removing or renaming a key breaks the pages that
read it; change them in the same commit and say why in the commit message."""

import json

import pytest

from helpers.core.claim import Claim, claim_key, key_part


def test_every_claim_keeps_its_key_once_and_in_report_order(monkeypatch, script):
    # the report as the book builds it: the committed cpu-profile results (claims only load them)
    monkeypatch.delenv("REPRO_RESULTS_DIR")
    monkeypatch.setenv("REPRO_PROFILE", "cpu")
    fixture = script("claim_keys_fixture")
    expected = json.loads(fixture.FIXTURE.read_text())
    found = fixture.problems(expected, fixture.current())
    assert found == [], f"{found}; if you added claims, update the fixture: {fixture.HOW_TO_UPDATE}"


def test_the_check_reports_a_lost_key_a_duplicate_and_a_new_order_but_not_a_new_key(script):
    problems = script("claim_keys_fixture").problems
    assert problems(["a", "b"], ["a", "new", "b"]) == []
    assert problems(["a", "b"], ["a"]) == ["key gone: 'b'"]
    assert problems(["a", "b"], ["a", "b", "a"]) == ["duplicate key 'a' (2 claims)"]
    assert problems(["a", "b"], ["b", "a"]) == ["the listed keys are no longer in report order"]


def _claim(key: object) -> Claim:
    return Claim(
        claim="c",
        source="s",
        paper_value="1",
        our_value="1",
        profile="theory",
        scale="",
        verdict="confirmed",
        notebook="notebooks/x",
        key=key,
    )  # type: ignore[arg-type]


def test_a_claim_needs_a_lower_case_slug_as_key():
    assert _claim("srelu-table4-best-delta").key == "srelu-table4-best-delta"
    for bad in ("", "Srelu", "srelu_delta", "srelu--delta", "-srelu", "4-srelu", None):
        with pytest.raises(ValueError, match="key must be a lower-case slug"):
            _claim(bad)
    with pytest.raises(TypeError, match="key"):
        Claim(
            claim="c",
            source="s",
            paper_value="1",
            our_value="1",
            profile="theory",
            scale="",  # type: ignore[call-arg]
            verdict="confirmed",
            notebook="notebooks/x",
        )


def test_a_key_built_in_a_loop_joins_its_identifiers_as_slug_parts():
    assert claim_key("lambda-gelu-table1", "cifar10_resnet") == "lambda-gelu-table1-cifar10-resnet"
    assert claim_key("srelu-delta", 0.001) == "srelu-delta-0-001"
    assert key_part("ResNet-18/CIFAR10") == "resnet-18-cifar10"
    with pytest.raises(ValueError, match="needs a letter or digit"):
        key_part("δ")
    with pytest.raises(ValueError, match="not a lower-case slug"):
        claim_key("Srelu", "x")


def test_a_page_reads_the_reports_claim_by_key_and_glues_its_box(monkeypatch):
    import helpers.claims as app

    toy = (
        _claim("toy-first"),
        Claim(
            claim="d",
            source="s",
            paper_value="1",
            our_value="2",
            profile="theory",
            scale="",
            verdict="contradicted",
            notebook="notebooks/y",
            key="toy-second",
        ),
    )
    monkeypatch.setattr(app, "report_claims", lambda: toy)
    glued = {}
    monkeypatch.setattr(app, "glue_values", lambda **values: glued.update(values))
    assert app.claim("toy-second") is toy[1]
    with pytest.raises(KeyError, match="no claim has the key"):
        app.claim("toy-third")
    app.findings_box("x", ["toy-first"], extra="- one more line")
    body = glued["findings"].data
    assert (
        body.startswith("**1 claim: 1 confirmed.**") and body.endswith("- one more line") and "contradicted" not in body
    )
    with pytest.raises(KeyError, match="no claims on page"):
        app.findings_box("z")
    app.findings_box("z", when_empty="No committed results yet.")
    assert glued["findings"].data == "No committed results yet."

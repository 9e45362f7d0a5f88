"""The stored report (:func:`helpers.claims.report_claims`): computed once per set of inputs, read
everywhere, never read stale. The inputs here are a temporary copy of ``helpers/`` and of a result
folder, with a toy claims source standing in for the book's (the real one takes a minute)."""

import json
import shutil
from pathlib import Path

import pytest

import helpers.claims as app
from helpers import methods
from helpers.core.claim import claim_from_dict, claim_to_dict
from helpers.core.report import Claim


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """A checkout of ``helpers/`` and one result file in ``tmp_path``, whose claims function is a
    source file of the copy: the report is what that file says, computed by counting calls."""
    root = tmp_path / "checkout"
    shutil.copytree(Path(app.__file__).parent, root / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    results = tmp_path / "results"
    (results / "toy").mkdir(parents=True)
    (results / "toy" / "a.json").write_text('{"value": 1}')
    claims_file = root / "helpers" / "toy_claims.py"
    claims_file.write_text("VERDICT = 'confirmed'\n")
    calls = []

    def toy_claims():
        calls.append(1)
        verdict = claims_file.read_text().split("'")[1]  # what the copy's claims function decides
        return [
            Claim(
                key="toy-claim",
                claim="toy",
                source="Toy paper",
                paper_value="1",
                our_value="1",
                profile="theory",
                scale="exact",
                verdict=verdict,
                notebook="notebooks/00_toy",
            )
        ]

    monkeypatch.setattr(app, "repo_root", lambda: root)
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(results))
    monkeypatch.setattr(methods, "CLAIM_SOURCES", (methods.Method("toy", "Toy", toy_claims),))
    monkeypatch.setattr(app, "_MEMO", {})
    return claims_file, results, calls


def test_the_report_is_computed_once_then_read(copy, monkeypatch):
    _, _, calls = copy
    first = app.report_claims()
    assert len(calls) == 1 and app.store_path().is_file()
    monkeypatch.setattr(app, "_MEMO", {})  # a new process: only the file on disk is left
    assert app.report_claims() == first and len(calls) == 1


def test_an_edited_claims_function_is_recomputed_not_read_stale(copy, monkeypatch):
    claims_file, _, calls = copy
    assert app.report_claims()[0].verdict == "confirmed"
    stale = app.store_path()
    claims_file.write_text("VERDICT = 'contradicted'\n")  # same size, new content
    monkeypatch.setattr(app, "_MEMO", {})
    assert app.store_path() != stale
    assert app.report_claims()[0].verdict == "contradicted" and len(calls) == 2


def test_an_edited_result_or_a_damaged_store_is_recomputed(copy, monkeypatch):
    _, results, calls = copy
    app.report_claims()
    (results / "toy" / "a.json").write_text('{"value": 2}')
    monkeypatch.setattr(app, "_MEMO", {})
    app.report_claims()
    assert len(calls) == 2
    app.store_path().write_text('{"format": 1, "claims": [{"key"')  # half a file, as a crash leaves it
    monkeypatch.setattr(app, "_MEMO", {})
    assert app.report_claims()[0].key == "toy-claim" and len(calls) == 3
    assert json.loads(app.store_path().read_text())["claims"][0]["key"] == "toy-claim"


def test_a_stored_row_is_the_computed_row_field_by_field(committed_claims):
    # compared as JSON text: a comparison with no p-value holds NaN, which is not equal to itself
    assert any(claim.design for claim in committed_claims)
    for claim in committed_claims:
        text = json.dumps(claim_to_dict(claim))
        back = claim_from_dict(json.loads(text))
        assert back == claim and json.dumps(claim_to_dict(back)) == text, claim.key
        assert all(isinstance(part.comparison.values_a, tuple) for part in back.design if part.comparison)

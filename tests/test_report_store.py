"""The stored report (:func:`helpers.claims.report_claims`): computed once per set of inputs, read
everywhere, never read stale. The inputs here are a temporary copy of ``helpers/`` and of a result
folder, with a toy claims source standing in for the book's (the real one takes a minute)."""

import json
import shutil
from pathlib import Path

import pytest

import helpers.claims as app
from helpers import methods
from helpers.core.claim import Claim, claim_from_dict, claim_to_dict


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


def test_a_store_of_another_format_is_recomputed_and_old_stores_are_pruned(copy, monkeypatch):
    _, results, calls = copy
    app.report_claims()
    path = app.store_path()
    path.write_text(json.dumps({"format": app.STORE_FORMAT + 1, "claims": []}))
    monkeypatch.setattr(app, "_MEMO", {})
    assert len(app.report_claims()) == 1 and len(calls) == 2
    monkeypatch.setattr(app, "STORE_KEEP", 1)
    (results / "toy" / "a.json").write_text('{"value": 3}')
    monkeypatch.setattr(app, "_MEMO", {})
    app.report_claims()
    assert list(path.parent.glob("report-*.json")) == [app.store_path()]


def test_a_store_that_cannot_be_written_leaves_no_temporary_file(copy, monkeypatch):
    def full_disk(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(app.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        app.report_claims()
    assert not list(app.store_path().parent.glob("*.tmp"))


def test_a_page_reads_its_section_and_an_unknown_page_is_named(copy):
    (row,) = app.section_claims("00_toy")
    assert row.key == "toy-claim" and app.claim("toy-claim") == row
    assert list(app.claims_frame([row], ["claim", "verdict"]).iloc[0]) == ["toy", "confirmed"]
    with pytest.raises(KeyError, match="no claims on page '01_none'"):
        app.section_claims("01_none")
    with pytest.raises(KeyError, match="section 'elsewhere'"):
        app.section_claims("00_toy", "elsewhere")


def test_the_downloads_hold_every_row_with_its_key_and_builder(copy, tmp_path):
    import csv

    csv_path, json_path = app.write_downloads(tmp_path / "downloads")
    (row,) = list(csv.DictReader(csv_path.open()))
    (record,) = json.loads(json_path.read_text())
    assert list(row) == list(app.DOWNLOAD_COLUMNS) == list(record)
    assert row["key"] == record["key"] == "toy-claim" and row["verdict"] == "confirmed"
    # the toy's builder is a local function of the fixture, so the row names it after its caller
    assert row["decided_by"] == record["decided_by"] == "helpers.claims.collect_claims > copy.<locals>.toy_claims"

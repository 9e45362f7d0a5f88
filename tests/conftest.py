"""Shared pytest setup: results and caches go to temporary folders, never into the checkout."""

import pytest


@pytest.fixture(autouse=True)
def _isolated_results(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("REPRO_QUIET", "1")
    monkeypatch.delenv("REPRO_RERUN", raising=False)
    yield

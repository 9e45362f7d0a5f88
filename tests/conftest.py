"""Shared pytest setup: results and caches go to temporary folders, never into the checkout.

The methods register their activations and run extensions with the core when ``helpers.methods``
is imported (the public modules import it); tests that use ``helpers.core`` directly get them too.
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest
import torch

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One intra-op thread per pytest-xdist worker (there is one worker per core), so that workers
    # do not oversubscribe the cores with OpenMP threads. Training runs set their own count
    # (helpers.core.runtime.training_threads, default 1).
    torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _isolated_results(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("REPRO_QUIET", "1")
    monkeypatch.delenv("REPRO_RERUN", raising=False)
    yield


@pytest.fixture
def require_dataset():
    """``require_dataset("adult")`` skips the test when the dataset cannot be read offline
    (the README's commands point ``REPRO_DATA_DIR`` at the project's mirror, so CI has them)."""

    def need(name: str) -> None:
        from helpers.core.data import available

        if not available(name):
            pytest.skip(f"{name} not found: set REPRO_DATA_DIR to the offline mirror (shared/data)")

    return need


@pytest.fixture(scope="session")
def committed_claims():
    """Every claim of the report from the committed results: the stored report
    (:func:`helpers.claims.report_claims`), computed at most once for the whole run and shared with
    nbval and the book build; for tests that read the claims and never change what they depend on."""
    from helpers.claims import report_claims

    return list(report_claims())


@pytest.fixture(scope="session")
def script():
    """A module of ``scripts/`` by name (they are scripts, not a package): ``script("check_toc")``."""

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parent.parent / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up in sys.modules
        spec.loader.exec_module(module)
        return module

    return load

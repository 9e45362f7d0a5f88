"""λ-GELU's run-based claims are built one function per claim key (one per pair for a table's
rows): each function's docstring names the key(s) it makes, and the family functions list them all.
Checked on the rows without results ("not run here"), which need no committed run."""

import re

import pytest

from helpers.lambda_gelu import claims, grid_claims, table1_claims, table2_claims
from helpers.lambda_gelu.protocol import table1_pairs

MODULES = (grid_claims, table1_claims, table2_claims)


def _claim_functions() -> dict[str, object]:
    return {
        f"{m.__name__}.{name}": fn
        for m in MODULES
        for name, fn in vars(m).items()
        if name.endswith("_claim") and callable(fn) and getattr(fn, "__module__", "") == m.__name__
    }


def _documented_keys(fn: object) -> list[re.Pattern]:
    """The keys a docstring names in double backquotes, ``<pair>`` standing for a pair's slug."""
    names = re.findall(r"``(lambda-gelu-[a-z0-9<>-]+)``", fn.__doc__ or "")
    return [re.compile(re.escape(n).replace(re.escape("<pair>"), "[a-z0-9-]+") + r"\Z") for n in names]


def _not_run_rows(profile: str) -> list:
    return [
        *(grid_claims.fig1_drift_claim(axis, None, profile) for axis in "tc"),
        grid_claims.fig1_bvs_close_claim(False, profile),
        grid_claims.fig2_drift_c_claim(None, profile),
        grid_claims.fig2_bvs_small_claim(None, profile),
        *table1_claims.table1_claims(False, profile),
        *table2_claims.table2_claims(None, None, profile),
    ]


def test_every_claim_function_names_its_keys_in_its_docstring():
    functions = _claim_functions()
    assert len(functions) >= 12, sorted(functions)
    for name, fn in functions.items():
        assert _documented_keys(fn), f"{name}'s docstring names no claim key"


@pytest.mark.parametrize("profile", ["cpu", "paper"])
def test_each_row_comes_from_the_one_function_that_documents_its_key(profile):
    patterns = {name: _documented_keys(fn) for name, fn in _claim_functions().items()}
    rows = _not_run_rows(profile)
    for row in rows:
        makers = [name for name, ps in patterns.items() if any(p.match(row.key) for p in ps)]
        assert len(makers) == 1, f"{row.key} is documented by {makers or 'no function'}"
    for name, ps in patterns.items():
        for p in ps:
            assert any(p.match(row.key) for row in rows), f"{name} documents {p.pattern} but no row has it"


def test_rows_without_results_are_not_run_here_and_one_per_pair_for_the_tables():
    rows = _not_run_rows("cpu")
    assert {r.verdict for r in rows if r.profile != "any"} == {"not run here"}
    keys = [r.key for r in rows]
    assert len(keys) == len(set(keys))
    parity = [k for k in keys if k.startswith("lambda-gelu-table1-bvs-parity-")]
    drops = [k for k in keys if k.startswith("lambda-gelu-table2-annealing-drop-")]
    assert len(parity) == len(drops) == len(table1_pairs("cpu"))


def test_the_entry_point_lists_the_families_in_report_order(monkeypatch):
    # no committed results anywhere: every family is "not run", so the order is the functions' alone
    monkeypatch.setattr(claims, "_committed", lambda name, profile: None)
    assert [c.key for c in claims.experiment_claims("cpu")] == [c.key for c in _not_run_rows("cpu")]


def test_a_fig1_trend_runs_along_t_or_c_only():
    with pytest.raises(ValueError, match="axis must be one of \\['c', 't'\\], got 'lam'"):
        grid_claims.fig1_drift_claim("lam", None, "cpu")

"""The ReLU-ization pair's claims are built one per function, each named after the claim it makes,
so a newcomer finds a row's code from its key and adds a row as one function and one call."""

from __future__ import annotations

import ast
import inspect
import re

from helpers.relu_ization import claims as C

_CLAIM_FUNCTION = re.compile(r"^_(?P<name>[a-z0-9_]+)_claim$")


def _claim_functions() -> dict[str, object]:
    return {
        name: fn
        for name, fn in vars(C).items()
        if inspect.isfunction(fn) and fn.__module__ == C.__name__ and _CLAIM_FUNCTION.match(name)
    }


def test_each_claim_function_docstring_starts_with_the_key_suffix_it_makes():
    functions = _claim_functions()
    assert len(functions) >= 12
    for name, fn in functions.items():
        suffix = _CLAIM_FUNCTION.match(name)["name"].replace("_", "-")  # type: ignore[index]
        expected = "regions-<arm>" if suffix == "regions" else suffix
        doc = inspect.getdoc(fn) or ""
        assert doc.startswith(f"{expected}:"), f"{name}: docstring {doc[:40]!r} should start with {expected!r}:"
        assert f'"{suffix}"' in inspect.getsource(fn) or suffix == "regions", f"{name} does not make key {suffix!r}"


def test_the_row_table_lists_every_claim_function_and_none_nests_a_function():
    listed = {getattr(build, "func", build).__name__ for build, _, _ in C._ROWS}
    assert set(_claim_functions()) == listed
    module = ast.parse(inspect.getsource(C))
    for fn in (n for n in module.body if isinstance(n, ast.FunctionDef)):
        nested = [n.name for n in ast.walk(fn) if isinstance(n, ast.FunctionDef) and n is not fn]
        assert not nested, f"{fn.name} defines nested functions {nested}"


def test_the_perplexity_margin_is_derived_from_relu_at_the_scale_judged():
    """A scaled baseline: the same 2 % of ReLU from scratch's perplexity at every scale (0.25 was
    2 % of 12.5 and is 4.9 % of 5.07); an accuracy keeps its absolute half point."""
    import pandas as pd
    import pytest

    def rows(relu: list[float]) -> pd.DataFrame:
        return pd.DataFrame({"arm": ["relu"] * len(relu) + ["gelu"], "value": [*relu, 99.0]})

    assert C.matches_margin(rows([5.0, 5.14]), False)[0] == pytest.approx(0.10)
    assert C.matches_margin(rows([12.5, 12.5]), False)[0] == pytest.approx(0.25)
    margin, how = C.matches_margin(rows([5.0, 5.14]), False)
    assert how == "±0.1 perplexity: 2% of ReLU from scratch's 5.07 at this scale"
    assert C.matches_margin(rows([90.0]), True) == (0.5, "±0.5 points of accuracy (absolute: a rate's resolution)")
    with pytest.raises(ValueError, match="no ReLU-from-scratch perplexity"):
        C.matches_margin(rows([])[lambda f: f["arm"] != "relu"], False)

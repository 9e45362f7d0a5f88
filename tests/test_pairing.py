"""One seed-pairing function, with the policy named at each call."""

import pytest

from helpers.core.pairing import common_seeds, pair_by_seed
from helpers.core.statistics import paired_comparison


def test_require_equal_pairs_equal_seed_sets_and_names_the_seeds_that_differ():
    a, b = pair_by_seed({0: 1.0, 1: 2.0}, {1: 5.0, 0: 4.0}, policy="require_equal")
    assert list(a) == list(b) == [0, 1] and b == {0: 4.0, 1: 5.0}
    with pytest.raises(ValueError, match=r"only in a: \[2\], only in b: \[3\]"):
        pair_by_seed({0: 1.0, 2: 1.0}, {0: 1.0, 3: 1.0}, policy="require_equal")


def test_intersection_keeps_the_shared_seeds_and_may_keep_none():
    a, b = pair_by_seed({0: 1.0, 1: 2.0, 2: 3.0}, {2: 6.0, 1: 5.0, 7: 0.0}, policy="intersection")
    assert list(a) == list(b) == [1, 2] and list(b.values()) == [5.0, 6.0]
    assert pair_by_seed({0: 1.0}, {1: 1.0}, policy="intersection") == ({}, {})


def test_subset_restricts_b_to_the_seeds_of_a_and_refuses_a_missing_one():
    a, b = pair_by_seed(
        {("tanh", 0): 1.0, ("tanh", 1): 2.0}, {("tanh", 1): 4.0, ("tanh", 0): 3.0, ("tanh", 2): 0.0}, policy="subset"
    )
    assert list(a) == list(b) == [("tanh", 0), ("tanh", 1)]
    with pytest.raises(ValueError, match=r"no run for seeds \[5\]"):
        pair_by_seed({0: 1.0, 5: 1.0}, {0: 1.0, 1: 1.0}, policy="subset")


def test_shared_or_unpaired_pairs_on_shared_seeds_and_keeps_arms_whole_without_them():
    gelu = {0: 0.84, 1: 0.83, 2: 0.85, 3: 0.80, 4: 0.86}
    a, b = pair_by_seed({2: 0.853, 0: 0.845, 1: 0.835}, gelu, policy="shared_or_unpaired")
    assert list(a) == list(b) == [2, 0, 1] and b == {2: 0.85, 0: 0.84, 1: 0.83}
    assert pair_by_seed({7: 1.0, 0: 2.0}, gelu, policy="shared_or_unpaired") == ({7: 1.0, 0: 2.0}, gelu)


def test_common_seeds_are_those_every_arm_has_in_the_first_arms_order():
    assert common_seeds({3: 0, 1: 0, 2: 0}, {1: 0, 2: 0, 3: 0}, {2: 0, 3: 0}) == [3, 2]
    assert common_seeds({1: 0, 0: 0}) == [1, 0]
    assert common_seeds({0: 0}, {1: 0}) == []


def test_an_unknown_policy_is_an_error():
    with pytest.raises(ValueError, match="policy must be one of"):
        pair_by_seed({0: 1.0}, {0: 1.0}, policy="closest")  # type: ignore[arg-type]


def test_a_paired_comparison_requires_equal_seeds():
    with pytest.raises(ValueError, match="same seeds in both arms"):
        paired_comparison({0: 1.0, 1: 2.0}, {0: 1.0, 2: 2.0})

"""The decisive-scale retrain list (helpers.protocols.retrain) and the switches it drives."""

from __future__ import annotations

import pytest

from helpers.core.results_cache import config_hash
from helpers.lambda_gelu import protocol as lgelu
from helpers.protocols import retrain


def test_every_claim_is_seed_major_and_has_no_duplicate_run():
    for claim in retrain.CLAIMS.values():
        configs = claim.configs()
        seeds = [c.seed for c in configs]
        assert seeds == sorted(seeds), claim.key
        assert len({config_hash(c) for c in configs}) == len(configs), claim.key


def test_switched_pairs_run_their_decisive_configs():
    for pair in lgelu.SWITCHED_TO_DECISIVE:
        assert lgelu.PAIRS[pair].scale("cpu") is lgelu.DECISIVE_CPU[pair]
        page = {config_hash(c) for c in lgelu.table1_configs("cpu", (pair,)) + lgelu.table2_configs("cpu", (pair,))}
        decisive = {config_hash(c) for c in lgelu.decisive_table1_configs(pair) + lgelu.decisive_table2_configs(pair)}
        assert page == decisive
    # the figures keep the scale of their committed runs
    assert lgelu.figure_scale("fmnist", "cpu") is lgelu.EARLIER_CPU["fmnist"]


def test_the_grid_page_runs_claim_e():
    assert lgelu.GRID_EVERY_SEED
    page = {config_hash(c) for c in lgelu.grid_configs("cpu")}
    assert page == {config_hash(c) for c in retrain.CLAIMS["e"].configs()}


def test_unknown_claims_are_refused():
    with pytest.raises(SystemExit, match="unknown claim z"):
        retrain.main(["z", "--status"])


def test_switched_srelu_models_run_their_decisive_configs_and_table4_keeps_its_runs():
    from helpers.srelu import protocol as srelu

    for model in srelu.SWITCHED_TO_DECISIVE:
        page = {config_hash(c) for c in srelu.compare_configs("cpu", model)}
        assert page == {config_hash(c) for c in srelu.decisive_compare_configs(model)}
    for model in set(srelu.SCALES) - set(srelu.SWITCHED_TO_DECISIVE):
        assert srelu.SCALES[model]["cpu"] is srelu.EARLIER_CPU[model]
    assert srelu.table4_scale("cpu") is srelu.EARLIER_CPU["vit"]

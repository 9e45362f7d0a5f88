"""The results cache under its public name (DESIGN.md: ``helpers.experiments.run_or_load``).

Everything lives in :mod:`helpers.core.results_cache`; this module re-exports it for notebooks,
tests and benchmarks.
"""

# The modules that register a runner for each config class of the book, imported for that effect:
# ``run_or_load`` with any of these configs works (and a wrong argument's error lists them all)
# without the caller first importing the module that defines the runner.
import helpers.core.runs  # noqa: F401  TrainConfig
import helpers.flexact.synthetic  # noqa: F401  FlexActSyntheticConfig
import helpers.relu_ization.experiment  # noqa: F401  ReluizationConfig
import helpers.srelu.dpo_experiment  # noqa: F401  DPOConfig
from helpers.core.results_cache import (
    CODE_VERSION,
    MissingResult,
    RunFailed,
    compute_time,
    config_dict,
    config_hash,
    default_workers,
    field_defaults,
    hash_payload,
    load_result,
    register_runner,
    registered_config_classes,
    result_path,
    run_many,
    run_or_load,
    store_result,
    write_json_atomic,
)

__all__ = [
    "CODE_VERSION", "MissingResult", "RunFailed", "compute_time", "config_dict", "config_hash",
    "default_workers", "field_defaults", "hash_payload", "load_result", "register_runner",
    "registered_config_classes", "result_path", "run_many", "run_or_load", "store_result",
    "write_json_atomic",
]

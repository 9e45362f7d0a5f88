"""The results cache under its public name (``helpers.experiments.run_or_load``, public API).

Re-exported from :mod:`helpers.core.results_cache`, where it lives.
"""

from helpers.core.result_files import write_json_atomic
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
    registered_config_classes,
    result_path,
    run_many,
    run_or_load,
    runner_of,
    store_result,
)

__all__ = [
    "CODE_VERSION",
    "MissingResult",
    "RunFailed",
    "compute_time",
    "config_dict",
    "config_hash",
    "default_workers",
    "field_defaults",
    "hash_payload",
    "load_result",
    "runner_of",
    "registered_config_classes",
    "result_path",
    "run_many",
    "run_or_load",
    "store_result",
    "write_json_atomic",
]

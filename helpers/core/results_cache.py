"""Cached experiment runs: ``run_or_load(config)``.

A *config* is a frozen dataclass with at least ``experiment`` (results subfolder) and ``profile``;
the plain table ``helpers.methods.RUNNERS`` pairs its class with a *runner* returning a JSON-able
dict, stored atomically in ``results/<experiment>/<hash>.json`` (hash of the full config plus :data:`CODE_VERSION`).
Rules (helpers/README.md, "Results cache"): ``REPRO_RERUN=1`` (or deleting the file) retrains; under
CI a missing **cpu**-profile result is an error, never a silent multi-hour retrain (smoke runs are
cheap and allowed); a failed or NaN run goes to ``.failed.json`` and raises :class:`RunFailed`.
"""

from __future__ import annotations

import heapq
import json
import multiprocessing
import os
import signal
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from helpers.core import provenance
from helpers.core.device import DEVICE_ENV, local_gpus, worker_devices
from helpers.core.options import (  # noqa: F401 (re-exported: the cache's key is part of its interface)
    CODE_VERSION,
    OPTIONS_FIELD,
    config_dict,
    config_hash,
    field_defaults,
    hash_payload,
    result_path,
)
from helpers.core.registry import catalog
from helpers.core.result_files import (
    CorruptResult,
    OtherFormat,
    find_problems,
    json_safe,
    remove_if_empty,
    remove_stale_temp_files,
    with_checksum,
    write_json_atomic,
)
from helpers.core.run_reads import (  # noqa: F401 (re-exported: reading a run's result is the cache's interface)
    has_result,
    load_result,
    load_results,
)
from helpers.core.runtime import (
    bool_env,
    current_profile,
    interactive_stderr,
    positive_int_env,
    progress,
    results_root,
    under_ci,
)
from helpers.core.validation import Rule, check_value, integer, number

Runner = Callable[[Any, Path], dict]


def _init_worker(devices: tuple[str, ...], next_slot: Any) -> None:
    """A :func:`run_many` worker's start: on several GPUs, take the next worker's device
    (:func:`helpers.core.device.worker_devices`). Nothing to import first: a run reads the book's
    tables where it uses them (:func:`helpers.core.registry.catalog`)."""
    if devices:
        with next_slot.get_lock():
            slot, next_slot.value = next_slot.value, next_slot.value + 1
        os.environ[DEVICE_ENV] = devices[slot % len(devices)]


class RunFailed(RuntimeError):
    """A run diverged (NaN/Inf loss) or crashed; its record is kept as failed."""


class MissingResult(RuntimeError):
    """A cpu-profile result is not committed and this process may not retrain it."""


_TRAIN_HERE = "Run the notebook locally with REPRO_PROFILE=cpu and commit results/, or set REPRO_RERUN=1 to train here."


def runner_of(config: Any) -> Runner:
    """The function that trains ``config``: its class's line of ``helpers.methods.RUNNERS``."""
    runners = catalog().RUNNERS
    if type(config) not in runners:
        raise TypeError(
            f"run_or_load needs a run config (a dataclass with a runner), got {type(config).__name__}; known: "
            f"{', '.join(c.__name__ for c in runners)} (the table helpers.methods.RUNNERS)"
        )
    return runners[type(config)]


def registered_config_classes() -> dict[str, type]:
    """Config classes with a runner, by class name (the ``config_class`` of a stored config)."""
    return {cls.__name__: cls for cls in catalog().RUNNERS}


def store_result(config: Any, result: dict) -> Path:
    """Write a successful ``result`` computed outside :func:`run_or_load` (imports, tests) as
    ``config``'s cached result (missing keys and the checksum filled in); return its path."""
    if not isinstance(result, dict):
        raise TypeError(f"store_result takes a result dict, got {type(result).__name__}")
    record = {"config": config_dict(config), "config_hash": config_hash(config), "status": "ok", **result}
    if record["status"] != "ok" or record["config_hash"] != config_hash(config):
        raise ValueError(
            f"store_result takes a successful result of this config, got status "
            f"{record['status']!r} and config_hash {record['config_hash']!r}"
        )
    path = result_path(config)
    # checked as load_result will check it, before the write: never replace a sound file with a corrupt one
    try:
        payload = with_checksum(json.loads(json.dumps(record, allow_nan=False)))
    except (ValueError, RecursionError) as err:
        raise ValueError(f"store_result: the result for {path.name} is not finite, writable JSON ({err})") from None
    problems = [] if isinstance(payload["config"], dict) else [f"its config is a {type(payload['config']).__name__}"]
    problems += find_problems(path, payload, field_defaults(type(config)), CODE_VERSION, config_hash(config))
    if problems:
        raise ValueError(
            f"store_result: not a result of {type(config).__name__} {config_hash(config)} that load_result "
            f"would accept: {'; '.join(problems)}. Nothing was written."
        )
    write_json_atomic(path, payload, "result")
    return path


def _load_or_discard(config: Any, path: Path) -> dict | None:
    """``load_result``, except that a corrupt file is reported and retrained (``None``) where that
    is safe: never under CI for a cpu- or paper-profile result (the book must not silently replace
    committed evidence), never a file of another result format (it is not damaged)."""
    try:
        return load_result(config)
    except CorruptResult as err:
        if isinstance(err, OtherFormat) or (under_ci() and config.profile != "smoke"):
            raise
        warnings.warn(f"{err} Retraining it now.", RuntimeWarning, stacklevel=3)
        return None


#: ``rerun`` of :func:`run_or_load` and :func:`run_many`: exactly True, False or None (read
#: ``REPRO_RERUN``). A truthy ``"no"`` or ``1`` would retrain and overwrite a sound cached result.
_RERUN_RULE = Rule("bool", optional=True)


def run_or_load(config: Any, *, rerun: bool | None = None) -> dict:
    """The cached result of ``config`` (run first if needed): ``config``, ``config_hash``,
    ``status == "ok"`` and the runner's keys. ``rerun``: True retrains, False uses the cache, None
    reads ``REPRO_RERUN``."""
    check_value("run_or_load", "rerun", rerun, _RERUN_RULE)
    runner = runner_of(config)
    current_profile(config.profile)
    path = result_path(config)
    rerun = bool_env("REPRO_RERUN", False) if rerun is None else rerun
    if path.exists() and not rerun:
        cached = _load_or_discard(config, path)
        if cached is not None:
            return cached
    if config.profile == "cpu" and under_ci() and not rerun:
        raise MissingResult(
            f"cpu-profile result missing: {path.relative_to(results_root('cpu').parent)} "
            f"for {type(config).__name__} {config_dict(config)}. {_TRAIN_HERE}"
        )
    workdir = path.with_suffix("")  # checkpoints beside the result, ignored by git
    remove_stale_temp_files(path.parent, workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    record = {"config": config_dict(config), "config_hash": config_hash(config)}
    precision = getattr(config, "precision", "float32")  # configs without the field train in float32
    try:
        with provenance.recording() as used:
            try:
                outcome = runner(config, workdir)
            except RunFailed as err:
                _write_failure(
                    path.with_suffix(".failed.json"),
                    {
                        **record,
                        "status": "failed",
                        "error": str(err),
                        "provenance": provenance.run_provenance(used, precision),
                    },
                )
                raise
    finally:
        remove_if_empty(workdir)  # a checkpoint left by a killed or failed run keeps it
    # where and how it ran (CPU, torch, threads, precision, backends): reruns compare by it
    result = with_checksum(
        {**record, **outcome, "status": "ok", "provenance": provenance.run_provenance(used, precision)}
    )
    write_json_atomic(path, result, "result")
    path.with_suffix(".failed.json").unlink(missing_ok=True)
    return result


def _write_failure(path: Path, record: dict) -> None:
    """Write a failed run's record; a record that cannot be written is a warning, never an error
    that would hide the run's own failure (the caller re-raises it)."""
    try:
        write_json_atomic(path, json_safe(record), "failure record")
    except (OSError, TypeError, ValueError) as err:
        warnings.warn(
            f"the failure record {path} could not be written ({type(err).__name__}: {err})",
            RuntimeWarning,
            stacklevel=3,
        )


# ------------------------------------------------------------------------------ many runs at once


def default_workers(profile: str) -> int:
    """Processes for :func:`run_many`: ``REPRO_WORKERS``, else one per GPU, else one per CPU core;
    one in the smoke profile (its runs take less time than starting processes)."""
    default = local_gpus() or max(1, os.cpu_count() or 1)
    return positive_int_env("REPRO_WORKERS", 1 if profile == "smoke" else default)


def _run_in_worker(config: Any, rerun: bool, quiet_worker: bool = True) -> dict:
    """Body of a :func:`run_many` worker process (module level, to pickle). ``quiet_worker``: no
    progress of its own (the parent's one bar; several processes' bars would overwrite each other)."""
    if quiet_worker:
        os.environ["REPRO_QUIET"] = "1"
    return run_or_load(config, rerun=rerun)


def exit_on_sigterm(signum: int, frame: Any) -> None:
    """A SIGTERM handler that unwinds like Ctrl-C would, so ``finally`` blocks stop workers or jobs."""
    raise SystemExit(128 + signum)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel queued runs and terminate running ones (they resume from their checkpoints), else
    workers outlive a killed parent. (Python 3.14's ``terminate_workers`` is the public form.)"""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # shutdown() forgets them
    for process in processes:
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def _parallel(configs: list, todo: list[int], n: int, rerun: bool, desc: str, results: list, failures: list) -> None:
    """The worker-process branch of :func:`run_many`; ``kill`` (SIGTERM) or Ctrl-C stops the workers too."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, exit_on_sigterm) if in_main else None
    context = multiprocessing.get_context("spawn")  # fork would copy torch's thread pools
    try:
        start = (worker_devices(n), context.Value("i", 0))
        with ProcessPoolExecutor(max_workers=n, mp_context=context, initializer=_init_worker, initargs=start) as pool:
            try:
                quiet_workers = interactive_stderr()  # see _run_in_worker
                futures = {pool.submit(_run_in_worker, configs[i], rerun, quiet_workers): i for i in todo}
                done = progress(
                    as_completed(futures), desc=f"{desc} ({n} processes)", total=len(futures), each=True, unit="run"
                )
                for future in done:
                    try:
                        results[futures[future]] = future.result()
                    except RunFailed as err:
                        failures.append(err)
            except BaseException:
                _stop_workers(pool)
                raise
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def run_many(
    configs: Any,
    *,
    workers: int | None = None,
    desc: str = "runs",
    rerun: bool | None = None,
    executor: Callable[[list, bool, str], list] | None = None,
) -> list[dict]:
    """``run_or_load`` every config (results in order), training the missing ones in ``workers``
    processes or through ``executor(configs, rerun, desc)`` (e.g. ``tools.executors.Submitit``),
    which returns each result or its :class:`RunFailed`. Each run trains on
    :func:`helpers.core.runtime.train_threads` threads, so results do not depend on ``workers``.
    Under CI missing cpu-profile results raise :class:`MissingResult` before anything trains; a
    failed run is re-raised after the others finish."""
    # every argument is checked before anything is read, run or submitted, cached or not
    check_value("run_many", "rerun", rerun, _RERUN_RULE)
    check_value("run_many", "workers", workers, integer(1, optional=True))
    if executor is not None and not callable(executor):
        raise TypeError(
            "run_many.executor must be None (worker processes here) or a callable executor(configs, rerun, "
            f"desc), such as tools.executors.Submitit for submitit jobs; got {executor!r}"
        )
    configs = list(configs)
    if not configs:
        return []
    for cfg in configs:
        runner_of(cfg)
    rerun = bool_env("REPRO_RERUN", False) if rerun is None else rerun
    todo = [i for i, cfg in enumerate(configs) if rerun or not result_path(cfg).exists()]
    missing_cpu = [configs[i] for i in todo if configs[i].profile == "cpu"]
    if missing_cpu and under_ci() and not rerun:
        first = result_path(missing_cpu[0])
        raise MissingResult(
            f"{len(missing_cpu)} of {len(configs)} cpu-profile results are missing (first: "
            f"{first.relative_to(results_root('cpu').parent)}). {_TRAIN_HERE}"
        )
    results: list[dict | None] = [None] * len(configs)
    failures: list[BaseException] = []
    if todo and executor is not None:
        outcomes = executor([configs[i] for i in todo], rerun, desc)
        for i, outcome in zip(todo, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                failures.append(outcome)
            else:
                results[i] = outcome
    elif todo:
        n = workers if workers is not None else default_workers(current_profile(configs[todo[0]].profile))
        n = min(n, len(todo))
        if n == 1:
            for i in progress(todo, desc=desc, total=len(todo), each=True, unit="run"):
                try:
                    results[i] = run_or_load(configs[i], rerun=rerun)
                except RunFailed as err:
                    failures.append(err)
        else:
            _parallel(configs, todo, n, rerun, desc, results, failures)
    if failures:
        raise failures[0]
    return [res if res is not None else run_or_load(cfg) for res, cfg in zip(results, configs)]


def compute_time(results: Any, workers: int = 2) -> dict[str, float]:
    """What ``results`` cost to train (from ``train_seconds``): ``n_runs`` (distinct),
    ``core_minutes`` (their sum; one intra-op thread a run) and ``wall_minutes`` (:func:`run_many`
    with ``workers`` from an empty cache, runs handed in order to the first free worker; about 2 s
    a run of process start and data loading not included)."""

    check_value("compute_time", "workers", workers, integer(1))
    seconds: dict[str, float] = {}
    for result in results:
        if not isinstance(result, dict) or not {"config_hash", "train_seconds"} <= result.keys():
            raise TypeError("each result must be a run_or_load result dict with 'config_hash' and 'train_seconds'")
        # a NaN, negative, bool or string time would make every total meaningless
        check_value("compute_time", "train_seconds", result["train_seconds"], number(0))
        seconds.setdefault(result["config_hash"], float(result["train_seconds"]))
    finish = [0.0] * workers
    for s in seconds.values():
        heapq.heappush(finish, heapq.heappop(finish) + s)
    return {"n_runs": len(seconds), "core_minutes": sum(seconds.values()) / 60, "wall_minutes": max(finish) / 60}

"""Process-wide settings in one place: profile, seeding and determinism, paths, progress bars.

Everything that makes a run reproducible is set here and nowhere else, so that a seeded CPU run
is bit-identical from one process to the next.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import numpy as np
import torch

PROFILES: tuple[str, ...] = ("smoke", "cpu", "paper")
DEFAULT_PROFILE = "cpu"

T = TypeVar("T")


def repo_root() -> Path:
    """The checkout's root (the folder holding ``_config.yml``)."""
    return Path(__file__).resolve().parent.parent


def current_profile(profile: str | None = None) -> str:
    """The profile to use: the argument, else ``REPRO_PROFILE``, else ``cpu``."""
    chosen = profile if profile is not None else os.environ.get("REPRO_PROFILE", DEFAULT_PROFILE)
    if chosen not in PROFILES:
        raise ValueError(
            f"unknown profile {chosen!r} (from {'argument' if profile else 'REPRO_PROFILE'}); "
            f"choose one of {', '.join(PROFILES)}"
        )
    return chosen


def results_root(profile: str) -> Path:
    """Where run results of ``profile`` are cached.

    cpu and paper results are the book's numbers and live in the committed ``results/``; smoke
    results only prove code paths run, so they go to an ignored cache and never mix with them.
    ``REPRO_RESULTS_DIR`` overrides both (tests point it at a temporary folder).
    """
    override = os.environ.get("REPRO_RESULTS_DIR")
    if override:
        return Path(override) / profile if profile == "smoke" else Path(override)
    if profile == "smoke":
        return repo_root() / ".cache" / "results-smoke"
    return repo_root() / "results"


def cache_root() -> Path:
    """Folder for decoded datasets and checkpoints (``REPRO_CACHE_DIR`` or ``~/.cache/repro-act``)."""
    return Path(os.environ.get("REPRO_CACHE_DIR", Path.home() / ".cache" / "repro-act"))


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python, NumPy and torch, and make torch deterministic; return a seeded generator.

    ``torch.use_deterministic_algorithms(True)`` makes any op without a deterministic kernel
    fail loudly instead of silently varying; on the CPU every op we use has one.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=False)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator


def positive_int_env(name: str, default: int) -> int:
    """The environment variable ``name`` as a positive integer (``default`` when unset); a
    clear ``ValueError`` for anything else."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    return value


def train_threads() -> int:
    """Intra-op threads of one training run: ``REPRO_TRAIN_THREADS``, default 1.

    Float32 results depend on the thread count (ATen splits some reductions by thread), so every
    committed run is trained with the same count, and parallelism comes from training several
    runs at once (:func:`helpers.experiments.run_many`). Another count gives valid results that
    differ from the committed ones at float32 rounding level.
    """
    return positive_int_env("REPRO_TRAIN_THREADS", 1)


@contextmanager
def training_threads() -> Iterator[int]:
    """Run the block with :func:`train_threads` intra-op threads; restore the count after."""
    from helpers.provenance import note_threads

    before = torch.get_num_threads()
    n = train_threads()
    torch.set_num_threads(n)
    note_threads(n)  # recorded in the result's provenance
    try:
        yield n
    finally:
        torch.set_num_threads(before)


def quiet() -> bool:
    """Progress bars stay silent under CI (``CI`` set) or with ``REPRO_QUIET=1``."""
    return bool(os.environ.get("CI")) or os.environ.get("REPRO_QUIET", "") not in ("", "0")


def progress(iterable: Iterable[T], **kwargs: object) -> Iterator[T]:
    """A tqdm progress bar (notebook-aware) that is disabled under CI."""
    if quiet():  # no bar, and no tqdm import (tqdm.auto warns without ipywidgets)
        return iter(iterable)
    from tqdm.auto import tqdm

    kwargs.setdefault("leave", False)
    if kwargs.get("total") is None:
        try:
            kwargs["total"] = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            pass
    # Hand tqdm an iterator, never the iterable: tqdm.auto's class calls iter() on what it gets
    # in __init__ and again when iterated, and every iter() of a DataLoader draws a seed from the
    # loader's (or the global) generator. Two draws per epoch with a bar and one without made
    # results depend on whether progress bars were shown.
    return iter(tqdm(iter(iterable), **kwargs))

"""Process-wide settings in one place: profile, seeding and determinism, paths, progress bars.

Everything that makes a run reproducible is set here and nowhere else, so that a seeded CPU run
is bit-identical from one process to the next.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import numpy as np
import torch

from helpers.core.device import set_determinism
from helpers.core.env import bool_env, under_ci  # re-exported
from helpers.core.provenance import note_threads

PROFILES: tuple[str, ...] = ("smoke", "cpu", "paper")
DEFAULT_PROFILE = "cpu"

T = TypeVar("T")


def repo_root() -> Path:
    """The checkout's root (the folder holding ``_config.yml``)."""
    return Path(__file__).resolve().parents[2]  # helpers/core/runtime.py


def current_profile(profile: str | None = None) -> str:
    """The profile to use: the argument, else ``REPRO_PROFILE``, else ``cpu``."""
    chosen = profile if profile is not None else os.environ.get("REPRO_PROFILE", DEFAULT_PROFILE)
    if chosen not in PROFILES:
        raise ValueError(
            f"unknown profile {chosen!r} (from {'argument' if profile else 'REPRO_PROFILE'}); "
            f"choose one of {', '.join(PROFILES)}"
        )
    return chosen


def results_root(profile: str, folder: Path | None = None) -> Path:
    """Where run results of ``profile`` are cached: the committed ``results/`` for cpu and paper,
    an ignored cache for smoke (they only prove code paths run). ``folder`` or else
    ``REPRO_RESULTS_DIR`` overrides both, smoke in its ``smoke/``."""
    # dir_env refuses a set-but-empty value: a blank scratch folder must not write into results/
    override = folder or dir_env("REPRO_RESULTS_DIR")
    if override:
        return Path(override) / profile if profile == "smoke" else Path(override)
    if profile == "smoke":
        return repo_root() / ".cache" / "results-smoke"
    return repo_root() / "results"


def cache_root() -> Path:
    """Folder for decoded datasets and checkpoints (``REPRO_CACHE_DIR`` or ``~/.cache/repro-act``)."""
    return dir_env("REPRO_CACHE_DIR", Path.home() / ".cache" / "repro-act")


def seed_everything(seed: int, device: torch.device | None = None) -> torch.Generator:
    """Seed Python, NumPy and torch (every GPU too), make torch deterministic on ``device``
    (:func:`helpers.core.device.set_determinism`) and return a seeded generator."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # seeds every CUDA device as well
    set_determinism(device)
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator


#: Spellings :func:`bool_env` accepts (compared case-insensitively, surrounding blanks ignored).
def dir_env(name: str, default: Path | None = None) -> Path | None:
    """The environment variable ``name`` as a directory path (``~`` expanded; ``default`` when
    unset): not necessarily existing, never a file; else a ``ValueError`` naming it."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    if not raw.strip():
        raise ValueError(f"{name} is set but empty; unset it or give it a folder path")
    if "\x00" in raw:
        raise ValueError(f"{name}={raw!r} contains a NUL byte; give it a folder path")
    path = Path(raw).expanduser()
    try:
        if path.exists() and not path.is_dir():
            raise ValueError(f"{name}={raw!r} is an existing file, not a folder; point it at a folder")
    except OSError as err:  # e.g. a name too long, or a parent that cannot be searched
        raise ValueError(f"{name}={raw!r} is not a usable folder path: {err}") from err
    return path


def positive_int_env(name: str, default: int) -> int:
    """The environment variable ``name`` as a positive integer (``default`` when unset)."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    # ASCII digits only: int() also reads "1_0" as 10 and other scripts' digits
    value = int(raw.strip()) if raw.strip().isascii() and raw.strip().isdigit() else 0
    if value < 1:
        raise ValueError(f"{name} must be a positive integer (ASCII digits), got {raw!r}")
    return value


#: The variable that sets :func:`train_threads` (the protocols CLI's ``--threads`` sets it too).
TRAIN_THREADS_ENV = "REPRO_TRAIN_THREADS"


def train_threads() -> int:
    """Intra-op threads of one training run: ``REPRO_TRAIN_THREADS``, default 1. Float32 results
    depend on it (ATen splits reductions by thread), so parallelism comes from several runs at once."""
    return positive_int_env(TRAIN_THREADS_ENV, 1)


@contextmanager
def training_threads() -> Iterator[int]:
    """Run the block with :func:`train_threads` intra-op threads; restore the count after."""
    before = torch.get_num_threads()
    n = train_threads()
    torch.set_num_threads(n)
    note_threads(n)  # recorded in the result's provenance
    try:
        yield n
    finally:
        torch.set_num_threads(before)


def quiet() -> bool:
    """Progress bars stay silent under CI (``CI=true``) or with ``REPRO_QUIET=1``."""
    # REPRO_QUIET is parsed first, so a malformed value is an error under CI too
    return bool_env("REPRO_QUIET", False) or under_ci()


def _in_jupyter_kernel() -> bool:
    """Whether this process is a Jupyter kernel (its stderr is no TTY, yet a bar is wanted)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001 - a half-imported IPython means no kernel
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def interactive_stderr() -> bool:
    """Whether progress bars can redraw in place: stderr is a terminal, or this is a kernel."""
    try:
        tty = sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):  # closed or replaced stream
        tty = False
    return tty or _in_jupyter_kernel()


def _log_lines(iterator: Iterator[T], *, desc: str, unit: str, total: int | None, each: bool) -> Iterator[T]:
    """Yield from ``iterator`` (already created: nothing here calls ``iter()`` again), writing a
    plain line to stderr when it is exhausted, and after every item with ``each``."""
    start = time.monotonic()
    label = f"{desc}: " if desc else ""
    of = f"/{total}" if total is not None else ""
    count = 0
    for count, item in enumerate(iterator, 1):
        yield item
        if each:
            print(f"{label}{count}{of} {unit} done ({time.monotonic() - start:.1f} s)", file=sys.stderr, flush=True)
    if not each or count == 0:
        print(f"{label}{count}{of} {unit} in {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)


def progress(iterable: Iterable[T], *, each: bool = False, **kwargs: object) -> Iterator[T]:
    """Progress over ``iterable``: a tqdm bar in a terminal or Jupyter kernel; in a log file (where
    redraws flood it) one line at the end, or per item with ``each=True``; nothing under CI or
    ``REPRO_QUIET=1``."""
    if quiet():  # no bar, and no tqdm import (tqdm.auto warns without ipywidgets)
        return iter(iterable)
    if kwargs.get("total") is None:
        try:
            kwargs["total"] = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            pass
    if not interactive_stderr():
        total = kwargs.get("total")
        return _log_lines(
            iter(iterable),
            desc=str(kwargs.get("desc") or ""),
            unit=str(kwargs.get("unit") or "it"),
            total=total if isinstance(total, int) else None,
            each=each,
        )
    from tqdm.auto import tqdm

    kwargs.setdefault("leave", False)
    # Hand tqdm an iterator, never the iterable: tqdm.auto calls iter() twice, and every iter() of a
    # DataLoader draws a seed, so results would depend on whether bars were shown.
    return iter(tqdm(iter(iterable), **kwargs))

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
    """Where run results of ``profile`` are cached.

    cpu and paper results are the book's numbers and live in the committed ``results/``; smoke
    results only prove code paths run, so they go to an ignored cache and never mix with them.
    ``folder`` (a tool's scratch folder) or else ``REPRO_RESULTS_DIR`` overrides both (tests point
    it at a temporary folder), smoke results in its ``smoke/``; a set but empty
    ``REPRO_RESULTS_DIR`` is a ``ValueError`` naming it (:func:`dir_env`).
    """
    # dir_env refuses a set-but-empty value, as for REPRO_CACHE_DIR: `REPRO_RESULTS_DIR=` (a
    # variable meant to hold a scratch folder, left blank) must not write into the committed results/
    override = folder or dir_env("REPRO_RESULTS_DIR")
    if override:
        return Path(override) / profile if profile == "smoke" else Path(override)
    if profile == "smoke":
        return repo_root() / ".cache" / "results-smoke"
    return repo_root() / "results"


def cache_root() -> Path:
    """Folder for decoded datasets and checkpoints (``REPRO_CACHE_DIR`` or ``~/.cache/repro-act``).

    A bad ``REPRO_CACHE_DIR`` (empty, a file, a path with a NUL byte) is reported here, naming
    the variable, rather than later inside ``pathlib`` or ``mkdir`` with only a path.
    """
    return dir_env("REPRO_CACHE_DIR", Path.home() / ".cache" / "repro-act")


def seed_everything(seed: int, device: torch.device | None = None) -> torch.Generator:
    """Seed Python, NumPy and torch (every GPU too), and make torch deterministic on ``device``;
    return a seeded generator.

    ``torch.use_deterministic_algorithms(True)`` makes any op without a deterministic kernel
    fail loudly instead of silently varying; on the CPU every op we use has one. The per-device
    flags (cuDNN, cuBLAS workspace) and what stays nondeterministic on a GPU are in
    :func:`helpers.core.device.set_determinism`.
    """
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
    """The environment variable ``name`` as a directory path (``~`` expanded); ``default`` when unset.

    The folder need not exist yet (callers create it), but it must not be an existing file, and
    the value must be a usable path: otherwise a ``ValueError`` names the variable and its value.
    """
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
    """The environment variable ``name`` as a positive integer (``default`` when unset); a
    clear ``ValueError`` for anything else."""
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
    """Intra-op threads of one training run: ``REPRO_TRAIN_THREADS``, default 1.

    Float32 results depend on the thread count (ATen splits some reductions by thread), so every
    committed run is trained with the same count, and parallelism comes from training several
    runs at once (:func:`helpers.core.results_cache.run_many`). Another count gives valid results that
    differ from the committed ones at float32 rounding level.
    """
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
    """Progress over ``iterable``: a tqdm bar (notebook-aware) in a terminal or a Jupyter kernel,
    plain lines when stderr is a file or a pipe, nothing under CI or ``REPRO_QUIET=1``.

    Outside a terminal a bar's carriage-return redraws flood a log file, so there one line is
    written when the iteration ends (one per epoch of the training loop), or one per item with
    ``each=True`` (one per finished run in :func:`helpers.core.results_cache.run_many`). ``desc``,
    ``total`` and ``unit`` are used for those lines; other tqdm options are ignored there.
    """
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
    # Hand tqdm an iterator, never the iterable: tqdm.auto's class calls iter() on what it gets
    # in __init__ and again when iterated, and every iter() of a DataLoader draws a seed from the
    # loader's (or the global) generator. Two draws per epoch with a bar and one without made
    # results depend on whether progress bars were shown.
    return iter(tqdm(iter(iterable), **kwargs))

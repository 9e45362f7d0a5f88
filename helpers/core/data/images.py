"""Shared plumbing for image datasets: reading archives, decoding, statistics, splitting.

Decoders produce ``uint8`` arrays ``N×C×H×W`` plus ``int64`` labels for the official train split
and for the split used as validation. :func:`image_splits` turns them into a
:class:`~helpers.core.data.core.DataSplits`: it draws the requested subsets first (so a small profile
never converts 50,000 images to float) and then normalises per channel with the mean and standard
deviation of the *complete* official training split (computed once at decode time and cached),
so the normalisation is the same whatever subset a profile trains on.

Decoded arrays are cached uncompressed (``.npz`` of raw ``.npy`` members) under
``cache_root()/datasets/``, keyed by the source files' resolved path, size and modification time
plus :data:`CACHE_FORMAT`: replacing or touching a source file invalidates its entry. Writes are
atomic (temporary file + rename), so a killed decode leaves no half-written entry, and an
unreadable entry is rebuilt rather than trusted.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import warnings
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import torch

from helpers.core.data.core import DataSplits, Request, data_splits
from helpers.core.data.sources import Found, data_error, reading
from helpers.core.runtime import cache_root, progress

#: Bump when a decoder changes what it stores, so stale entries are not reused.
CACHE_FORMAT = "1"


def iter_members(
    path: Path, select: Callable[[str], bool], desc: str = "", total: int | None = None
) -> Iterator[tuple[str, bytes]]:
    """``(name, bytes)`` of every regular file in ``path`` (a tar, zip or folder; tars are streamed)
    whose name, relative to its root with ``/``, passes ``select``."""
    with reading(path, "archive"):
        if path.is_dir():
            names = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
            names = [n for n in names if select(n)]
            for name in progress(names, desc=desc, total=len(names)):
                yield name, (path / name).read_bytes()
        elif zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = [n for n in archive.namelist() if not n.endswith("/") and select(n)]
                for name in progress(names, desc=desc, total=len(names)):
                    yield name, archive.read(name)
        elif tarfile.is_tarfile(path):
            with tarfile.open(path, mode="r|*") as archive:
                for member in progress(archive, desc=desc, total=total):
                    if member.isfile() and select(member.name):
                        handle = archive.extractfile(member)
                        assert handle is not None  # regular files always have data
                        yield member.name.removeprefix("./"), handle.read()
        else:
            raise data_error(path, "neither a folder nor a readable tar/zip archive")


def decode_jpeg(data: bytes, size: tuple[int, int], name: str) -> np.ndarray:
    """An RGB image as ``uint8`` ``C×H×W``; grayscale files are converted to RGB."""
    from PIL import Image  # lazy: PIL is only needed when images are decoded, not when cached arrays load

    try:
        with Image.open(io.BytesIO(data)) as image:
            rgb = np.asarray(image.convert("RGB"))
    except OSError as exc:  # PIL's errors do not say which archive member was broken
        raise ValueError(f"{name}: not a readable image ({exc})") from exc
    if rgb.shape[:2] != size:
        raise ValueError(f"{name}: expected a {size[0]}×{size[1]} image, got {rgb.shape[0]}×{rgb.shape[1]}")
    return rgb.transpose(2, 0, 1)


def channel_stats(images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact per-channel mean and (population) std of ``uint8`` ``N×C×H×W`` images, in [0, 1] units,
    from a 256-bin histogram per channel (no float copy of the data)."""
    values = np.arange(256, dtype=np.float64) / 255.0
    means, stds = [], []
    for c in range(images.shape[1]):
        counts = np.bincount(images[:, c].reshape(-1), minlength=256).astype(np.float64)
        mean = counts @ values / counts.sum()
        var = counts @ (values - mean) ** 2 / counts.sum()
        means.append(mean)
        stds.append(np.sqrt(var))
    return np.array(means), np.array(stds)


def fingerprint(paths: Iterable[Path], extra: str = "") -> str:
    """A short key for ``paths``: resolved path, size and mtime of each, and ``extra``."""
    parts = [CACHE_FORMAT, extra]
    for path in paths:
        stat = path.stat()
        parts.append(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


def cache_file(name: str, key: str) -> Path:
    """Where the arrays of dataset ``name`` with fingerprint ``key`` are cached."""
    return cache_root() / "datasets" / f"{name}-{key}.npz"


def cached_arrays(name: str, key: str, build: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Arrays for ``(name, key)`` from the cache, or ``build()`` them and cache the result."""
    path = cache_file(name, key)
    if path.exists():
        try:
            with np.load(path, allow_pickle=False) as stored:
                return {k: stored[k] for k in stored.files}
        except Exception as exc:  # noqa: BLE001 - a broken entry is rebuilt, never trusted
            warnings.warn(f"rebuilding unreadable dataset cache {path}: {exc}", stacklevel=2)
    arrays = build()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return arrays


def decoded(cache_name: str, found: Found, decode: Callable[[Found], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """``decode(found)`` plus train statistics, through the decoded-array cache."""

    def build() -> dict[str, np.ndarray]:
        arrays = decode(found)
        arrays["mean"], arrays["std"] = channel_stats(arrays["x_train"])
        flat = [int(c) for c in np.flatnonzero(~(arrays["std"] > 0))]
        if flat:  # normalising would divide by zero: every input NaN or infinite
            raise data_error(
                found.paths[0], f"every training image has one value in channel {flat}: not a photograph set"
            )
        return arrays

    return cached_arrays(cache_name, fingerprint(found.paths, found.format), build)


def _normalise(images: np.ndarray, mean: np.ndarray, std: np.ndarray, chunk: int = 2048) -> torch.Tensor:
    """``(images / 255 - mean) / std`` as float32, in chunks small enough to stay in cache (one pass
    over memory: most of what a cached reload of CIFAR-10 costs)."""
    source = torch.from_numpy(images)
    out = torch.empty(images.shape, dtype=torch.float32)
    scale = torch.tensor(1.0 / (255.0 * std), dtype=torch.float32).view(1, -1, 1, 1)
    shift = torch.tensor(-mean / std, dtype=torch.float32).view(1, -1, 1, 1)
    for start in range(0, len(images), chunk):
        block = out[start : start + chunk]
        block.copy_(source[start : start + chunk])
        block.mul_(scale).add_(shift)
    return out


def image_splits(
    request: Request,
    cache_name: str,
    decode: Callable[[Found], dict[str, np.ndarray]],
    *,
    class_names: tuple[str, ...] | None = None,
    **fields: str,
) -> DataSplits:
    """Decode the files found (through the array cache), check the arrays, subset and normalise
    them (see the module docstring); ``class_names=None``: the decoder returns them."""
    arrays = decoded(cache_name, request.found, decode)
    if class_names is None:
        class_names = tuple(str(c) for c in arrays["class_names"])
    name, location = fields.get("name") or request.spec.title, str(request.found.directory)
    for split_name in ("train", "val"):
        x, y = arrays[f"x_{split_name}"], arrays[f"y_{split_name}"]
        if x.ndim != 4 or y.ndim != 1 or len(x) != len(y):
            raise data_error(
                location, f"{name} {split_name}: {x.shape} images vs {y.shape} labels (want N×C×H×W and N)"
            )
        if len(y) and (int(y.min()) < 0 or int(y.max()) >= len(class_names)):
            raise data_error(
                location,
                f"{name} {split_name} labels span {int(y.min())}..{int(y.max())}, "
                f"outside 0..{len(class_names) - 1} ({len(class_names)} classes)",
            )
    mean, std = arrays["mean"], arrays["std"]

    def take(split_name: str, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        x, y = arrays[f"x_{split_name}"], arrays[f"y_{split_name}"]
        if len(idx) < len(y):  # a subset: only its images are converted to float
            x, y = x[idx], y[idx]
        return _normalise(np.ascontiguousarray(x), mean, std), torch.from_numpy(np.asarray(y, dtype=np.int64))

    sizes = (len(arrays["y_train"]), len(arrays["y_val"]))
    return data_splits(request, take, sizes, class_names=class_names, mean=mean, std=std, **fields)

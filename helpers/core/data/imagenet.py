"""ImageNet-1K (ILSVRC 2012 classification): 1,000 classes, 1,281,167 train and 50,000 val images.

Layout read (the one ``torchvision.datasets.ImageFolder`` reads, and the one ConvNeXt's and
DeiT's training scripts expect), under ``REPRO_DATA_DIR/imagenet/``::

    train/<wnid>/*.JPEG        e.g. train/n01440764/n01440764_10026.JPEG
    val/<wnid>/*.JPEG          e.g. val/n01440764/ILSVRC2012_val_00000293.JPEG

The official validation archive unpacks to one flat folder (``val/ILSVRC2012_val_*.JPEG``); its
labels come with the Kaggle release as ``LOC_val_solution.csv``. :func:`reorganise_val` moves a
flat ``val/`` into per-class folders from that file, once. ImageNet is never downloaded (its
licence requires an account): a missing copy is a :class:`DatasetNotFound` saying where to put it.

Nothing is decoded up front (1.28M JPEGs would not fit in memory): :func:`load_imagenet` returns
lazy ``ImageFolder`` datasets. They are verified lazily on first use: the class folders and the
JPEG count of every class are compared with the official release (:data:`OFFICIAL`), and the
sha256 of a seeded sample of files is recorded in a manifest in the cache folder; a later use
recounts the files and compares the sample's digests with the manifest, so a copy that changed
since it was first verified is refused with the file named.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.core.data.core import Request, dataset_loader
from helpers.core.data.sources import DataError, Layout, SourceSpec, file_digest
from helpers.core.runtime import cache_root
from helpers.core.validation import instance_of, integer

SPEC = SourceSpec(
    key="imagenet",
    title="ImageNet-1K (ILSVRC 2012)",
    folders=("imagenet", "imagenet-1k", "ILSVRC2012"),
    layouts=(Layout("imagefolder", ("train", "val")),),
)

#: Files hashed into the manifest on first use (seeded choice, so every machine picks the same).
SAMPLE_SIZE = 64


@dataclass(frozen=True)
class ImageNetCounts:
    """What a complete copy holds: classes, images per split, and val images per class."""

    n_classes: int
    n_train: int
    n_val: int
    val_per_class: int


#: The official ILSVRC 2012 release.
OFFICIAL = ImageNetCounts(n_classes=1000, n_train=1_281_167, n_val=50_000, val_per_class=50)


@dataclass(frozen=True)
class FolderSplits:
    """Lazy train and val datasets (``torchvision.datasets.ImageFolder``) and their classes."""

    key: str
    train: Any
    val: Any
    wnids: tuple[str, ...]
    description: str


def _jpegs(folder: Path) -> list[str]:
    with os.scandir(folder) as entries:
        return sorted(e.name for e in entries if e.is_file() and e.name.lower().endswith((".jpeg", ".jpg")))


def _class_folders(split: Path) -> list[str]:
    with os.scandir(split) as entries:
        return sorted(e.name for e in entries if e.is_dir())


def count_images(root: Path) -> dict[str, dict[str, int]]:
    """JPEGs per class folder of ``root/train`` and ``root/val`` (directory listings only)."""
    return {
        split: {w: len(_jpegs(root / split / w)) for w in _class_folders(root / split)} for split in ("train", "val")
    }


def check_counts(root: Path, counts: dict[str, dict[str, int]], expected: ImageNetCounts) -> None:
    """A :class:`DataError` naming what differs from a complete copy, with how to fix it."""
    train, val = counts["train"], counts["val"]
    flat = _jpegs(root / "val")
    if flat:
        raise DataError(
            f"{root / 'val'} holds {len(flat)} JPEGs directly (the official flat layout); "
            "the loader reads val/<wnid>/*.JPEG. Fix: helpers.core.data.imagenet.reorganise_val"
            f"({str(root)!r}, 'LOC_val_solution.csv') moves them into per-class folders"
        )
    problems = []
    if len(train) != expected.n_classes:
        problems.append(f"train has {len(train)} class folders, expected {expected.n_classes}")
    if sorted(val) != sorted(train):
        only = sorted(set(train) ^ set(val))[:3]
        problems.append(f"train and val class folders differ (e.g. {', '.join(only)})")
    if sum(train.values()) != expected.n_train:
        problems.append(f"train has {sum(train.values())} images, expected {expected.n_train}")
    if sum(val.values()) != expected.n_val:
        problems.append(f"val has {sum(val.values())} images, expected {expected.n_val}")
    short = [w for w, n in val.items() if n != expected.val_per_class]
    if short:
        problems.append(
            f"{len(short)} val classes do not hold {expected.val_per_class} images (first: "
            f"{short[0]} with {val[short[0]]})"
        )
    empty = [w for w, n in train.items() if n == 0]
    if empty:
        problems.append(f"{len(empty)} train classes are empty (first: {empty[0]})")
    if problems:
        raise DataError(
            f"ImageNet copy at {root} is incomplete: "
            + "; ".join(problems)
            + ". Fix: copy the whole release again (layout: helpers/core/data/imagenet.py)"
        )


def _sample(root: Path, counts: dict[str, dict[str, int]]) -> list[str]:
    files = [
        f"{split}/{w}/{name}"
        for split in ("train", "val")
        for w in sorted(counts[split])
        for name in _jpegs(root / split / w)[:1]
    ]
    return sorted(random.Random(0).sample(files, min(SAMPLE_SIZE, len(files))))


def manifest_path(root: Path) -> Path:
    """Where the first verification of the copy at ``root`` is remembered (one file per copy)."""
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return cache_root() / "imagenet" / f"manifest-{key}.json"


def verify_imagenet(root: Path, expected: ImageNetCounts = OFFICIAL) -> dict[str, Any]:
    """Check the copy at ``root`` (see the module docstring) and return its manifest."""
    counts = count_images(root)
    check_counts(root, counts, expected)
    path = manifest_path(root)
    if path.exists():
        manifest = json.loads(path.read_text())
        if manifest.get("counts") != counts:
            raise DataError(
                f"ImageNet copy at {root} changed since it was verified ({path}): the files "
                "per class differ. Fix: restore the copy, or delete the manifest to accept it"
            )
        for rel, digest in manifest["sample"].items():
            if not (root / rel).is_file() or file_digest(root / rel) != digest:
                raise DataError(
                    f"{root / rel} differs from the copy verified on first use ({path}). "
                    "Fix: restore the file, or delete the manifest to accept the new copy"
                )
        return manifest
    manifest = {
        "root": str(root.resolve()),
        "counts": counts,
        "sample": {rel: file_digest(root / rel) for rel in _sample(root, counts)},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, sort_keys=True))
    return manifest


def reorganise_val(root: str | os.PathLike[str], solution_csv: str | os.PathLike[str]) -> int:
    """Move the flat ``root/val/*.JPEG`` into ``root/val/<wnid>/`` by ``LOC_val_solution.csv``
    (rows ``ImageId,PredictionString``, the string starting with the wnid); return how many moved."""
    val = Path(root) / "val"
    labels: dict[str, str] = {}
    with open(solution_csv, newline="") as fh:
        for row in csv.DictReader(fh):
            if not {"ImageId", "PredictionString"} <= row.keys():
                raise DataError(f"{solution_csv}: expected columns ImageId,PredictionString, got {list(row)}")
            labels[row["ImageId"]] = row["PredictionString"].split()[0]
    moved = 0
    for name in _jpegs(val):
        stem = name.rsplit(".", 1)[0]
        if stem not in labels:
            raise DataError(f"{val / name} has no row in {solution_csv}; nothing after it was moved")
        (val / labels[stem]).mkdir(exist_ok=True)
        (val / name).rename(val / labels[stem] / name)
        moved += 1
    return moved


def _transforms(image_size: int) -> tuple[Any, Any]:
    from torchvision import transforms as T  # lazy: torchvision's import is heavy; only ImageNet needs it

    norm = T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    train = T.Compose([T.RandomResizedCrop(image_size), T.RandomHorizontalFlip(), T.ToTensor(), norm])
    val = T.Compose([T.Resize(round(image_size * 256 / 224)), T.CenterCrop(image_size), T.ToTensor(), norm])
    return train, val


@dataset_loader(lambda: SPEC, subsets=False, image_size=integer(16), expected=instance_of(ImageNetCounts))
def load_imagenet(request: Request, image_size: int = 224, expected: ImageNetCounts = OFFICIAL) -> FolderSplits:
    """ImageNet-1K as lazy ``ImageFolder`` datasets (classes in sorted-wnid order) with the usual
    training transforms (random resized crop + flip) and evaluation ones (resize to 256/224 of
    ``image_size``, centre crop). ``n_train``/``n_val`` must be ``None`` (a subset of ImageNet is not
    a paper's run)."""
    found = request.found
    verify_imagenet(found.directory, expected)
    from torchvision.datasets import ImageFolder  # lazy: see _transforms

    train_tf, val_tf = _transforms(image_size)
    train = ImageFolder(str(found.directory / "train"), transform=train_tf)
    val = ImageFolder(str(found.directory / "val"), transform=val_tf)
    return FolderSplits(
        "imagenet", train, val, tuple(train.classes), f"ImageNet-1K, train/val image folders ({found.describe()})"
    )

"""TinyImageNet (Le and Yang, 2015): 200 classes, 64×64 colour images, 500 train + 50 val per class.

Read from the official ``tiny-imagenet-200.zip`` or its extracted ``tiny-imagenet-200/`` folder:
``wnids.txt`` (the 200 class ids), ``words.txt`` (id → names), ``train/<wnid>/images/*.JPEG`` and
``val/images/*.JPEG`` labelled by ``val/val_annotations.txt``. The official test split has no
labels, so the official *val* split (10,000 images) is the validation split. Classes are indexed
in sorted-wnid order (as ``torchvision.datasets.ImageFolder`` would). Grayscale JPEGs in the
set are converted to RGB.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import numpy as np

from helpers.core.data.core import DataSplits, Request, dataset_loader
from helpers.core.data.images import decode_jpeg, image_splits, iter_members
from helpers.core.data.sources import Found, Layout, Remote, SourceSpec

SPEC = SourceSpec(
    key="tinyimagenet",
    title="TinyImageNet",
    folders=("tinyimagenet", "tiny-imagenet", "tiny-imagenet-200"),
    layouts=(
        Layout("zip", ("tiny-imagenet-200.zip",)),
        Layout("dir", ("tiny-imagenet-200/wnids.txt", "tiny-imagenet-200/val/val_annotations.txt")),
        Layout("dir-flat", ("wnids.txt", "val/val_annotations.txt")),
    ),
    # No sha256 of the official zip is published; its md5 is the one every loader checks.
    remotes=(
        Remote(
            "tiny-imagenet-200.zip",
            ("http://cs231n.stanford.edu/tiny-imagenet-200.zip",),
            md5="90528d7ca1a48142e341f4ef8d21d0de",
        ),
    ),
    download_layout="zip",
)

_META = ("wnids.txt", "words.txt", "val_annotations.txt")


def _decode(found: Found) -> dict[str, np.ndarray]:
    source = found.paths[0] if found.format == "zip" else found.paths[0].parent
    meta = {
        PurePosixPath(n).name: d.decode("utf-8")
        for n, d in iter_members(source, lambda n: PurePosixPath(n).name in _META)
    }
    if "wnids.txt" not in meta or "val_annotations.txt" not in meta:
        raise ValueError(f"{source}: wnids.txt or val/val_annotations.txt missing")
    wnids = sorted(line.strip() for line in meta["wnids.txt"].splitlines() if line.strip())
    class_index = {w: i for i, w in enumerate(wnids)}
    words = dict(line.split("\t", 1) for line in meta.get("words.txt", "").splitlines() if "\t" in line)
    val_label = {}
    for line in meta["val_annotations.txt"].splitlines():
        fields = line.split("\t")
        if len(fields) >= 2:
            val_label[fields[0]] = class_index[fields[1]]

    train: list[tuple[int, str, np.ndarray]] = []
    val: list[tuple[int, str, np.ndarray]] = []
    members = iter_members(source, lambda n: n.endswith(".JPEG"), desc="decoding TinyImageNet")
    for name, data in members:
        parts = PurePosixPath(name).parts
        if "train" in parts and parts[-2] == "images" and parts[-3] in class_index:
            train.append((class_index[parts[-3]], parts[-1], decode_jpeg(data, (64, 64), name)))
        elif "val" in parts and parts[-1] in val_label:
            val.append((val_label[parts[-1]], parts[-1], decode_jpeg(data, (64, 64), name)))
    if not train or not val:
        raise ValueError(f"{source}: found {len(train)} train and {len(val)} labelled val images")
    train.sort(key=lambda r: (r[0], r[1]))
    val.sort(key=lambda r: r[1])
    names = [words.get(w, w).split(",")[0].strip() for w in wnids]
    return {
        "x_train": np.stack([r[2] for r in train]),
        "y_train": np.array([r[0] for r in train], dtype=np.int64),
        "x_val": np.stack([r[2] for r in val]),
        "y_val": np.array([r[0] for r in val], dtype=np.int64),
        "class_names": np.array(names, dtype=np.str_),
        "wnids": np.array(wnids, dtype=np.str_),
    }


@dataset_loader(lambda: SPEC)
def load_tinyimagenet(request: Request) -> DataSplits:
    """TinyImageNet as ``3×64×64`` float images; not available offline on the project's machines."""
    val_split = "official val split (10,000 images; the test split is unlabelled)"
    return image_splits(request, "tinyimagenet", _decode, source="TinyImageNet, official release", val_split=val_split)

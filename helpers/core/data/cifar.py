"""CIFAR-10 and CIFAR-100 (Krizhevsky, 2009): 32×32 colour images, 50,000 train + 10,000 test.

Two formats are read:

* the official "python version" (``cifar-10-python.tar.gz`` / ``cifar-100-python.tar.gz`` or
  their extracted folders): pickled batches of raw pixels, lossless;
* for CIFAR-10 only, the JPEG mirror of the offline data folder (``cifar10-jpeg.tar.gz``:
  ``train/<class>/NNNN.jpg``, ``test/<class>/NNNN.jpg``). A third party re-encoded the images as
  JPEG, so pixels differ slightly from the official release; results on it are labelled
  "CIFAR-10 (JPEG mirror)" (the ``name`` of the returned splits).

When both formats are present the official one wins. The official test split serves as the
validation split. Decoding 60,000 JPEGs takes a while the first time; the arrays are cached.
"""

from __future__ import annotations

import io
import pickle
from pathlib import PurePosixPath
from typing import ClassVar

import numpy as np

from helpers.core.data.core import DataSplits, Request, dataset_loader
from helpers.core.data.images import decode_jpeg, image_splits, iter_members
from helpers.core.data.sources import Found, KnownFile, Layout, Remote, SourceSpec, data_error

CIFAR10_CLASSES: tuple[str, ...] = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)

_KRIZ = "https://www.cs.toronto.edu/~kriz/"

#: md5 of each file of the official python release, as torchvision checks them (no sha256 of the
#: single batch files is published): a folder of batches with the right names and other content
#: (a subset, a re-pickled or a fabricated copy) is refused, never read as CIFAR.
_C10_MD5 = {
    "data_batch_1": "c99cafc152244af753f735de768cd75f",
    "data_batch_2": "d4bba439e000b95fd0a9bffe97cbabec",
    "data_batch_3": "54ebc095f3ab1f0389bbae665268c751",
    "data_batch_4": "634d18415352ddfa80567beed471001a",
    "data_batch_5": "482c414d41f54cd18b22e5b47cb7c3cb",
    "test_batch": "40351d587109b95175f43aff81a1287e",
}
_C100_MD5 = {
    "train": "16019d7e3df5f24257cddd939b257f8d",
    "test": "f0ef6b0ae62326f3e7ffdfab6717acfc",
    "meta": "7973b15100ade9c7d40fb424638fde48",
}


def _spec(
    title: str,
    stem: str,
    folder: str,
    sha256: str,
    md5: dict[str, str],
    layouts: tuple[Layout, ...] = (),
    known: tuple[KnownFile, ...] = (),
) -> SourceSpec:
    """The official python release ``{stem}-python.tar.gz`` (sha256 as listed in tensorflow/datasets'
    url_checksums) or its batches extracted in ``folder``, each checked by its md5, then ``layouts``;
    ``known`` files before the batches."""
    return SourceSpec(
        key=stem.replace("-", ""),
        title=title,
        folders=(stem.replace("-", ""), stem),
        layouts=(
            Layout("python-tar", (f"{stem}-python.tar.gz",)),
            Layout("python-dir", tuple(f"{folder}/{name}" for name in md5)),
            *layouts,
        ),
        remotes=(Remote(f"{stem}-python.tar.gz", (f"{_KRIZ}{stem}-python.tar.gz",), sha256),),
        download_layout="python-tar",
        known=(*known, *(KnownFile(name, md5=digest) for name, digest in md5.items())),
    )


CIFAR10_SPEC = _spec(
    "CIFAR-10",
    "cifar-10",
    "cifar-10-batches-py",
    "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce",
    _C10_MD5,
    # and the offline mirror's JPEG archive (layout in book/rerun.md)
    layouts=(Layout("jpeg-tar", ("cifar10-jpeg.tar.gz",)),),
    known=(KnownFile("cifar10-jpeg.tar.gz", ("0bfcb68717a0ecb0d51ed61034906a773d48d424d94b766a46d7d1c55702a4d9",)),),
)
CIFAR100_SPEC = _spec(
    "CIFAR-100",
    "cifar-100",
    "cifar-100-python",
    "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7",
    _C100_MD5,
)


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles only NumPy arrays and plain containers: a pickle cannot run arbitrary code here."""

    _ALLOWED: ClassVar[frozenset[tuple[str, str]]] = frozenset(
        {
            ("numpy.core.multiarray", "_reconstruct"),
            ("numpy._core.multiarray", "_reconstruct"),
            ("numpy.core.multiarray", "scalar"),
            ("numpy._core.multiarray", "scalar"),
            ("numpy.core.numeric", "_frombuffer"),
            ("numpy._core.numeric", "_frombuffer"),
            ("numpy", "ndarray"),
            ("numpy", "dtype"),
            ("_codecs", "encode"),
        }
    )

    def find_class(self, module: str, name: str) -> object:
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"refusing to unpickle {module}.{name} from a CIFAR batch")
        return super().find_class(module, name)


def _unpickle(data: bytes, name: str) -> dict:
    """The batch pickled in ``data``; ``name`` (the archive or folder and the member) is named by
    every error: a refused or damaged pickle is a :class:`DataError` about that file."""
    try:
        batch = _ArrayUnpickler(io.BytesIO(data), encoding="bytes").load()
    except pickle.UnpicklingError as exc:
        raise data_error(name, f"not a plain CIFAR batch ({exc})") from exc
    except (EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError) as exc:
        raise data_error(name, f"unreadable CIFAR batch, truncated or corrupt ({type(exc).__name__}: {exc})") from exc
    if not isinstance(batch, dict):
        raise data_error(name, f"expected a pickled dict, got {type(batch).__name__}")
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}


def _read_pickles(found: Found, wanted: tuple[str, ...]) -> dict[str, dict]:
    """The pickled batches named in ``wanted`` (file names without folder), from tar or folder;
    each batch keeps where it came from under ``"_where"`` for the checks' messages."""
    source = found.paths[0] if found.format == "python-tar" else found.paths[0].parent
    batches = {}
    for name, data in iter_members(source, lambda n: PurePosixPath(n).name in wanted, desc="CIFAR batches"):
        where = f"{source} (member {name})" if found.format == "python-tar" else str(source / name)
        batches[PurePosixPath(name).name] = {**_unpickle(data, where), "_where": where}
    missing = sorted(set(wanted) - batches.keys())
    if missing:
        raise ValueError(f"{source}: missing CIFAR batches {missing}")
    return batches


def _images_and_labels(batch: dict, key: str, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The batch's ``data`` as N images of 3×32×32 uint8 pixels and its labels under ``key``, one
    integer in ``[0, n_classes)`` per image (anything else is refused, naming the batch)."""
    data, labels = np.asarray(batch.get("data")), np.asarray(batch.get(key, []))
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        raise data_error(batch["_where"], f"expected 'data' as N×3072 uint8 pixel rows, got {data.dtype} {data.shape}")
    n_rows = len(data)
    if labels.shape != (n_rows,) or (n_rows and not np.issubdtype(labels.dtype, np.integer)):
        raise data_error(
            batch["_where"], f"expected {n_rows} integer labels under {key!r}, got {labels.dtype} {labels.shape}"
        )
    if n_rows and (labels.min() < 0 or labels.max() >= n_classes):
        raise data_error(batch["_where"], f"labels under {key!r} outside 0..{n_classes - 1}")
    return data.reshape(-1, 3, 32, 32), labels.astype(np.int64)


def _decode_cifar10_python(found: Found) -> dict[str, np.ndarray]:
    train_names = tuple(f"data_batch_{i}" for i in range(1, 6))
    batches = _read_pickles(found, train_names + ("test_batch",))
    train = [_images_and_labels(batches[n], "labels", 10) for n in train_names]
    x_val, y_val = _images_and_labels(batches["test_batch"], "labels", 10)
    return {
        "x_train": np.concatenate([x for x, _ in train]),
        "y_train": np.concatenate([y for _, y in train]),
        "x_val": x_val,
        "y_val": y_val,
    }


def _decode_cifar10_jpeg(found: Found) -> dict[str, np.ndarray]:
    """Decode ``<split>/<class>/<file>.jpg`` members, ordered by split, class index, file name."""
    class_index = {c: i for i, c in enumerate(CIFAR10_CLASSES)}
    records: dict[str, list[tuple[int, str, np.ndarray]]] = {"train": [], "test": []}
    members = iter_members(
        found.paths[0],
        lambda n: n.lower().endswith((".jpg", ".jpeg")),
        desc="decoding CIFAR-10 JPEGs",
        total=60_022,
    )
    for name, data in members:
        parts = PurePosixPath(name).parts
        if len(parts) < 3 or parts[-3] not in records or parts[-2] not in class_index:
            raise ValueError(f"{found.paths[0]}: unexpected member {name!r} (want train|test/<class>/<file>.jpg)")
        records[parts[-3]].append((class_index[parts[-2]], parts[-1], decode_jpeg(data, (32, 32), name)))
    arrays = {}
    for split, out in (("train", "train"), ("test", "val")):
        rows = sorted(records[split], key=lambda r: (r[0], r[1]))
        if not rows:
            raise ValueError(f"{found.paths[0]}: no {split}/<class>/*.jpg images")
        arrays[f"x_{out}"] = np.stack([r[2] for r in rows])
        arrays[f"y_{out}"] = np.array([r[0] for r in rows], dtype=np.int64)
    return arrays


_TEST = "official test split (10,000 images)"


@dataset_loader(lambda: CIFAR10_SPEC)
def load_cifar10(request: Request) -> DataSplits:
    """CIFAR-10 as ``3×32×32`` float images, normalised with the mean/std of all 50,000 training
    images of the copy read; ``name`` says which format (see the module docstring)."""
    if request.found.format == "jpeg-tar":
        cache_name, decode, name = "cifar10-jpeg", _decode_cifar10_jpeg, "CIFAR-10 (JPEG mirror)"
        source = f"{name}: images re-encoded as JPEG by a third party, pixels differ slightly from the official release"
    else:
        cache_name, decode, name = "cifar10-python", _decode_cifar10_python, "CIFAR-10"
        source = "CIFAR-10, official python batches"
    return image_splits(
        request, cache_name, decode, class_names=CIFAR10_CLASSES, name=name, source=source, val_split=_TEST
    )


def _decode_cifar100_python(found: Found) -> dict[str, np.ndarray]:
    batches = _read_pickles(found, ("train", "test", "meta"))
    meta = batches["meta"]
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in meta.get("fine_label_names", [])]
    if len(names) != 100:
        raise data_error(meta["_where"], f"expected 100 'fine_label_names', got {len(names)}")
    x_train, y_train = _images_and_labels(batches["train"], "fine_labels", 100)
    x_val, y_val = _images_and_labels(batches["test"], "fine_labels", 100)
    return {
        "x_train": x_train,
        "y_train": y_train,
        "x_val": x_val,
        "y_val": y_val,
        "class_names": np.array(names, dtype=np.str_),
    }


@dataset_loader(lambda: CIFAR100_SPEC)
def load_cifar100(request: Request) -> DataSplits:
    """CIFAR-100 (fine labels, 100 classes) as ``3×32×32`` float images, normalised like CIFAR-10.
    Not available offline on the project's machines."""
    source = "CIFAR-100, official python batches"
    return image_splits(request, "cifar100-python", _decode_cifar100_python, source=source, val_split=_TEST)

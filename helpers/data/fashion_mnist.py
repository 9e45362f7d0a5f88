"""Fashion-MNIST (Xiao, Rasul and Vollgraf, 2017): 70,000 28×28 grayscale clothing images.

Read from the four official IDX files (``.gz`` or uncompressed). The official test split
(10,000 images) serves as the validation split.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np

from helpers.data.core import DataSplits
from helpers.data.images import decoded, image_splits
from helpers.data.sources import Found, Layout, Remote, SourceSpec, locate

CLASSES: tuple[str, ...] = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)

_FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)
_BASE_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
# sha256 of the official files (as listed in tensorflow/datasets' url_checksums/fashion_mnist.txt).
_SHA256 = {
    "train-images-idx3-ubyte": "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
    "train-labels-idx1-ubyte": "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
    "t10k-images-idx3-ubyte": "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
    "t10k-labels-idx1-ubyte": "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
}

SPEC = SourceSpec(
    key="fashion_mnist",
    title="Fashion-MNIST",
    folders=("fashion-mnist", "fashion_mnist", "FashionMNIST"),
    layouts=(
        Layout("idx-gz", tuple(f"{f}.gz" for f in _FILES)),
        Layout("idx", _FILES),
    ),
    remotes=tuple(Remote(f"{f}.gz", (f"{_BASE_URL}{f}.gz",), sha) for f, sha in _SHA256.items()),
    download_layout="idx-gz",
    system_dirs=(Path("/usr/share/datasets/fashion-mnist"),),
    hint="install the Debian package: apt-get install dataset-fashion-mnist "
    "(puts the IDX files in /usr/share/datasets/fashion-mnist)",
)


def read_idx(path: Path) -> np.ndarray:
    """An IDX file (``.gz`` or raw) of unsigned bytes as a NumPy array of its declared shape."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        data = handle.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError(f"{path} is not an unsigned-byte IDX file (bad magic {data[:4]!r})")
    ndim = data[3]
    dims = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    payload = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if payload.size != int(np.prod(dims)):
        raise ValueError(f"{path}: header says {dims} but holds {payload.size} bytes")
    return payload.reshape(dims)


def _decode(found: Found) -> dict[str, np.ndarray]:
    x_train, y_train, x_test, y_test = (read_idx(p) for p in found.paths)
    for x, y, split in ((x_train, y_train, "train"), (x_test, y_test, "test")):
        if x.ndim != 3 or x.shape[0] != y.shape[0]:
            raise ValueError(f"Fashion-MNIST {split}: {x.shape} images vs {y.shape} labels")
    return {
        "x_train": x_train[:, None].copy(),
        "y_train": y_train.astype(np.int64),
        "x_val": x_test[:, None].copy(),
        "y_val": y_test.astype(np.int64),
    }


def load_fashion_mnist(
    *,
    root: str | os.PathLike[str] | None = None,
    n_train: int | None = None,
    n_val: int | None = None,
    seed: int = 0,
    download: bool = True,
) -> DataSplits:
    """Fashion-MNIST as ``1×28×28`` float images; validation = the official test split.

    Images are normalised with the mean/std of all 60,000 training images. ``n_train``/``n_val``
    draw seeded random subsets (see :func:`helpers.data.load_dataset`).
    """
    found = locate(SPEC, root, download=download)
    arrays = decoded("fashion_mnist", found, _decode)
    return image_splits(
        arrays,
        key="fashion_mnist",
        name="Fashion-MNIST",
        source=f"Fashion-MNIST, official IDX files ({found.describe()})",
        class_names=CLASSES,
        val_split="official test split (10,000 images)",
        n_train=n_train,
        n_val=n_val,
        seed=seed,
        location=str(found.directory),
    )

"""Fashion-MNIST (Xiao, Rasul and Vollgraf, 2017): 70,000 28×28 grayscale clothing images.

Read from the four official IDX files (``.gz`` or uncompressed). The official test split
(10,000 images) serves as the validation split.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from helpers.core.data.core import DataSplits, Request, dataset_loader
from helpers.core.data.images import image_splits
from helpers.core.data.sources import Found, KnownFile, Layout, Remote, SourceSpec, data_error, reading

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

# sha256 of the decompressed IDX files (what every faithful copy holds, however compressed) and of
# the Debian package's .gz files (the offline mirror's copies; book/rerun.md lists the
# first, the others were computed from the mirror, whose payloads match the official files').
_CONTENT_SHA256 = {
    "train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    "t10k-images-idx3-ubyte": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    "t10k-labels-idx1-ubyte": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}
_DEBIAN_GZ_SHA256 = {
    "train-images-idx3-ubyte": "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7",
    "train-labels-idx1-ubyte": "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056",
    "t10k-images-idx3-ubyte": "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa",
    "t10k-labels-idx1-ubyte": "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05",
}
_KNOWN = tuple(KnownFile(f"{f}.gz", (_DEBIAN_GZ_SHA256[f],), _CONTENT_SHA256[f]) for f in _FILES) + tuple(
    KnownFile(f, (_CONTENT_SHA256[f],)) for f in _FILES
)
#: Images are 28×28 and labels index :data:`CLASSES`.
IMAGE_SIZE = (28, 28)

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
    known=_KNOWN,
)


def read_idx(path: Path) -> np.ndarray:
    """An IDX file (``.gz`` or raw) of unsigned bytes as a NumPy array of its declared shape."""
    opener = gzip.open if path.suffix == ".gz" else open
    with reading(path, "IDX file"), opener(path, "rb") as handle:
        data = handle.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise data_error(path, f"not an unsigned-byte IDX file (bad magic {data[:4]!r})")
    ndim = data[3]
    if len(data) < 4 + 4 * ndim:
        raise data_error(path, f"IDX header of {ndim} dimensions is cut short ({len(data)} bytes)")
    dims = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    payload = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if payload.size != int(np.prod(dims)):
        raise data_error(path, f"IDX header says {dims} but the file holds {payload.size} bytes (truncated?)")
    return payload.reshape(dims)


def _decode(found: Found) -> dict[str, np.ndarray]:
    x_train, y_train, x_test, y_test = (read_idx(p) for p in found.paths)
    paths = found.paths
    for x, y, (xp, yp) in ((x_train, y_train, paths[:2]), (x_test, y_test, paths[2:])):
        if x.ndim != 3 or tuple(x.shape[1:]) != IMAGE_SIZE:
            raise data_error(xp, f"expected N×28×28 Fashion-MNIST images, got shape {x.shape}")
        if y.ndim != 1 or x.shape[0] != y.shape[0]:
            raise data_error(yp, f"expected {x.shape[0]} labels (one per image of {xp.name}), got shape {y.shape}")
        if y.size and int(y.max()) >= len(CLASSES):
            raise data_error(
                yp, f"label {int(y.max())} is out of range: Fashion-MNIST labels are 0..{len(CLASSES) - 1}"
            )
    return {
        "x_train": x_train[:, None].copy(),
        "y_train": y_train.astype(np.int64),
        "x_val": x_test[:, None].copy(),
        "y_val": y_test.astype(np.int64),
    }


@dataset_loader(lambda: SPEC)
def load_fashion_mnist(request: Request) -> DataSplits:
    """Fashion-MNIST as ``1×28×28`` float images, normalised with the mean/std of all 60,000
    training images."""
    source, val_split = "Fashion-MNIST, official IDX files", "official test split (10,000 images)"
    return image_splits(request, "fashion_mnist", _decode, class_names=CLASSES, source=source, val_split=val_split)

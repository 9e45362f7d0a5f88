"""Datasets as ready-to-train tensors: ``load_dataset(name, ...)`` and one loader per dataset.

* ``adult``: UCI Adult, one-hot + standardised; validation = fixed seeded 20 % of 48,842 rows
* ``fashion_mnist``: Fashion-MNIST, 1×28×28; validation = official test split
* ``cifar10``: CIFAR-10 (official files or the JPEG mirror), 3×32×32; official test split
* ``cifar100``: CIFAR-100 (fine labels), 3×32×32; official test split
* ``tinyimagenet``: TinyImageNet, 3×64×64; official val split
* ``tinyshakespeare``: Tiny Shakespeare, characters; last 10 % of the stream
* ``wikitext2``: WikiText-2, words (or characters); official validation split
* ``imagenet``: ImageNet-1K, lazy image folders (never decoded up front, never downloaded); official val split

Files are looked for in this order: the ``root`` argument (only there when
given) → ``REPRO_DATA_DIR`` (the layout of book/rerun.md: ``adult/adult.csv.gz``,
``cifar10/cifar10-jpeg.tar.gz``, ``tinyshakespeare/input.txt``, ``fashion-mnist/*.gz``, ...) →
system package paths (``/usr/share/datasets/fashion-mnist``) → the download cache → a download
from the official source, verified by checksum (``REPRO_OFFLINE=1`` disables it). If all fail,
:class:`DatasetNotFound` lists every place tried and how to supply the data.

Image and tabular loaders return :class:`DataSplits`, text loaders :class:`TextSplits`. Subsets
(``n_train``/``n_val``) are seeded and reproducible; decoded images are cached (see
:mod:`helpers.core.data.images`) so a second load is fast.
"""

from __future__ import annotations

import os
from collections.abc import Callable

# ``name as name``: a public name re-exported for callers, not used here
from helpers.core.data.adult import adult_table as adult_table
from helpers.core.data.adult import load_adult
from helpers.core.data.cifar import CIFAR10_CLASSES as CIFAR10_CLASSES
from helpers.core.data.cifar import load_cifar10, load_cifar100
from helpers.core.data.core import DataSplits, TextSplits
from helpers.core.data.core import examples_per_class as examples_per_class
from helpers.core.data.core import make_loader as make_loader
from helpers.core.data.fashion_mnist import load_fashion_mnist
from helpers.core.data.imagenet import FolderSplits, load_imagenet
from helpers.core.data.sources import DatasetNotFound, SourceSpec, locate
from helpers.core.data.text import load_tinyshakespeare, load_wikitext2
from helpers.core.data.tinyimagenet import load_tinyimagenet

LOADERS: dict[str, Callable[..., DataSplits | TextSplits | FolderSplits]] = {
    "adult": load_adult,
    "fashion_mnist": load_fashion_mnist,
    "cifar10": load_cifar10,
    "cifar100": load_cifar100,
    "tinyimagenet": load_tinyimagenet,
    "tinyshakespeare": load_tinyshakespeare,
    "wikitext2": load_wikitext2,
    "imagenet": load_imagenet,
}
DATASET_NAMES: tuple[str, ...] = tuple(LOADERS)
#: The size of the official test split of the image datasets the report's accuracy rows are
#: measured on (``tests/test_data.py`` checks each against its loader), so that a row can say how
#: many test images an accuracy difference is.
TEST_EXAMPLES: dict[str, int] = {"fashion_mnist": 10_000, "cifar10": 10_000}
SPECS: dict[str, SourceSpec] = {key: load.spec() for key, load in LOADERS.items()}  # type: ignore[attr-defined]
_ALIASES = {
    "fmnist": "fashion_mnist",
    "cifar_10": "cifar10",
    "cifar_100": "cifar100",
    "tiny_imagenet": "tinyimagenet",
    "imagenet_1k": "imagenet",
    "imagenet1k": "imagenet",
    "ilsvrc2012": "imagenet",
    "wikitext_2": "wikitext2",
    "tiny_shakespeare": "tinyshakespeare",
}

TEXT_DATASETS: tuple[str, ...] = ("tinyshakespeare", "wikitext2")

#: Datasets the project's machines cannot read offline, and what the cpu profile uses instead.
OFFLINE_STAND_INS: dict[str, str] = {
    "cifar100": "cifar10",
    "tinyimagenet": "cifar10",
    "wikitext2": "tinyshakespeare",
}


def _canonical(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in LOADERS:
        raise ValueError(f"unknown dataset {name!r}; choose one of: {', '.join(DATASET_NAMES)}")
    return key


def available(name: str, *, root: str | os.PathLike[str] | None = None) -> bool:
    """Whether dataset ``name`` can be read without downloading anything (checks files only)."""
    try:
        locate(SPECS[_canonical(name)], root, download=False, verify=False)
    except DatasetNotFound:
        return False
    return True


def load_dataset(
    name: str,
    *,
    root: str | os.PathLike[str] | None = None,
    n_train: int | None = None,
    n_val: int | None = None,
    seed: int = 0,
    download: bool = True,
    **kwargs: object,
) -> DataSplits | TextSplits | FolderSplits:
    """Load dataset ``name`` (one of :data:`DATASET_NAMES`; ``-`` and case are ignored).

    ``n_train``/``n_val`` (``None`` = all) pick a subset: seeded rows for image and tabular data,
    contiguous prefixes of the token streams for text. Extra keyword arguments go to the dataset's
    loader (e.g. ``level="char"`` for WikiText-2).
    """
    key = _canonical(name)
    if not isinstance(download, bool):
        raise TypeError(f"download must be a bool, got {type(download).__name__}")
    return LOADERS[key](root=root, n_train=n_train, n_val=n_val, seed=seed, download=download, **kwargs)

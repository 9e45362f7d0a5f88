"""UCI Adult / census income (Becker and Kohavi, 1996): predict income ``>50K`` from 14 attributes.

All 48,842 records (the UCI train and test files merged, in the OpenML ``adult`` v2 order: the
16,281 ``adult.test`` rows, then the 32,561 ``adult.data`` rows) are split once, by a fixed seeded
permutation (:data:`SPLIT_SEED`), 80 % train / 20 % validation. Preprocessing uses the training
rows only:

* the 6 numeric columns are standardised with the training mean and population std;
* the 8 categorical columns are one-hot encoded over the categories seen in training (sorted);
  a missing value ``?`` is kept as a category of its own (nothing is dropped) and a category that
  occurs only in validation rows gets an all-zero encoding.

Label 1 means ``>50K``.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable

import numpy as np
import pandas as pd
import torch

from helpers.core.data.core import DataSplits, Request, data_splits, dataset_loader
from helpers.core.data.sources import Found, KnownFile, Layout, Remote, SourceSpec, data_error, locate, reading

NUMERIC: tuple[str, ...] = (
    "age",
    "fnlwgt",
    "educational-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)
CATEGORICAL: tuple[str, ...] = (
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "gender",
    "native-country",
)
COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "educational-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "gender",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
CLASSES: tuple[str, ...] = ("<=50K", ">50K")
#: Seed of the fixed 80/20 train/validation permutation (part of the dataset's definition).
SPLIT_SEED = 0
TRAIN_FRACTION = 0.8

_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
SPEC = SourceSpec(
    key="adult",
    title="Adult",
    folders=("adult",),
    layouts=(
        Layout("csv", ("adult.csv.gz",)),
        Layout("csv", ("adult.csv",)),
        Layout("uci", ("adult.data", "adult.test")),
    ),
    # sha256 as listed in tensorflow/datasets' url_checksums/adult.txt.
    remotes=(
        Remote(
            "adult.data",
            (_UCI + "adult.data",),
            "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
        ),
        Remote(
            "adult.test",
            (_UCI + "adult.test",),
            "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
        ),
    ),
    download_layout="uci",
    # The offline mirror's file (layout in book/rerun.md) and its decompressed content (adult.csv).
    known=(
        KnownFile(
            "adult.csv.gz",
            ("1c5316247e07e1dfde1834ed02508155ed950a1814b950da9c5e30b4f24bc9c0",),
            "2a974e047fea771e7c773b66db2ec9e3403d68b33c9532e26e714d42610dae20",
        ),
        KnownFile("adult.csv", ("2a974e047fea771e7c773b66db2ec9e3403d68b33c9532e26e714d42610dae20",)),
    ),
)


def _read_uci(path: os.PathLike[str], skip_first: bool) -> pd.DataFrame:
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if skip_first:  # adult.test opens with a "|1x3 Cross validator" line
        text = text.split("\n", 1)[1]
    frame = pd.read_csv(io.StringIO(text), header=None, names=list(COLUMNS), skipinitialspace=True, dtype=str)
    frame = frame.dropna(how="all")
    frame["income"] = frame["income"].str.rstrip(".")  # adult.test writes ">50K."
    return frame


def _read_csv_of(path: os.PathLike[str], read: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """``read()``, with pandas' errors for an empty or malformed table (which name no file)
    turned into a :class:`DataError` naming ``path``."""
    try:
        return read()
    except pd.errors.EmptyDataError as exc:
        raise data_error(path, f"empty file, or no columns to read ({exc})") from exc
    except pd.errors.ParserError as exc:
        raise data_error(path, f"not a readable CSV table ({exc})") from exc


def read_adult(found: Found) -> pd.DataFrame:
    """All rows as strings, in the OpenML v2 order, columns :data:`COLUMNS`."""
    with reading(found.paths[0], "Adult table"):
        if found.format == "uci":
            frame = pd.concat(
                [
                    _read_csv_of(found.paths[1], lambda: _read_uci(found.paths[1], True)),
                    _read_csv_of(found.paths[0], lambda: _read_uci(found.paths[0], False)),
                ],
                ignore_index=True,
            )
        else:
            frame = _read_csv_of(found.paths[0], lambda: pd.read_csv(found.paths[0], dtype=str, skipinitialspace=True))
    missing = set(COLUMNS) - set(frame.columns)
    if missing:
        raise data_error(found.paths[0], f"Adult columns missing: {sorted(missing)}")
    frame = frame[list(COLUMNS)]
    bad = sorted(set(frame["income"].astype(str)) - set(CLASSES))
    if bad:
        raise data_error(found.paths[0], f"unexpected income labels {bad[:5]} (allowed: {', '.join(CLASSES)})")
    numeric = frame[list(NUMERIC)].apply(pd.to_numeric, errors="coerce")
    if numeric.isna().to_numpy().any():
        column = next(c for c in NUMERIC if numeric[c].isna().any())
        row = int(numeric[column].isna().to_numpy().argmax())
        raise data_error(
            found.paths[0], f"numeric column {column!r} holds {frame[column].iloc[row]!r} (row {row}), not a number"
        )
    return frame


def split_rows(n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed train and validation row indices (sorted) of an ``n_rows`` table."""
    order = np.random.default_rng(SPLIT_SEED).permutation(n_rows)
    n_train = int(round(TRAIN_FRACTION * n_rows))
    return np.sort(order[:n_train]), np.sort(order[n_train:])


def encode(frame: pd.DataFrame, train_rows: np.ndarray) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """Features (float32), their names, and the numeric mean/std, all fitted on ``train_rows``."""
    numeric = frame[list(NUMERIC)].astype(np.float64).to_numpy()
    mean = numeric[train_rows].mean(axis=0)
    std = numeric[train_rows].std(axis=0)  # population std: the train columns get std exactly 1
    blocks, names = [(numeric - mean) / std], list(NUMERIC)
    train_frame = frame.iloc[train_rows]
    for column in CATEGORICAL:
        categories = sorted(train_frame[column].unique())
        position = {c: i for i, c in enumerate(categories)}
        codes = frame[column].map(position).fillna(-1).to_numpy(dtype=np.int64)
        onehot = np.zeros((len(frame), len(categories)))
        seen = codes >= 0
        onehot[np.flatnonzero(seen), codes[seen]] = 1.0
        blocks.append(onehot)
        names.extend(f"{column}={c}" for c in categories)
    return np.hstack(blocks).astype(np.float32), names, mean, std


@dataset_loader(lambda: SPEC)
def load_adult(request: Request) -> DataSplits:
    """Adult as float feature vectors and 0/1 labels (see the module docstring); ``mean``/``std`` of
    the result are the training statistics of the numeric columns (raw units)."""
    frame = read_adult(request.found)
    rows = dict(zip(("train", "val"), split_rows(len(frame))))
    features, names, mean, std = encode(frame, rows["train"])
    labels = (frame["income"] == ">50K").to_numpy().astype(np.int64)

    def take(split: str, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.from_numpy(features[rows[split][idx]]), torch.from_numpy(labels[rows[split][idx]])

    sizes = (len(rows["train"]), len(rows["val"]))
    val_split = f"fixed seeded 20 % of all rows ({sizes[1]:,} rows; seed {SPLIT_SEED})"
    source = f"UCI Adult, {len(frame):,} rows"
    return data_splits(
        request,
        take,
        sizes,
        source=source,
        val_split=val_split,
        class_names=CLASSES,
        mean=mean,
        std=std,
        feature_names=tuple(names),
    )


def adult_table(*, root: str | os.PathLike[str] | None = None, download: bool = True) -> pd.DataFrame:
    """The raw Adult table (strings, before encoding), for display."""
    return read_adult(locate(SPEC, root, download=download))

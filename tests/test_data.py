"""Tests for helpers.core.data: parsers on tiny synthetic files in the official formats, the search
order and its error, deterministic subsets, preprocessing, and (when available) the real data.

Every test runs with an empty download cache, ``REPRO_OFFLINE=1`` and no ``REPRO_DATA_DIR``
(see the autouse fixture), so nothing reads the network or a developer's data by accident.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import os
import pickle
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from helpers.core import data
from helpers.core.data import (
    CIFAR10_CLASSES,
    DATASET_NAMES,
    DatasetNotFound,
    load_adult,
    load_cifar10,
    load_cifar100,
    load_dataset,
    load_fashion_mnist,
    load_tinyimagenet,
    load_tinyshakespeare,
    load_wikitext2,
    make_loader,
)
from helpers.core.data import adult as adult_module
from helpers.core.data import cifar as cifar_module
from helpers.core.data import fashion_mnist as fmnist_module
from helpers.core.data import text as text_module
from helpers.core.data.images import cache_file
from helpers.core.data.sources import DataError, Remote

# Captured before the autouse fixture hides them: the real data, for the tests that use it.
REAL_DATA_DIR = os.environ.get("REPRO_DATA_DIR")
REAL_CACHE_DIR = os.environ.get("REPRO_CACHE_DIR")
FMNIST_SYSTEM_DIR = Path("/usr/share/datasets/fashion-mnist")


@pytest.fixture(autouse=True)
def _isolated_data(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REPRO_OFFLINE", "1")
    monkeypatch.delenv("REPRO_DATA_DIR", raising=False)
    # The synthetic files below are deliberately not the official ones; the tests of the real
    # data (and tests/test_bad_inputs.py) switch the checksum check back on.
    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")
    yield


@pytest.fixture
def verified(monkeypatch):
    """Check local files against the known checksums, as outside these tests."""
    monkeypatch.setenv("REPRO_VERIFY_DATA", "1")


# ----------------------------------------------------------------------------- synthetic files


def _jpeg(value: int | np.ndarray, size: int = 32, mode: str = "RGB") -> bytes:
    if isinstance(value, np.ndarray):
        image = Image.fromarray(value, mode=mode)
    else:
        image = Image.new(mode, (size, size), value if mode == "L" else (value,) * 3)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


def _add(archive: tarfile.TarFile, name: str, payload: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    archive.addfile(info, io.BytesIO(payload))


def _class_value(label: int) -> int:
    """Flat grey level that encodes a class, so decoded images can be matched to labels."""
    return 10 + 24 * label


def make_cifar10_jpeg_tar(folder: Path, n_train: int = 3, n_test: int = 2) -> Path:
    """The JPEG mirror's layout: ``train/<class>/NNNN.jpg``, ``test/<class>/NNNN.jpg``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cifar10-jpeg.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        # Written in an order different from the loader's (test first, classes reversed).
        for split, count in (("test", n_test), ("train", n_train)):
            for label in reversed(range(10)):
                for i in range(count):
                    _add(
                        archive,
                        f"{split}/{CIFAR10_CLASSES[label]}/{i:04d}.jpg",
                        _jpeg(_class_value(label)),
                    )
    return path


def _batch(images: np.ndarray, labels: list[int], key: str = "labels") -> bytes:
    record = {
        b"data": images.reshape(len(images), -1),
        key.encode(): labels,
        b"batch_label": b"synthetic",
    }
    return pickle.dumps(record, protocol=2)


def make_cifar10_python(folder: Path, per_batch: int = 4, as_tar: bool = True) -> Path:
    """The official python version: pickled ``data_batch_1..5`` and ``test_batch``."""
    rng = np.random.default_rng(1)
    folder.mkdir(parents=True, exist_ok=True)
    members = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        images = rng.integers(0, 256, (per_batch, 3, 32, 32), dtype=np.uint8)
        members[name] = _batch(images, [int(v) for v in rng.integers(0, 10, per_batch)])
    if not as_tar:
        base = folder / "cifar-10-batches-py"
        base.mkdir()
        for name, payload in members.items():
            (base / name).write_bytes(payload)
        return base
    path = folder / "cifar-10-python.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, payload in members.items():
            _add(archive, f"cifar-10-batches-py/{name}", payload)
    return path


def make_cifar100_tar(folder: Path) -> Path:
    rng = np.random.default_rng(2)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cifar-100-python.tar.gz"
    names = [f"class{i:03d}".encode() for i in range(100)]
    with tarfile.open(path, "w:gz") as archive:
        for split, n in (("train", 8), ("test", 5)):
            images = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
            record = {
                b"data": images.reshape(n, -1),
                b"fine_labels": [3 * i for i in range(n)],
                b"coarse_labels": [0] * n,
            }
            _add(archive, f"cifar-100-python/{split}", pickle.dumps(record, protocol=2))
        meta = {b"fine_label_names": names, b"coarse_label_names": [b"c"] * 20}
        _add(archive, "cifar-100-python/meta", pickle.dumps(meta, protocol=2))
    return path


def _idx(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(d.to_bytes(4, "big") for d in array.shape)
    return header + array.astype(np.uint8).tobytes()


def make_fashion_mnist(folder: Path, n_train: int = 12, n_test: int = 6, gz: bool = True) -> Path:
    rng = np.random.default_rng(3)
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28)),
        "train-labels-idx1-ubyte": np.arange(n_train) % 10,
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28)),
        "t10k-labels-idx1-ubyte": (np.arange(n_test) * 3) % 10,
    }
    for name, array in arrays.items():
        if gz:
            with gzip.open(folder / f"{name}.gz", "wb") as handle:
                handle.write(_idx(array))
        else:
            (folder / name).write_bytes(_idx(array))
    return folder


ADULT_CATEGORIES = {
    "workclass": ["Private", "State-gov", "?"],
    "education": ["Bachelors", "HS-grad"],
    "marital-status": ["Never-married", "Married-civ-spouse"],
    "occupation": ["Sales", "Tech-support", "?"],
    "relationship": ["Husband", "Wife", "Own-child"],
    "race": ["White", "Black"],
    "gender": ["Male", "Female"],
    "native-country": ["United-States", "Mexico", "?"],
}


def adult_frame(n: int = 60, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(17, 90, n),
            "fnlwgt": rng.integers(10_000, 900_000, n),
            "educational-num": rng.integers(1, 17, n),
            "capital-gain": rng.integers(0, 5, n) * 1000,
            "capital-loss": rng.integers(0, 3, n) * 100,
            "hours-per-week": rng.integers(1, 99, n),
        }
    )
    for column, values in ADULT_CATEGORIES.items():
        frame[column] = rng.choice(values, n)
    frame["income"] = rng.choice(["<=50K", ">50K"], n)
    return frame[list(adult_module.COLUMNS)]


def make_adult_csv(folder: Path, frame: pd.DataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "adult.csv.gz"
    frame.to_csv(path, index=False)
    return path


def make_adult_uci(folder: Path, frame: pd.DataFrame, n_test: int) -> None:
    """UCI files: no header, ", " separators, adult.test with a first line and "K." labels."""
    folder.mkdir(parents=True, exist_ok=True)

    def lines(part: pd.DataFrame, dot: str) -> str:
        rows = part.astype(str).to_numpy().tolist()
        return "".join(", ".join(r[:-1] + [r[-1] + dot]) + "\n" for r in rows)

    (folder / "adult.test").write_text("|1x3 Cross validator\n" + lines(frame.iloc[:n_test], "."))
    (folder / "adult.data").write_text(lines(frame.iloc[n_test:], "") + "\n")


SHAKESPEARE = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n" * 3


def make_wikitext_zip(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "wikitext-2-raw-v1.zip"
    texts = {
        "train": " \n = Valkyria Chronicles = \n \n The game began development in 2010 . \n",
        "valid": " \n = Tower Building = \n The building began in 1900 . \n",
        "test": " \n = Robert = \n",
    }
    with zipfile.ZipFile(path, "w") as archive:
        for split, text in texts.items():
            archive.writestr(f"wikitext-2-raw/wiki.{split}.raw", text)
    return path


def make_tinyimagenet_zip(folder: Path) -> Path:
    """The official zip layout with 3 classes (wnids.txt deliberately unsorted)."""
    folder.mkdir(parents=True, exist_ok=True)
    wnids = ["n03", "n01", "n02"]
    words = "n01\tgoldfish, Carassius auratus\nn02\tsalamander\nn03\tbullfrog, Rana catesbeiana\nn99\tx\n"
    path = folder / "tiny-imagenet-200.zip"
    base = "tiny-imagenet-200"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{base}/wnids.txt", "\n".join(wnids) + "\n")
        archive.writestr(f"{base}/words.txt", words)
        for wnid in wnids:
            label = sorted(wnids).index(wnid)
            archive.writestr(f"{base}/train/{wnid}/{wnid}_boxes.txt", "")
            for i in range(2):
                archive.writestr(f"{base}/train/{wnid}/images/{wnid}_{i}.JPEG", _jpeg(_class_value(label), 64))
        # One grayscale train image, as the real set has a few.
        archive.writestr(f"{base}/train/n01/images/n01_2.JPEG", _jpeg(_class_value(0), 64, "L"))
        annotations = []
        for i, wnid in enumerate(["n02", "n03", "n01", "n02"]):
            archive.writestr(
                f"{base}/val/images/val_{i}.JPEG",
                _jpeg(_class_value(sorted(wnids).index(wnid)), 64),
            )
            annotations.append(f"val_{i}.JPEG\t{wnid}\t0\t0\t63\t63")
        archive.writestr(f"{base}/val/val_annotations.txt", "\n".join(annotations) + "\n")
        archive.writestr(f"{base}/test/images/test_0.JPEG", _jpeg(0, 64))
    return path


# ----------------------------------------------------------------------------- dispatch, errors


def test_unknown_name_lists_the_names():
    with pytest.raises(ValueError) as info:
        load_dataset("imagenet21k")
    for name in DATASET_NAMES:
        assert name in str(info.value)


def test_load_dataset_accepts_aliases(tmp_path):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")
    assert load_dataset("CIFAR-10", root=tmp_path).key == "cifar10"
    with pytest.raises(TypeError):
        load_dataset(10)


@pytest.mark.parametrize("bad", [0, -1, 31, 2.5, True, "3"])
def test_bad_n_train_is_a_value_error(tmp_path, bad):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")  # 30 train images
    with pytest.raises(ValueError, match="n_train"):
        load_dataset("cifar10", root=tmp_path, n_train=bad)


@pytest.mark.parametrize("bad", [0, 21])
def test_bad_n_val_is_a_value_error(tmp_path, bad):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")  # 20 test images
    with pytest.raises(ValueError, match="n_val"):
        load_dataset("cifar10", root=tmp_path, n_val=bad)


@pytest.mark.parametrize("bad", [-1, 1.5, None])
def test_bad_seed_is_a_value_error(tmp_path, bad):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")
    with pytest.raises(ValueError, match="seed"):
        load_dataset("cifar10", root=tmp_path, n_train=5, seed=bad)


@pytest.mark.parametrize("name", ["cifar100", "tinyimagenet", "wikitext2", "adult", "cifar10", "tinyshakespeare"])
def test_missing_dataset_error_names_every_place(tmp_path, monkeypatch, name):
    empty = tmp_path / "mirror"
    empty.mkdir()
    monkeypatch.setenv("REPRO_DATA_DIR", str(empty))
    with pytest.raises(DatasetNotFound) as info:
        load_dataset(name)
    message = str(info.value)
    spec = {
        "cifar100": cifar_module.CIFAR100_SPEC,
        "cifar10": cifar_module.CIFAR10_SPEC,
        "tinyimagenet": data.tinyimagenet.SPEC,
        "wikitext2": text_module.WIKITEXT2_SPEC,
        "adult": adult_module.SPEC,
        "tinyshakespeare": text_module.SHAKESPEARE_SPEC,
    }[name]
    assert isinstance(info.value, FileNotFoundError)
    assert spec.title in message
    assert "REPRO_DATA_DIR" in message and "root=" in message
    assert str(empty) in message and str(empty / spec.folders[0]) in message
    assert str(tmp_path / "cache" / "downloads" / spec.key) in message
    for remote in spec.remotes:
        for url in remote.urls:
            assert url in message
    assert "REPRO_OFFLINE=1" in message


def test_missing_fashion_mnist_says_how_to_install(tmp_path, monkeypatch):
    nowhere = tmp_path / "usr-share-datasets-fashion-mnist"
    monkeypatch.setattr(fmnist_module, "SPEC", dataclasses.replace(fmnist_module.SPEC, system_dirs=(nowhere,)))
    with pytest.raises(DatasetNotFound) as info:
        load_fashion_mnist()
    message = str(info.value)
    assert "Fashion-MNIST" in message and "REPRO_DATA_DIR: not set" in message
    assert str(nowhere) in message
    assert "apt-get install dataset-fashion-mnist" in message
    assert "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/" in message


def test_explicit_root_is_the_only_place_searched(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    make_cifar10_jpeg_tar(mirror / "cifar10")
    monkeypatch.setenv("REPRO_DATA_DIR", str(mirror))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(DatasetNotFound) as info:
        load_cifar10(root=elsewhere)
    assert str(elsewhere) in str(info.value)
    assert str(mirror) not in str(info.value)
    with pytest.raises(TypeError, match="root"):
        load_cifar10(root=3)


def test_repro_data_dir_layout_is_found(tmp_path, monkeypatch):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")
    make_fashion_mnist(tmp_path / "fashion-mnist")
    (tmp_path / "tinyshakespeare").mkdir()
    (tmp_path / "tinyshakespeare" / "input.txt").write_text(SHAKESPEARE)
    monkeypatch.setenv("REPRO_DATA_DIR", str(tmp_path))
    assert "via REPRO_DATA_DIR" in load_cifar10(n_train=4).source
    assert "via REPRO_DATA_DIR" in load_fashion_mnist().source
    assert "via REPRO_DATA_DIR" in load_tinyshakespeare().source


def test_available_checks_files_without_downloading(tmp_path, monkeypatch):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")
    monkeypatch.setenv("REPRO_OFFLINE", "0")
    monkeypatch.setattr(
        "helpers.core.data.sources.fetch",
        lambda *a, **k: pytest.fail("available() must never download"),
    )
    assert data.available("cifar10", root=tmp_path)
    assert not data.available("cifar100", root=tmp_path)
    assert not data.available("cifar100")
    with pytest.raises(ValueError, match="unknown dataset"):
        data.available("mnist")


# ----------------------------------------------------------------------------- downloads


def _file_remote(path: Path, sha256: str) -> Remote:
    return Remote(path.name, (path.as_uri(),), sha256)


def test_download_is_verified_and_cached(tmp_path, monkeypatch):
    import hashlib

    served = tmp_path / "server" / "input.txt"
    served.parent.mkdir()
    served.write_text(SHAKESPEARE)
    good = hashlib.sha256(served.read_bytes()).hexdigest()
    spec = dataclasses.replace(text_module.SHAKESPEARE_SPEC, remotes=(_file_remote(served, good),))
    monkeypatch.setattr(text_module, "SHAKESPEARE_SPEC", spec)
    monkeypatch.setenv("REPRO_OFFLINE", "0")
    first = load_tinyshakespeare()
    assert "via download)" in first.source
    served.unlink()  # the second load must not need the server
    assert "via download cache)" in load_tinyshakespeare().source


def test_download_with_wrong_checksum_is_rejected(tmp_path, monkeypatch):
    served = tmp_path / "server" / "input.txt"
    served.parent.mkdir()
    served.write_text(SHAKESPEARE)
    spec = dataclasses.replace(text_module.SHAKESPEARE_SPEC, remotes=(_file_remote(served, "0" * 64),))
    monkeypatch.setattr(text_module, "SHAKESPEARE_SPEC", spec)
    monkeypatch.setenv("REPRO_OFFLINE", "0")
    with pytest.raises(DatasetNotFound, match="sha256 mismatch"):
        load_tinyshakespeare()
    downloads = tmp_path / "cache" / "downloads" / "tinyshakespeare"
    assert list(downloads.iterdir()) == []  # nothing half-verified is left behind


def test_offline_skips_downloads(tmp_path, monkeypatch):
    served = tmp_path / "input.txt"
    served.write_text(SHAKESPEARE)
    spec = dataclasses.replace(text_module.SHAKESPEARE_SPEC, remotes=(_file_remote(served, "0" * 64),))
    monkeypatch.setattr(text_module, "SHAKESPEARE_SPEC", spec)
    with pytest.raises(DatasetNotFound, match="skipped, REPRO_OFFLINE=1"):
        load_tinyshakespeare()


def test_download_false_never_downloads(tmp_path, monkeypatch):
    served = tmp_path / "input.txt"
    served.write_text(SHAKESPEARE)
    spec = dataclasses.replace(text_module.SHAKESPEARE_SPEC, remotes=(_file_remote(served, "0" * 64),))
    monkeypatch.setattr(text_module, "SHAKESPEARE_SPEC", spec)
    monkeypatch.setenv("REPRO_OFFLINE", "0")
    with pytest.raises(DatasetNotFound, match="skipped, download=False"):
        load_dataset("tinyshakespeare", download=False)


def test_remote_needs_a_digest():
    with pytest.raises(ValueError, match="sha256"):
        Remote("x.zip", ("https://example.org/x.zip",))


# ----------------------------------------------------------------------------- CIFAR-10


def test_cifar10_jpeg_mirror_shapes_labels_and_name(tmp_path):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")
    splits = load_cifar10(root=tmp_path)
    x, y = splits.train.tensors
    assert x.shape == (30, 3, 32, 32) and x.dtype == torch.float32
    assert y.dtype == torch.int64 and splits.val.tensors[0].shape == (20, 3, 32, 32)
    assert splits.name == "CIFAR-10 (JPEG mirror)" and "JPEG mirror" in splits.source
    assert splits.class_names == CIFAR10_CLASSES and splits.num_classes == 10
    assert splits.input_shape == (3, 32, 32)
    assert y.tolist() == [c for c in range(10) for _ in range(3)]  # ordered by class, then file
    # Each flat image's grey level encodes its label: labels and pixels stayed together.
    pixels = splits.unnormalize(x) * 255
    assert torch.allclose(
        pixels.mean(dim=(1, 2, 3)),
        torch.tensor([_class_value(c) for c in y.tolist()], dtype=torch.float32),
        atol=2.0,
    )


def test_images_are_normalised_with_train_statistics(tmp_path):
    make_cifar10_python(tmp_path, per_batch=40)
    splits = load_cifar10(root=tmp_path)
    x = splits.train.tensors[0].double()
    assert torch.allclose(x.mean(dim=(0, 2, 3)), torch.zeros(3, dtype=torch.float64), atol=1e-5)
    assert torch.allclose(x.std(dim=(0, 2, 3), unbiased=False), torch.ones(3, dtype=torch.float64), atol=1e-5)


def test_cifar10_python_format_matches_its_pixels(tmp_path):
    path = make_cifar10_python(tmp_path)
    splits = load_cifar10(root=tmp_path)
    assert splits.name == "CIFAR-10" and splits.n_train == 20 and splits.n_val == 4
    with tarfile.open(path) as archive:
        first = pickle.load(archive.extractfile("cifar-10-batches-py/data_batch_1"), encoding="bytes")
    restored = (splits.unnormalize(splits.train.tensors[0][:4]) * 255).round().to(torch.uint8)
    assert torch.equal(restored, torch.from_numpy(first[b"data"].reshape(4, 3, 32, 32)))
    assert splits.train.tensors[1][:4].tolist() == first[b"labels"]


def test_cifar10_python_folder_and_preference_over_jpeg(tmp_path):
    make_cifar10_python(tmp_path, as_tar=False)
    make_cifar10_jpeg_tar(tmp_path)
    splits = load_cifar10(root=tmp_path)
    assert splits.name == "CIFAR-10"  # lossless official files win over the JPEG mirror
    assert splits.n_train == 20


def test_a_fabricated_cifar10_batches_folder_is_refused_not_read_as_cifar(tmp_path, verified):
    """Right file names, other content (here 4 random images a batch): its md5s match no official
    batch, so it is refused naming the file, even beside the verified JPEG mirror."""
    make_cifar10_python(tmp_path, as_tar=False)
    with pytest.raises(DataError, match=r"data_batch_1.*matches no known copy of CIFAR-10's data_batch_1"):
        load_cifar10(root=tmp_path)


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda r: r.pop(b"labels"), "expected 4 integer labels under 'labels'"),
        (lambda r: r.update({b"labels": [0, 1, 2, 10]}), "labels under 'labels' outside 0..9"),
        (lambda r: r.update({b"data": r[b"data"].astype(np.float32)}), "expected 'data' as N×3072 uint8"),
        (lambda r: r.update({b"data": r[b"data"][:, :3000]}), "expected 'data' as N×3072 uint8"),
        (lambda r: r.pop(b"data"), "expected 'data' as N×3072 uint8"),
    ],
)
def test_a_cifar_batch_of_the_wrong_structure_is_refused_naming_it(tmp_path, damage, problem):
    base = make_cifar10_python(tmp_path, as_tar=False)
    record = pickle.loads((base / "data_batch_3").read_bytes())
    damage(record)
    (base / "data_batch_3").write_bytes(pickle.dumps(record, protocol=2))
    with pytest.raises(DataError, match="data_batch_3") as info:
        load_cifar10(root=tmp_path)
    assert problem in str(info.value)


def test_old_numpy_pickles_load_and_code_pickles_do_not(tmp_path):
    images = np.zeros((2, 3, 32, 32), dtype=np.uint8)
    modern = _batch(images, [1, 2])
    # Pickles written by Python 2 / NumPy 1 (the official files) name numpy.core.multiarray.
    old = modern.replace(b"numpy._core.multiarray", b"numpy.core.multiarray")
    assert old != modern
    assert cifar_module._unpickle(old, "old")["labels"] == [1, 2]
    evil = pickle.dumps({b"data": os.system}, protocol=2)
    with pytest.raises(DataError, match="evil: not a plain CIFAR batch .*refusing"):  # names the file
        cifar_module._unpickle(evil, "evil")


def test_decoded_arrays_are_cached_and_invalidated(tmp_path, monkeypatch):
    path = make_cifar10_jpeg_tar(tmp_path / "cifar10")
    first = load_cifar10(root=tmp_path)
    cached = list((tmp_path / "cache" / "datasets").glob("cifar10-jpeg-*.npz"))
    assert len(cached) == 1

    def no_decode(found):
        raise AssertionError("decoded again despite the cache")

    monkeypatch.setattr(cifar_module, "_decode_cifar10_jpeg", no_decode)
    second = load_cifar10(root=tmp_path)
    assert torch.equal(first.train.tensors[0], second.train.tensors[0])
    os.utime(path, ns=(1, 1))  # a changed source file must not be served from the old entry
    with pytest.raises(AssertionError, match="decoded again"):
        load_cifar10(root=tmp_path)


def test_corrupt_cache_entry_is_rebuilt(tmp_path):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")
    reference = load_cifar10(root=tmp_path)
    (entry,) = (tmp_path / "cache" / "datasets").glob("*.npz")
    entry.write_bytes(b"not an npz")
    with pytest.warns(UserWarning, match="rebuilding"):
        again = load_cifar10(root=tmp_path)
    assert torch.equal(reference.val.tensors[0], again.val.tensors[0])


def test_bad_jpeg_member_is_reported(tmp_path):
    folder = tmp_path / "cifar10"
    folder.mkdir()
    with tarfile.open(folder / "cifar10-jpeg.tar.gz", "w:gz") as archive:
        _add(archive, "train/unicorn/0000.jpg", _jpeg(0))
    with pytest.raises(ValueError, match="unicorn"):
        load_cifar10(root=tmp_path)


# ----------------------------------------------------------------------------- subsets, loaders


def test_subsets_are_deterministic_and_seeded(tmp_path):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")
    a = load_cifar10(root=tmp_path, n_train=10, n_val=5, seed=1)
    b = load_cifar10(root=tmp_path, n_train=10, n_val=5, seed=1)
    c = load_cifar10(root=tmp_path, n_train=10, n_val=5, seed=2)
    assert torch.equal(a.train_indices, b.train_indices) and torch.equal(a.val_indices, b.val_indices)
    assert torch.equal(a.train.tensors[0], b.train.tensors[0])
    assert not torch.equal(a.train_indices, c.train_indices)
    assert len(set(a.train_indices.tolist())) == 10 and a.n_train == 10 and a.n_val == 5
    # The train subset does not depend on how many validation rows were asked for.
    d = load_cifar10(root=tmp_path, n_train=10, n_val=7, seed=1)
    assert torch.equal(a.train_indices, d.train_indices)
    full = load_cifar10(root=tmp_path)
    assert torch.equal(full.train.tensors[1][a.train_indices], a.train.tensors[1])
    assert torch.equal(full.train.tensors[0][a.train_indices], a.train.tensors[0])


def test_subsets_do_not_touch_global_rng(tmp_path):
    make_cifar10_jpeg_tar(tmp_path / "cifar10")
    torch.manual_seed(0)
    np.random.seed(0)
    load_cifar10(root=tmp_path, n_train=10, seed=3)
    after = (torch.rand(1).item(), np.random.rand())
    torch.manual_seed(0)
    np.random.seed(0)
    assert after == (torch.rand(1).item(), np.random.rand())


def test_examples_per_class_interleaves_classes():
    labels = torch.tensor([2, 0, 0, 1, 2, 1, 0])
    assert data.examples_per_class(labels, 2, 3).tolist() == [1, 3, 0, 2, 5, 4]
    with pytest.raises(ValueError, match="class 1 has only 2"):
        data.examples_per_class(labels, 3, 3)
    with pytest.raises(ValueError, match="per_class"):
        data.examples_per_class(labels, 0, 3)


def test_make_loader_order_is_seeded():
    dataset = torch.utils.data.TensorDataset(torch.arange(50))

    def order(seed):
        return torch.cat([b[0] for b in make_loader(dataset, 8, shuffle=True, seed=seed)]).tolist()

    assert order(3) == order(3)
    assert order(3) != order(4)
    assert sorted(order(3)) == list(range(50))
    plain = torch.cat([b[0] for b in make_loader(dataset, 8, shuffle=False)]).tolist()
    assert plain == list(range(50))
    assert make_loader(dataset, 8, shuffle=True).num_workers == 0


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"batch_size": 0}, ValueError),
        ({"batch_size": 2.0}, ValueError),
        ({"seed": -1}, ValueError),
        ({"shuffle": "yes"}, TypeError),
    ],
)
def test_make_loader_rejects_bad_arguments(kwargs, error):
    args = {
        "dataset": torch.utils.data.TensorDataset(torch.arange(4)),
        "batch_size": 2,
        "shuffle": True,
        "seed": 0,
        **kwargs,
    }
    with pytest.raises(error):
        make_loader(**args)
    with pytest.raises(TypeError, match="Dataset"):
        make_loader([1, 2, 3], 2, shuffle=False)


# ----------------------------------------------------------------------------- other images


@pytest.mark.parametrize("gz", [True, False])
def test_fashion_mnist_idx(tmp_path, gz):
    make_fashion_mnist(tmp_path / "fashion-mnist", gz=gz)
    splits = load_fashion_mnist(root=tmp_path, n_train=5, seed=0)
    assert splits.train.tensors[0].shape == (5, 1, 28, 28)
    assert splits.val.tensors[0].shape == (6, 1, 28, 28)
    assert splits.val.tensors[1].tolist() == [0, 3, 6, 9, 2, 5]
    assert splits.num_classes == 10 and splits.class_names[-1] == "Ankle boot"
    assert len(splits.mean) == 1


def test_fashion_mnist_rejects_a_non_idx_file(tmp_path):
    folder = make_fashion_mnist(tmp_path)
    with gzip.open(folder / "train-images-idx3-ubyte.gz", "wb") as handle:
        handle.write(b"\x00\x00\x0d\x03garbage")
    with pytest.raises(ValueError, match="IDX"):
        load_fashion_mnist(root=tmp_path)


def test_cifar100_python(tmp_path):
    make_cifar100_tar(tmp_path / "cifar100")
    splits = load_cifar100(root=tmp_path)
    assert splits.num_classes == 100 and splits.class_names[3] == "class003"
    assert splits.train.tensors[0].shape == (8, 3, 32, 32)
    assert splits.train.tensors[1].tolist() == [0, 3, 6, 9, 12, 15, 18, 21]
    assert splits.val.tensors[1].max() < 100


def test_tinyimagenet_zip_and_folder(tmp_path):
    zip_path = make_tinyimagenet_zip(tmp_path / "zip")
    splits = load_tinyimagenet(root=tmp_path / "zip")
    assert splits.train.tensors[0].shape == (7, 3, 64, 64)
    assert splits.class_names == ("goldfish", "salamander", "bullfrog")  # sorted wnids n01..n03
    assert splits.val.tensors[1].tolist() == [1, 2, 0, 1]
    assert splits.train.tensors[1].tolist() == [0, 0, 0, 1, 1, 2, 2]
    grey = splits.unnormalize(splits.val.tensors[0]) * 255
    assert torch.allclose(
        grey.mean(dim=(1, 2, 3)),
        torch.tensor([_class_value(v) for v in [1, 2, 0, 1]], dtype=torch.float32),
        atol=2.0,
    )
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(tmp_path / "dir")
    from_folder = load_tinyimagenet(root=tmp_path / "dir")
    assert torch.equal(from_folder.train.tensors[0], splits.train.tensors[0])


# ----------------------------------------------------------------------------- Adult


def test_adult_standardised_and_one_hot(tmp_path):
    frame = adult_frame(80)
    make_adult_csv(tmp_path / "adult", frame)
    splits = load_adult(root=tmp_path)
    x, y = splits.train.tensors
    assert splits.n_train == 64 and splits.n_val == 16  # fixed 80/20 split
    numeric = x[:, : len(adult_module.NUMERIC)].double()
    assert torch.allclose(numeric.mean(0), torch.zeros(6, dtype=torch.float64), atol=1e-5)
    assert torch.allclose(numeric.std(0, unbiased=False), torch.ones(6, dtype=torch.float64), atol=1e-5)
    names = splits.feature_names
    assert len(names) == x.shape[1] == splits.input_shape[0]
    for column in adult_module.CATEGORICAL:
        block = [i for i, n in enumerate(names) if n.startswith(f"{column}=")]
        assert block, column
        assert set(x[:, block].unique().tolist()) <= {0.0, 1.0}
        assert torch.all(x[:, block].sum(1) == 1)  # exactly one category per training row
    assert "workclass=?" in names  # missing values are a category, not dropped rows
    rows = np.sort(np.random.default_rng(adult_module.SPLIT_SEED).permutation(80)[:64])
    assert y.tolist() == (frame["income"].iloc[rows] == ">50K").astype(int).tolist()
    assert y.dtype == torch.int64 and splits.class_names == ("<=50K", ">50K")


def test_adult_category_only_in_validation_encodes_as_zeros(tmp_path):
    frame = adult_frame(80)
    _, val_rows = adult_module.split_rows(80)
    frame.loc[val_rows[0], "native-country"] = "Atlantis"
    make_adult_csv(tmp_path, frame)
    splits = load_adult(root=tmp_path)
    assert not any("Atlantis" in n for n in splits.feature_names)
    block = [i for i, n in enumerate(splits.feature_names) if n.startswith("native-country=")]
    assert splits.val.tensors[0][0, block].sum() == 0


def test_adult_uci_files_give_the_same_table(tmp_path):
    frame = adult_frame(50)
    make_adult_csv(tmp_path / "csv", frame)
    make_adult_uci(tmp_path / "uci", frame, n_test=20)
    a, b = load_adult(root=tmp_path / "csv"), load_adult(root=tmp_path / "uci")
    assert torch.equal(a.train.tensors[0], b.train.tensors[0])
    assert torch.equal(a.val.tensors[1], b.val.tensors[1])


def test_adult_subsets(tmp_path):
    make_adult_csv(tmp_path, adult_frame(80))
    a = load_adult(root=tmp_path, n_train=10, n_val=4, seed=5)
    b = load_adult(root=tmp_path, n_train=10, n_val=4, seed=5)
    assert torch.equal(a.train.tensors[0], b.train.tensors[0]) and a.n_val == 4
    with pytest.raises(ValueError, match=r"1\.\.64"):
        load_adult(root=tmp_path, n_train=65)


def test_adult_rejects_unknown_labels(tmp_path):
    frame = adult_frame(10)
    frame.loc[0, "income"] = "rich"
    make_adult_csv(tmp_path, frame)
    with pytest.raises(ValueError, match="income"):
        load_adult(root=tmp_path)


# ----------------------------------------------------------------------------- text


def test_char_level_round_trip_and_split(tmp_path):
    (tmp_path / "input.txt").write_text(SHAKESPEARE)
    splits = load_tinyshakespeare(root=tmp_path)
    assert splits.vocab == tuple(sorted(set(SHAKESPEARE)))
    assert len(splits.train_tokens) == int(0.9 * len(SHAKESPEARE))
    assert len(splits.train_tokens) + len(splits.val_tokens) == len(SHAKESPEARE)
    assert splits.train_tokens.dtype == torch.long
    assert splits.decode(splits.train_tokens) + splits.decode(splits.val_tokens) == SHAKESPEARE
    text = "Speak, speak.\n"
    assert splits.decode(splits.encode(text)) == text
    with pytest.raises(ValueError, match="vocabulary"):
        splits.encode("Zebra")
    with pytest.raises(ValueError, match="token ids"):
        splits.decode([len(splits.vocab)])
    with pytest.raises(TypeError):
        splits.encode(3)
    small = load_tinyshakespeare(root=tmp_path, n_train=20, n_val=5)
    assert torch.equal(small.train_tokens, splits.train_tokens[:20]) and len(small.val_tokens) == 5
    with pytest.raises(ValueError, match="n_val"):
        load_tinyshakespeare(root=tmp_path, n_val=len(splits.val_tokens) + 1)


def test_wikitext2_word_and_char_level(tmp_path):
    make_wikitext_zip(tmp_path / "wikitext2")
    words = load_wikitext2(root=tmp_path)
    assert words.vocab[:2] == ("<eos>", "<unk>") and words.level == "word"
    assert words.decode(words.train_tokens).startswith("\n= Valkyria Chronicles =\n\nThe game")
    unk = words.vocab.index("<unk>")
    assert (words.val_tokens == unk).sum() == 4  # Tower, Building, building, 1900: not in train
    line = "The game began .\n"
    assert words.decode(words.encode(line)) == line
    assert words.encode("never seen").tolist() == [unk, unk]
    chars = load_dataset("wikitext2", root=tmp_path, level="char", n_train=10)
    assert chars.level == "char" and len(chars.train_tokens) == 10
    assert chars.decode(chars.encode("game")) == "game"
    with pytest.raises(ValueError, match="level"):
        load_wikitext2(root=tmp_path, level="bpe")


# ----------------------------------------------------------------------------- the real data

needs_mirror = pytest.mark.skipif(
    not (REAL_DATA_DIR and (Path(REAL_DATA_DIR) / "cifar10" / "cifar10-jpeg.tar.gz").exists()),
    reason="the offline data mirror is absent: set REPRO_DATA_DIR to a folder like shared/data "
    "(with cifar10/cifar10-jpeg.tar.gz, adult/adult.csv.gz, tinyshakespeare/input.txt)",
)


@pytest.fixture
def real_cache(monkeypatch):
    """The real decoded-array cache, so the 60,000 JPEGs are decoded once, not per test run."""
    if REAL_CACHE_DIR:
        monkeypatch.setenv("REPRO_CACHE_DIR", REAL_CACHE_DIR)
    else:
        monkeypatch.delenv("REPRO_CACHE_DIR")


@needs_mirror
@pytest.mark.slow
def test_real_cifar10_mirror(real_cache, verified):
    splits = load_dataset("cifar10", root=REAL_DATA_DIR, n_train=500, n_val=200, seed=0)
    assert splits.name == "CIFAR-10 (JPEG mirror)"
    assert splits.train.tensors[0].shape == (500, 3, 32, 32)
    assert int(splits.train.tensors[1].max()) <= 9 and int(splits.train.tensors[1].min()) >= 0
    key_file = cache_file("cifar10-jpeg", "x").parent
    entry = next(key_file.glob("cifar10-jpeg-*.npz"))
    with np.load(entry) as stored:
        assert stored["x_train"].shape == (50_000, 3, 32, 32)
        assert stored["x_val"].shape == (10_000, 3, 32, 32)
        assert np.bincount(stored["y_train"]).tolist() == [5000] * 10
        assert np.bincount(stored["y_val"]).tolist() == [1000] * 10


@needs_mirror
def test_real_adult_and_tinyshakespeare(verified):
    adult = load_adult(root=REAL_DATA_DIR)
    assert (adult.n_train, adult.n_val) == (39_074, 9_768)
    assert adult.train.tensors[0].shape[1] == len(adult.feature_names)
    text = load_tinyshakespeare(root=REAL_DATA_DIR)
    assert len(text.train_tokens) + len(text.val_tokens) == 1_115_394
    assert text.vocab_size == 65


@pytest.mark.skipif(not FMNIST_SYSTEM_DIR.exists(), reason="apt package dataset-fashion-mnist is not installed")
def test_real_fashion_mnist_from_system_path(verified):
    splits = load_fashion_mnist(n_train=100, n_val=50)
    assert "via system path)" in splits.source
    assert splits.train.tensors[0].shape == (100, 1, 28, 28)


# ----------------------------------------------------------------------------- the image grid


def test_show_image_grid_titles_and_rejects_bad_input():
    import matplotlib

    matplotlib.use("Agg")
    from helpers.core.plots import show_image_grid

    fig = show_image_grid(torch.rand(5, 3, 8, 8), [0, 1, 2, 3, 4], CIFAR10_CLASSES, ncols=3)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == list(CIFAR10_CLASSES[:5]) and len(fig.axes) == 6
    gray = show_image_grid(torch.rand(2, 1, 8, 8))
    assert len(gray.axes) == 2
    with pytest.raises(ValueError, match="channels"):
        show_image_grid(torch.rand(2, 4, 8, 8))
    with pytest.raises(ValueError, match="labels"):
        show_image_grid(torch.rand(2, 3, 8, 8), [0])
    with pytest.raises(ValueError, match="outside"):
        show_image_grid(torch.rand(1, 3, 8, 8), [10], CIFAR10_CLASSES)
    import matplotlib.pyplot as plt

    plt.close("all")

"""ImageNet-1K in its image-folder layout, verified lazily (counts per class, sampled digests),
on a tiny copy made here; and the paper profile's preflight, which never falls back to a download."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest
from PIL import Image

from helpers.core import data
from helpers.core.data import DatasetNotFound, load_dataset
from helpers.core.data.imagenet import ImageNetCounts, load_imagenet, manifest_path, reorganise_val
from helpers.core.data.sources import DataError
from tools import paper_plan, preflight

WNIDS = ("n01440764", "n01443537", "n01484850")
TINY = ImageNetCounts(n_classes=3, n_train=6, n_val=3, val_per_class=1)


def _jpeg(shade: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), (shade, 255 - shade, 100)).save(buf, "JPEG")
    return buf.getvalue()


def make_imagenet(folder: Path, *, flat_val: bool = False) -> Path:
    """train/<wnid>/<wnid>_<i>.JPEG (2 per class) and val/<wnid>/ILSVRC2012_val_<n>.JPEG (1 per
    class), or the flat val/ of the official archive with LOC_val_solution.csv beside it."""
    root = folder / "imagenet"
    rows = ["ImageId,PredictionString"]
    for c, wnid in enumerate(WNIDS):
        (root / "train" / wnid).mkdir(parents=True)
        for i in range(2):
            (root / "train" / wnid / f"{wnid}_{i}.JPEG").write_bytes(_jpeg(40 * c + i))
        name = f"ILSVRC2012_val_{c + 1:08d}"
        val = root / "val" if flat_val else root / "val" / wnid
        val.mkdir(parents=True, exist_ok=True)
        (val / f"{name}.JPEG").write_bytes(_jpeg(200 - 30 * c))
        rows.append(f"{name},{wnid} 10 20 30 40")
    (folder / "LOC_val_solution.csv").write_text("\n".join(rows) + "\n")
    return root


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))


def test_the_image_folders_load_lazily_with_classes_in_wnid_order(tmp_path):
    make_imagenet(tmp_path)
    splits = load_imagenet(root=tmp_path, expected=TINY, image_size=32)
    assert splits.wnids == WNIDS
    assert len(splits.train) == 6 and len(splits.val) == 3
    image, label = splits.val[2]
    assert tuple(image.shape) == (3, 32, 32) and label == 2
    assert "manifest" not in splits.description and manifest_path(tmp_path / "imagenet").exists()


def test_the_official_counts_refuse_a_partial_copy_naming_what_is_short(tmp_path):
    make_imagenet(tmp_path)
    with pytest.raises(DataError, match=r"train has 3 class folders, expected 1000.*train has 6 images"):
        load_dataset("ImageNet-1K", root=tmp_path)


def test_a_missing_image_is_named_by_its_count(tmp_path):
    root = make_imagenet(tmp_path)
    next((root / "val" / WNIDS[1]).iterdir()).unlink()
    with pytest.raises(DataError, match=rf"val has 2 images, expected 3.*{WNIDS[1]} with 0"):
        load_imagenet(root=tmp_path, expected=TINY)


def test_a_file_changed_after_first_use_is_refused_by_name(tmp_path):
    root = make_imagenet(tmp_path)
    load_imagenet(root=tmp_path, expected=TINY)
    target = root / "train" / WNIDS[0] / f"{WNIDS[0]}_0.JPEG"
    target.write_bytes(_jpeg(7))
    with pytest.raises(DataError, match=rf"{target.name} differs from the copy verified on first use"):
        load_imagenet(root=tmp_path, expected=TINY)


def test_the_flat_official_val_folder_is_refused_then_reorganised(tmp_path):
    root = make_imagenet(tmp_path, flat_val=True)
    with pytest.raises(DataError, match="reorganise_val"):
        load_imagenet(root=tmp_path, expected=TINY)
    assert reorganise_val(root, tmp_path / "LOC_val_solution.csv") == 3
    splits = load_imagenet(root=tmp_path, expected=TINY)
    assert [label for _, label in splits.val.samples] == [0, 1, 2]


def test_a_missing_copy_says_where_to_put_it_and_never_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("REPRO_OFFLINE", raising=False)
    with pytest.raises(DatasetNotFound, match=r"imagenet/ with train \+ val"):
        load_dataset("imagenet")


def test_subsets_are_refused():
    with pytest.raises(ValueError, match="n_train=10"):
        load_imagenet(n_train=10)


def test_the_paper_profile_preflight_needs_every_paper_dataset_and_downloads_none(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "data"
    empty.mkdir()
    monkeypatch.setenv("REPRO_DATA_DIR", str(empty))
    monkeypatch.delenv("REPRO_OFFLINE", raising=False)  # downloads allowed, still not used
    monkeypatch.setenv("REPRO_VERIFY_DATA", "0")
    spec = data.SPECS["fashion_mnist"]
    monkeypatch.setitem(data.SPECS, "fashion_mnist", dataclasses.replace(spec, system_dirs=()))
    monkeypatch.setattr(preflight, "downloadable", lambda items, timeout=0: {m.key: True for m in items})
    assert preflight.main(["--profile", "paper"]) == 1
    err = capsys.readouterr().err
    for key in ("cifar100", "tinyimagenet", "wikitext2", "cifar10", "adult"):
        assert f"* {key} (" in err
    assert "nothing is downloaded" in err
    assert preflight.main(["--profile", "paper", "imagenet"]) == 1
    assert "imagenet/train + imagenet/val" in capsys.readouterr().err


def test_the_paper_profile_list_covers_every_dataset_the_paper_runs_read():
    read = set()
    for cfg in paper_plan.paper_configs():
        train = cfg.train_config() if hasattr(cfg, "train_config") else cfg
        read |= {getattr(train, "dataset", None)} - {None}
    assert read and {data._canonical(name) for name in read} <= set(preflight.PAPER_NEEDED)


def test_the_paper_profile_preflight_counts_a_partial_copy_as_damaged(tmp_path, monkeypatch, capsys):
    make_imagenet(tmp_path)
    monkeypatch.setenv("REPRO_DATA_DIR", str(tmp_path))
    assert preflight.check(["imagenet"], profile="paper") == 1
    assert "train has 3 class folders, expected 1000" in capsys.readouterr().err

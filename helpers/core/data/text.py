"""Language-modelling corpora as token streams: Tiny Shakespeare (characters) and WikiText-2.

Subsets of a token stream are contiguous *prefixes* (``n_train`` first training tokens, ``n_val``
first validation tokens), so a scaled profile still reads coherent text; ``seed`` is accepted for
a uniform signature and checked, but a prefix does not depend on it.
"""

from __future__ import annotations

import zipfile

import torch

from helpers.core.data.core import Request, TextSplits, check_count, dataset_loader, words_of
from helpers.core.data.sources import Found, KnownFile, Layout, Remote, SourceSpec, reading
from helpers.core.validation import choice

SHAKESPEARE_SPEC = SourceSpec(
    key="tinyshakespeare",
    title="Tiny Shakespeare",
    folders=("tinyshakespeare", "tiny-shakespeare", "tiny_shakespeare"),
    layouts=(Layout("txt", ("input.txt",)), Layout("txt", ("tinyshakespeare.txt",))),
    remotes=(
        Remote(
            "input.txt",
            ("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",),
            "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
        ),
    ),
    download_layout="txt",
    # the same corpus under the other accepted name
    known=(KnownFile("tinyshakespeare.txt", ("86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",)),),
)

WIKITEXT2_SPEC = SourceSpec(
    key="wikitext2",
    title="WikiText-2",
    folders=("wikitext2", "wikitext-2", "wikitext"),
    layouts=(
        Layout("raw-zip", ("wikitext-2-raw-v1.zip",)),
        Layout("raw-dir", ("wikitext-2-raw/wiki.train.raw", "wikitext-2-raw/wiki.valid.raw")),
        Layout("tokens-zip", ("wikitext-2-v1.zip",)),
        Layout("tokens-dir", ("wikitext-2/wiki.train.tokens", "wikitext-2/wiki.valid.tokens")),
    ),
    # The Salesforce (MetaMind) release and the copy llama.cpp's CI fetches; sha256 of the latter
    # (4,721,645 bytes), which is the original archive.
    remotes=(
        Remote(
            "wikitext-2-raw-v1.zip",
            (
                "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-2-raw-v1.zip",
                "https://huggingface.co/datasets/ggml-org/ci/resolve/main/wikitext-2-raw-v1.zip",
            ),
            "ef7edb566e3e2b2d31b29c1fdb0c89a4cc683597484c3dc2517919c615435a11",
        ),
    ),
    download_layout="raw-zip",
)

#: Fraction of the Tiny Shakespeare character stream used for training (the rest validates).
SHAKESPEARE_TRAIN_FRACTION = 0.9


def _text_splits(
    request: Request, train: torch.Tensor, val: torch.Tensor, vocab: tuple[str, ...], level: str, **fields: str
) -> TextSplits:
    """The prefixes of ``n_train``/``n_val`` tokens (see the module docstring) and the rest."""
    title = request.spec.title
    n_train = check_count(request.n_train, len(train), "n_train", title)
    n_val = check_count(request.n_val, len(val), "n_val", title)
    return TextSplits(
        key=request.spec.key,
        name=title,
        train_tokens=train if n_train is None else train[:n_train].clone(),
        val_tokens=val if n_val is None else val[:n_val].clone(),
        vocab=vocab,
        level=level,
        location=str(request.found.directory),
        **fields,
    )


@dataset_loader(lambda: SHAKESPEARE_SPEC)
def load_tinyshakespeare(request: Request) -> TextSplits:
    """Tiny Shakespeare at character level: first 90 % of the stream trains, last 10 % validates.
    The vocabulary is every distinct character of the whole text, sorted (as in nanoGPT's
    ``shakespeare_char``)."""
    path = request.found.paths[0]
    with reading(path, "UTF-8 text file"):
        text = path.read_text(encoding="utf-8")
    if not text:
        raise ValueError(f"{path} is empty")
    vocab = tuple(sorted(set(text)))
    index = {c: i for i, c in enumerate(vocab)}
    tokens = torch.tensor([index[c] for c in text], dtype=torch.long)
    cut = int(SHAKESPEARE_TRAIN_FRACTION * len(tokens))
    return _text_splits(
        request,
        tokens[:cut],
        tokens[cut:],
        vocab,
        "char",
        source=f"Tiny Shakespeare, {len(text):,} characters ({request.found.describe()})",
        val_split=f"last 10 % of the character stream ({len(tokens) - cut:,} characters)",
    )


def _wikitext_texts(found: Found) -> tuple[str, str]:
    suffix = "raw" if found.format.startswith("raw") else "tokens"
    wanted = (f"wiki.train.{suffix}", f"wiki.valid.{suffix}")
    if found.format.endswith("dir"):
        with reading(found.paths[0], "UTF-8 text file"):
            train = found.paths[0].read_text(encoding="utf-8")
        with reading(found.paths[1], "UTF-8 text file"):
            return train, found.paths[1].read_text(encoding="utf-8")
    with reading(found.paths[0], "zip archive"), zipfile.ZipFile(found.paths[0]) as archive:
        by_name = {n.rsplit("/", 1)[-1]: n for n in archive.namelist()}
        missing = [w for w in wanted if w not in by_name]
        if missing:
            raise ValueError(f"{found.paths[0]}: missing {missing}")
        return archive.read(by_name[wanted[0]]).decode("utf-8"), archive.read(by_name[wanted[1]]).decode("utf-8")


@dataset_loader(lambda: WIKITEXT2_SPEC, level=choice(("word", "char")))
def load_wikitext2(request: Request, level: str = "word") -> TextSplits:
    """WikiText-2 (Merity et al., 2016); validation = the official ``wiki.valid`` split.

    ``level="word"``: whitespace-separated words with ``<eos>`` at each line end (the classic
    word-level benchmark convention); the vocabulary is ``<eos>``, ``<unk>`` and the sorted
    distinct words of the training split, and validation words outside it map to ``<unk>``.
    ``level="char"``: characters of the training split (``<unk>`` for others). Not available
    offline on the project's machines.
    """
    train_text, val_text = _wikitext_texts(request.found)
    split = words_of if level == "word" else list
    train_units, val_units = split(train_text), split(val_text)
    specials = ("<eos>", "<unk>") if level == "word" else ("<unk>",)
    vocab = specials + tuple(sorted(set(train_units) - set(specials)))
    index = {t: i for i, t in enumerate(vocab)}
    train = torch.tensor([index[t] for t in train_units], dtype=torch.long)
    val = torch.tensor([index.get(t, index["<unk>"]) for t in val_units], dtype=torch.long)
    kind = "raw" if request.found.format.startswith("raw") else "tokenized"
    return _text_splits(
        request,
        train,
        val,
        vocab,
        level,
        source=f"WikiText-2 ({kind} v1, {level} level; {request.found.describe()})",
        val_split=f"official validation split ({len(val):,} tokens)",
    )

"""The final network's per-example predictions, stored compactly inside a run's result.

A run whose config sets ``record_predictions`` gets a ``predictions`` entry (:class:`PredictionRecord`):
for every validation example, in the loader's fixed order, the predicted label (``uint8``), the
softmax probability of that label and of the true label (``float16``), and whether the prediction
is right (one bit per example), each array ``zlib``-compressed and base64-encoded with its dtype and
shape. The result file's content checksum (:mod:`helpers.core.result_files`) covers these bytes
like every other field. ``targets_sha256`` identifies the labels and their order, so two runs are
compared only on the same examples.

Which network: the one after the **last** epoch, not the best-validation one. Here the validation
set is the test set the churn is measured on, so choosing the epoch on it would select on the very
examples being compared, and two replicas would generally be read at different epochs, adding an
epoch mismatch to the churn. A retrained production model is the end of a fixed schedule; that is
what two reruns disagree about.

The full softmax (10 classes × 10,000 examples × 2 bytes = 200 KB before base64, per run) is not
stored: about 400 runs would commit over 100 MB. The true label's probability is what the relative
prediction difference needs (:func:`helpers.churn.measures.relative_pd`); it adds about 15 KB a run.

For runs annealed from λ-GELU towards ReLU (Table II's procedure), ``predictions_relu`` also holds
the predictions of the final network with every activation swapped for ReLU, the network that
procedure deploys.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.core.data.cifar import CIFAR10_CLASSES
from helpers.core.data.fashion_mnist import CLASSES as FASHION_MNIST_CLASSES
from helpers.core.models import replace_activations
from helpers.core.runs import RunExtension, TrainConfig, autocast_context
from helpers.lambda_gelu.options import LambdaGeluOptions

#: The dtypes an encoded array may have (what the records use).
_DTYPES: tuple[str, ...] = ("uint8", "float16", "bool")
#: The annealed activations whose swapped-to-ReLU network is also recorded.
RELU_SWAPPED_ACTIVATIONS: tuple[str, ...] = ("lambda_gelu",)
_ENCODING = "zlib+base64"


def encode_array(array: np.ndarray) -> dict[str, Any]:
    """``array`` (dtype uint8, float16 or bool) as ``{"dtype", "shape", "encoding", "data"}``:
    its C-order bytes, zlib-compressed (level 9, deterministic) and base64-encoded; a bool array is
    packed to bits."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"encode_array takes a numpy array, got {type(array).__name__}")
    dtype = str(array.dtype)
    if dtype not in _DTYPES:
        raise ValueError(f"encode_array stores dtypes {_DTYPES}, got {dtype}")
    raw = np.packbits(array.ravel()).tobytes() if dtype == "bool" else np.ascontiguousarray(array).tobytes()
    data = base64.b64encode(zlib.compress(raw, 9)).decode("ascii")
    return {"dtype": dtype, "shape": list(array.shape), "encoding": _ENCODING, "data": data}


def decode_array(record: dict[str, Any]) -> np.ndarray:
    """The array :func:`encode_array` stored; a record whose size does not match its shape is an error."""
    if not isinstance(record, dict) or set(record) != {"dtype", "shape", "encoding", "data"}:
        raise ValueError(
            f"an encoded array has exactly the keys dtype, shape, encoding, data; got "
            f"{sorted(record) if isinstance(record, dict) else type(record).__name__}"
        )
    if record["encoding"] != _ENCODING or record["dtype"] not in _DTYPES:
        raise ValueError(
            f"unknown array encoding {record['encoding']!r} or dtype {record['dtype']!r}; "
            f"expected {_ENCODING!r} and one of {_DTYPES}"
        )
    shape = tuple(int(n) for n in record["shape"])
    try:
        raw = zlib.decompress(base64.b64decode(record["data"].encode("ascii"), validate=True))
    except (zlib.error, binascii.Error, ValueError, AttributeError) as err:
        raise ValueError(f"encoded {record['dtype']} array: its data is not valid {_ENCODING} ({err})") from None
    count = int(np.prod(shape))
    if record["dtype"] == "bool":
        bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), count=count)
        if len(raw) != (count + 7) // 8:
            raise ValueError(f"encoded bool array: {len(raw)} bytes for shape {shape}")
        return bits.astype(bool).reshape(shape)
    values = np.frombuffer(raw, dtype=record["dtype"])
    if values.size != count:
        raise ValueError(f"encoded {record['dtype']} array: {values.size} values for shape {shape}")
    return values.reshape(shape).copy()


def targets_digest(targets: np.ndarray) -> str:
    """SHA-256 of the labels (as int64, in order): which examples, in which order."""
    return hashlib.sha256(np.ascontiguousarray(targets, dtype=np.int64).tobytes()).hexdigest()


@dataclass(frozen=True)
class Predictions:
    """One network's decoded predictions on the validation examples (in the loader's order)."""

    labels: np.ndarray  # uint8: argmax of the softmax
    top_prob: np.ndarray  # float16: the softmax probability of ``labels``
    true_prob: np.ndarray  # float16: the softmax probability of the true label
    correct: np.ndarray  # bool: labels == true label
    targets_sha256: str
    epoch: int

    def __post_init__(self) -> None:
        n = len(self.labels)
        if not all(len(a) == n for a in (self.top_prob, self.true_prob, self.correct)):
            raise ValueError("predictions: labels, top_prob, true_prob and correct must have one entry per example")

    @property
    def accuracy(self) -> float:
        return float(np.mean(self.correct))


@torch.no_grad()
def predict(
    model: nn.Module, loader: Any, precision: str = "float32"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(labels, top_prob, true_prob, targets)`` of ``model`` over ``loader`` (eval mode, under the
    run's autocast; the softmax in float32)."""
    was_training = model.training
    model.eval()
    labels, top, true, targets = [], [], [], []
    try:
        with autocast_context(precision):
            for inputs, y in loader:
                probs = torch.softmax(model(inputs).float(), dim=-1)
                p, k = probs.max(dim=-1)
                labels.append(k)
                top.append(p)
                true.append(probs.gather(1, y.view(-1, 1)).squeeze(1))
                targets.append(y)
    finally:
        model.train(was_training)
    return (torch.cat(labels).numpy(), torch.cat(top).numpy(), torch.cat(true).numpy(), torch.cat(targets).numpy())


def prediction_record(
    labels: np.ndarray, top_prob: np.ndarray, true_prob: np.ndarray, targets: np.ndarray, epoch: int
) -> dict[str, Any]:
    """The JSON-able record of one network's predictions (see the module docstring)."""
    if labels.size and (labels.min() < 0 or labels.max() > 255):
        raise ValueError(f"labels must fit uint8 (0-255), got range [{labels.min()}, {labels.max()}]")
    labels8 = labels.astype(np.uint8)
    return {
        "epoch": int(epoch),
        "n": int(labels.size),
        "targets_sha256": targets_digest(targets),
        "labels": encode_array(labels8),
        "top_prob": encode_array(top_prob.astype(np.float16)),
        "true_prob": encode_array(true_prob.astype(np.float16)),
        "correct": encode_array(labels.astype(np.int64) == targets.astype(np.int64)),
    }


#: How many classes the labels of each data set the churn runs use can take.
N_CLASSES: dict[str, int] = {"cifar10": len(CIFAR10_CLASSES), "fashion_mnist": len(FASHION_MNIST_CLASSES)}


def check_predictions(p: Predictions, n_classes: int | None = None) -> None:
    """Raise ``ValueError`` naming what is impossible in ``p``: a label outside the data set's
    ``n_classes``, a probability outside [0, 1], or probabilities that disagree with ``correct``
    (where the prediction is right, its probability is the true label's; elsewhere it is at least
    as large). A checksum recomputed after an edit passes; these do not."""
    problems = []
    if n_classes is not None and p.labels.size and int(p.labels.max()) >= n_classes:
        problems.append(f"{int((p.labels >= n_classes).sum())} labels outside the {n_classes} classes")
    for name in ("top_prob", "true_prob"):
        values = getattr(p, name).astype(np.float32)
        bad = ~np.isfinite(values) | (values < 0) | (values > 1)
        if bad.any():
            problems.append(f"{int(bad.sum())} {name} values outside [0, 1]")
    top, true = p.top_prob.astype(np.float32), p.true_prob.astype(np.float32)
    wrong = (p.correct & (top != true)) | (~p.correct & (true > top))
    if wrong.any():
        problems.append(f"{int(wrong.sum())} examples whose probabilities disagree with 'correct'")
    if problems:
        raise ValueError("; ".join(problems))


def decode_predictions(record: dict[str, Any], n_classes: int | None = None) -> Predictions:
    """The :class:`Predictions` of a result's ``predictions`` (or ``predictions_relu``) entry,
    checked (:func:`check_predictions`; ``n_classes``: the data set's, see :data:`N_CLASSES`)."""
    needed = {"epoch", "n", "targets_sha256", "labels", "top_prob", "true_prob", "correct"}
    if not isinstance(record, dict) or not needed <= set(record):
        raise ValueError(f"a predictions record needs the keys {sorted(needed)}")
    out = Predictions(
        labels=decode_array(record["labels"]),
        top_prob=decode_array(record["top_prob"]),
        true_prob=decode_array(record["true_prob"]),
        correct=decode_array(record["correct"]),
        targets_sha256=str(record["targets_sha256"]),
        epoch=int(record["epoch"]),
    )
    if len(out.labels) != int(record["n"]):
        raise ValueError(f"predictions record: n = {record['n']} but {len(out.labels)} labels")
    check_predictions(out, n_classes)
    return out


def _same_state(model: nn.Module, state: dict[str, torch.Tensor]) -> bool:
    current = model.state_dict()
    return current.keys() == state.keys() and all(torch.equal(current[k], state[k]) for k in current)


class PredictionRecord(RunExtension):
    """``record_predictions``: the final network's predictions on the validation set (and, for an
    annealed λ-GELU run, those of its ReLU swap)."""

    def final_record(
        self, model: nn.Module, cfg: TrainConfig, out: dict[str, Any], parts: dict[str, Any]
    ) -> dict[str, Any]:
        final_epoch = int(out["history"][-1]["epoch"])
        best = out.get("best_state")
        # An earlier extension that left the best epoch's weights in the model would make these the
        # best epoch's predictions under the final epoch's name.
        if best is not None and out["best_epoch"] != final_epoch and _same_state(model, best):
            raise RuntimeError(
                f"run {cfg.experiment!r} ({cfg.activation}): the model holds the best epoch's "
                f"weights (epoch {out['best_epoch']}), not the last epoch's ({final_epoch}); an "
                "earlier run extension must evaluate a copy"
            )
        record = {"predictions": prediction_record(*predict(model, parts["val_loader"], cfg.precision), final_epoch)}
        if cfg.activation in RELU_SWAPPED_ACTIVATIONS and cfg.option(LambdaGeluOptions).anneal_target is not None:
            swapped = replace_activations(model, nn.ReLU)
            record["predictions_relu"] = prediction_record(
                *predict(swapped, parts["val_loader"], cfg.precision), final_epoch
            )
        return record


RUN_EXTENSION = PredictionRecord()

"""One training loop (:func:`helpers.core.train.fit`) in the several processes ``torchrun`` starts
(:mod:`helpers.core.process_group`, re-exported here). What changes with several processes:

* **Data order.** Every rank draws the one-process run's permutation, cuts the same global
  batches and keeps its contiguous shard of each (:class:`ShardedBatchSampler`);
  ``DistributedSampler``'s own permutation (``seed + epoch``) would be another data order. The
  global batch must split evenly (:func:`check_global_batch`).
* **Gradients.** ``DistributedDataParallel`` averages the ranks' gradients; each rank's loss is
  the mean over its shard, so the average is the global batch's mean, as in one process (an
  uneven last batch is weighted by :meth:`ShardedBatchSampler.loss_weight`).
* **BatchNorm.** Global-batch statistics: ``nn.SyncBatchNorm`` on GPUs, :class:`GlobalBatchNorm`
  on the CPU (where ``SyncBatchNorm`` refuses to run).
* **Writes.** Rank 0 writes checkpoints and results; the others wait at a barrier.
* **Method state.** λ, annealing state and Flex-Act's statistics live in parameters, buffers and
  the hooks' ``state_dict``; :func:`check_same_state` compares their fingerprint across ranks
  every epoch and stops the run, naming what differs, before ranks drift apart.

Results agree with the one-process run to float32 rounding, not bit for bit: the all-reduce sums
gradients in another order than one process's reduction over the batch.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Iterator, Sequence, Sized
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import BatchSampler, Sampler

from helpers.core.process_group import (  # noqa: F401 (re-exported: distributed.world() etc.)
    World,
    all_reduce_sum,
    barrier,
    broadcast_object,
    init_from_env,
    is_distributed,
    is_main,
    join_timeout,
    process_device,
    shutdown,
    world,
    world_from_env,
)
from helpers.core.validation import boolean, checked_arguments, instance_of, integer


def check_global_batch(batch_size: int, world_size: int) -> int:
    """The per-rank batch of a global ``batch_size`` over ``world_size`` ranks; an error when it
    does not divide, naming both numbers and what to do."""
    if batch_size % world_size:
        fits = [k for k in range(1, min(batch_size, 64) + 1) if batch_size % k == 0]
        raise ValueError(
            f"the global batch of {batch_size} does not split evenly over {world_size} processes "
            f"(WORLD_SIZE={world_size}): each process would get {batch_size / world_size:g} "
            f"examples. Start a number of processes that divides {batch_size} "
            f"(torchrun --nproc_per_node in {fits[:8]}), or use a config whose batch_size is a "
            f"multiple of {world_size}"
        )
    return batch_size // world_size


class ShardedBatchSampler(Sampler[list[int]]):
    """The one-process run's global batches (``sampler``: its seeded sampler), each cut to this
    rank's contiguous shard: the ranks' k-th batches together are the one-process k-th batch."""

    # the sampler is measured with len() below, so it must be sized (a RandomSampler, a range)
    @checked_arguments(
        {
            "sampler": instance_of(Sized),
            "batch_size": integer(1),
            "rank": integer(0),
            "world_size": integer(1),
            "drop_last": boolean(),
        }
    )
    def __init__(
        self, sampler: Sampler[int], batch_size: int, rank: int, world_size: int, drop_last: bool = False
    ) -> None:
        check_global_batch(batch_size, world_size)
        if not 0 <= rank < world_size:
            raise ValueError(f"rank must be in [0, {world_size}), got {rank!r}")
        self.batches = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.rank, self.world_size, self.drop_last = batch_size, rank, world_size, drop_last
        n = len(sampler)  # type: ignore[arg-type]
        self.n = n
        tail = 0 if drop_last else n % batch_size
        if 0 < tail < world_size:
            raise ValueError(
                f"the last global batch holds {tail} examples ({n} examples in batches of "
                f"{batch_size}), fewer than the {world_size} processes, so some would get none; "
                f"use a number of processes <= {tail}, or n_train such that n_train % "
                f"{batch_size} is 0 or >= {world_size}"
            )

    def _bounds(self, size: int) -> tuple[int, int]:
        base, extra = divmod(size, self.world_size)
        lo = self.rank * base + min(self.rank, extra)
        return lo, lo + base + (1 if self.rank < extra else 0)

    def __iter__(self) -> Iterator[list[int]]:
        for batch in self.batches:
            lo, hi = self._bounds(len(batch))
            yield batch[lo:hi]

    def __len__(self) -> int:
        return len(self.batches)

    def global_size(self, index: int) -> int:
        """Examples in global batch ``index`` (0-based within the epoch)."""
        full = self.n // self.batch_size
        return self.batch_size if index < full else self.n - full * self.batch_size

    def loss_weight(self, index: int, local: int) -> float:
        """The factor that makes the ranks' averaged shard means the global batch's mean:
        ``local · world / global`` (1 for every batch that splits evenly)."""
        return local * self.world_size / self.global_size(index)


def _sum_over_ranks(tensor: torch.Tensor) -> torch.Tensor:
    """The sum over ranks of a small tensor, in rank order (the same bits on every rank).
    ``all_gather`` beats gloo's ring ``all_reduce`` for BatchNorm's few hundred floats (0.4 vs
    1.1 ms on a 2-core machine, paid twice per layer and step)."""
    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor.contiguous())
    return torch.stack(parts).sum(0)


class _GlobalBatchNormFunction(torch.autograd.Function):
    """Batch normalisation of ``x`` with the statistics of every rank's shard together.

    Forward: the shifted sums ``Σ(x-K)`` and ``Σ(x-K)²`` and the count are summed over ranks,
    then the fused eval-mode kernel normalises with the global mean and variance. Backward:
    the fused BatchNorm backward gives this rank's ``Σdy`` and ``Σdy·x̂``; one sum over ranks makes them
    global (as in ``SyncBatchNorm``), and the input gradient is ``dy·a + x·b + c`` per channel.
    Native kernels only: elementwise ops cost a ResNet-18/4 step a third more CPU time.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        x: torch.Tensor,
        weight: torch.Tensor | None,
        bias: torch.Tensor | None,
        shift: torch.Tensor,
        eps: float,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        channels = x.shape[1]
        shifted = x - shift.view(shape)
        local = torch.cat([shifted.sum(dims), (shifted * shifted).sum(dims), x.new_tensor([x.numel() / channels])])
        del shifted
        totals = _sum_over_ranks(local)
        count = totals[-1]
        mean_shifted = totals[:channels] / count
        var = (totals[channels : 2 * channels] / count - mean_shifted * mean_shifted).clamp(min=0.0)
        mean = mean_shifted + shift
        invstd = torch.rsqrt(var + eps)
        out = torch.batch_norm(x, weight, bias, mean, var, False, 0.0, eps, False)
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.count, ctx.eps = count, eps
        return out, mean, var, count

    @staticmethod
    def backward(  # type: ignore[override]
        ctx: Any, grad_out: torch.Tensor, *_: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, None, None]:
        x, weight, mean, invstd = ctx.saved_tensors
        shape = [1, -1] + [1] * (x.dim() - 2)
        channels = x.shape[1]
        scale = invstd if weight is None else invstd * weight
        # this rank's Σdy·x̂ and Σdy, the (unscaled) weight and bias gradients, in one fused pass
        _, sum_dy_xhat, sum_dy = torch.ops.aten.native_batch_norm_backward(
            grad_out, x, weight, None, None, mean, invstd, True, ctx.eps, [False, True, True]
        )
        totals = _sum_over_ranks(torch.cat([sum_dy, sum_dy_xhat]))
        slope = -scale * invstd * totals[channels:] / ctx.count
        offset = -scale * totals[:channels] / ctx.count - slope * mean
        grad_in = torch.addcmul(grad_out * scale.view(shape), x, slope.view(shape)).add_(offset.view(shape))
        if weight is None:
            return grad_in, None, None, None, None
        return grad_in, sum_dy_xhat, sum_dy, None, None


class GlobalBatchNorm(nn.modules.batchnorm._BatchNorm):
    """BatchNorm whose training statistics span every rank's shard (the one-process batch's).

    One sum over ranks per layer forward and one backward, on any device. The shift ``K``, the
    running mean (equal on every rank), keeps ``E[(x-K)²] - E[x-K]²`` from cancelling. Statistics
    in float32; plain BatchNorm outside a process group or in eval mode; BatchNorm's state-dict keys.
    """

    def _check_input_dim(self, input: torch.Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (N, C, ...), got {input.dim()}D")

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if not (self.training and is_distributed()):
            return super().forward(input)
        self._check_input_dim(input)
        x = input.float()
        shift = self.running_mean.detach().float().clone() if self.running_mean is not None else x.new_zeros(x.shape[1])
        weight = None if self.weight is None else self.weight.float()
        bias = None if self.bias is None else self.bias.float()
        out, mean, var, count = _GlobalBatchNormFunction.apply(x, weight, bias, shift, self.eps)
        if self.track_running_stats:
            with torch.no_grad():
                self.num_batches_tracked.add_(1)
                momentum = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
                unbiased = var * (count / (count - 1).clamp(min=1))
                self.running_mean.mul_(1 - momentum).add_(mean, alpha=momentum)
                self.running_var.mul_(1 - momentum).add_(unbiased, alpha=momentum)
        return out.to(input.dtype)


def convert_batchnorm(model: nn.Module, device: torch.device) -> nn.Module:
    """``model`` with every BatchNorm computing global-batch statistics under a process group
    (same parameter tensors, so an existing optimiser still holds them)."""
    if device.type == "cuda":
        return nn.SyncBatchNorm.convert_sync_batchnorm(model)
    return _to_global_bn(model)


def _to_global_bn(module: nn.Module) -> nn.Module:
    out = module
    if isinstance(module, nn.modules.batchnorm._BatchNorm) and not isinstance(module, GlobalBatchNorm):
        out = GlobalBatchNorm(
            module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats
        )
        if module.affine:
            out.weight, out.bias = module.weight, module.bias
        out.running_mean, out.running_var = module.running_mean, module.running_var
        out.num_batches_tracked = module.num_batches_tracked
        out.train(module.training)
    for name, child in module.named_children():
        out.add_module(name, _to_global_bn(child))
    return out


def wrap_model(model: nn.Module, device: torch.device, *, find_unused_parameters: bool = False) -> nn.Module:
    """``model`` in ``DistributedDataParallel`` under a process group, else ``model`` itself.
    ``find_unused_parameters``: for forwards that stop using some parameters (λ-GELU's annealing
    fixes λ); it costs a walk of the autograd graph per forward."""
    if not is_distributed():
        return model
    if device.type == "cuda":
        return nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index], output_device=device.index, find_unused_parameters=find_unused_parameters
        )
    return nn.parallel.DistributedDataParallel(model, find_unused_parameters=find_unused_parameters)


def _digest(value: Any, hasher: Any) -> None:
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().contiguous().reshape(-1)
        hasher.update(str((tensor.dtype, tuple(tensor.shape))).encode())
        hasher.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    elif isinstance(value, dict):
        for key in sorted(value, key=repr):
            hasher.update(repr(key).encode())
            _digest(value[key], hasher)
    elif isinstance(value, (list, tuple)):
        hasher.update(f"{type(value).__name__}{len(value)}".encode())
        for item in value:
            _digest(item, hasher)
    else:
        hasher.update(pickle.dumps(value))


def state_fingerprints(model: nn.Module, hooks: Sequence[Any]) -> dict[str, str]:
    """A digest of the model's state (parameters and buffers) and of each hook's ``state_dict``."""
    prints: dict[str, str] = {}
    hasher = hashlib.sha256()
    _digest(model.state_dict(), hasher)
    prints["model"] = hasher.hexdigest()
    for i, hook in enumerate(hooks):
        state = hook.state_dict() if hasattr(hook, "state_dict") else {}
        hasher = hashlib.sha256()
        _digest(state, hasher)
        prints[f"hook {i} ({type(hook).__name__})"] = hasher.hexdigest()
    return prints


def check_same_state(model: nn.Module, hooks: Sequence[Any], where: str) -> None:
    """Stop the run when the ranks' model or method state differ (nothing in one process)."""
    if not is_distributed():
        return
    mine = state_fingerprints(model, hooks)
    everyone: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    differ = sorted(key for key in mine if len({prints.get(key) for prints in everyone}) > 1)
    if differ:
        raise RuntimeError(
            f"{where}: the ranks' state differs in {', '.join(differ)}; a method computes its "
            "state from one rank's data shard. Run this config in one process, or make the "
            "method reduce its statistics over ranks"
        )

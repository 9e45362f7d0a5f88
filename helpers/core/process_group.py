"""The run's processes: this one's place among them (:class:`World`), joining them into one process
group, and the few collectives the loop needs (barrier, sum, broadcast); see
:mod:`helpers.core.distributed`. ``torchrun --nproc_per_node K -m tools.train_distributed ...`` sets
``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from helpers.core.device import resolve_device


@dataclass(frozen=True)
class World:
    """This process's place among the run's processes."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0


def _env_number(name: str, default: Any, parse: Callable[[str], Any], ok: Callable[[Any], bool], wanted: str) -> Any:
    """The variable ``name`` parsed, ``default`` when unset; a ``ValueError`` saying what it must be."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = parse(raw)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise ValueError(f"{name}={raw!r} must be {wanted}")
    return value


def _int_env(name: str, default: int, low: int) -> int:
    wanted = f"an integer >= {low} (torchrun sets it; do not set it by hand)"
    return _env_number(name, default, int, lambda value: value >= low, wanted)


def world_from_env() -> World:
    """The world ``torchrun`` describes in ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` (one
    process when they are unset)."""
    size = _int_env("WORLD_SIZE", 1, 1)
    rank = _int_env("RANK", 0, 0)
    local = _int_env("LOCAL_RANK", rank, 0)
    if rank >= size:
        raise ValueError(f"RANK={rank} is not below WORLD_SIZE={size}")
    return World(rank, size, local)


def is_distributed() -> bool:
    """Whether this process is one of several in an initialised process group."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def world() -> World:
    """This process's :class:`World` (rank 0 of 1 outside a process group)."""
    if not is_distributed():
        return World()
    return World(dist.get_rank(), dist.get_world_size(), world_from_env().local_rank)


def is_main() -> bool:
    """Whether this process writes (rank 0, or the only process)."""
    return world().rank == 0


def process_device(spec: str | None = None) -> torch.device:
    """This process's device: :func:`helpers.core.device.resolve_device`, under ``torchrun`` on CUDA
    the GPU of its ``LOCAL_RANK``."""
    device = resolve_device(spec)
    env = world_from_env()
    if device.type != "cuda" or env.size == 1:
        return device
    count = torch.cuda.device_count()
    if env.local_rank >= count:
        raise ValueError(
            f"LOCAL_RANK={env.local_rank} needs GPU {env.local_rank}, but this node has {count}; "
            f"start at most {count} processes per node (torchrun --nproc_per_node {count})"
        )
    return torch.device("cuda", env.local_rank)


def init_from_env(device: torch.device) -> World:
    """Join the process group ``torchrun`` set up (``nccl`` on CUDA, else ``gloo``); return the world."""
    env = world_from_env()
    if env.size == 1 or is_distributed():
        return world()
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        if not os.environ.get(name):
            raise RuntimeError(
                f"WORLD_SIZE={env.size} but {name} is unset: start the run with torchrun "
                "(torchrun --nproc_per_node N -m tools.train_distributed ...)"
            )
    timeout = join_timeout()
    # torchrun's agent hosts the store and starts every process itself; any other launcher (a
    # SLURM job, processes started by hand) may lose a peer, so the ranks meet in a store of ours
    store = None if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") else _meeting(env, timeout)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", store=store, rank=env.rank, world_size=env.size, device_id=device)
    else:
        dist.init_process_group("gloo", store=store, rank=env.rank, world_size=env.size)
    return env


#: Seconds a process waits for the run's other processes to join before it gives up.
JOIN_TIMEOUT_ENV = "REPRO_JOIN_TIMEOUT"
DEFAULT_JOIN_TIMEOUT_S = 600.0


def join_timeout() -> float:
    """:data:`JOIN_TIMEOUT_ENV` in seconds (default :data:`DEFAULT_JOIN_TIMEOUT_S`)."""
    ok = lambda value: math.isfinite(value) and value > 0  # noqa: E731
    return _env_number(JOIN_TIMEOUT_ENV, DEFAULT_JOIN_TIMEOUT_S, float, ok, "a number of seconds > 0")


def _meeting(env: World, timeout: float) -> dist.TCPStore:
    """A store on rank 0 (``MASTER_ADDR:MASTER_PORT``) where each rank records its arrival, so a run
    missing processes fails after ``timeout`` seconds naming them (torch's rendezvous waits half an hour)."""
    addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    wait = timedelta(seconds=timeout)
    try:
        store = dist.TCPStore(addr, port, None, env.rank == 0, wait, wait_for_workers=False, multi_tenant=True)
    except (RuntimeError, OSError) as err:  # torch's DistStoreError is a RuntimeError
        raise RuntimeError(
            f"rank {env.rank} could not reach rank 0's store at {addr}:{port} within {timeout:g} s "
            f"({JOIN_TIMEOUT_ENV}): {str(err).splitlines()[0][:200]}"
        ) from None
    keys = [f"repro/joined/{rank}" for rank in range(env.size)]
    store.set(keys[env.rank], "1")
    try:
        store.wait(keys, wait)
    except RuntimeError:
        missing = [rank for rank, key in enumerate(keys) if not store.check([key])]
        raise RuntimeError(
            f"rank {env.rank}: ranks {missing} of the {env.size} processes did not join within {timeout:g} s "
            f"({JOIN_TIMEOUT_ENV}); check that every task of the job started and reaches {addr}:{port}"
        ) from None
    return store


def shutdown() -> None:
    """Leave the process group (after a last barrier, so no rank exits while others still talk)."""
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def barrier() -> None:
    """Wait for every rank (nothing in one process)."""
    if is_distributed():
        dist.barrier()


def all_reduce_sum(values: Sequence[float], device: torch.device | None = None) -> list[float]:
    """The sums over ranks of ``values`` (float64, so that counts and loss sums stay exact)."""
    if not is_distributed():
        return [float(v) for v in values]
    tensor = torch.tensor(list(values), dtype=torch.float64, device=device or torch.device("cpu"))
    dist.all_reduce(tensor)
    return tensor.tolist()


def broadcast_object(value: Any) -> Any:
    """Rank 0's ``value`` on every rank (``value`` itself in one process)."""
    if not is_distributed():
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]

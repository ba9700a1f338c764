"""Ranks for sdot: the processes of an MPI communicator (mpi4py) or of torch.distributed, or
boxes in one process. Without MPI (sdot built with SDOT_ENABLE_MPI=OFF, `loom.MPI_ENABLED` is
False), loom.MpiRanks raises RuntimeError; loom.BoxRanks and loom.TorchRanks remain.

    from mpi4py import MPI
    ranks = loom.MpiRanks(MPI.COMM_WORLD)      # one rank per process
    block = loom.spread(my_rows, ranks)          # this process's block of a spread array
    whole = loom.gather_to_host(block)           # the whole array, on every process

A distributed program written once (loom.spmd), with rows routed between the ranks:

    slots = loom.Capacity(2)                     # grown, and the program rerun, when too small
    def program(ranks, values):
        sent = loom.route(ranks, dest, values, slots)    # rows packed by destination rank
        got = loom.exchange(ranks, sent)                 # what the others sent to this process
        ...
    result = loom.spmd(program, ranks)(values)
"""
import numpy

import _sdot_loom
from _sdot_loom import (Capacity, CollectiveError, Ranks, Routed, Spmd, Spread, box_ranks, exchange,
                        gather_to_host, process_group_ranks, route, spmd, spread, spread_host)

__all__ = ["BoxRanks", "Capacity", "CollectiveError", "MPI_ENABLED", "MpiRanks", "Ranks", "Routed",
           "Spmd", "Spread", "TorchRanks", "exchange", "gather_to_host", "route", "spmd", "spread",
           "spread_host"]

#: Whether sdot was built with MPI (SDOT_ENABLE_MPI): loom.MpiRanks works only then.
MPI_ENABLED = bool(_sdot_loom.mpi_enabled)


def MpiRanks(comm, boxes_per_process=1):
    """The processes of an mpi4py communicator (duplicated), `boxes_per_process` ranks each.
    Raises RuntimeError when sdot was built without MPI."""
    if not MPI_ENABLED:
        raise RuntimeError("loom.MpiRanks: sdot was built without MPI (SDOT_ENABLE_MPI=OFF); "
                           "use loom.BoxRanks or loom.TorchRanks")
    return _sdot_loom.mpi_ranks(comm.py2f(), boxes_per_process)


def BoxRanks(count):
    """`count` ranks emulated in this process (no MPI)."""
    return box_ranks(count)


def TorchRanks(group=None, boxes_per_process=1):
    """The processes of an initialised torch.distributed process group (the default group, or
    `group`), `boxes_per_process` ranks each. loom's collectives go through torch.distributed:
    its backend must have all_gather and all_to_all_single ("gloo" on CPUs)."""
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_initialized():
        raise ValueError("loom.TorchRanks: torch.distributed is not initialised "
                         "(call torch.distributed.init_process_group first)")
    return process_group_ranks(_TorchCollectives(group), boxes_per_process)


class _TorchCollectives:
    """loom's byte-level collectives over torch.distributed, called from C++: buffers are
    memoryviews of bytes, counts are in bytes per process."""

    def __init__(self, group):
        import torch
        import torch.distributed as dist
        self._torch, self._dist, self._group = torch, dist, group

    def rank(self):
        return self._dist.get_rank(self._group)

    def size(self):
        return self._dist.get_world_size(self._group)

    def _tensor(self, buffer):
        return self._torch.from_numpy(numpy.frombuffer(buffer, dtype=numpy.uint8).copy())

    def allgatherv(self, send, recv, counts):
        # all_gather takes parts of one size: each part is padded to the largest.
        torch, most = self._torch, max(counts)
        mine = torch.zeros(most, dtype=torch.uint8)
        mine[:len(send)] = self._tensor(send)
        parts = [torch.empty(most, dtype=torch.uint8) for _ in counts]
        self._dist.all_gather(parts, mine, group=self._group)
        out = numpy.frombuffer(recv, dtype=numpy.uint8)
        first = 0
        for count, part in zip(counts, parts):
            out[first:first + count] = part[:count].numpy()
            first += count

    def alltoallv(self, send, send_counts, recv, recv_counts):
        received = self._torch.empty(sum(recv_counts), dtype=self._torch.uint8)
        self._dist.all_to_all_single(received, self._tensor(send), output_split_sizes=recv_counts,
                                     input_split_sizes=send_counts, group=self._group)
        numpy.frombuffer(recv, dtype=numpy.uint8)[:] = received.numpy()

    def barrier(self):
        self._dist.barrier(group=self._group)

"""Ranks for sdot: the processes of an MPI communicator (mpi4py), or boxes in one process.

    from mpi4py import MPI
    ranks = loom.MpiRanks(MPI.COMM_WORLD)      # one rank per process
    block = loom.spread(my_rows, ranks)          # this process's block of a spread array
    whole = loom.gather_to_host(block)           # the whole array, on every process
"""
from _sdot_loom import Ranks, Spread, box_ranks, gather_to_host, mpi_ranks, spread, spread_host

__all__ = ["BoxRanks", "MpiRanks", "Ranks", "Spread", "TorchRanks", "gather_to_host", "spread",
           "spread_host"]


def MpiRanks(comm, boxes_per_process=1):
    """The processes of an mpi4py communicator (duplicated), `boxes_per_process` ranks each."""
    return mpi_ranks(comm.py2f(), boxes_per_process)


def BoxRanks(count):
    """`count` ranks emulated in this process (no MPI)."""
    return box_ranks(count)


def TorchRanks():
    """The processes of torch.distributed: not available in this version (see docs/python.md).
    Under MPI, use MpiRanks(mpi4py.MPI.COMM_WORLD) with the same scripts."""
    raise NotImplementedError(
        "loom.TorchRanks is not available in this version of sdot: run the script under MPI "
        "with loom.MpiRanks(mpi4py.MPI.COMM_WORLD) instead (docs/python.md)")

"""Spread input under MPI (any process count): the measures against one process's whole
diagram (also after new weights), the collective reductions, bad input on one process reported on every process, and
optimal transport on spread seeds, and loom's operations."""
import loom
import numpy as np
import sdot
from mpi4py import MPI

comm = MPI.COMM_WORLD
ranks = loom.MpiRanks(comm)
rank, size = comm.Get_rank(), comm.Get_size()
square = sdot.box_half_spaces([0, 0], [1, 1])

rng = np.random.default_rng(1)
positions, weights = rng.random((3001, 2)), rng.random(3001) * 1e-3
whole = sdot.PowerDiagram(positions, weights, square).measures

# Blocks of different sizes, one process possibly without seeds.
cuts = np.linspace(0, 3001, size + 1).astype(int)
if size > 2:
    cuts[1] = 0  # process 0 holds no seed
lo, hi = cuts[rank], cuts[rank + 1]
pd = sdot.PowerDiagram(loom.spread(positions[lo:hi], ranks), loom.spread(weights[lo:hi], ranks),
                       square)
m = pd.measures
assert m.value.shape == (hi - lo,)
assert np.abs(m.value - whole[lo:hi]).max(initial=0) <= 1e-15, "measures differ from one process"
assert abs(m.sum() - 1) <= 1e-13
assert abs(m.max() - whole.max()) <= 1e-15 and abs(m.min() - whole.min()) <= 1e-15
assert np.abs(loom.gather_to_host(m) - whole).max() <= 1e-15
c = pd.centroids
assert c.value.shape == (hi - lo, 2)

# New weights for the same spread seeds (cells pushed far from their seeds): what one
# process's whole diagram gives; a NaN among them on the last process only raises the same
# ValueError everywhere, and changes nothing.
far = 0.3 * positions[:, 0] + 0.05 * np.sin(9 * positions[:, 1])
pd.set_weights(loom.spread(far[lo:hi], ranks))
far_whole = sdot.PowerDiagram(positions, far, square).measures
assert np.abs(loom.gather_to_host(pd.measures) - far_whole).max() <= 1e-14
bad = far[lo:hi].copy()
if rank == size - 1:
    bad[-1] = np.nan
try:
    pd.set_weights(loom.spread(bad, ranks))
    raise AssertionError("no error for a NaN weight in set_weights")
except ValueError as error:
    message = str(error)
assert "3000" in message and all(other == message for other in comm.allgather(message)), message
assert np.abs(loom.gather_to_host(pd.measures) - far_whole).max() <= 1e-14

# spread_host: every process passes the whole array and keeps its block.
pd = sdot.PowerDiagram(loom.spread_host(positions, ranks), loom.spread_host(weights, ranks),
                       square)
assert np.abs(loom.gather_to_host(pd.measures) - whole).max() <= 1e-15

# A NaN weight on the last process only: every process raises the same ValueError.
bad = weights[lo:hi].copy()
if rank == size - 1:
    bad[-1] = np.nan
try:
    sdot.PowerDiagram(loom.spread(positions[lo:hi], ranks), loom.spread(bad, ranks), square)
    raise AssertionError("no error for a NaN weight")
except ValueError as error:
    message = str(error)
assert "3000" in message, message  # the global index of the bad seed
messages = comm.allgather(message)
assert all(other == message for other in messages), messages

# Optimal transport on the spread seeds: the measures reach the masses, and the weights found
# give them in one process's whole diagram too.
masses = np.full(3001, 1 / 3001)
ot = sdot.OptimalTransport(loom.spread(positions[lo:hi], ranks), loom.spread(masses[lo:hi], ranks),
                           square)
result = ot.solve()
assert isinstance(result["weights"], loom.Spread) and result["newton_iterations"] >= 1
assert np.abs(result["measures"].value - masses[lo:hi]).max(initial=0) <= 1e-9
found = loom.gather_to_host(result["weights"])
assert np.abs(sdot.PowerDiagram(positions, found, square).measures - masses).max() <= 1e-9
# Bad masses (adding up to twice the area): the same ValueError everywhere.
try:
    sdot.OptimalTransport(loom.spread(positions[lo:hi], ranks),
                          loom.spread(2 * masses[lo:hi], ranks), square)
    raise AssertionError("no error for masses adding up to twice the area")
except ValueError as error:
    message = str(error)
assert "add up to" in message, message
assert all(other == message for other in comm.allgather(message))

# loom's operations: a bad destination on the last process only makes every process raise the
# same loom.CollectiveError out of loom.spmd.
values = loom.spread_host(np.arange(8.0), ranks)


def route_to(ranks, values):
    dest = np.zeros(len(values.value), dtype=np.int64)
    if rank == size - 1:
        dest[:] = size
    return loom.exchange(ranks, loom.route(ranks, dest, values, loom.Capacity(1))).data


try:
    loom.spmd(route_to, ranks)(values)
    raise AssertionError("no error for a destination out of range")
except loom.CollectiveError as error:
    message = str(error)
assert "route" in message and all(other == message for other in comm.allgather(message))

comm.Barrier()
if rank == 0:
    print("mpi checks passed")

"""Spread tensors over torch.distributed processes (loom.TorchRanks, backend "gloo"; run under
torch.distributed.run): the measures against the same ranks emulated as boxes in one process
(bitwise) and against one box, tensors out, the collective reductions, several boxes per
process, bad input on one process reported on every process, and optimal transport."""
import loom
import numpy as np
import sdot
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, size = dist.get_rank(), dist.get_world_size()
ranks = loom.TorchRanks()
assert (ranks.size, ranks.process_rank, ranks.process_count) == (size, rank, size)
square = sdot.box_half_spaces([0, 0], [1, 1])


def everywhere(value):
    """The values of every process, in process order."""
    values = [None] * size
    dist.all_gather_object(values, value)
    return values


rng = np.random.default_rng(1)
positions, weights = rng.random((3001, 2)), rng.random(3001) * 1e-3
whole = sdot.PowerDiagram(positions, weights, square).measures
as_boxes = loom.gather_to_host(
    sdot.PowerDiagram(loom.spread_host(positions, loom.BoxRanks(size)),
                      loom.spread_host(weights, loom.BoxRanks(size)), square).measures)

# Blocks of different sizes as tensors, process 0 without seeds from 3 processes on.
cuts = np.linspace(0, 3001, size + 1).astype(int)
if size > 2:
    cuts[1] = 0
lo, hi = cuts[rank], cuts[rank + 1]
pd = sdot.PowerDiagram(loom.spread(torch.as_tensor(positions[lo:hi]), ranks),
                       loom.spread(torch.as_tensor(weights[lo:hi]), ranks), square)
m = pd.measures
assert isinstance(m.value, torch.Tensor) and m.value.dtype == torch.float64, type(m.value)
assert tuple(m.value.shape) == (hi - lo,)
gathered = loom.gather_to_host(m)
assert isinstance(gathered, torch.Tensor)
if size == 1 or cuts[1] > 0:  # the blocks as BoxRanks(size) cuts them: the same bits
    assert np.array_equal(gathered.numpy(), as_boxes), "differs from the same ranks as boxes"
assert np.abs(gathered.numpy() - whole).max() <= 1e-15, "measures differ from one box"
assert abs(m.sum() - 1) <= 1e-13
assert abs(m.max() - whole.max()) <= 1e-15 and abs(m.min() - whole.min()) <= 1e-15
assert abs(m.mean() - 1 / 3001) <= 1e-16
assert everywhere(m.sum()) == [m.sum()] * size  # the same bits on every process
assert tuple(pd.centroids.value.shape) == (hi - lo, 2)
polygons = pd.cell_polygons
assert len(polygons) == hi - lo and all(isinstance(p, torch.Tensor) for p in polygons)

# NumPy blocks give NumPy results; 3 boxes per process go through the same collectives.
boxes = loom.TorchRanks(boxes_per_process=3)
assert boxes.size == 3 * size
pd = sdot.PowerDiagram(loom.spread_host(positions, boxes), loom.spread_host(weights, boxes),
                       square)
assert isinstance(pd.measures.value, np.ndarray)
assert np.abs(loom.gather_to_host(pd.measures) - whole).max() <= 1e-15

# A NaN weight on the last process only: every process raises the same ValueError.
bad = weights[lo:hi].copy()
if rank == size - 1:
    bad[-1] = np.nan
try:
    sdot.PowerDiagram(loom.spread(torch.as_tensor(positions[lo:hi]), ranks),
                      loom.spread(torch.as_tensor(bad), ranks), square)
    raise AssertionError("no error for a NaN weight")
except ValueError as error:
    message = str(error)
assert "3000" in message, message  # the global index of the bad seed
assert everywhere(message) == [message] * size

# Optimal transport on spread tensors: the weights found give the masses in one box.
masses = np.full(3001, 1 / 3001)
result = sdot.OptimalTransport(loom.spread(torch.as_tensor(positions[lo:hi]), ranks),
                               loom.spread(torch.as_tensor(masses[lo:hi]), ranks),
                               square).solve()
assert isinstance(result["weights"].value, torch.Tensor)
found = loom.gather_to_host(result["weights"]).numpy()
assert np.abs(sdot.PowerDiagram(positions, found, square).measures - masses).max() <= 1e-9

dist.barrier()
if rank == 0:
    print("torch checks passed")
dist.destroy_process_group()

"""The Python packages of a build without MPI (SDOT_ENABLE_MPI=OFF): loom.MpiRanks raises a
RuntimeError that says why, and boxes still work."""
import numpy

import loom
import sdot

assert not loom.MPI_ENABLED
try:
    loom.MpiRanks(None)
except RuntimeError as e:
    assert "sdot was built without MPI (SDOT_ENABLE_MPI=OFF)" in str(e), e
else:
    raise AssertionError("loom.MpiRanks did not raise")

ranks = loom.BoxRanks(3)
assert (ranks.size, ranks.process_count) == (3, 1)
rng = numpy.random.default_rng(1)
positions = rng.random((500, 2))
measures = sdot.PowerDiagram(positions, numpy.zeros(500), sdot.box_half_spaces([0, 0], [1, 1]),
                             nb_boxes=3).measures
assert abs(measures.sum() - 1) < 1e-12, measures.sum()
print("no-MPI checks passed")

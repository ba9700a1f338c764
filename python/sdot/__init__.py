"""Power (Laguerre) diagrams and semi-discrete optimal transport.

    import numpy as np, sdot
    pd = sdot.PowerDiagram(positions, weights, boundaries=sdot.box_half_spaces([0, 0], [1, 1]))
    pd.measures        # areas of the cells, in the order of the seeds

Positions given whole (NumPy arrays, [N, 2] and [N]) are computed in this process, as one box
or as `nb_boxes` boxes; positions spread over processes (`loom.spread(block, ranks)` in each
process) are computed by those processes, and the results are spread the same way
(`result.value` is this process's block; `sum()`, `max()`, `min()`, `mean()` are collective).
Inputs are converted to float64 once; results are new NumPy arrays.
"""
from _sdot_loom import HalfSpace, OptimalTransport, PowerDiagram, box_half_spaces

__all__ = ["HalfSpace", "OptimalTransport", "PowerDiagram", "box_half_spaces"]

#!/usr/bin/env python3
"""Writes N seeds of a clustered cloud to an HDF5 file (dataset `positions`, float64 [N, 2])
for sdot-ot and sdot-measures: 80 % in three Gaussian clusters of sigma 0.02 at (0.2, 0.3),
(0.7, 0.75) and (0.05, 0.95), drawn again until inside the unit square (no seeds clamped onto
its sides), 20 % uniform; rows in random order. Uses h5import (HDF5's tools). With
--zero-weights it also writes `weights` (float64 [N], zeros): sdot-measures' input for the
same positions at zero weights.

    perf_tests/transport/clustered_cloud_h5.py 100000 clustered.h5 [--seed S] [--zero-weights]
"""
import argparse
import os
import random
import struct
import subprocess
import tempfile

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("n", type=int)
parser.add_argument("output")
parser.add_argument("--seed", type=int, default=7)
parser.add_argument("--zero-weights", action="store_true")
args = parser.parse_args()

rng = random.Random(args.seed)
centres = [(0.2, 0.3), (0.7, 0.75), (0.05, 0.95)]
points = []
while len(points) < args.n:
    if rng.random() < 0.8:
        cx, cy = rng.choice(centres)
        x, y = rng.gauss(cx, 0.02), rng.gauss(cy, 0.02)
        if not (0 < x < 1 and 0 < y < 1):
            continue
    else:
        x, y = rng.random(), rng.random()
    points.append((x, y))
rng.shuffle(points)


def h5import_input(tmp, dataset, values, dimensions):
    """Writes `values` (float64, little endian) and their h5import configuration for `dataset`
    of shape `dimensions` to `tmp`; returns h5import's arguments for them."""
    data, config = os.path.join(tmp, dataset + ".bin"), os.path.join(tmp, dataset + ".cfg")
    with open(data, "wb") as f:
        f.write(struct.pack(f"<{len(values)}d", *values))
    with open(config, "w") as f:
        f.write(f"PATH {dataset}\nINPUT-CLASS FP\nINPUT-SIZE 64\nINPUT-BYTE-ORDER LE\n"
                f"RANK {len(dimensions)}\nDIMENSION-SIZES {' '.join(map(str, dimensions))}\n"
                "OUTPUT-CLASS FP\nOUTPUT-SIZE 64\nOUTPUT-ARCHITECTURE IEEE\nOUTPUT-BYTE-ORDER LE\n")
    return [data, "-c", config]


with tempfile.TemporaryDirectory() as tmp:
    inputs = h5import_input(tmp, "positions", [c for point in points for c in point], [args.n, 2])
    if args.zero_weights:
        inputs += h5import_input(tmp, "weights", [0.0] * args.n, [args.n])
    if os.path.exists(args.output):
        os.remove(args.output)
    subprocess.run(["h5import", *inputs, "-o", args.output], check=True)

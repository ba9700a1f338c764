# loom's reference program in Python (examples/loom_route.cpp in C++): each rank sends each of
# its values to the rank `value % size`, which adds up what it receives. 16 values are spread
# over the ranks; the route starts with 2 slots per destination, and loom.spmd doubles them and
# reruns the program when that is too small on any rank.
#
#   mpiexec -n 4 python3 loom_route.py      # one rank per MPI process   -> sums: 24 28 32 36
#   python3 loom_route.py --boxes 4          # 4 ranks inside one process -> sums: 24 28 32 36
#   python3 loom_route.py --boxes 8 --verbose
#
# The program below is written once and runs unchanged in both contexts.
import argparse

import loom
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--boxes", type=int, default=0, help="ranks in this process (no MPI)")
parser.add_argument("--verbose", action="store_true")
arguments = parser.parse_args()
if arguments.boxes > 0:
    ranks = loom.BoxRanks(arguments.boxes)
else:
    from mpi4py import MPI
    ranks = loom.MpiRanks(MPI.COMM_WORLD)

slots = loom.Capacity(2)  # rows per destination: doubled, and the program rerun, if too small


def program(ranks, values):
    """The program of one process: all of its local ranks at once."""
    dest = values.value.astype(np.int64) % ranks.size
    sent = loom.route(ranks, dest, values, slots)  # [local_count, size, slots, 1], -1 if empty
    got = loom.exchange(ranks, sent).data          # what the others sent to this process
    sums = np.where(got >= 0, got, 0).sum(axis=(1, 2, 3))  # one sum per local rank
    return loom.spread(sums, ranks)


run = loom.spmd(program, ranks)
sums = run(loom.spread_host(np.arange(16.0), ranks))  # 16 / size values per rank
everything = loom.gather_to_host(sums)
if ranks.process_rank == 0:
    print("sums:", " ".join(str(int(s)) for s in everything))
    if arguments.verbose:
        print(f"ranks: {ranks.size}, capacity: 2 -> {slots.value}, reruns: {run.last_reruns}")

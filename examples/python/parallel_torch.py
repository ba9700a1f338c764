# torchrun --nproc-per-node 4 parallel_torch.py
import loom
import sdot
import torch
import torch.distributed as dist

dist.init_process_group( "gloo" )  # "nccl" on GPUs
ranks = loom.TorchRanks()
rank, size = dist.get_rank(), dist.get_world_size()

# each process holds its block of the seeds ( cut here from a cloud they all draw the same way )
generator = torch.Generator().manual_seed( 0 )
positions = torch.rand( ( 10000, 2 ), generator = generator, dtype = torch.float64 )
weights = torch.rand( 10000, generator = generator, dtype = torch.float64 ) * 1e-3
mine = slice( rank * len( positions ) // size, ( rank + 1 ) * len( positions ) // size )

pd = sdot.PowerDiagram( loom.spread( positions[ mine ], ranks ), loom.spread( weights[ mine ], ranks ),
                        boundaries = sdot.box_half_spaces( [ 0, 0 ], [ 1, 1 ] ) )
m = pd.measures         # spread like the positions: this process holds the measures of its seeds ( `m.value` )
total = m.sum()         # over all the processes: every one gets it
if rank == 0:
    print( float( total ) )  # 1: the area of the unit square
dist.destroy_process_group()


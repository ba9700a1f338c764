#pragma once
/// @file
/// loom: a distributed computation written once, as a program per rank, run unchanged over
/// MPI processes (MpiRanks), boxes emulated inside one process (BoxRanks) or both.
/// See docs/loom.md.

#include <loom/capacity.hpp>
#include <loom/distribute.hpp>
#include <loom/error.hpp>
#include <loom/exchange.hpp>
#include <loom/halo.hpp>
#include <loom/ranks.hpp>
#include <loom/route.hpp>
#include <loom/row_blocks.hpp>
#include <loom/scatter_add.hpp>
#include <loom/spmd.hpp>
#include <loom/spread.hpp>
#include <loom/while_loop.hpp>
#include <sdot/base/kokkos_compat.hpp>

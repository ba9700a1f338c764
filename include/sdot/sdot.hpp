#pragma once
/// @file
/// sdot: power (Laguerre) diagrams and semi-discrete optimal transport on Kokkos.
/// The user initialises Kokkos (and MPI for distributed runs) before using it.

#include <sdot/half_spaces.hpp>
#include <sdot/points.hpp>
#include <sdot/power_diagram.hpp>
#include <sdot/spatial_blocks.hpp>
#include <sdot/version.hpp>

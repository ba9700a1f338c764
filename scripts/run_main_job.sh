#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what is missing, builds sdot and its
# command-line programs, then computes the power diagram of an embedded random cloud
# (1,000,000 seeds, weights U[0, 1/N]) on 2 MPI processes and prints the JSON summary.
#   N=100000 PROCESSES=1 scripts/run_main_job.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_dependencies.sh
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DSDOT_ENABLE_APPS=ON
cmake --build build-release -j 2 --target sdot-measures
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Transparent huge pages for malloc's memory (glibc >= 2.35; docs/parallel.md, "Memory").
export GLIBC_TUNABLES="${GLIBC_TUNABLES:-glibc.malloc.hugetlb=1}"
mpiexec -n "${PROCESSES:-2}" build-release/src/apps/sdot-measures --random "${N:-1000000}" --seed 0

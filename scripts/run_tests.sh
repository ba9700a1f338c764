#!/usr/bin/env bash
# Every test on a fresh Debian 12 machine: installs what is missing, builds everything
# (library, programs, tests, benchmarks, examples) with the dev preset and runs ctest
# (unit tests under 1-4 MPI processes and many boxes, the examples, the install test with and
# without MPI, and every device lambda against nvcc's rules), then the tests labelled "sanitize"
# again, built with AddressSanitizer and UndefinedBehaviorSanitizer and with point Views in
# LayoutLeft (as on a GPU), then the libFuzzer targets built with clang (fuzz preset: the polygon
# clipper and the HDF5 reader), each replaying its committed corpus and fuzzing for a bounded
# time (SDOT_FUZZ_SECONDS).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_dependencies.sh
cmake --preset dev
cmake --build --preset dev
ctest --preset dev
cmake --preset sanitize
cmake --build --preset sanitize
ctest --preset sanitize
cmake --preset fuzz
cmake --build --preset fuzz
ctest --preset fuzz

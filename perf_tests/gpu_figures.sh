#!/usr/bin/env bash
# The GPU figures of docs/gpu.md, on a machine with a GPU, from a build made beforehand with
# the cuda (or hip) preset:
#   KOKKOS_ROOT=<Kokkos built for CUDA> cmake --preset cuda && cmake --build --preset cuda
#   perf_tests/gpu_figures.sh [BUILD_DIR] [--quick] 2>&1 | tee gpu_figures.txt
# In order: the unit tests; one diagram (index included) of 1e6 and 1e7 seeds, uniform and
# clustered, each computed 3 times in one process, in ns per cell; the same 1e7 uniform cloud
# on 1, 2 and 8 boxes of the one device (sdot-measures); one transport solve of 1e6 uniform
# seeds from zero weights (sdot-ot). --quick divides the sizes by 100 (to check the script on
# a host build).
set -euo pipefail
build=${1:-build-cuda}
scale=1
[ "${2:-}" = "--quick" ] && scale=100
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
section() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

section "device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null ||
  rocm-smi --showproductname 2>/dev/null || echo "no GPU tool found"

section "unit tests"
# The install test rebuilds everything; the Python and lambda-rule tests are host checks.
ctest --test-dir "$build" --output-on-failure --timeout 600 \
  -E "install_and_build_examples|^python_|device_lambda_rules" || echo "UNIT TESTS FAILED"

section "one diagram, ns per cell (3 runs in one process; the first pays the first touches)"
for n in $((1000000 / scale)) $((10000000 / scale)); do
  for cloud in uniform clustered; do
    SDOT_PROFILE_REPEAT=3 "$build/perf_tests/sdot_profile_cells" "$n" "$cloud"
  done
done

section "boxes on the one device: sdot-measures --random $((10000000 / scale))"
for boxes in 1 2 8; do
  "$build/src/apps/sdot-measures" --random $((10000000 / scale)) --nb-boxes "$boxes"
done

section "one transport solve: sdot-ot on $((1000000 / scale)) uniform seeds"
"$build/src/apps/sdot-measures" --random $((1000000 / scale)) "$scratch/cloud.h5" > /dev/null
# The positions alone (h5copy, from hdf5-tools): sdot-ot then starts from zero weights.
h5copy -i "$scratch/cloud.h5" -o "$scratch/positions.h5" -s positions -d positions
"$build/src/apps/sdot-ot" "$scratch/positions.h5" "$scratch/weights.h5"

#!/usr/bin/env bash
# Installs the Debian 12 packages sdot needs to build, test and benchmark (as root, through
# apt-get); prints what it would install when not run as root. Both HDF5 builds: the parallel
# one (Open MPI) for sdot with MPI, the serial one for sdot without MPI (SDOT_ENABLE_MPI=OFF,
# built by the install test); they install side by side.
set -euo pipefail
packages=(
  cmake g++ make ninja-build pkg-config
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev libhdf5-dev hdf5-tools
  libgtest-dev libbenchmark-dev libcgal-dev
  python3-dev pybind11-dev python3-numpy python3-mpi4py python3-pytest
  python3-clang-14 python3-vtk9 doxygen python3-torch
  clang-14 libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "sdot: every Debian package needed is installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "sdot: missing Debian packages (run as root to install them): ${missing[*]}" >&2
  exit 1
fi
echo "sdot: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"

# Spack recipe for sdot (Spack >= 1.0, package API v2). Use: docs/install.md.
import os

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage

from spack.package import *

# This recipe lives in sdot's repository, at spack/spack_repo/sdot/packages/sdot/package.py:
# by default it fetches from that repository (its committed branches), which works offline.
# Another clone or a hosted copy: set `git` in packages.yaml (docs/install.md):
#   packages: {sdot: {package_attributes: {git: "file:///path/to/sdot"}}}
_SOURCE_REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 5))

# Kokkos-Kernels x.y works only with Kokkos x.y (sdot's CMake checks it too).
_KOKKOS_RELEASES = (
    "3.4", "3.5", "3.6", "3.7",
    "4.0", "4.1", "4.2", "4.3", "4.4", "4.5", "4.6", "4.7",
    "5.0", "5.1",
)  # fmt: skip


class Sdot(CMakePackage, CudaPackage, ROCmPackage):
    """2D power (Laguerre) diagrams and semi-discrete optimal transport on any Kokkos
    execution space, across MPI ranks or ranks emulated as boxes on one device."""

    homepage = "file://" + _SOURCE_REPOSITORY
    git = "file://" + _SOURCE_REPOSITORY

    test_requires_compiler = True

    version("main", branch="main")
    # No release archive yet: 0.1.0 (project(sdot VERSION 0.1.0)) is a commit of main.
    version("0.1.0", commit="4b13de188e2f66878425f5172d1c296e6936fa8a")

    # Backends: sdot runs on Kokkos' default execution space, so they are Kokkos' backends.
    variant("openmp", default=False, description="Kokkos with the OpenMP backend")
    variant(
        "cxxstd",
        default="17",
        values=("17", "20"),
        multi=False,
        description="C++ standard (CMAKE_CXX_STANDARD)",
    )
    variant("shared", default=True, description="Shared libraries (BUILD_SHARED_LIBS)")
    variant(
        "mpi",
        default=True,
        description="MPI: ranks over MPI processes, parallel HDF5 (SDOT_ENABLE_MPI); "
        "without it, one process with boxes",
    )
    variant(
        "hdf5",
        default=True,
        description="HDF5 input/output (SDOT_ENABLE_HDF5): parallel HDF5 with +mpi, serial without",
    )
    variant(
        "apps",
        default=True,
        description="The programs sdot-measures and sdot-ot (SDOT_ENABLE_APPS; needs +hdf5)",
    )
    variant(
        "kernels",
        default=True,
        description="Kokkos-Kernels: the Jacobian and the transport solver "
        "(SDOT_ENABLE_KOKKOS_KERNELS)",
    )
    variant(
        "explicit_instantiation",
        default=True,
        description="Compile the diagram and the solver for Kokkos' default execution space "
        "once, in libsdot (SDOT_ENABLE_EXPLICIT_INSTANTIATION)",
    )
    variant(
        "python",
        default=False,
        description="The Python packages sdot and loom (SDOT_ENABLE_PYTHON)",
    )
    variant(
        "gpu_aware_mpi",
        default=False,
        description="Hand device buffers to MPI directly (LOOM_ENABLE_GPU_AWARE_MPI); "
        "the MPI must be GPU-aware",
    )

    depends_on("c", type="build")  # project(... LANGUAGES CXX C): FindHDF5, FindMPI
    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")

    depends_on("mpi", when="+mpi")

    depends_on("kokkos@3.4:")
    depends_on("kokkos+openmp", when="+openmp")
    # GPU builds need Kokkos 4 or later (docs/gpu.md).
    depends_on("kokkos@4:", when="+cuda")
    depends_on("kokkos@4:", when="+rocm")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    for _target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={_target}", when=f"+rocm amdgpu_target={_target}")
    depends_on("kokkos+cuda_lambda", when="+cuda ^kokkos@:4")
    # nvcc with a GCC host compiler goes through Kokkos' nvcc_wrapper.
    requires("^kokkos+wrapper", when="+cuda %gcc", msg="+cuda with GCC needs Kokkos' nvcc_wrapper")

    depends_on("kokkos-kernels", when="+kernels")
    for _release in _KOKKOS_RELEASES:
        depends_on(f"kokkos-kernels@{_release}", when=f"+kernels ^kokkos@{_release}")

    depends_on("hdf5+mpi", when="+hdf5+mpi")
    depends_on("hdf5~mpi", when="+hdf5~mpi")

    extends("python", when="+python")
    depends_on("python@3.8:", when="+python", type=("build", "link", "run"))
    depends_on("py-pybind11@2.10:", when="+python", type=("build", "link"))
    depends_on("py-numpy", when="+python", type=("build", "run"))
    depends_on("py-mpi4py", when="+python+mpi", type=("build", "run"))

    depends_on("googletest", type="test")

    conflicts("+cuda", when="+rocm", msg="sdot builds for one GPU backend at a time")
    conflicts("+cuda", when="cuda_arch=none", msg="+cuda needs cuda_arch")
    conflicts("+rocm", when="amdgpu_target=none", msg="+rocm needs amdgpu_target")
    conflicts("+apps", when="~hdf5", msg="the programs read and write HDF5")
    conflicts("+gpu_aware_mpi", when="~cuda ~rocm", msg="+gpu_aware_mpi is for GPU builds")
    conflicts("+gpu_aware_mpi", when="~mpi", msg="+gpu_aware_mpi needs +mpi")
    # Kokkos 5 is C++20; a Kokkos built for a newer standard than sdot's cannot be used.
    conflicts("cxxstd=17", when="^kokkos@5:")
    conflicts("cxxstd=17", when="^kokkos cxxstd=20")
    conflicts("cxxstd=17", when="^kokkos cxxstd=23")
    conflicts("cxxstd=20", when="^kokkos cxxstd=23")

    # Shared libsdot and the Python module (a shared object) link Kokkos and Kokkos-Kernels:
    # they must be shared or position-independent.
    for _when in ("+shared", "+python"):
        requires("^kokkos+shared", "^kokkos+pic", policy="any_of", when=_when)
        requires("^kokkos-kernels+shared", when=f"{_when} +kernels")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("SDOT_ENABLE_TESTS", self.run_tests),
            self.define("SDOT_ENABLE_BENCHMARKS", False),
            self.define("SDOT_ENABLE_EXAMPLES", False),
            self.define("SDOT_ENABLE_DOCS", False),
            self.define_from_variant("SDOT_ENABLE_MPI", "mpi"),
            self.define_from_variant("SDOT_ENABLE_APPS", "apps"),
            self.define_from_variant("SDOT_ENABLE_HDF5", "hdf5"),
            self.define_from_variant("SDOT_ENABLE_KOKKOS_KERNELS", "kernels"),
            self.define_from_variant(
                "SDOT_ENABLE_EXPLICIT_INSTANTIATION", "explicit_instantiation"
            ),
            self.define_from_variant("SDOT_ENABLE_PYTHON", "python"),
            self.define_from_variant("LOOM_ENABLE_GPU_AWARE_MPI", "gpu_aware_mpi"),
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            self.define_from_variant("CMAKE_CXX_STANDARD", "cxxstd"),
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
        ]
        if spec.satisfies("+mpi"):
            args.append(self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx))
        if spec.satisfies("+kernels"):
            args.append(self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix))
        if spec.satisfies("+hdf5"):
            args.append(self.define("HDF5_ROOT", spec["hdf5"].prefix))
        if spec.satisfies("+python"):
            # CMakePackage already gives Python3_EXECUTABLE (the build's python-venv); install
            # the modules where Spack puts this extension's PYTHONPATH.
            args.append(self.define("SDOT_PYTHON_INSTALL_DIR", python_platlib))
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", self["kokkos"].kokkos_cxx))
        if spec.satisfies("+rocm"):
            args.append(self.define("CMAKE_CXX_COMPILER", spec["hip"].hipcc))
        return args

    # ---- stand-alone tests (spack test run sdot) ------------------------------------------
    examples_src_dir = "examples"

    @run_after("install")
    def cache_examples(self):
        """Keep examples/ (a CMake project that uses an installed sdot) for the tests."""
        cache_extra_test_sources(self, [self.examples_src_dir])

    def _test_cxx_compiler(self):
        if self.spec.satisfies("+cuda"):
            if self.spec.satisfies("^kokkos+wrapper"):
                return self["kokkos-nvcc-wrapper"].kokkos_cxx
            return self["cxx"].cxx
        if self.spec.satisfies("+rocm"):
            return self.spec["hip"].hipcc
        return self["cxx"].cxx

    def test_examples(self):
        """build examples/ against the installed sdot, run loom_route and one_device_boxes"""
        source = join_path(self.test_suite.current_test_cache_dir, self.examples_src_dir)
        build = join_path(os.getcwd(), "build-examples")  # the spec's test stage
        cmake = which(self.spec["cmake"].prefix.bin.cmake)
        configure = [
            "-S",
            source,
            "-B",
            build,
            self.define("CMAKE_BUILD_TYPE", "Release"),
            self.define("CMAKE_PREFIX_PATH", get_cmake_prefix_path(self)),
            self.define("CMAKE_CXX_COMPILER", self._test_cxx_compiler()),
            self.define("CMAKE_C_COMPILER", self["c"].cc),
            self.define("sdot_ROOT", self.prefix),
            self.define("Kokkos_ROOT", self.spec["kokkos"].prefix),
        ]
        if self.spec.satisfies("+mpi"):
            configure.append(self.define("MPI_CXX_COMPILER", self.spec["mpi"].mpicxx))
        cmake(*configure)
        cmake("--build", build, "--target", "loom_route", "one_device_boxes")

        # Open MPI refuses to run as root without these; harmless elsewhere.
        env = {
            "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMP_NUM_THREADS": "1",
        }
        with test_part(self, "test_examples_loom_route", purpose="loom_route --boxes 4"):
            loom_route = which(join_path(build, "loom_route"))
            out = loom_route("--boxes", "4", output=str, error=str, extra_env=env)
            assert "sums: 24 28 32 36" in out, out
        with test_part(
            self, "test_examples_one_device_boxes", purpose="one_device_boxes: total area 1"
        ):
            one_device_boxes = which(join_path(build, "one_device_boxes"))
            out = one_device_boxes(output=str, error=str, extra_env=env)
            total = float(out.strip().splitlines()[-1])
            assert abs(total - 1.0) < 1e-12, out

    def test_python(self):
        """run examples/python/one_device.py with the installed Python packages"""
        if not self.spec.satisfies("+python"):
            raise SkipTest("sdot was built without +python")
        script = join_path(
            self.test_suite.current_test_cache_dir,
            self.examples_src_dir,
            "python",
            "one_device.py",
        )
        python = which(self.spec["python"].command.path)
        env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        out = python(script, output=str, error=str, extra_env=env)
        total = float(out.strip().splitlines()[-1])
        assert abs(total - 1.0) < 1e-12, out

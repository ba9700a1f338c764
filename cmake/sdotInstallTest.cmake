# The install test. Installs the build in BUILD_DIR into a fresh prefix, then builds and runs,
# against that prefix, examples/ and cmake/consumer (a project that enables only C++), each as
# a project of its own. Then builds sdot again with the other linkage (shared for a static
# build, static for a shared one) and without MPI (SDOT_ENABLE_MPI=OFF, serial HDF5), with the
# programs, installs it and does the same (examples/ leaves out the examples that need MPI, and
# says so); the installed sdot-measures runs as a plain program. The two builds cover each
# linkage and each MPI setting. Each step prints its end time. Run with cmake -P.
set(root "${BUILD_DIR}/install-test")
file(REMOVE_RECURSE "${root}")
string(TIMESTAMP start "%s")
# Prints `what` and the seconds since the start.
function(step_done what)
  string(TIMESTAMP now "%s")
  math(EXPR seconds "${now} - ${start}")
  message(STATUS "install test: ${what} (${seconds} s)")
endfunction()
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install test: '${ARGN}' failed (${result})")
  endif()
endfunction()
# The same compiler, C++ standard and Kokkos (and Kokkos-Kernels) as the build, as a user
# would point to them.
set(common -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
           -DCMAKE_CXX_STANDARD=${CXX_STANDARD})
if(KOKKOS_DIR)
  list(APPEND common "-DKokkos_DIR=${KOKKOS_DIR}")
endif()
if(KOKKOSKERNELS_DIR)
  list(APPEND common "-DKokkosKernels_DIR=${KOKKOSKERNELS_DIR}")
endif()
# Builds and runs the tests of the user projects against the installed `prefix`.
function(test_user_projects prefix name)
  foreach(source "${SOURCE_DIR}/examples" "${SOURCE_DIR}/cmake/consumer")
    get_filename_component(project "${source}" NAME)
    set(binary "${root}/${name}-${project}")
    run(${CMAKE_COMMAND} -S "${source}" -B "${binary}" ${common} -Dsdot_ROOT=${prefix})
    run(${CMAKE_COMMAND} --build "${binary}" -j 2)
    run(${CMAKE_CTEST_COMMAND} --test-dir "${binary}" --output-on-failure)
    step_done("${name}: ${project} built and run")
  endforeach()
endfunction()
# Builds sdot from the sources with the options that follow, installs it into `prefix` and
# tests the user projects against it.
function(build_install_and_test name prefix)
  run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${root}/${name}-build" ${common}
      -DSDOT_ENABLE_KOKKOS_KERNELS=${ENABLE_KOKKOS_KERNELS}
      -DSDOT_ENABLE_EXPLICIT_INSTANTIATION=${ENABLE_EXPLICIT_INSTANTIATION} ${ARGN})
  run(${CMAKE_COMMAND} --build "${root}/${name}-build" -j 2)
  run(${CMAKE_COMMAND} --install "${root}/${name}-build" --prefix "${prefix}")
  step_done("${name}: sdot built and installed")
  test_user_projects("${prefix}" "${name}")
endfunction()

run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${root}/prefix")
test_user_projects("${root}/prefix" "build")
# The Python packages, from the installed prefix only: the documents' one-device script.
if(PYTHON_EXECUTABLE AND PYTHON_INSTALL_DIR)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${root}/prefix/${PYTHON_INSTALL_DIR}"
                          "${PYTHON_EXECUTABLE}" "${SOURCE_DIR}/examples/python/one_device.py"
                  WORKING_DIRECTORY "${root}" RESULT_VARIABLE result OUTPUT_VARIABLE printed)
  if(NOT result EQUAL 0 OR NOT printed MATCHES "^(1\\.0|1\\.0000000000000|0\\.9999999999999)")
    message(FATAL_ERROR "install test: the installed Python packages printed '${printed}' (${result})")
  endif()
endif()

if(SHARED)
  set(other OFF)
else()
  set(other ON)
endif()
# The other linkage without MPI (the libraries with HDF5, serial, and the programs): with the
# build itself, each linkage and each MPI setting is built once. Shared libraries with MPI and
# static ones without it are the combinations left out (two more sdot builds).
set(name "other-no-mpi")
set(apps ${ENABLE_HDF5})
set(prefix "${root}/${name}-prefix")
build_install_and_test(${name} "${prefix}" -DBUILD_SHARED_LIBS=${other} -DSDOT_ENABLE_MPI=OFF
                       -DSDOT_ENABLE_HDF5=${ENABLE_HDF5} -DSDOT_ENABLE_APPS=${apps})
# find_package(sdot) looked for no MPI.
file(GLOB_RECURSE config_file "${prefix}/*/sdotConfig.cmake")
file(READ "${config_file}" config)
if(NOT config MATCHES "set\\(SDOT_ENABLE_MPI OFF\\)")
  message(FATAL_ERROR "install test: ${prefix}'s sdotConfig.cmake does not say SDOT_ENABLE_MPI OFF")
endif()
foreach(project examples consumer)
  file(STRINGS "${root}/${name}-${project}/CMakeCache.txt" mpi_entries REGEX "^MPI_")
  if(mpi_entries)
    message(FATAL_ERROR "install test: ${project} against sdot without MPI found MPI: ${mpi_entries}")
  endif()
endforeach()
# The program runs without mpiexec, one process with boxes.
if(apps)
  # Shared libraries: found through the prefix (the install sets no RPATH).
  execute_process(COMMAND ${CMAKE_COMMAND} -E env
                          "LD_LIBRARY_PATH=${prefix}/lib:${prefix}/lib64:$ENV{LD_LIBRARY_PATH}"
                          "${prefix}/bin/sdot-measures" --random 10000 --nb-boxes 4
                          "${root}/${name}-measures.h5"
                  RESULT_VARIABLE result OUTPUT_VARIABLE printed ERROR_VARIABLE errors)
  if(NOT result EQUAL 0 OR NOT printed MATCHES "\"n\":10000,\"ranks\":1,\"boxes\":4,"
     OR NOT printed MATCHES "\"sum_measures\":(1|1\\.0*|0\\.99999999999999[0-9]*)[,}]"
     OR NOT EXISTS "${root}/${name}-measures.h5")
    message(FATAL_ERROR "install test: sdot-measures without MPI (${result}): ${printed}${errors}")
  endif()
  step_done("${name}: sdot-measures run")
endif()

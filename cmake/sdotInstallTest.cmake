# Installs the build in BUILD_DIR into a fresh prefix, configures examples/ as a project of its
# own against that prefix, builds it and runs its tests; then the same for a project that
# enables only C++ (cmake/consumer). Run with cmake -P.
set(prefix "${BUILD_DIR}/install-test/prefix")
set(examples "${BUILD_DIR}/install-test/examples")
set(consumer "${BUILD_DIR}/install-test/consumer")
file(REMOVE_RECURSE "${BUILD_DIR}/install-test")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install test: '${ARGN}' failed (${result})")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
# The same Kokkos (and Kokkos-Kernels) as the build, as a user would point to them.
set(dependencies "")
if(KOKKOS_DIR)
  list(APPEND dependencies "-DKokkos_DIR=${KOKKOS_DIR}")
endif()
if(KOKKOSKERNELS_DIR)
  list(APPEND dependencies "-DKokkosKernels_DIR=${KOKKOSKERNELS_DIR}")
endif()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples" -B "${examples}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_CXX_STANDARD=${CXX_STANDARD} -Dsdot_ROOT=${prefix}
    ${dependencies})
run(${CMAKE_COMMAND} --build "${examples}" -j 2)
run(${CMAKE_CTEST_COMMAND} --test-dir "${examples}" --output-on-failure)
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/cmake/consumer" -B "${consumer}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_CXX_STANDARD=${CXX_STANDARD} -Dsdot_ROOT=${prefix}
    ${dependencies})
run(${CMAKE_COMMAND} --build "${consumer}" -j 2)
run(${CMAKE_CTEST_COMMAND} --test-dir "${consumer}" --output-on-failure)

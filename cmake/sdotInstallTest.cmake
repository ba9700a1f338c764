# The install test. Installs the build in BUILD_DIR into a fresh prefix, then builds and runs,
# against that prefix, examples/ and cmake/consumer (a project that enables only C++), each as
# a project of its own. Then builds sdot's libraries again with the other linkage (shared for
# a static build, static for a shared one), installs them and does the same. Run with cmake -P.
set(root "${BUILD_DIR}/install-test")
file(REMOVE_RECURSE "${root}")
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
  endforeach()
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
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${root}/other-build" ${common}
    -DBUILD_SHARED_LIBS=${other} -DSDOT_ENABLE_APPS=OFF -DSDOT_ENABLE_HDF5=${ENABLE_HDF5}
    -DSDOT_ENABLE_KOKKOS_KERNELS=${ENABLE_KOKKOS_KERNELS}
    -DSDOT_ENABLE_EXPLICIT_INSTANTIATION=${ENABLE_EXPLICIT_INSTANTIATION})
run(${CMAKE_COMMAND} --build "${root}/other-build" -j 2)
run(${CMAKE_COMMAND} --install "${root}/other-build" --prefix "${root}/other-prefix")
test_user_projects("${root}/other-prefix" "other")

# Installs the build in BUILD_DIR into a fresh prefix, configures examples/ as a project of its
# own against that prefix, builds it and runs its tests. Run with cmake -P.
set(prefix "${BUILD_DIR}/install-test/prefix")
set(examples "${BUILD_DIR}/install-test/examples")
file(REMOVE_RECURSE "${BUILD_DIR}/install-test")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "install test: '${ARGN}' failed (${result})")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples" -B "${examples}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -Dsdot_ROOT=${prefix} -DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH})
run(${CMAKE_COMMAND} --build "${examples}" -j 2)
run(${CMAKE_CTEST_COMMAND} --test-dir "${examples}" --output-on-failure)

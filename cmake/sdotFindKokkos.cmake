# Finds Kokkos (and, when asked, Kokkos-Kernels) and makes sure the plain imported targets
# `Kokkos::kokkos` and `Kokkos::kokkoskernels` are usable.
#
# A normal Kokkos 4.x/5.x install exports both as they are. Debian 12's Trilinos build of
# Kokkos 3.4 does not: its `Kokkos::kokkos` points at a non-existent <prefix>/include (the
# headers are in Kokkos_INCLUDE_DIRS) and Kokkos-Kernels has only `trilinos_kokkoskernels`,
# with no include directories and no version file. This module repairs that in place, on
# the imported targets of the calling project, never on system files.
#
#   sdot_find_kokkos([KERNELS])
include_guard(GLOBAL)

function(_sdot_existing_dirs out)
  set(kept "")
  foreach(dir IN LISTS ARGN)
    if(dir MATCHES "^\\$<" OR EXISTS "${dir}")
      list(APPEND kept "${dir}")
    endif()
  endforeach()
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

# Kokkos-Kernels x.y works only with Kokkos x.y. An install without a version file (Debian's
# Trilinos build) is accepted only beside the Kokkos it was built with.
function(_sdot_check_kernels_match_kokkos)
  get_filename_component(kokkos_configs "${Kokkos_DIR}" DIRECTORY)
  get_filename_component(kernels_configs "${KokkosKernels_DIR}" DIRECTORY)
  if(KokkosKernels_VERSION)
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" kernels_release "${KokkosKernels_VERSION}")
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" kokkos_release "${Kokkos_VERSION}")
    if(NOT kernels_release STREQUAL kokkos_release)
      message(FATAL_ERROR
        "sdot: Kokkos-Kernels ${KokkosKernels_VERSION} (${KokkosKernels_DIR}) does not match "
        "Kokkos ${Kokkos_VERSION} (${Kokkos_DIR}): they must be the same release. Give the "
        "Kokkos-Kernels built against this Kokkos with "
        "-DKokkosKernels_DIR=<its prefix>/lib/cmake/KokkosKernels, or "
        "configure with -DSDOT_ENABLE_KOKKOS_KERNELS=OFF.")
    endif()
  elseif(NOT kernels_configs STREQUAL kokkos_configs)
    message(FATAL_ERROR
      "sdot: Kokkos-Kernels at ${KokkosKernels_DIR} has no version and is not installed beside "
      "Kokkos ${Kokkos_VERSION} (${Kokkos_DIR}): it may be built against another Kokkos. Give "
      "the Kokkos-Kernels built against this Kokkos with "
        "-DKokkosKernels_DIR=<its prefix>/lib/cmake/KokkosKernels, or "
      "configure with -DSDOT_ENABLE_KOKKOS_KERNELS=OFF.")
  endif()
endfunction()

macro(sdot_find_kokkos)
  cmake_parse_arguments(_sdot_fk "KERNELS" "" "" ${ARGN})
  find_package(Kokkos REQUIRED)
  if(NOT TARGET Kokkos::kokkos)
    message(FATAL_ERROR "sdot: this Kokkos install defines no Kokkos::kokkos target")
  endif()
  get_target_property(_sdot_kokkos_alias Kokkos::kokkos ALIASED_TARGET)
  if(NOT _sdot_kokkos_alias)
    get_target_property(_sdot_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
    if(_sdot_kokkos_inc)
      _sdot_existing_dirs(_sdot_kokkos_kept ${_sdot_kokkos_inc})
      if(NOT "${_sdot_kokkos_kept}" STREQUAL "${_sdot_kokkos_inc}")
        # Debian's Trilinos Kokkos: replace the missing directory by the one that holds the headers.
        list(APPEND _sdot_kokkos_kept ${Kokkos_INCLUDE_DIRS})
        set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
                                                        "${_sdot_kokkos_kept}")
        get_target_property(_sdot_kokkos_libs Kokkos::kokkos INTERFACE_LINK_LIBRARIES)
        list(REMOVE_ITEM _sdot_kokkos_libs "-DKOKKOS_DEPENDENCE")
        set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_LINK_LIBRARIES
                                                        "${_sdot_kokkos_libs}")
        message(STATUS "sdot: repaired Kokkos::kokkos include directories (${Kokkos_INCLUDE_DIRS})")
      endif()
    endif()
  endif()
  if(_sdot_fk_KERNELS)
    # Kokkos-Kernels must be built against this Kokkos: look first beside it (the same
    # prefix), then where CMake looks; refuse a Kernels of another Kokkos version.
    find_package(KokkosKernels REQUIRED HINTS "${Kokkos_DIR}/../KokkosKernels")
    _sdot_check_kernels_match_kokkos()
    if(NOT TARGET Kokkos::kokkoskernels)
      if(TARGET trilinos_kokkoskernels)
        add_library(Kokkos::kokkoskernels INTERFACE IMPORTED)
        set_target_properties(Kokkos::kokkoskernels PROPERTIES
          INTERFACE_LINK_LIBRARIES "trilinos_kokkoskernels;Kokkos::kokkos"
          INTERFACE_INCLUDE_DIRECTORIES "${KokkosKernels_INCLUDE_DIRS}")
        message(STATUS "sdot: made Kokkos::kokkoskernels from Debian's trilinos_kokkoskernels")
      else()
        message(FATAL_ERROR "sdot: this Kokkos-Kernels install defines no usable target")
      endif()
    endif()
  endif()
endmacro()

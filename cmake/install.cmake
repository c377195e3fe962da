# Installation: `cmake --install build [--prefix DIR]`, and the Debian
# packages `cpack -G DEB` makes from the same rules (README, "Installing").
#
#   bin/tunerun                          the CLI
#   lib/tunerun/tunerun-worker           the ranks of the CLI's trials
#   lib/tunerun/tunerun-sim              the simulated ranks of launcher "sim"
#   lib/tunerun/tunerun-ssh-rank         the remote end of launcher "ssh"'s sessions
#   lib/tunerun/tunerun-dashboard        `tunerun dashboard` and `tunerun report`
#   lib/tunerun/libtunerun_*.so          plug-in trainables the CLI loads as built-ins
#   share/tunerun/examples/              the sweep files: `tunerun examples/quadratic.toml`
#   lib/python3/dist-packages/tunerun/   `import tunerun` (TUNERUN_PYTHON_INSTALL_DIR,
#                                        bindings/CMakeLists.txt); under /usr Debian's
#                                        python3 finds it, elsewhere set PYTHONPATH
#   include/tunerun/{core,tune,...}/*.h  the API: #include <tunerun/tune/tuner.h>; only
#                                        the headers a user includes and their closure
#                                        (below), never an internal/ one
#   lib/libtunerun_*.a                   the libraries
#   lib/cmake/tunerun/                   tunerunConfig.cmake: find_package(tunerun)
#
# Two components, two packages: `runtime` (tunerun: down to the Python package)
# and `development` (tunerun-dev: the rest, with the -dev packages that
# tunerunConfig.cmake finds). Targets keep their names in the build tree
# (tunerun_tune) and are exported as tunerun::tune, whose INTERFACE include
# directory is <prefix>/include (the build tree's is the source tree).
# Nothing is installed outside the prefix: `--prefix ~/.local` needs no root.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TUNERUN_PLUGIN_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/tunerun)
set(TUNERUN_DATA_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/tunerun)
set(TUNERUN_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tunerun)

# An installed tunerun finds its plug-ins and examples relative to its own
# executable (/proc/self/exe), so a package or `--prefix` can move the tree.
file(RELATIVE_PATH _tunerun_plugin_dir ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${TUNERUN_PLUGIN_INSTALL_DIR})
file(RELATIVE_PATH _tunerun_data_dir ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${TUNERUN_DATA_INSTALL_DIR})
target_compile_definitions(tunerun_train PRIVATE
  TUNERUN_PLUGIN_DIR_FROM_BIN="${_tunerun_plugin_dir}")
target_compile_definitions(tunerun PRIVATE TUNERUN_DATA_DIR_FROM_BIN="${_tunerun_data_dir}")

# --- runtime -------------------------------------------------------------
install(TARGETS tunerun EXPORT tunerunTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS tunerun-worker tunerun-sim tunerun-ssh-rank tunerun-dashboard
        RUNTIME DESTINATION ${TUNERUN_PLUGIN_INSTALL_DIR} COMPONENT runtime)
foreach(plugin tunerun_fashion_mnist tunerun_models)
  if(TARGET ${plugin})
    install(TARGETS ${plugin} LIBRARY DESTINATION ${TUNERUN_PLUGIN_INSTALL_DIR} COMPONENT runtime)
  endif()
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/
        DESTINATION ${TUNERUN_DATA_INSTALL_DIR}/examples COMPONENT runtime
        PATTERN CMakeLists.txt EXCLUDE)

# --- development -----------------------------------------------------------
set(_tunerun_libraries core storage search schedulers train tune trainer)
foreach(name IN LISTS _tunerun_libraries)
  set_target_properties(tunerun_${name} PROPERTIES EXPORT_NAME ${name})
  install(TARGETS tunerun_${name} EXPORT tunerunTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

# Headers: only those a user includes, and what they include. The roots
# below are the API; tunerun_install_headers() installs them and, at install
# time, every header they include with "...", recursively (nothing else: no
# internal/ header, nothing of the controller's rooms unless the API
# includes it; tune/builtin_stoppers.h includes tune/system/clock.h). Each
# goes to include/tunerun/<its path>, its project includes rewritten from
# "tune/x.h" to "tunerun/tune/x.h", so that a consumer needs only
# <prefix>/include on its path. The closure is walked when installing, so it
# follows the headers as they are without a reconfigure. The install test
# checks the result (tests/install/install_test.sh).
set(_tunerun_api_headers
  tune/tuner.h tune/tune_config.h tune/result_grid.h tune/callback.h tune/stopper.h
  tune/builtin_stoppers.h tune/progress.h tune/resources.h tune/cluster.h
  tune/trainer/torch_trainer.h tune/trainer/scaling_config.h
  train/session.h train/trainable.h train/checkpoint.h
  search/searcher.h search/searcher_options.h search/factory.h search/param_space.h
  search/domain.h
  schedulers/trial_scheduler.h schedulers/scheduler_options.h schedulers/factory.h
  storage/experiment_store.h storage/statement.h)  # the store's reader

# The install-time step: CMake code for cmake_install.cmake (hence DESTDIR
# by hand, and the manifest), its @...@ filled in by tunerun_install_headers.
set(_tunerun_install_headers_code [==[
block(SCOPE_FOR VARIABLES POLICIES PROPAGATE CMAKE_INSTALL_MANIFEST_FILES)
  cmake_policy(VERSION 3.25)      # cmake_install.cmake sets none (IN_LIST)
  set(_roots "@_roots@")          # globs relative to the source tree
  set(_source "@PROJECT_SOURCE_DIR@")
  set(_includedir "@CMAKE_INSTALL_INCLUDEDIR@")
  set(_project_dirs "(core|storage|search|schedulers|train|tune)/")
  set(_dest "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${_includedir}/tunerun")
  set(_todo)
  foreach(_glob IN LISTS _roots)
    file(GLOB _found RELATIVE "${_source}" "${_source}/${_glob}")
    list(APPEND _todo ${_found})
  endforeach()
  set(_done)
  while(_todo)                    # the closure: each header, then its includes
    list(POP_FRONT _todo _header)
    if(_header IN_LIST _done)
      continue()
    endif()
    list(APPEND _done "${_header}")
    if(NOT EXISTS "${_source}/${_header}")
      message(FATAL_ERROR "tunerun: an installed header includes ${_header}, which is not in ${_source}")
    endif()
    file(STRINGS "${_source}/${_header}" _includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    list(TRANSFORM _includes REPLACE "^[^\"]*\"([^\"]*)\".*$" "\\1")
    list(APPEND _todo ${_includes})
    # "tune/x.h" -> "tunerun/tune/x.h"; written only when it changed, like file(INSTALL).
    file(READ "${_source}/${_header}" _text)
    string(REGEX REPLACE "(#[ \t]*include[ \t]*\")${_project_dirs}" "\\1tunerun/\\2/"
           _text "${_text}")
    set(_old)
    if(EXISTS "${_dest}/${_header}")
      file(READ "${_dest}/${_header}" _old)
    endif()
    if(_text STREQUAL _old)
      message(STATUS "Up-to-date: ${_dest}/${_header}")
    else()
      message(STATUS "Installing: ${_dest}/${_header}")
      file(WRITE "${_dest}/${_header}" "${_text}")
    endif()
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${_dest}/${_header}")
  endwhile()
endblock()
]==])
function(tunerun_install_headers)  # ROOT_GLOB...
  set(_roots "${ARGN}")
  string(CONFIGURE "${_tunerun_install_headers_code}" _code @ONLY)
  install(CODE "${_code}" COMPONENT development)
endfunction()
tunerun_install_headers(${_tunerun_api_headers})

install(EXPORT tunerunTargets NAMESPACE tunerun:: DESTINATION ${TUNERUN_CMAKE_INSTALL_DIR}
        COMPONENT development)

# tunerun::torch (DDP, process groups) in its own export set, loaded by
# find_package(tunerun COMPONENTS torch): a consumer of tunerun::tune never
# needs libtorch.
if(TARGET tunerun_torch)
  set_target_properties(tunerun_torch PROPERTIES EXPORT_NAME torch)
  install(TARGETS tunerun_torch EXPORT tunerunTorchTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  tunerun_install_headers(train/torch/*.h)  # include/tunerun/train/torch/
  install(EXPORT tunerunTorchTargets NAMESPACE tunerun:: DESTINATION ${TUNERUN_CMAKE_INSTALL_DIR}
          COMPONENT development)
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tunerunConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tunerunConfig.cmake INSTALL_DESTINATION ${TUNERUN_CMAKE_INSTALL_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tunerunConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tunerunConfig.cmake
              ${PROJECT_BINARY_DIR}/tunerunConfigVersion.cmake
        DESTINATION ${TUNERUN_CMAKE_INSTALL_DIR} COMPONENT development)

# --- Debian packages: cpack -G DEB --------------------------------------
# tunerun_<version>_<arch>.deb and tunerun-dev_<version>_<arch>.deb. The
# runtime's dependencies come from its ELF files (dpkg-shlibdeps: libzmq5,
# libsqlite3-0, libfmt9, libtorch...); the development package's are the
# -dev packages whose CMake configs tunerunConfig.cmake finds.
set(CPACK_PACKAGE_NAME tunerun)
set(CPACK_PACKAGE_VENDOR tunerun)
set(CPACK_PACKAGE_CONTACT "tunerun developers <tunerun@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "hyperparameter tuning engine with an embedded distributed trainer")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime development)
set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS runtime)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)  # tunerun-dev Depends: tunerun (= version)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME tunerun)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
# cloudpickle: `import tunerun` sends a Python trainable to its ranks by value.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "python3, python3-cloudpickle")
set(_tunerun_dev_depends pkg-config libfmt-dev nlohmann-json3-dev libmsgpack-cxx-dev cppzmq-dev
    libzmq3-dev libtomlplusplus-dev libeigen3-dev libsqlite3-dev)
if(TARGET tunerun_torch)
  # The Fashion-MNIST built-ins read Debian's copy of the data set; OpenBLAS
  # is ~20x faster than the reference BLAS that libtorch would use otherwise.
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS
      "python3, python3-cloudpickle, dataset-fashion-mnist, libopenblas0-pthread")
  set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_RECOMMENDS "libtorch-dev, libgloo-dev")  # tunerun::torch
endif()
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME tunerun-dev)
list(JOIN _tunerun_dev_depends ", " CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS)
include(CPack)

# Installation: `cmake --install build [--prefix DIR]`, and the Debian
# packages `cpack -G DEB` makes from the same rules (README, "Installing").
#
#   bin/tunerun                          the CLI
#   lib/tunerun/tunerun-worker           the ranks of the CLI's trials
#   lib/tunerun/tunerun-sim              the simulated ranks of launcher "sim"
#   lib/tunerun/tunerun-dashboard        `tunerun dashboard` and `tunerun report`
#   lib/tunerun/libtunerun_*.so          plug-in trainables the CLI loads as built-ins
#   share/tunerun/examples/              the sweep files: `tunerun examples/quadratic.toml`
#   include/{core,search,...}/*.h        the public headers (no internal/ ones)
#   lib/libtunerun_*.a                   the libraries
#   lib/cmake/tunerun/                   tunerunConfig.cmake: find_package(tunerun)
#
# Two components, two packages: `runtime` (tunerun: the first five lines)
# and `development` (tunerun-dev: the rest, with the -dev packages that
# tunerunConfig.cmake finds). Targets keep their names in the build tree
# (tunerun_tune) and are exported as tunerun::tune.
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
install(TARGETS tunerun-worker tunerun-sim tunerun-dashboard
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

# Headers by folder: every header is public except those under internal/,
# which no public header includes (the install test checks that every
# installed header's includes are installed). Left out besides: the
# folders of other targets, the CLI's (tune/cli) and the torch-based ones
# (train/fashion_mnist, loop, models; train/torch is installed below, with
# tunerun::torch).
set(_tunerun_header_dirs core storage search schedulers train tune)
foreach(dir IN LISTS _tunerun_header_dirs)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development
          FILES_MATCHING PATTERN "*.h"
          PATTERN internal EXCLUDE
          PATTERN cli EXCLUDE
          PATTERN fashion_mnist EXCLUDE
          PATTERN torch EXCLUDE
          PATTERN loop EXCLUDE
          PATTERN models EXCLUDE)
endforeach()

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
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/train/torch
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/train COMPONENT development
          FILES_MATCHING PATTERN "*.h")
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
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "python3")
set(_tunerun_dev_depends pkg-config libfmt-dev nlohmann-json3-dev libmsgpack-cxx-dev cppzmq-dev
    libzmq3-dev libtomlplusplus-dev libeigen3-dev libsqlite3-dev)
if(TARGET tunerun_torch)
  # The Fashion-MNIST built-ins read Debian's copy of the data set; OpenBLAS
  # is ~20x faster than the reference BLAS that libtorch would use otherwise.
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS
      "python3, dataset-fashion-mnist, libopenblas0-pthread")
  set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_RECOMMENDS "libtorch-dev, libgloo-dev")  # tunerun::torch
endif()
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME tunerun-dev)
list(JOIN _tunerun_dev_depends ", " CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS)
include(CPack)

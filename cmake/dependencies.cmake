# Every dependency comes from a Debian package that scripts/install_deps.sh
# installs; nothing is downloaded at configure or build time.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(msgpack REQUIRED CONFIG)  # libmsgpack-cxx-dev: target msgpackc-cxx
find_package(cppzmq REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
find_package(doctest QUIET)  # doctest-dev, for the tests only (install_deps.sh --tests)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)

# libtorch is optional: without it the project builds and tests everything but
# the distributed trainer (train/torch, train/fashion_mnist). Debian's
# libtorch-dev; a CUDA libtorch (PyTorch's) via -DCMAKE_PREFIX_PATH. Only
# targets under train/ link it: the controller never loads libtorch.
find_package(Torch QUIET)
option(TUNERUN_WITH_TORCH "Build the libtorch trainer (needs find_package(Torch))" ${Torch_FOUND})
if(TUNERUN_WITH_TORCH AND NOT Torch_FOUND)
  message(FATAL_ERROR "TUNERUN_WITH_TORCH=ON but libtorch was not found "
                      "(TUNERUN_WITH_TORCH=1 scripts/install_deps.sh installs libtorch-dev)")
endif()
if(TUNERUN_WITH_TORCH)
  find_package(ZLIB REQUIRED)  # Fashion-MNIST's gzipped IDX files; zlib1g-dev
  message(STATUS "tunerun: building the libtorch trainer (${TORCH_LIBRARIES})")
endif()

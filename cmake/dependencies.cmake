# Every dependency comes from a Debian package that scripts/install_deps.sh
# installs; nothing is downloaded at configure or build time.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(msgpack REQUIRED CONFIG)  # libmsgpack-cxx-dev: target msgpackc-cxx
find_package(cppzmq REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
find_package(doctest REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)

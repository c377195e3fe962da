# TUNERUN_SANITIZE: a build whose every unit is compiled and linked with
# -fsanitize=..., for running the unit tests under AddressSanitizer (and
# LeakSanitizer, which ASan includes) and UndefinedBehaviorSanitizer.
#   -DTUNERUN_SANITIZE=ON                  address,undefined
#   -DTUNERUN_SANITIZE=address,undefined   any list -fsanitize= takes
# Use a build folder of its own (scripts/test does, in build-asan/): every
# object differs from a plain build's.
#
# Left out of such a build, because they cannot run under ASan:
# - libtorch (TUNERUN_WITH_TORCH defaults to OFF here; ON is an error):
#   Debian's libtorch is not built with ASan, and its allocations and
#   containers cross into ours;
# - the Python module (the top-level CMakeLists.txt skips bindings/): the
#   interpreter is not ASan-built, so importing the module would need
#   libasan preloaded into python3.
#
# Included before the targets are defined: the flags are directory options
# that every target defined after them takes, the precompiled headers' too,
# so every unit still matches its header.
set(TUNERUN_SANITIZE OFF CACHE STRING
    "Sanitizers for every unit: OFF, ON (address,undefined) or a -fsanitize= list")
if(NOT TUNERUN_SANITIZE)
  return()
endif()

string(TOUPPER "${TUNERUN_SANITIZE}" _tunerun_sanitize)
if(_tunerun_sanitize MATCHES "^(ON|1|TRUE|YES|Y)$")
  set(_tunerun_sanitizers address,undefined)
else()
  set(_tunerun_sanitizers ${TUNERUN_SANITIZE})
endif()

if(NOT DEFINED TUNERUN_WITH_TORCH)
  set(TUNERUN_WITH_TORCH OFF CACHE BOOL "Build the libtorch trainer (needs find_package(Torch))")
elseif(TUNERUN_WITH_TORCH)
  message(FATAL_ERROR "TUNERUN_SANITIZE needs -DTUNERUN_WITH_TORCH=OFF: libtorch is not ASan-built")
endif()

# UBSan's findings end the process (as ASan's do) instead of printing and
# going on, so a finding fails its test. A frame pointer in every function
# gives ASan's fast unwinder whole stacks at each allocation and free.
add_compile_options(-fsanitize=${_tunerun_sanitizers} -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer)
add_link_options(-fsanitize=${_tunerun_sanitizers})
# Under ASan's instrumentation GCC's -Wmaybe-uninitialized reports
# std::function members inside libstdc++'s <regex> (GCC 12); the plain
# build keeps the warning.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options(-Wno-maybe-uninitialized)
endif()
message(STATUS "tunerun: sanitizers ${_tunerun_sanitizers}, no libtorch, no Python module")

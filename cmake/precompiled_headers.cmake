# One precompiled header for every target that does not include libtorch
# (those reuse tunerun_torch's, train/torch/CMakeLists.txt): the standard
# library, nlohmann-json, fmt and ZeroMQ, which nearly every unit includes
# and which cost several seconds to parse and instantiate in each. Only
# system headers go in: a change to the project's own headers never
# rebuilds it.
#
# GCC uses a precompiled header only in a unit compiled with the same
# -fpic/-fpie setting and optimisation; every unit is -fPIC (the top-level
# CMakeLists.txt) and the optimisation comes from the build type, so one
# header serves libraries, plug-ins and executables alike.
add_library(tunerun_common_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/common_pch.cpp)
target_link_libraries(tunerun_common_pch PRIVATE nlohmann_json::nlohmann_json fmt::fmt cppzmq)
target_precompile_headers(tunerun_common_pch PRIVATE
  <algorithm> <chrono> <cstdint> <filesystem> <functional> <map> <memory> <optional>
  <set> <string> <string_view> <unordered_map> <variant> <vector>
  <nlohmann/json.hpp> <fmt/format.h> <zmq.hpp>)

# Gives the common header to every C++ target defined under `dir` that has
# no precompiled header of its own and does not refuse one
# (DISABLE_PRECOMPILE_HEADERS, as libtorch's units do: their flags differ):
# called once, after all targets exist, so that new targets get it without a
# line of their own.
function(tunerun_use_common_pch dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$"
       OR target STREQUAL tunerun_common_pch)
      continue()
    endif()
    get_target_property(own ${target} PRECOMPILE_HEADERS)
    get_target_property(reused ${target} PRECOMPILE_HEADERS_REUSE_FROM)
    get_target_property(none ${target} DISABLE_PRECOMPILE_HEADERS)
    if(own OR reused OR none)
      continue()
    endif()
    target_precompile_headers(${target} REUSE_FROM tunerun_common_pch)
    # fmt::fmt defines FMT_SHARED for whoever links it, and GCC refuses the
    # header in a unit where a macro it saw differs: the few targets that do
    # not link fmt (a test's main, a fixture plug-in) define it too.
    target_compile_definitions(${target} PRIVATE FMT_SHARED)
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    tunerun_use_common_pch(${subdir})
  endforeach()
endfunction()

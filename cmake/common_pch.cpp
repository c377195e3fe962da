// The unit that builds the common precompiled header
// (cmake/precompiled_headers.cmake); it defines nothing.

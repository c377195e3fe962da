// Values crossing between Python and the engine: tune::Json <-> Python
// objects. dict, list/tuple, str, bool, int, float and None map both ways;
// floats keep NaN and infinities (the engine's JSON holds them as doubles).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "core/config.h"

namespace tunerun_py {

namespace py = pybind11;

// `value` as a Python object (dict, list, str, bool, int, float or None).
py::object to_python(const tune::Json& value);

// `object` as JSON. Throws py::value_error naming `where` (e.g.
// "param_space.lr") for a value of another type or a dict key that is not a
// str. Python ints beyond 64 bits are refused, numpy scalars accepted.
tune::Json to_json(py::handle object, const std::string& where);

}  // namespace tunerun_py

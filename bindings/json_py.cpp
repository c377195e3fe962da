#include "bindings/json_py.h"

#include <fmt/format.h>

namespace tunerun_py {

py::object to_python(const tune::Json& value) {
  using Type = tune::Json::value_t;
  switch (value.type()) {
    case Type::null:
    case Type::discarded:
      return py::none();
    case Type::boolean:
      return py::bool_(value.get<bool>());
    case Type::number_integer:
      return py::int_(value.get<int64_t>());
    case Type::number_unsigned:
      return py::int_(value.get<uint64_t>());
    case Type::number_float:
      return py::float_(value.get<double>());
    case Type::string:
      return py::str(value.get_ref<const std::string&>());
    case Type::array: {
      py::list list;
      for (const auto& item : value) list.append(to_python(item));
      return list;
    }
    case Type::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = to_python(item);
      return dict;
    }
    case Type::binary:
      break;
  }
  throw py::value_error("a binary JSON value has no Python form");
}

tune::Json to_json(py::handle object, const std::string& where) {
  if (object.is_none()) return nullptr;
  // bool before int: Python's bool is an int.
  if (py::isinstance<py::bool_>(object)) return object.cast<bool>();
  if (py::isinstance<py::int_>(object)) {
    try {
      return object.cast<int64_t>();
    } catch (const py::cast_error&) {
      throw py::value_error(fmt::format("{}: the integer {} does not fit in 64 bits", where,
                                        py::str(object).cast<std::string>()));
    }
  }
  if (py::isinstance<py::float_>(object)) return object.cast<double>();
  if (py::isinstance<py::str>(object)) return object.cast<std::string>();
  if (py::isinstance<py::dict>(object)) {
    tune::Json out = tune::Json::object();
    for (auto [key, item] : object.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key)) {
        throw py::value_error(
            fmt::format("{}: key {} is not a str", where, py::repr(key).cast<std::string>()));
      }
      const auto name = key.cast<std::string>();
      out[name] = to_json(item, where.empty() ? name : where + "." + name);
    }
    return out;
  }
  if (py::isinstance<py::list>(object) || py::isinstance<py::tuple>(object)) {
    tune::Json out = tune::Json::array();
    size_t i = 0;
    for (auto item : object) out.push_back(to_json(item, fmt::format("{}[{}]", where, i++)));
    return out;
  }
  // numpy and torch scalars (np.float32(0.5), tensor.item() already is a float).
  if (py::hasattr(object, "item") && py::hasattr(object, "dtype")) {
    py::object item = object.attr("item")();
    if (!py::hasattr(item, "dtype")) return to_json(item, where);
  }
  throw py::value_error(fmt::format(
      "{}: a value of type {} cannot be a config value or metric (use dict, list, str, "
      "bool, int, float or None)",
      where.empty() ? "value" : where, py::type::of(object).attr("__name__").cast<std::string>()));
}

}  // namespace tunerun_py

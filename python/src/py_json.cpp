#include "py_json.hpp"

#include <cmath>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::python {

py::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return py::none();
    case nlohmann::json::value_t::boolean: return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return py::float_(j.get<double>());
    case nlohmann::json::value_t::string: return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list l(j.size());
      for (std::size_t i = 0; i < j.size(); ++i) l[i] = to_python(j[i]);
      return std::move(l);
    }
    case nlohmann::json::value_t::object: {
      py::dict d;
      for (const auto& [k, v] : j.items()) d[py::str(k)] = to_python(v);
      return std::move(d);
    }
    default: return py::none();  // binary and discarded values: no document holds them
  }
}

nlohmann::json from_python(const py::handle& o, const std::string& field) {
  if (o.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(o)) return o.cast<bool>();  // before int: bool is an int in Python
  if (py::isinstance<py::int_>(o)) {
    try {
      return o.cast<std::int64_t>();
    } catch (const py::cast_error&) {
      throw InputError(field, py::str(o).cast<std::string>(), "an integer beyond 64 bits");
    }
  }
  if (py::isinstance<py::float_>(o)) {
    const double v = o.cast<double>();
    if (!std::isfinite(v)) throw InputError(field, py::str(o).cast<std::string>(), "must be a finite number");
    return v;
  }
  if (py::isinstance<py::str>(o)) return o.cast<std::string>();
  if (py::isinstance<py::dict>(o)) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, v] : o.cast<py::dict>()) {
      if (!py::isinstance<py::str>(k)) throw InputError(field, py::repr(k).cast<std::string>(), "keys must be strings");
      const std::string key = k.cast<std::string>();
      j[key] = from_python(v, field + "." + key);
    }
    return j;
  }
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& v : o) j.push_back(from_python(v, field + "[]"));
    return j;
  }
  throw InputError(field, py::repr(o).cast<std::string>(), "is not JSON (dict, list, str, int, float, bool or None)");
}

}  // namespace mhacfg::python

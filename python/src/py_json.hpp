// JSON documents as Python objects and back: dict, list, str, int, float, bool, None.
#pragma once

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

namespace mhacfg::python {

namespace py = pybind11;

// A JSON document as Python objects (objects become dicts with their keys in the document's order).
py::object to_python(const nlohmann::json& j);
// Python objects as JSON (a config.json given as a dict). Throws InputError naming `field` for an
// object JSON cannot hold (a set, a non-string key, NaN).
nlohmann::json from_python(const py::handle& o, const std::string& field);

}  // namespace mhacfg::python

// mhacfg._mhacfg: the commands as Python functions over mhacfg::configurator. Keyword arguments are
// the CLI's flags (underscores for dashes, in_ for --in); their values become the flag texts the CLI
// would read, and the same readers (api/requests.hpp) turn them into a command's inputs, so a flag
// means the same here. Each function returns the JSON document `--format json` writes, as Python
// objects. The GIL is released while the library works, so threads sweep in parallel.
#include <new>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "mhacfg/configurator/api/requests.hpp"
#include "mhacfg/configurator/inputs/model_source.hpp"
#include "mhacfg/configurator/report/analyze.hpp"
#include "mhacfg/configurator/report/recommend_report.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/profile.hpp"
#include "py_json.hpp"

namespace py = pybind11;

namespace mhacfg::python {

namespace {

// The package's exception classes (mhacfg/__init__.py), looked up when raised.
py::object error_class(const char* name) { return py::module_::import("mhacfg").attr(name); }

[[noreturn]] void raise(const char* name, py::object error) {
  PyErr_SetObject(error_class(name).ptr(), error.ptr());
  throw py::error_already_set();
}

py::object text_or_none(const std::string& s) { return s.empty() ? py::object(py::none()) : py::object(py::str(s)); }

// One keyword argument as the flag's text(s): a list or tuple is the flag's values (comma lists and
// repeated flags alike), a dict KEY=VALUE values (--set), a bool "true"/"false" (a switch given False
// is off), None no flag at all.
std::vector<std::string> flag_texts(const std::string& name, const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return {v.cast<bool>() ? "true" : "false"};
  if (py::isinstance<py::str>(v)) return {v.cast<std::string>()};
  if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return {py::repr(v).cast<std::string>()};
  if (py::isinstance<py::dict>(v)) {
    std::vector<std::string> out;
    for (const auto& [k, x] : v.cast<py::dict>()) out.push_back(py::str(k).cast<std::string>() + "=" + flag_texts(name, x).at(0));
    return out;
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::vector<std::string> out;
    for (const auto& x : v) out.push_back(flag_texts(name, x).at(0));
    return out;
  }
  if (py::hasattr(v, "__fspath__")) return {py::str(v.attr("__fspath__")()).cast<std::string>()};
  throw InputError("--" + name, py::repr(v).cast<std::string>(), "must be a str, int, float, bool, list or dict");
}

FlagValues flags_of(const py::kwargs& kw) {
  FlagValues f;
  for (const auto& [k, v] : kw) {
    std::string name = k.cast<std::string>();
    if (v.is_none()) continue;
    if (!name.empty() && name.back() == '_') name.pop_back();  // in_ -> in (a Python keyword)
    for (char& c : name)
      if (c == '_') c = '-';
    f.set(name, flag_texts(name, v));
  }
  return f;
}

std::string path_text(const py::handle& v) {
  return py::hasattr(v, "__fspath__") ? py::str(v.attr("__fspath__")()).cast<std::string>() : v.cast<std::string>();
}

// The model argument: config.json content (a dict), or a string naming a preset, a config.json path or
// a Hugging Face id, which becomes --model or --hf-config as inputs/model_source.hpp decides.
void set_model(FlagValues& f, const py::object& model) {
  if (model.is_none()) return;
  if (py::isinstance<py::dict>(model)) {
    f.config = from_python(model, "model");
    return;
  }
  const std::string s = path_text(model);
  f.set(names_config(s) ? "hf-config" : "model", s);
}

ModelSpec model_of(const py::handle& m, std::string& label) {
  if (py::isinstance<py::dict>(m)) {
    ModelSpec spec = model_from_config_json(from_python(m, "models[]"));
    label = spec.name;
    return spec;
  }
  label = path_text(m);
  return load_model_source(label, "compare");
}

py::object analyze(const py::object& model, const py::kwargs& kw) {
  FlagValues f = flags_of(kw);
  set_model(f, model);
  nlohmann::json doc;
  {
    py::gil_scoped_release release;
    const AnalyzeRequest r = read_analyze_request(f);
    f.check_all_read("analyze");
    doc = analyze_report(r).json;
  }
  return to_python(doc);
}

py::object recommend(const py::object& model, const py::kwargs& kw) {
  FlagValues f = flags_of(kw);
  set_model(f, model);
  nlohmann::json doc;
  std::string miss;
  {
    py::gil_scoped_release release;
    const RecommendRequest r = read_recommend_request(f);
    f.check_all_read("recommend");
    const Recommendation rec = mhacfg::recommend(r.options, r.profile);
    doc = recommend_report(rec).json;
    miss = rec.closest_miss;
  }
  if (!doc.value("feasible", false)) {
    // As the CLI's exit 1: nothing satisfies the constraints; the document still says why.
    std::string message = "no candidate satisfies the constraints";
    py::object closest = py::none();
    if (doc.contains("closest") && !doc["closest"].is_null()) {
      message += "; closest: " + doc["closest"].value("design", std::string()) + ": " + miss;
      closest = to_python(doc["closest"]);
    }
    raise("Infeasible", error_class("Infeasible")(message, closest, to_python(doc)));
  }
  return to_python(doc);
}

py::object compare(const py::sequence& models, const py::kwargs& kw) {
  FlagValues f = flags_of(kw);
  std::vector<std::string> labels(models.size());
  std::vector<ModelSpec> specs;
  for (std::size_t i = 0; i < models.size(); ++i) specs.push_back(model_of(models[i], labels[i]));
  nlohmann::json doc;
  {
    py::gil_scoped_release release;
    const CompareRequest r = read_compare_request(f, labels, [&](std::size_t i) { return specs[i]; });
    f.check_all_read("compare");
    doc = compare_report(r.options, r.models, r.profile).json;
  }
  return to_python(doc);
}

py::object validate(const py::object& in, const py::kwargs& kw) {
  FlagValues f = flags_of(kw);
  f.set("in", path_text(in));
  nlohmann::json doc;
  {
    py::gil_scoped_release release;
    doc = validate_report(f).json;
    f.check_all_read("validate");
  }
  return to_python(doc);
}

py::object predict(const py::object& in, const py::kwargs& kw) {
  FlagValues f = flags_of(kw);
  f.set("in", path_text(in));
  std::vector<nlohmann::json> lines;
  {
    py::gil_scoped_release release;
    lines = predict_lines(f);
    f.check_all_read("predict");
  }
  py::list out;
  for (const auto& j : lines) out.append(to_python(j));
  return std::move(out);
}

py::object profiles() {
  nlohmann::json doc;
  {
    py::gil_scoped_release release;
    doc = profiles_report().json;
  }
  return to_python(doc);
}

py::object models() {
  nlohmann::json doc;
  {
    py::gil_scoped_release release;
    doc = models_report().json;
  }
  return to_python(doc);
}

py::object load_profile_json(const py::object& name, bool roofline) {
  const std::string n = path_text(name);
  nlohmann::json doc;
  {
    py::gil_scoped_release release;
    doc = profile_to_json(load_profile(n, "profile", roofline ? ProfileBasis::roofline : ProfileBasis::as_shipped));
  }
  return to_python(doc);
}

// The library's errors as the package's exceptions, as the CLI maps them to exit codes.
void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const InputError& e) {
    raise("InputError", error_class("InputError")(e.what(), text_or_none(e.field()), text_or_none(e.value()),
                                                  text_or_none(e.reason())));
  } catch (const InfeasibleError& e) {
    raise("Infeasible", error_class("Infeasible")(e.what(), py::none(), py::none()));
  } catch (const RuntimeFailure& e) {
    raise("RuntimeFailure", error_class("RuntimeFailure")(e.what()));
  } catch (const std::bad_alloc&) {
    raise("RuntimeFailure", error_class("RuntimeFailure")("out of memory"));
  }
}

// Throws the library's error of `kind`: the tests check each reaches Python as its exception.
void raise_library_error(const std::string& kind) {
  if (kind == "input") throw InputError("--field", "value", "reason");
  if (kind == "infeasible") throw InfeasibleError("nothing fits");
  if (kind == "runtime") throw RuntimeFailure("the device failed");
  if (kind == "memory") throw std::bad_alloc();
}

}  // namespace

}  // namespace mhacfg::python

PYBIND11_MODULE(_mhacfg, m) {
  using namespace mhacfg::python;
  m.doc() = "mhacfg's commands in-process; see the mhacfg package.";
  m.attr("__version__") = MHACFG_VERSION;
  py::register_exception_translator(&translate);
  m.def("analyze", &analyze, py::arg("model") = py::none(),
        "Every exact count of one model under a workload; with target=, predicted times (mhacfg analyze).");
  m.def("recommend", &recommend, py::arg("model") = py::none(),
        "Query heads, KV heads, head_dim and projection for a budget, a context and a target (mhacfg recommend).");
  m.def("compare", &compare, py::arg("models"), "Models side by side with deltas against the first (mhacfg compare).");
  m.def("validate", &validate, py::arg("in_"), "A profile's error on measured kernel or serving records (mhacfg validate).");
  m.def("predict", &predict, py::arg("in_"), "Each record with its prediction, as predict's JSON Lines (mhacfg predict).");
  m.def("profiles", &profiles, "The shipped device profiles with provenance (mhacfg profiles).");
  m.def("models", &models, "The model presets --model reads, with shapes and sources (mhacfg models).");
  m.def("load_profile", &load_profile_json, py::arg("name"), py::arg("roofline") = false,
        "A device profile by shipped name or file, as `mhacfg profiles show NAME --format json`.");
  m.def("_raise_library_error", &raise_library_error, py::arg("kind"));
}

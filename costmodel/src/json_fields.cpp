#include "mhacfg/costmodel/json_fields.hpp"

#include <cmath>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {

constexpr std::size_t kValueTextChars = 60;

// The start of v's JSON text, written only as far as an error message shows it: a value nested
// thousands deep or megabytes long is never serialised whole (nlohmann's dump recurses per level).
void value_prefix(const nlohmann::json& v, std::string& out, int depth) {
  if (out.size() > kValueTextChars) return;
  if (v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    // Longer strings are cut below anyway; a cut inside a UTF-8 sequence is written as U+FFFD.
    out += nlohmann::json(text.substr(0, kValueTextChars + 1)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > kValueTextChars + 1) out += "...";
    return;
  }
  if (!v.is_structured()) {
    out += v.dump();
    return;
  }
  const bool array = v.is_array();
  out += array ? '[' : '{';
  if (depth >= 8 && !v.empty()) out += "...";
  bool first = true;
  for (auto it = v.begin(); depth < 8 && it != v.end() && out.size() <= kValueTextChars; ++it) {
    if (!first) out += ',';
    first = false;
    if (!array) out += nlohmann::json(it.key()).dump() + ':';
    value_prefix(*it, out, depth + 1);
  }
  out += array ? ']' : '}';
}

}  // namespace

std::string json_value_text(const nlohmann::json& v) {
  std::string s;
  value_prefix(v, s, 0);
  if (s.size() > kValueTextChars) s = s.substr(0, kValueTextChars - 3) + "...";
  return s;
}

std::int64_t json_to_int(const nlohmann::json& v, const std::string& field, bool positive) {
  std::int64_t out = 0;
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    out = v.get<std::int64_t>();
  } else if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) throw InputError(field, json_value_text(v), "out of range");
    out = static_cast<std::int64_t>(u);
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) throw InputError(field, json_value_text(v), "must be an integer");
    if (std::fabs(d) >= 9.2e18) throw InputError(field, json_value_text(v), "out of range");
    out = static_cast<std::int64_t>(d);
  } else {
    throw InputError(field, json_value_text(v), "must be an integer");
  }
  if (positive && out <= 0) throw InputError(field, json_value_text(v), "must be positive");
  if (!positive && out < 0) throw InputError(field, json_value_text(v), "must not be negative");
  return out;
}

JsonFields::JsonFields(const nlohmann::json& object, std::string where) : j_(object), where_(std::move(where)) {
  if (!j_.is_object()) throw InputError(where_, json_value_text(j_), "must be a JSON object");
}

std::string JsonFields::name(const char* key) const { return where_.empty() ? key : where_ + ": " + key; }

bool JsonFields::has(const char* key) const {
  auto it = j_.find(key);
  return it != j_.end() && !it->is_null();
}

bool JsonFields::present(const char* key) const { return j_.find(key) != j_.end(); }

const nlohmann::json& JsonFields::at(const char* key) const {
  auto it = j_.find(key);
  if (it == j_.end()) throw InputError(name(key), "(missing)", "required key is missing");
  return *it;
}

std::int64_t JsonFields::require_int(const char* key, bool positive) const {
  const auto& v = at(key);
  return json_to_int(v, name(key), positive);
}

std::optional<std::int64_t> JsonFields::optional_int(const char* key, bool positive) const {
  if (!has(key)) return std::nullopt;
  return json_to_int(j_.at(key), name(key), positive);
}

bool JsonFields::optional_bool(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  const auto& v = j_.at(key);
  if (!v.is_boolean()) throw InputError(name(key), json_value_text(v), "must be true or false");
  return v.get<bool>();
}

double JsonFields::require_number(const char* key) const {
  const auto& v = at(key);
  if (!v.is_number()) throw InputError(name(key), json_value_text(v), "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw InputError(name(key), json_value_text(v), "must be finite");
  return d;
}

std::optional<double> JsonFields::optional_number(const char* key) const {
  if (!has(key)) return std::nullopt;
  return require_number(key);
}

std::string JsonFields::require_string(const char* key) const {
  const auto& v = at(key);
  if (!v.is_string()) throw InputError(name(key), json_value_text(v), "must be a string");
  return v.get<std::string>();
}

std::optional<std::string> JsonFields::optional_string(const char* key) const {
  if (!has(key)) return std::nullopt;
  return require_string(key);
}

}  // namespace mhacfg

// Typed access to JSON objects with one-line errors that name the field (prefixed by `where`, e.g.
// "config.json" or "shapes.jsonl:12") and the offending value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace mhacfg {

class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string where);

  bool has(const char* key) const;      // present and not null
  bool present(const char* key) const;  // present, possibly null
  // Integers: integral JSON numbers that fit in 64 bits; `positive` also rejects zero and negatives.
  std::int64_t require_int(const char* key, bool positive = true) const;
  std::optional<std::int64_t> optional_int(const char* key, bool positive = true) const;
  bool optional_bool(const char* key, bool fallback) const;
  double require_number(const char* key) const;
  std::optional<double> optional_number(const char* key) const;
  std::string require_string(const char* key) const;
  std::optional<std::string> optional_string(const char* key) const;
  const nlohmann::json& at(const char* key) const;  // present (may be null)

  // The field's full name for messages: "<where>: <key>".
  std::string name(const char* key) const;
  const std::string& where() const { return where_; }

 private:
  const nlohmann::json& j_;
  std::string where_;
};

// Checks one JSON value as an integer; `field` names it in the error.
std::int64_t json_to_int(const nlohmann::json& v, const std::string& field, bool positive);
// Compact one-line rendering of a JSON value for error messages.
std::string json_value_text(const nlohmann::json& v);

}  // namespace mhacfg

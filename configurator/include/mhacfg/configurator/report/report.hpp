// A command's result, renderable as table, markdown, csv or json through one renderer. The JSON
// document is the source; tables are views on it built by the command.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/configurator/common/format.hpp"

namespace mhacfg {

enum class Format { table, json, markdown, csv, html };
Format parse_format(std::string_view name, const std::vector<Format>& allowed);
std::string_view to_string(Format f);

struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right_align;  // per column; numbers are right-aligned
};

struct Report {
  nlohmann::json json;           // the full result, with schema_version
  std::string heading;           // one line shown above the tables
  std::vector<Table> tables;
  std::vector<std::string> notes;  // sentences shown after the tables (rationale, conventions)
  Table csv;                     // the one table csv renders
};

void render(const Report& r, Format f, std::ostream& out);

}  // namespace mhacfg

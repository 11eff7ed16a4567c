// File I/O shared by every tool: whole-file reads with clear errors and atomic replacement.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace mhacfg {

// Reads a whole file; throws InputError naming `field` and the path when it cannot be read.
std::string read_file(const std::string& path, const std::string& field);

// Parses JSON text; throws InputError naming `field` with the parser's position on malformed input.
nlohmann::json parse_json(const std::string& text, const std::string& field);

// Writes `content` to `path` atomically (temporary file in the same folder, then rename): an
// existing file is only ever replaced by a complete new one. Throws InputError naming `field` when it cannot.
void write_file_atomic(const std::string& path, const std::string& content,
                       const std::string& field = "--out");

}  // namespace mhacfg

// validate, predict and calibrate --from on serving records (vLLM, SGLang or mhacfg's serving JSONL):
// the commands' serving branches, called by cmd_calibrate.cpp once the input is seen to hold them.
#pragma once

#include <ostream>
#include <string>

#include "mhacfg/configurator/cli/cli_options.hpp"

namespace mhacfg {

// True when the file holds serving records rather than kernel records.
bool serving_input(const std::string& path, const std::string& field);

int serving_validate(const ParsedArgs& a, const std::string& in, Format format, std::ostream& out);
int serving_predict(const ParsedArgs& a, const std::string& in, std::ostream& out);
// Fits the engine's times to the records and writes the engine JSON to `path` (atomically).
int serving_calibrate(const ParsedArgs& a, const std::string& from, const std::string& path, Format format,
                      std::ostream& out);

}  // namespace mhacfg

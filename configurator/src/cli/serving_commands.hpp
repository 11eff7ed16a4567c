// calibrate --from on serving records (vLLM, SGLang or mhacfg's serving JSONL), called by
// cmd_calibrate.cpp once the input is seen to hold them (validate's and predict's serving branches are
// in api/requests.hpp).
#pragma once

#include <ostream>
#include <string>

#include "mhacfg/configurator/cli/cli_options.hpp"

namespace mhacfg {

// Fits the engine's times to the records and writes the engine JSON to `path` (atomically).
int serving_calibrate(const ParsedArgs& a, const std::string& from, const std::string& path, Format format,
                      std::ostream& out);

}  // namespace mhacfg

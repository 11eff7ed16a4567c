// Runs the CLI in-process (the same run_cli main calls) and captures its streams.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "mhacfg/configurator/cli/cli.hpp"

struct CliResult {
  int code = 0;
  std::string out;
  std::string err;
};

inline CliResult run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult r;
  r.code = mhacfg::run_cli(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

inline std::string fixture(const std::string& rel) { return std::string(MHACFG_FIXTURES_DIR) + "/" + rel; }

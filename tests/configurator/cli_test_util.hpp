// Runs the CLI in-process (the same run_cli main calls) and captures its streams.
#pragma once

#include <catch2/catch.hpp>

#include <fstream>
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

// The whole content of a file ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string fixture(const std::string& rel) { return std::string(MHACFG_FIXTURES_DIR) + "/" + rel; }

// An invalid input: exit 2, nothing on stdout, and `message` as the one line on stderr.
inline void expect_input_error(const std::vector<std::string>& args, const std::string& message) {
  const CliResult r = run(args);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "mhacfg: error: " + message + "\n");
}

// Writes `content` to `name` in the test's build folder and returns its path.
inline std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = std::string(MHACFG_BINARY_DIR) + "/" + name;
  std::ofstream(path) << content;
  return path;
}

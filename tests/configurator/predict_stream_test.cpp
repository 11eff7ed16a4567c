// predict streams its records (issue 26, point 13): each is read, predicted and written in turn, never
// all held, yet its output is what it was: every line in order, and nothing at all (on stdout or in
// --out's file) when a record half-way fails.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"
#include "support/temp_dir.hpp"

namespace {

using mhacfg::testing::entries;

std::string scratch_dir(const std::string& name) {
  const std::string dir = std::string(MHACFG_BINARY_DIR) + "/" + name + "-" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

std::string gemm(int m) {
  return "{\"op\": \"gemm\", \"m\": " + std::to_string(m) + ", \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\"}\n";
}

}  // namespace

TEST_CASE("predict writes every record in order, to stdout or --out, as it streams them",
          "[calibration][cli][streams]") {
  const std::string dir = scratch_dir("predict-stream");
  std::string records;
  for (int m = 1; m <= 2000; ++m) records += gemm(m);
  const std::string in = temp_file("predict-stream-in.jsonl", records);
  const CliResult r = run({"predict", "--profile", "h100-sxm", "--in", in});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  std::istringstream lines(r.out);
  int m = 0;
  for (std::string l; std::getline(lines, l);) {
    const auto j = nlohmann::json::parse(l);
    CHECK(j["m"] == ++m);
    CHECK(j["predicted_ms"].get<double>() > 0);
  }
  CHECK(m == 2000);
  const std::string out = dir + "/predicted.jsonl";
  const CliResult f = run({"predict", "--profile", "h100-sxm", "--in", in, "--out", out});
  REQUIRE(f.code == 0);
  CHECK(f.out.empty());
  CHECK(read_text(out) == r.out);
  CHECK(entries(dir) == std::vector<std::string>{"predicted.jsonl"});
}

TEST_CASE("predict that fails half-way writes nothing: stdout stays empty, --out keeps its old file",
          "[calibration][cli][streams][errors]") {
  const std::string dir = scratch_dir("predict-stream-bad");
  std::string records;
  for (int m = 1; m <= 1000; ++m) records += gemm(m);
  records += "{\"op\": \"gemm\", \"m\": 0, \"n\": 2, \"k\": 3}\n" + gemm(5);
  const std::string in = temp_file("predict-stream-bad.jsonl", records);
  expect_input_error({"predict", "--profile", "h100-sxm", "--in", in}, in + ":1001: m = 0: must be positive");
  const std::string out = dir + "/predicted.jsonl";
  std::ofstream(out) << "old\n";
  expect_input_error({"predict", "--profile", "h100-sxm", "--in", in, "--out", out},
                     in + ":1001: m = 0: must be positive");
  CHECK(read_text(out) == "old\n");
  CHECK(entries(dir) == std::vector<std::string>{"predicted.jsonl"});  // no temporary file left beside it
}

// --device through the backend plugins: the CLI binary (which finds them next to itself) and the
// in-process CLI measure on the CPU, refuse CUDA where it cannot run with the same one-line errors
// as before the plugins, and report a missing or broken plugin in one line that names where it looked.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/cpu_kernel_facts.hpp"
#include "mhacfg/kernels/backend.hpp"

namespace {

// Per process and call: ctest runs this file's test cases side by side.
std::string scratch(const std::string& name) {
  static int calls = 0;
  return std::string(MHACFG_BINARY_DIR) + "/device-" + std::to_string(::getpid()) + "-" + std::to_string(++calls) + "-" + name;
}

std::string write(const std::string& name, const std::string& content) {
  const std::string path = scratch(name);
  std::ofstream(path) << content;
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs build/mhacfg. backend_dir "" lets it find its plugins itself (next to the binary).
CliResult run_binary(const std::vector<std::string>& args, const std::string& backend_dir = "") {
  const std::string out = scratch("out"), err = scratch("err");
  std::string cmd = backend_dir.empty() ? "env -u MHACFG_BACKEND_DIR" : "env MHACFG_BACKEND_DIR=" + quoted(backend_dir);
  cmd += " " + quoted(MHACFG_CLI);
  for (const std::string& a : args) cmd += " " + quoted(a);
  cmd += " >" + quoted(out) + " 2>" + quoted(err);
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string empty_dir() {
  const std::string dir = scratch("plugins");
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  return dir;
}

const std::string kGemm = "{\"op\": \"gemm\", \"m\": 4, \"n\": 8, \"k\": 8, \"dtype\": \"fp32\"}\n";

// The error `--device <label>` gives on this machine, or "" where a CUDA device is present.
std::string no_cuda_error(const std::string& label) {
  if (!mhacfg::kernels::backend_was_built("cuda"))
    return "--device " + label + ": this mhacfg was built without CUDA (configure with -DMHACFG_CUDA=ON where nvcc is installed)";
  const mhacfg::kernels::Backend* cuda = mhacfg::kernels::load_backend("cuda");
  REQUIRE(cuda != nullptr);
  if (cuda->device_count() > 0) return "";
  return "--device " + label + ": no CUDA device is available on this machine";
}

}  // namespace

TEST_CASE("bench --device cpu times a record through the CPU plugin", "[device][cli]") {
  const std::string in = write("gemm.jsonl", kGemm);
  for (const CliResult& r : {run_binary({"bench", "--device", "cpu", "--in", in, "--repetitions", "1"}),
                             run({"bench", "--device", "cpu", "--in", in, "--repetitions", "1"})}) {
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    const auto timed = nlohmann::json::parse(r.out);
    CHECK(timed["backend"] == "mhacfg-cpu");
    CHECK(timed["time_ms"].get<double>() > 0);
  }
  // The in-process run loaded the plugin the tests' main names.
  CHECK(slurp("/proc/self/maps").find(std::string(MHACFG_PLUGIN_DIR) + "/libmhacfg_backend_cpu.so") != std::string::npos);
}

TEST_CASE("bench and calibrate on CUDA where it cannot run: the same one-line runtime failure as before the plugins", "[device][cli]") {
  const std::string in = write("gemm.jsonl", kGemm);
  for (const std::string label : {"cuda", "cuda:1"}) {
    const std::string expected = no_cuda_error(label);
    if (expected.empty()) {
      WARN("a CUDA device is present: the [cuda] tests measure on it");
      return;
    }
    for (const CliResult& r : {run_binary({"bench", "--device", label, "--in", in}),
                               run({"bench", "--device", label, "--in", in}),
                               run_binary({"calibrate", "--device", label, "--quick", "--out", scratch("p.json")})}) {
      CHECK(r.code == 3);
      CHECK(r.out.empty());
      CHECK(r.err == "mhacfg: runtime failure: " + expected + "\n");
    }
  }
}

TEST_CASE("a missing plugin: one line naming the file and the folder searched", "[device][cli]") {
  const std::string dir = empty_dir();
  const std::string in = write("gemm.jsonl", kGemm);
  CliResult r = run_binary({"bench", "--device", "cpu", "--in", in}, dir);
  CHECK(r.code == 3);
  CHECK(r.err == "mhacfg: runtime failure: --device cpu: no libmhacfg_backend_cpu.so in " + dir +
                     " (set MHACFG_BACKEND_DIR to the folder that holds it)\n");
  r = run_binary({"bench", "--device", "cuda", "--in", in}, dir);
  CHECK(r.code == 3);
  if (mhacfg::kernels::backend_was_built("cuda"))
    CHECK(r.err == "mhacfg: runtime failure: --device cuda: no libmhacfg_backend_cuda.so in " + dir +
                       " (set MHACFG_BACKEND_DIR to the folder that holds it)\n");
  else
    CHECK(r.err == "mhacfg: runtime failure: " + no_cuda_error("cuda") + "\n");
}

TEST_CASE("a plugin that cannot be loaded: one line naming its path", "[device][cli]") {
  const std::string dir = empty_dir();
  const std::string plugin = dir + "/libmhacfg_backend_cpu.so";
  std::ofstream(plugin) << "not a shared object\n";
  const CliResult r = run_binary({"bench", "--device", "cpu", "--in", write("gemm.jsonl", kGemm)}, dir);
  CHECK(r.code == 3);
  INFO(r.err);
  CHECK(r.err.rfind("mhacfg: runtime failure: cannot load backend plugin " + plugin + ": ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

TEST_CASE("the backends through their interface", "[device]") {
  mhacfg::kernels::Backend* cpu = mhacfg::kernels::load_backend("cpu");
  REQUIRE(cpu != nullptr);
  CHECK(mhacfg::kernels::load_backend("cpu") == cpu);  // loaded once
  CHECK(cpu->name() == "cpu");
  CHECK(cpu->device_count() == 1);
  CHECK(!cpu->device_name(0).empty());
  CHECK(cpu->memory_bytes(0) > 0);
  // The tiles the CPU kernels publish, as calibrate writes them into a profile: the cost model's
  // defaults, which tile_facts_test checks field by field against kernels::cpu::kTileFacts.
  CHECK(cpu->kernel_facts() == mhacfg::cpu_kernel_facts_to_json(mhacfg::CpuKernelFacts{}));
  mhacfg::MeasurementRecord gemm;
  gemm.shape = mhacfg::GemmOp{mhacfg::GemmShape{4, 8, 8}};
  gemm.dtype = mhacfg::DType::fp32;
  CHECK(cpu->unsupported_reason(gemm).empty());
  mhacfg::kernels::BenchOptions o;
  o.repetitions = 1;
  std::vector<std::size_t> seen;
  const auto ms = cpu->measure_rounds({gemm, gemm}, o, [&](std::size_t, std::size_t, std::size_t i) { seen.push_back(i); });
  REQUIRE(ms.size() == 2);
  REQUIRE(seen.size() >= 2);  // a round of both, then rounds of the ones whose fastest two disagree
  CHECK((seen[0] == 0 && seen[1] == 1));
  CHECK(ms[0].backend == "mhacfg-cpu");
  const mhacfg::kernels::Measurement one = cpu->measure(gemm, o);
  CHECK(one.statistic == "min");
  CHECK(one.time_ms > 0);
  // The machine probe: every round measured, the median between the slowest and fastest round.
  const mhacfg::MachineProbe probe = cpu->probe(o, 0);
  CHECK(probe.rounds() == 40);
  CHECK(probe.stream_rounds_bytes_per_s.size() == 40);
  for (std::size_t i = 0; i < probe.rounds(); ++i) {
    CHECK(probe.gemm_rounds_flop_per_s[i] > 0);
    CHECK(probe.stream_rounds_bytes_per_s[i] > 0);
  }
  CHECK(probe.gemm_flop_per_s() >= *std::min_element(probe.gemm_rounds_flop_per_s.begin(), probe.gemm_rounds_flop_per_s.end()));
  CHECK(probe.gemm_flop_per_s() <= *std::max_element(probe.gemm_rounds_flop_per_s.begin(), probe.gemm_rounds_flop_per_s.end()));
  CHECK(probe.measured_at.size() == 20);  // 2026-12-02T05:00:00Z
  CHECK(probe.what.find("512^3") != std::string::npos);
  CHECK(cpu->probe(o, 1).rounds() == 1);  // one round, as calibrate spreads them between its records
  // Errors raised inside the plugin reach the program with their types (the CLI's exit codes).
  o.threads = 0;
  CHECK_THROWS_WITH(cpu->probe(o, 0), "threads = 0: must be at least 1");
  CHECK_THROWS_AS(cpu->measure_rounds({gemm}, o, {}), mhacfg::InputError);
  CHECK_THROWS_WITH(cpu->ceilings(o), "threads = 0: must be at least 1");
  CHECK(mhacfg::kernels::load_backend("no-such-backend") == nullptr);
  if (!mhacfg::kernels::backend_was_built("cuda")) return;
  mhacfg::kernels::Backend* cuda = mhacfg::kernels::load_backend("cuda");
  REQUIRE(cuda != nullptr);
  CHECK(cuda->name() == "cuda");
  gemm.dtype = mhacfg::DType::bf16;
  CHECK(cuda->unsupported_reason(gemm).empty());
  if (cuda->device_count() == 0) {
    CHECK_THROWS_AS(cuda->memory_bytes(0), mhacfg::RuntimeFailure);
    CHECK(cuda->device_name(0).empty());
  }
}

TEST_CASE("the CLI binary links no kernel, harness or device library", "[device][cli]") {
  std::unique_ptr<FILE, int (*)(FILE*)> ldd(::popen(("ldd " + quoted(MHACFG_CLI)).c_str(), "r"), ::pclose);
  REQUIRE(ldd);
  std::string libs;
  char buf[512];
  while (std::fgets(buf, sizeof buf, ldd.get())) libs += buf;
  INFO(libs);
  CHECK(libs.find("libstdc++") != std::string::npos);  // ldd did list the libraries
  for (const char* lib : {"libcuda", "libcublas", "libbenchmark", "libgomp"}) CHECK(libs.find(lib) == std::string::npos);
}

// --check-machine with a profile that stores a probe: the probe runs on the CPU plugin; report leaves
// every prediction as it was, correct scales them (by ratios measured now: no timing is asserted).
TEST_CASE("predict and validate --check-machine probe the machine and report its drift", "[device][cli]") {
  nlohmann::json prof = nlohmann::json::parse(slurp(std::string(MHACFG_SOURCE_DIR) + "/profiles/cpu-epyc-2vcpu.json"));
  prof["machine_probe"] = {{"gemm_flop_per_s", 1e11}, {"stream_bytes_per_s", 1e10}, {"measured_at", "2026-12-02T05:00:00Z"}};
  const std::string profile = write("probe-profile.json", prof.dump());
  const std::string shapes = std::string(MHACFG_FIXTURES_DIR) + "/cpu-holdout-shapes.jsonl";
  const CliResult plain = run({"predict", "--profile", profile, "--in", shapes});
  const CliResult report = run({"predict", "--profile", profile, "--in", shapes, "--check-machine"});
  const CliResult fixed = run({"predict", "--profile", profile, "--in", shapes, "--check-machine=correct"});
  REQUIRE(plain.code == 0);
  REQUIRE(report.code == 0);
  REQUIRE(fixed.code == 0);
  CHECK(report.err.rfind("Machine check against cpu-epyc-2vcpu's probe of 2026-12-02T05:00:00Z (measured now): GEMM ", 0) == 0);
  CHECK(report.err.find("predictions not corrected") != std::string::npos);
  CHECK(fixed.err.find("predictions corrected (compute rates x ") != std::string::npos);
  std::istringstream a(plain.out), b(report.out), c(fixed.out);
  std::string la, lb, lc;
  int lines = 0;
  while (std::getline(a, la) && std::getline(b, lb) && std::getline(c, lc)) {
    const auto ja = nlohmann::json::parse(la), jb = nlohmann::json::parse(lb), jc = nlohmann::json::parse(lc);
    CHECK(jb["predicted_ms"] == ja["predicted_ms"]);
    CHECK(jb["machine_check"]["corrected"] == false);
    CHECK(jc["machine_check"]["corrected"] == true);
    CHECK(jc["machine_check"]["gemm_ratio"].get<double>() > 0);
    CHECK(jc["predicted_ms"].get<double>() > 0);
    ++lines;
  }
  CHECK(lines == 19);
  const std::string measured = write("probe-timed.jsonl", R"({"op": "gemm", "m": 64, "n": 1536, "k": 1024, "dtype": "fp32", "time_ms": 1.9})"
                                                         "\n");
  const CliResult v = run({"validate", "--profile", profile, "--in", measured, "--check-machine=correct", "--format", "json"});
  REQUIRE(v.code == 0);
  const auto vj = nlohmann::json::parse(v.out);
  CHECK(vj["machine_check"]["corrected"] == true);
  CHECK(vj["machine_check"]["probe_source"] == "measured now");
  CHECK(vj["machine_check"]["profile_probe"]["gemm_flop_per_s"] == 1e11);
}

TEST_CASE("bench --check-machine writes its probe into each record and validate uses it", "[device][cli]") {
  nlohmann::json prof = nlohmann::json::parse(slurp(std::string(MHACFG_SOURCE_DIR) + "/profiles/cpu-epyc-2vcpu.json"));
  prof["machine_probe"] = {{"gemm_flop_per_s", 1e11}, {"stream_bytes_per_s", 1e10}};
  const std::string profile = write("probe-profile.json", prof.dump());
  const std::string in = write("probe-shape.jsonl", R"({"op": "gemm", "m": 4, "n": 64, "k": 64, "dtype": "fp32"})"
                                                     "\n");
  const std::string out = scratch("probe-measured.jsonl");
  const CliResult b = run({"bench", "--in", in, "--out", out, "--repetitions", "2", "--profile", profile, "--check-machine"});
  INFO(b.err);
  REQUIRE(b.code == 0);
  CHECK(b.err.find("(measured before, between and after these records)") != std::string::npos);
  const auto rec = nlohmann::json::parse(slurp(out));
  CHECK(rec["machine_probe"]["rounds"] >= 81);  // 40 before, 40 after the records, one per 50 timings between
  const CliResult v = run({"validate", "--profile", profile, "--in", out, "--check-machine=correct", "--format", "json"});
  REQUIRE(v.code == 0);
  const auto vj = nlohmann::json::parse(v.out);
  CHECK(vj["machine_check"]["probe_source"] == "measured with the records by bench --check-machine");
  CHECK(vj["machine_check"]["gemm_ratio"].get<double>() == Approx(rec["machine_probe"]["gemm_flop_per_s"].get<double>() / 1e11));
}

TEST_CASE("bench --max-seconds leaves out the records it cannot measure in time and says which", "[device][cli]") {
  // The middle GEMM (1.1 TFLOP) is predicted by the shipped one-thread CPU profile at seconds a call:
  // with a 5-second cap it is not started. The run is announced first: 15 rounds of it come to minutes.
  const std::string big = R"({"op": "gemm", "m": 8192, "n": 8192, "k": 8192, "dtype": "fp32"})"
                          "\n";
  const std::string in = write("capped.jsonl", kGemm + big + kGemm);
  const std::string out = scratch("capped-out.jsonl");
  const CliResult r = run({"bench", "--device", "cpu", "--in", in, "--out", out, "--max-seconds", "5"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  std::istringstream lines(slurp(out));
  int written = 0;
  for (std::string l; std::getline(lines, l); ++written) {
    const auto j = nlohmann::json::parse(l);
    CHECK(j["m"] == 4);
    CHECK(j["time_ms"].get<double>() > 0);
    CHECK(j["repetitions"].get<int>() >= 1);
  }
  CHECK(written == 2);
  CHECK(r.err.find("mhacfg bench: measuring 3 record(s) will take about ") == 0);
  CHECK(r.err.find("; the longest, " + in + ":2, gemm, about ") != std::string::npos);
  CHECK(r.err.find("; --max-seconds 5 stops it sooner\n") != std::string::npos);
  CHECK(r.err.find("\nmhacfg bench: --max-seconds 5: 1 of 3 record(s) not measured, left out of the output: " + in +
                   ":2 (predicted ") != std::string::npos);
  // A run estimated short says nothing; --max-seconds must be a positive number of seconds.
  const CliResult quiet = run({"bench", "--device", "cpu", "--in", write("one.jsonl", kGemm), "--repetitions", "1"});
  REQUIRE(quiet.code == 0);
  CHECK(quiet.err.empty());
  const CliResult bad = run({"bench", "--device", "cpu", "--in", in, "--max-seconds", "0"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "mhacfg: error: --max-seconds = 0: must be between 0.01 and 10000000.00\n");
}

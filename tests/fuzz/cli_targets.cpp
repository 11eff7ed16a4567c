// Fuzz targets over what users hand mhacfg: a Hugging Face config.json, a device profile, measurement
// records and command-line arguments. Each target writes the input to a file and runs the commands
// that read it through run_cli, exactly as the binary would.
//
// The contract checked on every input (docs/commands.md, exit codes):
//   - the run ends with exit 0, 1 or 2: an internal error or a runtime failure (3) on these inputs is
//     a bug, and so is a crash or a sanitizer report;
//   - a refusal (exit 2) is exactly one line on stderr, "mhacfg: error: ...", and nothing on stdout;
//   - --format json output parses;
//   - a profile that calibrate --from writes loads back and predicts.
// A broken contract aborts with the command and what it printed, so libFuzzer keeps the input.
#include "cli_targets.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/configurator/cli/cli.hpp"

namespace mhacfg::fuzz {

namespace {

// One private folder per process for the input and what the commands write, removed at exit (the
// name is never destroyed, so the exit handler can still read it).
const std::string& work_dir() {
  static const std::string& dir = *new std::string([] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/mhacfg-fuzz.XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::perror("mhacfg fuzz: mkdtemp");
      std::abort();
    }
    std::atexit([] {  // a crash keeps it, with what the last input wrote
      std::error_code ignored;
      std::filesystem::remove_all(work_dir(), ignored);
    });
    return pattern;
  }());
  return dir;
}

std::string write_input(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const std::string path = work_dir() + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  f.close();
  if (!f) {
    std::fprintf(stderr, "mhacfg fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

std::string joined(const std::vector<std::string>& args) {
  std::string s = "mhacfg";
  for (const auto& a : args) s += " '" + a + "'";
  return s;
}

[[noreturn]] void broken(const std::vector<std::string>& args, const std::string& what, const std::string& out,
                         const std::string& err) {
  std::fprintf(stderr, "\n=== contract broken: %s\n=== command: %s\n=== stdout (first 2000 bytes):\n%s\n=== stderr:\n%s\n",
               what.c_str(), joined(args).c_str(), out.substr(0, 2000).c_str(), err.c_str());
  std::abort();
}

// Runs one command and checks the contract; returns its exit code and output.
struct Run {
  int code;
  std::string out;
};

Run run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = run_cli(args, out, err);
  const std::string o = out.str(), e = err.str();
  if (code != 0 && code != 1 && code != 2) broken(args, "exit code " + std::to_string(code), o, e);
  if (code == 2) {
    if (e.rfind("mhacfg: error: ", 0) != 0) broken(args, "a refusal that is not 'mhacfg: error: ...'", o, e);
    if (e.find('\n') != e.size() - 1) broken(args, "a refusal that is not exactly one line", o, e);
    if (!o.empty()) broken(args, "a refusal that also wrote to stdout", o, e);
  }
  bool json = false;  // --help wins over --format (Boost also takes a prefix of it: --he)
  for (std::size_t i = 0; i < args.size(); ++i)
    if ((args[i] == "--format" && i + 1 < args.size() && args[i + 1] == "json") || args[i] == "--format=json") json = true;
  for (const auto& a : args)
    if (a.rfind("-h", 0) == 0 || a.rfind("--h", 0) == 0) json = false;
  if (code == 0 && json && !nlohmann::json::accept(o)) broken(args, "--format json output that does not parse", o, e);
  return {code, o};
}

void hf_config(const std::uint8_t* data, std::size_t size) {
  const std::string config = write_input(data, size, "config.json");
  run({"analyze", "--hf-config", config, "--target", "h200-sxm", "--format", "json"});
  run({"analyze", "--hf-config", config, "--batch", "8", "--context", "32768", "--kv-dtype", "fp8"});
  run({"compare", config, "llama-3-8b", "--target", "h100-sxm", "--format", "json"});
}

void profile(const std::uint8_t* data, std::size_t size) {
  const std::string p = write_input(data, size, "profile.json");
  run({"profiles", "show", p, "--format", "json"});
  run({"analyze", "--model", "deepseek-v2-lite", "--target", p, "--format", "json"});
  run({"recommend", "--d-model", "2048", "--layers", "8", "--seq", "4096", "--target", p, "--top", "2", "--format",
       "json"});
}

// calibrate --from reads inputs up to this size: its leave-one-out cross-validation refits each op
// class once per record, so its time grows with the square of the records (216 records, 64 KiB: 3 s
// in a Release build, 20 s sanitized). validate and predict read every size.
constexpr std::size_t kCalibrateMaxBytes = 16 << 10;

void records(const std::uint8_t* data, std::size_t size) {
  const std::string in = write_input(data, size, "records.jsonl");
  run({"validate", "--profile", "h200-sxm-cudnn", "--in", in, "--format", "json"});
  run({"predict", "--profile", "cpu-generic", "--in", in});
  if (size > kCalibrateMaxBytes) return;
  const std::string fitted = work_dir() + "/fitted.json";
  std::remove(fitted.c_str());
  if (run({"calibrate", "--from", in, "--out", fitted, "--format", "json"}).code == 0) {
    // A profile calibrate writes must load back and predict (it refuses to write one that won't).
    const std::vector<std::string> use = {"analyze", "--model", "llama-3-8b", "--target", fitted, "--format", "json"};
    if (run(use).code != 0) broken(use, "a profile calibrate --from wrote does not load back", "", "");
  }
}

// Files the args target's arguments can name (args.dict has their names): real inputs, one of them
// under a name that is not UTF-8.
void place_named_inputs() {
  namespace fs = std::filesystem;
  const fs::path src = MHACFG_SOURCE_DIR, dir = work_dir();
  const std::pair<const char*, const char*> files[] = {
      {"tests/fixtures/hf/llama-3.2-1b.json", "config.json"},
      {"tests/fixtures/hf/deepseek-v2-lite.json", "mla.json"},
      {"tests/fixtures/hf/gpt-oss-20b.json", "moe.json"},
      {"tests/fixtures/hf/gemma-2-2b.json", "c\xff.json"},
      {"tests/fixtures/h200-gpu-md-check.jsonl", "records.jsonl"},
      {"profiles/cpu-generic.json", "profile.json"},
  };
  for (const auto& [from, to] : files) fs::copy_file(src / from, dir / to, fs::copy_options::overwrite_existing);
}

// Arguments, one per line. Only the commands that read and print, and calibrate --from: measuring
// (calibrate --device, bench) would time kernels, and an argument naming a path outside the work
// folder could overwrite a user's file, so such inputs are skipped.
void args(const std::uint8_t* data, std::size_t size) {
  place_named_inputs();  // each time: an earlier input may have written over them (--out)
  std::vector<std::string> a;
  std::string cur;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      a.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  a.push_back(cur);
  if (a.size() > 40) return;
  static const std::vector<std::string> allowed = {"analyze",  "compare", "recommend", "profiles",
                                                   "models",   "predict",  "validate", "calibrate"};
  bool ok = false;
  for (const auto& c : allowed) ok = ok || a[0] == c;
  if (!ok) return;
  for (const auto& s : a) {
    if (s.find('/') != std::string::npos || s.find("..") != std::string::npos) return;
    if (a[0] == "calibrate" && (s.rfind("--d", 0) == 0 || s.rfind("-d", 0) == 0)) return;  // --device (or a prefix)
  }
  if (chdir(work_dir().c_str()) != 0) std::abort();
  run(a);
}

}  // namespace

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = {"hf_config", "profile", "records", "args"};
  return names;
}

void run_target(const std::string& target, const std::uint8_t* data, std::size_t size) {
  if (target == "hf_config") return hf_config(data, size);
  if (target == "profile") return profile(data, size);
  if (target == "records") return records(data, size);
  if (target == "args") return args(data, size);
  throw std::invalid_argument("unknown fuzz target " + target);
}

}  // namespace mhacfg::fuzz

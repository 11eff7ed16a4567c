// Replays a target's corpus (seeds and every input a fuzzing run found) through the same checks, with
// any compiler: `mhacfg_fuzz_replay TARGET DIR|FILE...`. This is how the corpus runs in CI.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli_targets.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const auto& names = mhacfg::fuzz::target_names();
  if (argc < 3 || std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    std::fprintf(stderr, "usage: mhacfg_fuzz_replay hf_config|profile|records|args DIR|FILE...\n");
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    std::vector<fs::path> found;
    if (fs::is_directory(argv[i])) {
      for (const auto& e : fs::recursive_directory_iterator(argv[i]))
        if (e.is_regular_file()) found.push_back(e.path());
    } else if (fs::is_regular_file(argv[i])) {
      found.emplace_back(argv[i]);
    }
    if (found.empty()) {
      std::fprintf(stderr, "mhacfg_fuzz_replay: no inputs in %s\n", argv[i]);
      return 1;
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "mhacfg_fuzz_replay: cannot read %s\n", f.c_str());
      return 1;
    }
    std::fprintf(stderr, "%s\n", f.c_str());  // the input that broke the contract is the last one named
    mhacfg::fuzz::run_target(argv[1], reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  }
  std::printf("%s: %zu inputs kept the contract\n", argv[1], files.size());
  return 0;
}

// inputs/hf_cache and inputs/flags: Hub ids read from a cache laid out as huggingface_hub lays it out
// (refs/main -> snapshots/<commit>/config.json, a link into blobs/), and flag values an in-process
// caller gave that no reader asked about.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "mhacfg/configurator/inputs/flags.hpp"
#include "mhacfg/configurator/inputs/hf_cache.hpp"
#include "mhacfg/configurator/inputs/model_source.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace fs = std::filesystem;
using namespace mhacfg;

namespace {

// A temporary HF_HUB_CACHE (HF_HOME unset) for the test body; the old values come back after.
struct TempCache {
  fs::path dir;
  std::optional<std::string> old_cache, old_home;
  TempCache() {
    std::string pattern = (fs::temp_directory_path() / "mhacfg-hf.XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
    if (const char* v = std::getenv("HF_HUB_CACHE")) old_cache = v;
    if (const char* v = std::getenv("HF_HOME")) old_home = v;
    ::setenv("HF_HUB_CACHE", dir.c_str(), 1);
    ::unsetenv("HF_HOME");
  }
  ~TempCache() {
    if (old_cache) ::setenv("HF_HUB_CACHE", old_cache->c_str(), 1);
    else ::unsetenv("HF_HUB_CACHE");
    if (old_home) ::setenv("HF_HOME", old_home->c_str(), 1);
    fs::remove_all(dir);
  }
  // models--org--name with the fixture config as snapshot `rev` (a link into blobs/), and refs/main
  // naming it unless `ref` is false.
  fs::path add(const std::string& folder, const std::string& rev, bool ref) {
    const fs::path repo = dir / folder;
    fs::create_directories(repo / "blobs");
    fs::create_directories(repo / "snapshots" / rev);
    fs::copy_file(fs::path(MHACFG_FIXTURES_DIR) / "hf" / "qwen2.5-7b.json", repo / "blobs" / "a1b2c3",
                  fs::copy_options::overwrite_existing);
    fs::create_symlink(fs::path("..") / ".." / "blobs" / "a1b2c3", repo / "snapshots" / rev / "config.json");
    if (ref) {
      fs::create_directories(repo / "refs");
      std::ofstream(repo / "refs" / "main") << rev;
    }
    return repo / "snapshots" / rev / "config.json";
  }
};

}  // namespace

TEST_CASE("a Hub id resolves through refs/main to its snapshot's config.json", "[hf_cache]") {
  TempCache cache;
  const fs::path config = cache.add("models--acme--Tiny-7B", "0123456789abcdef0123456789abcdef01234567", true);
  cache.add("models--acme--Tiny-7B", "fedcba9876543210fedcba9876543210fedcba98", false);  // an older snapshot
  CHECK(hf_cached_config("acme/Tiny-7B", "--hf-config") == config.string());
  const ModelSpec m = load_hf_config_arg("acme/Tiny-7B");
  CHECK(m.name == "acme/Tiny-7B");
  CHECK(m.d_model == 3584);  // Qwen2.5-7B's hidden_size, from the fixture through the link
}

TEST_CASE("without refs/main the only snapshot is used, and two are not guessed between", "[hf_cache]") {
  TempCache cache;
  const fs::path config = cache.add("models--acme--Pinned", "aaaa", false);
  CHECK(hf_cached_config("acme/Pinned", "--hf-config") == config.string());
  cache.add("models--acme--Pinned", "bbbb", false);
  CHECK_THROWS_AS(hf_cached_config("acme/Pinned", "--hf-config"), InputError);
}

TEST_CASE("an id not in the cache names every path tried", "[hf_cache]") {
  TempCache cache;
  try {
    hf_cached_config("acme/Missing", "--hf-config");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "--hf-config");
    CHECK(e.value() == "acme/Missing");
    CHECK(e.reason().find((cache.dir / "models--acme--Missing" / "refs" / "main").string()) != std::string::npos);
    CHECK(e.reason().find("never the network") != std::string::npos);
  }
}

TEST_CASE("HF_HUB_CACHE, then HF_HOME/hub, then ~/.cache/huggingface/hub", "[hf_cache]") {
  TempCache cache;
  ::setenv("HF_HOME", "/srv/hf", 1);
  const auto dirs = hf_cache_dirs();
  REQUIRE(dirs.size() >= 2);
  CHECK(dirs[0] == cache.dir.string());
  CHECK(dirs[1] == "/srv/hf/hub");
  if (const char* home = std::getenv("HOME")) CHECK(dirs.back() == (fs::path(home) / ".cache/huggingface/hub").string());
  ::unsetenv("HF_HOME");
}

TEST_CASE("only org/name has the shape of a Hub id", "[hf_cache]") {
  CHECK(looks_like_hf_id("meta-llama/Llama-3.1-8B"));
  CHECK_FALSE(looks_like_hf_id("llama-3-8b"));
  CHECK_FALSE(looks_like_hf_id("runs/a/config.json"));
  CHECK_FALSE(looks_like_hf_id("models/config.json"));
  CHECK_FALSE(looks_like_hf_id("../x"));
  CHECK_FALSE(looks_like_hf_id("/abs"));
}

TEST_CASE("flag values no reader asked about are unknown, with a suggestion", "[flags]") {
  FlagValues f;
  f.set("context", "4096");
  f.set("contxt", "8192");
  CHECK(f.opt_int("context") == 4096);
  (void)f.has("batch");
  try {
    f.check_all_read("analyze");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "--contxt");
    CHECK(e.reason() == "unknown option for analyze (did you mean --context?)");
  }
}

TEST_CASE("a switch given in-process is on unless false", "[flags]") {
  FlagValues f;
  CHECK_FALSE(f.on("roofline"));
  f.set("roofline", std::vector<std::string>{});
  CHECK(f.on("roofline"));
  f.set("roofline", "false");
  CHECK_FALSE(f.on("roofline"));
  f.set("roofline", "maybe");
  CHECK_THROWS_AS(f.on("roofline"), InputError);
}

// The cache layout, as huggingface_hub documents it ("Understand caching",
// https://huggingface.co/docs/huggingface_hub/guides/manage-cache, and the Hub's "Local cache",
// https://huggingface.co/docs/hub/local-cache): the cache folder is $HF_HUB_CACHE, else $HF_HOME/hub,
// else ~/.cache/huggingface/hub; a model "org/name" lives in models--org--name/, whose refs/main holds
// the commit main pointed at when it was downloaded, and snapshots/<commit>/ holds the files (links into
// blobs/, or copies where links are not supported).
#include "mhacfg/configurator/inputs/hf_cache.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool regular_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);  // follows the snapshot's link into blobs/
}

// refs/main's commit: one line of hex digits (anything else is not a revision this cache wrote).
std::string read_ref(const fs::path& p) {
  std::ifstream in(p);
  std::string rev;
  if (!in || !std::getline(in, rev)) return "";
  while (!rev.empty() && (rev.back() == '\r' || rev.back() == ' ')) rev.pop_back();
  if (rev.empty() || rev.size() > 64 || rev.find_first_not_of("0123456789abcdef") != std::string::npos) return "";
  return rev;
}

}  // namespace

std::vector<std::string> hf_cache_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    if (d.empty()) return;
    for (const auto& x : dirs)
      if (x == d) return;
    dirs.push_back(d);
  };
  add(env("HF_HUB_CACHE"));
  if (!env("HF_HOME").empty()) add((fs::path(env("HF_HOME")) / "hub").string());
  if (!env("HOME").empty()) add((fs::path(env("HOME")) / ".cache" / "huggingface" / "hub").string());
  return dirs;
}

bool looks_like_hf_id(const std::string& arg) {
  const auto slash = arg.find('/');
  if (slash == std::string::npos || arg.find('/', slash + 1) != std::string::npos) return false;
  const std::string org = arg.substr(0, slash), name = arg.substr(slash + 1);
  for (const std::string& part : {org, name})
    if (part.empty() || part == "." || part == "..") return false;
  return !(name.size() > 5 && name.substr(name.size() - 5) == ".json");
}

std::string hf_cached_config(const std::string& id, const std::string& field) {
  const auto slash = id.find('/');
  const std::string folder = "models--" + id.substr(0, slash) + "--" + id.substr(slash + 1);
  std::vector<std::string> tried;
  for (const std::string& dir : hf_cache_dirs()) {
    const fs::path repo = fs::path(dir) / folder;
    const fs::path ref = repo / "refs" / "main";
    if (const std::string rev = read_ref(ref); !rev.empty()) {
      const fs::path config = repo / "snapshots" / rev / "config.json";
      if (regular_file(config)) return config.string();
      tried.push_back(config.string());
      continue;
    }
    tried.push_back(ref.string());
    // Downloaded at a commit, not a branch: no refs/main. The only snapshot is the one meant.
    std::error_code ec;
    std::vector<fs::path> snapshots;
    for (fs::directory_iterator it(repo / "snapshots", ec), end; !ec && it != end; it.increment(ec))
      if (regular_file(it->path() / "config.json")) snapshots.push_back(it->path() / "config.json");
    if (snapshots.size() == 1) return snapshots.front().string();
  }
  std::string where;
  for (const auto& t : tried) where += (where.empty() ? "" : ", ") + t;
  if (tried.empty()) where = "no cache folder: none of HF_HUB_CACHE, HF_HOME, HOME is set";
  throw InputError(field, id,
                   "not a file, and no config.json of this Hugging Face model is in the local cache (mhacfg reads "
                   "the cache, never the network); tried " + where);
}

}  // namespace mhacfg

// Scratch folders for tests that write files: a fresh folder removed at scope exit, and a folder's names.
#pragma once

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace mhacfg::testing {

// A fresh folder under /tmp, removed with its files at scope exit.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& prefix = "mhacfg-test") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// The names in a folder, hidden temporaries included, sorted.
inline std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d))
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mhacfg::testing

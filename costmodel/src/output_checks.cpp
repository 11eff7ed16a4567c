#include "mhacfg/costmodel/output_checks.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

namespace mhacfg {

namespace {

// A mount point as /proc/self/mountinfo writes it (the fifth field): space, tab, newline and
// backslash as three octal digits after a backslash.
std::string unescape_mount_point(const std::string& field) {
  auto octal = [&](std::size_t k) { return k < field.size() && field[k] >= '0' && field[k] <= '7'; };
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

bool listed_as_mount_point(const std::string& real) {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, devices, root, mount_point;
    if (fields >> id >> parent >> devices >> root >> mount_point && unescape_mount_point(mount_point) == real) return true;
  }
  return false;
}

}  // namespace

bool is_mount_point(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved) return false;
  const std::string real = resolved;
  std::free(resolved);
  const std::size_t slash = real.find_last_of('/');
  const std::string dir = slash == 0 ? "/" : real.substr(0, slash);
  struct stat st {}, d {};
  if (::stat(real.c_str(), &st) == 0 && ::stat(dir.c_str(), &d) == 0 && st.st_dev != d.st_dev) return true;
  return listed_as_mount_point(real);
}

}  // namespace mhacfg

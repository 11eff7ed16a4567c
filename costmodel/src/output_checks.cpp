#include "mhacfg/costmodel/output_checks.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {

// The kernel's own bound on links followed in one lookup (ELOOP past it).
constexpr int kMaxLinks = 40;

// `path`'s components pushed onto `todo` so that the first is on top (todo.back()).
void push_components(const std::string& path, std::vector<std::string>& todo) {
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '/');)
    if (!part.empty() && part != ".") parts.push_back(part);
  todo.insert(todo.end(), parts.rbegin(), parts.rend());
}

// `done`'s parent. `done` holds no links (every one was followed), so ".." is its last component
// removed; "" is the root, "." the working directory.
std::string parent_of(const std::string& done) {
  const std::size_t slash = done.find_last_of('/');
  const std::string last = slash == std::string::npos ? done : done.substr(slash + 1);
  if (done == "." || last == "..") return done + "/..";
  return slash == std::string::npos ? "" : done.substr(0, slash);
}

// The fs.protected_symlinks rule for the link `link` (lstat `st`) in the folder `dir`.
void check_link_owner(const std::string& link, const struct stat& st, const std::string& dir,
                      const std::string& path, const std::string& field) {
  struct stat d {};
  if (::stat(dir.c_str(), &d) != 0) return;
  const bool shared = (d.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH);
  if (!shared || st.st_uid == ::geteuid() || st.st_uid == d.st_uid) return;
  throw InputError(field, path,
                   "will not follow the link " + escaped(link) + ": another user's (uid " + std::to_string(st.st_uid) +
                       ") in the sticky world-writable folder " + escaped(dir) +
                       " (the fs.protected_symlinks rule); remove the link or write elsewhere");
}

std::string read_link(const std::string& link) {
  std::string target(4096, '\0');
  const ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= target.size()) return "";
  target.resize(static_cast<std::size_t>(n));
  return target;
}

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

void check_followed_links(const std::string& path, const std::string& field) {
  std::vector<std::string> todo;
  push_components(path, todo);
  std::string done = !path.empty() && path[0] == '/' ? "" : ".";  // resolved so far, without links
  int links = 0;
  while (!todo.empty()) {
    const std::string part = todo.back();
    todo.pop_back();
    if (part == "..") {
      done = parent_of(done);
      continue;
    }
    const std::string next = done + "/" + part;
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) return;  // a new file, or a path the writer will refuse
    if (!S_ISLNK(st.st_mode)) {
      done = next;
      continue;
    }
    if (++links > kMaxLinks) return;  // a loop: the writer reports ELOOP
    check_link_owner(next, st, done.empty() ? "/" : done, path, field);
    const std::string target = read_link(next);
    if (target.empty()) return;
    if (target[0] == '/') done = "";
    push_components(target, todo);
  }
}

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

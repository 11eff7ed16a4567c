#include "mhacfg/costmodel/io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

std::string read_file(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(field, path, std::string("cannot read file: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(field, path, "error while reading file");
  return ss.str();
}

namespace {

// Deeper JSON than any file mhacfg reads needs (records, profiles and configs nest a few levels); a
// deeper document is refused while parsing, before a recursive dump or destructor could exhaust the stack.
constexpr int kMaxJsonDepth = 64;
struct TooDeep {};

std::string errno_text() { return std::strerror(errno); }

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& field) {
  const std::size_t nul = text.find('\0');
  if (nul != std::string::npos)
    throw InputError(field, "(not JSON text)", "NUL byte at byte " + std::to_string(nul + 1));
  try {
    return nlohmann::json::parse(text, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxJsonDepth) throw TooDeep{};
      return true;
    });
  } catch (const TooDeep&) {
    throw InputError(field, "(JSON nested too deep)", "more than " + std::to_string(kMaxJsonDepth) + " levels");
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the position; the library's message is multi-part, keep it to one line.
    throw InputError(field, "(malformed JSON)", "parse error at byte " + std::to_string(e.byte));
  } catch (const nlohmann::json::out_of_range&) {
    throw InputError(field, "(JSON number)", "a number is out of the range of a double (e.g. 1e400)");
  }
}

void check_output_path(const std::string& path, const std::string& field) {
  struct stat st {};
  if (path.empty()) throw InputError(field, "(empty)", "needs a file path");
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(field, path, "is a directory");
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0) throw InputError(field, path, "cannot write: folder " + dir + ": " + errno_text());
  if (!S_ISDIR(st.st_mode)) throw InputError(field, path, "cannot write: " + dir + " is not a folder");
  if (::access(dir.c_str(), W_OK) != 0) throw InputError(field, path, "cannot write: folder " + dir + ": " + errno_text());
}

namespace {

// Where a write to `requested` goes: the path to replace atomically, or a device or pipe to write
// through. Throws InputError for folders, dangling links and other kinds of file.
struct Target {
  std::string requested, path;
  bool direct = false;
};

Target resolve_target(const std::string& requested, const std::string& field) {
  Target t{requested, requested, false};
  struct stat st {};
  if (::lstat(requested.c_str(), &st) != 0) return t;  // a new file
  const bool link = S_ISLNK(st.st_mode);
  if (::stat(requested.c_str(), &st) != 0) throw InputError(field, requested, "cannot write: the link's target: " + errno_text());
  if (S_ISDIR(st.st_mode)) throw InputError(field, requested, "is a directory");
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {  // /dev/null, /dev/stdout, a pipe
    t.direct = true;
    return t;
  }
  if (!S_ISREG(st.st_mode)) throw InputError(field, requested, "is not a regular file");
  if (link) {  // replace the file the link names, not the link
    char* real = ::realpath(requested.c_str(), nullptr);
    if (!real) throw InputError(field, requested, "cannot write: the link's target: " + errno_text());
    t.path = real;
    std::free(real);
  }
  return t;
}

void write_whole(const std::string& path, const std::string& content, std::ios::openmode mode, const Target& t,
                 const std::string& field) {
  std::ofstream out(path, std::ios::binary | mode);
  if (!out) throw InputError(field, t.requested, "cannot write: " + errno_text());
  out << content;
  out.flush();
  if (!out) throw InputError(field, t.requested, "error while writing");
}

}  // namespace

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files, const std::string& field) {
  std::vector<Target> targets;
  for (const auto& [path, content] : files) targets.push_back(resolve_target(path, field));
  // Every new file complete beside its target before any target is touched.
  std::vector<std::string> temps(files.size());
  auto remove_temps = [&] {
    for (const auto& tmp : temps)
      if (!tmp.empty()) std::remove(tmp.c_str());
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (targets[i].direct) continue;
    const std::string tmp = targets[i].path + ".tmp." + std::to_string(::getpid());
    try {
      temps[i] = tmp;
      write_whole(tmp, files[i].second, std::ios::trunc, targets[i], field);
    } catch (...) {
      remove_temps();
      throw;
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (targets[i].direct) {
      write_whole(targets[i].path, files[i].second, std::ios::out, targets[i], field);
      continue;
    }
    if (std::rename(temps[i].c_str(), targets[i].path.c_str()) != 0) {
      const std::string why = errno_text();
      remove_temps();
      throw InputError(field, targets[i].requested, "cannot replace: " + why);
    }
    temps[i].clear();
  }
}

void write_file_atomic(const std::string& path, const std::string& content, const std::string& field) {
  write_files_atomic({{path, content}}, field);
}

}  // namespace mhacfg

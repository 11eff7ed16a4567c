#include "mhacfg/costmodel/io.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <new>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/output_checks.hpp"
#include "mhacfg/costmodel/temp_files.hpp"

namespace mhacfg {

std::string read_file(const std::string& path, const std::string& field) {
  const std::string too_large = "larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError(field, path, "is a directory");
    if (S_ISREG(st.st_mode) && st.st_size > static_cast<off_t>(kMaxInputBytes)) throw InputError(field, path, too_large);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(field, path, std::string("cannot read file: ") + std::strerror(errno));
  // Read in chunks up to the limit: a device or pipe (/dev/zero) may never end.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes) throw InputError(field, path, too_large);
  }
  if (in.bad()) throw InputError(field, path, "error while reading file");
  return text;
}

namespace {

// Deeper JSON than any file mhacfg reads needs (records, profiles and configs nest a few levels); a
// deeper document is refused while parsing, before a recursive dump or destructor could exhaust the stack.
constexpr int kMaxJsonDepth = 64;
struct TooDeep {};

std::string errno_text() { return std::strerror(errno); }

// A failed write, classified by errno: the machine (a full disk, quota, I/O, too many open files) is a
// runtime failure, exit 3, and so is a reader that went away (EPIPE: `| head`); anything else (permissions, a read-only file system, a bad path) is the
// input's, exit 2. The message is one line naming the field and the path.
[[noreturn]] void write_failed(const std::string& field, const std::string& path, const std::string& what) {
  const int e = errno;
  const std::string why = what + ": " + std::strerror(e);
  if (e == ENOSPC || e == EDQUOT || e == EIO || e == EMFILE || e == ENFILE || e == ENOMEM || e == EPIPE)
    throw RuntimeFailure(escaped(field) + " = " + shown_value(path) + ": " + why);
  throw InputError(field, path, why);
}

}  // namespace

namespace {

// Throws TooDeep when brackets outside strings nest deeper than kMaxJsonDepth, in one pass over the
// text (before the parser recurses into them). Malformed text is left to the parser to report.
void check_json_depth(const std::string& text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) throw TooDeep{};
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
}

// Empties `j` from the back, children first, without allocating: nlohmann's own destructor flattens
// a container onto a vector as large as the container, which fails when memory has run out and, in a
// destructor, aborts. The depth is at most kMaxJsonDepth, so the recursion is bounded.
void release_without_allocating(nlohmann::json& j) noexcept {
  if (j.is_array()) {
    auto& a = j.get_ref<nlohmann::json::array_t&>();
    while (!a.empty()) {
      release_without_allocating(a.back());
      a.pop_back();
    }
  } else if (j.is_object()) {
    auto& o = j.get_ref<nlohmann::json::object_t&>();
    while (!o.empty()) {
      const auto last = std::prev(o.end());
      release_without_allocating(last->second);
      o.erase(last);
    }
  }
}

// nlohmann::json::parse with the document built in this frame: when memory runs out half-way, the
// partial document is released here (see above) before bad_alloc goes on to the CLI's exit 3.
nlohmann::json parse_releasing_on_oom(const std::string& text) {
  nlohmann::json result;
  try {
    nlohmann::detail::json_sax_dom_parser<nlohmann::json> sax(result, true);
    nlohmann::json::sax_parse(text, &sax);
  } catch (const std::bad_alloc&) {
    release_without_allocating(result);
    throw;
  }
  return result;
}

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& field) {
  const std::size_t nul = text.find('\0');
  if (nul != std::string::npos)
    throw InputError(field, "(not JSON text)", "NUL byte at byte " + std::to_string(nul + 1));
  try {
    check_json_depth(text);
    // The plain parser: nlohmann's callback parser (which a depth limit used to ride on) is quadratic
    // in the number of objects (a 1.4 MB config of 100,000 empty objects took 62 s).
    return parse_releasing_on_oom(text);
  } catch (const TooDeep&) {
    throw InputError(field, "(JSON nested too deep)", "more than " + std::to_string(kMaxJsonDepth) + " levels");
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the position; the library's message is multi-part, keep it to one line.
    throw InputError(field, "(malformed JSON)", "parse error at byte " + std::to_string(e.byte));
  } catch (const nlohmann::json::out_of_range&) {
    throw InputError(field, "(JSON number)", "a number is out of the range of a double (e.g. 1e400)");
  }
}

namespace {

// Where a write to `requested` goes: the path to replace atomically, or a device, pipe or this
// process's own standard output to write through. Throws InputError for folders, dangling links and
// other kinds of file.
struct Target {
  std::string requested, path;
  bool direct = false;
  bool exists = false;
  mode_t mode = 0;  // an existing file's permissions and owner, kept by its replacement
  uid_t uid = 0;
  gid_t gid = 0;
};

// True when `st` is the file behind this process's stdout or stderr (`--out /dev/stdout > log`):
// replacing it would unlink the file the shell opened and lose what was in it.
bool is_own_output(const struct stat& st) {
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat o {};
    if (::fstat(fd, &o) == 0 && o.st_dev == st.st_dev && o.st_ino == st.st_ino) return true;
  }
  return false;
}

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// An existing regular file that the final rename could not replace is refused now, not after the work
// (or the measuring) was done. In a sticky folder (/tmp) only the file's owner, the folder's owner or
// root may replace the file. A mount point (a bind-mounted file) cannot be renamed over (EBUSY); the
// new file is made in the target's own folder, so no other file-system boundary lies in between.
void check_replaceable(const Target& t, const struct stat& st, const std::string& field) {
  const std::string folder = folder_of(t.path);
  struct stat dir {};
  const uid_t me = ::geteuid();
  if (::stat(folder.c_str(), &dir) == 0 && (dir.st_mode & S_ISVTX) && me != 0 && st.st_uid != me && dir.st_uid != me)
    throw InputError(field, t.requested, "cannot replace another user's file in the sticky folder " + folder);
  if (is_mount_point(t.path))
    throw InputError(field, t.requested,
                     "is a mount point (a bind-mounted file), which a new file cannot be renamed over: "
                     "mount its folder instead and write inside it");
}

Target resolve_target(const std::string& requested, const std::string& field) {
  if (requested.empty()) throw InputError(field, "(empty)", "needs a file path");
  check_followed_links(requested, field);  // before anything is read through a planted link
  Target t{requested, requested};
  struct stat st {};
  if (::lstat(requested.c_str(), &st) != 0) return t;  // a new file
  const bool link = S_ISLNK(st.st_mode);
  if (::stat(requested.c_str(), &st) != 0) throw InputError(field, requested, "cannot write: the link's target: " + errno_text());
  if (S_ISDIR(st.st_mode)) throw InputError(field, requested, "is a directory");
  t.exists = true;
  t.mode = st.st_mode & 07777;
  t.uid = st.st_uid;
  t.gid = st.st_gid;
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || is_own_output(st)) {
    t.direct = true;  // /dev/null, a pipe, the terminal, or the file stdout is redirected to
    return t;
  }
  if (!S_ISREG(st.st_mode)) throw InputError(field, requested, "is not a regular file");
  // A read-only file is not replaced (as the shell's `>` would refuse it); root may, as with `>`.
  if (::access(requested.c_str(), W_OK) != 0) throw InputError(field, requested, "cannot write: " + errno_text());
  if (link) {  // replace the file the link names, not the link
    char* real = ::realpath(requested.c_str(), nullptr);
    if (!real) throw InputError(field, requested, "cannot write: the link's target: " + errno_text());
    t.path = real;
    std::free(real);
  }
  check_replaceable(t, st, field);
  return t;
}

void write_fd(int fd, const char* data, std::size_t size, const Target& t, const std::string& field) {
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) write_failed(field, t.requested, "error while writing");
    done += static_cast<std::size_t>(n);
  }
}

// Writes through (appending: a redirect's earlier contents stay): `write_all(fd)` writes the content.
void write_direct(const Target& t, const std::function<void(int)>& write_all, const std::string& field) {
  const int fd = ::open(t.path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw InputError(field, t.requested, "cannot write: " + errno_text());
  try {
    write_all(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

// A new empty file with a unique, short name in `dir` (mkstemp: never an existing file or a planted
// link; short, so a target name near the 255-byte limit still has room). Returns its descriptor. The
// file is tracked (a signal removes it) until untrack_temp_file; signals wait while it is created and
// tracked, so none lands between the two.
int make_temp(const std::string& dir, std::string& name, const std::string& requested, const std::string& field) {
  name = dir + "/.mhacfg.tmp.XXXXXX";
  const SignalsHeld held;
  const int fd = ::mkstemp(name.data());
  if (fd < 0) write_failed(field, requested, "cannot write in folder " + dir);
  track_temp_file(name);
  return fd;
}

// Removes a temporary file and stops tracking it.
void remove_temp(std::string& name) {
  if (name.empty()) return;
  const SignalsHeld held;
  std::remove(name.c_str());
  untrack_temp_file(name);
  name.clear();
}

// A new temporary file `name` beside the target with the target's permissions and owner (new targets:
// 0666 less the umask); its descriptor.
int open_temp(const Target& t, std::string& name, const std::string& field) {
  const int fd = make_temp(folder_of(t.path), name, t.requested, field);
  mode_t mode = t.mode;
  if (!t.exists) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0) {
    const int e = errno;
    ::close(fd);
    remove_temp(name);
    errno = e;
    throw InputError(field, t.requested, "cannot write: " + errno_text());
  }
  if (t.exists) (void)::fchown(fd, t.uid, t.gid);  // only root may; others keep the file as theirs
  return fd;
}

// Closes a written temporary file; a failure (a full disk seen at close) removes it.
void close_temp(int fd, std::string& name, const Target& t, const std::string& field) {
  if (::close(fd) == 0) return;
  const int e = errno;
  remove_temp(name);
  errno = e;
  write_failed(field, t.requested, "error while writing");
}

// The new content beside the target in a temporary file (open_temp).
std::string write_temp(const Target& t, const std::string& content, const std::string& field) {
  std::string name;
  const int fd = open_temp(t, name, field);
  try {
    write_fd(fd, content.data(), content.size(), t, field);
  } catch (...) {
    ::close(fd);
    remove_temp(name);
    throw;
  }
  close_temp(fd, name, t, field);
  return name;
}

// Renames a complete temporary file over its target (signals held by the caller).
void rename_temp(std::string& temp, const Target& t, const std::string& field) {
  if (std::rename(temp.c_str(), t.path.c_str()) != 0) write_failed(field, t.requested, "cannot replace");
  untrack_temp_file(temp);
  temp.clear();
}

void check_finite(const nlohmann::json& j) {
  if (j.is_number_float()) MHACFG_CHECK(std::isfinite(j.get<double>()), "a number in JSON output is not finite");
  if (j.is_structured())
    for (const auto& v : j) check_finite(v);
}

}  // namespace

std::string json_text(const nlohmann::json& j, int indent) {
  check_finite(j);
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void check_output_path(const std::string& path, const std::string& field) {
  const Target t = resolve_target(path, field);
  if (t.direct) return;
  struct stat st {};
  const std::string dir = folder_of(t.path);
  if (::stat(dir.c_str(), &st) != 0) throw InputError(field, path, "cannot write: folder " + dir + ": " + errno_text());
  if (!S_ISDIR(st.st_mode)) throw InputError(field, path, "cannot write: " + dir + " is not a folder");
  // The writer's own first step, tried now: a read-only folder or file system fails here, not after
  // minutes of measuring.
  std::string name;
  ::close(make_temp(dir, name, path, field));
  remove_temp(name);
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files, const std::string& field) {
  std::vector<Target> targets;
  for (const auto& [path, content] : files) targets.push_back(resolve_target(path, field));
  // Every new file complete beside its target before any target is touched.
  std::vector<std::string> temps(files.size());
  auto remove_temps = [&] {
    for (auto& tmp : temps) remove_temp(tmp);
  };
  // Another mhacfg writing the same set at once must not interleave its renames with these: the
  // renames hold an advisory lock on each target folder. Folders are told apart by (device, inode), not
  // by spelling (a link's target path and the folder's own name are one folder: locking it twice would
  // wait on itself), and locked in that order, so two writers never wait on each other crosswise.
  // Readers and other programs are not affected.
  std::map<std::pair<dev_t, ino_t>, int> locks;
  auto unlock = [&] {
    for (const auto& [id, fd] : locks) ::close(fd);  // closing releases the flock
    locks.clear();
  };
  try {
    for (std::size_t i = 0; i < files.size(); ++i)
      if (!targets[i].direct) temps[i] = write_temp(targets[i], files[i].second, field);
    if (files.size() > 1) {
      for (const Target& t : targets) {
        if (t.direct) continue;
        const int fd = ::open(folder_of(t.path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st {};
        if (fd < 0) continue;  // no lock possible: the renames still each replace a whole file
        if (::fstat(fd, &st) != 0 || !locks.emplace(std::make_pair(st.st_dev, st.st_ino), fd).second) ::close(fd);
      }
      for (const auto& [id, fd] : locks)  // std::map: ascending (device, inode)
        while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    // A signal during the renames waits until all are done: it never leaves half a set replaced.
    const SignalsHeld held;
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (targets[i].direct) {
        const std::string& content = files[i].second;
        const auto write_all = [&](int fd) { write_fd(fd, content.data(), content.size(), targets[i], field); };
        write_direct(targets[i], write_all, field);
        continue;
      }
      rename_temp(temps[i], targets[i], field);
    }
  } catch (...) {
    unlock();
    remove_temps();
    throw;
  }
  unlock();
}

void write_file_atomic(const std::string& path, const std::string& content, const std::string& field) {
  write_files_atomic({{path, content}}, field);
}

// A file target, resolved at the first piece; `direct` targets spool, the others write their temporary.
struct StreamedOutput::File {
  Target target;
  std::string temp;
  int fd = -1;
  std::string pending;  // pieces gathered into writes of about a MiB
};

StreamedOutput::StreamedOutput(std::ostream& out) : out_(&out) {}

StreamedOutput::StreamedOutput(const std::string& path, const std::string& field) : path_(path), field_(field) {}

StreamedOutput::~StreamedOutput() {
  if (file_ && file_->fd >= 0) ::close(file_->fd);
  if (file_) remove_temp(file_->temp);
}

void StreamedOutput::write(const std::string& text) {
  if (!out_ && !file_) {
    file_ = std::make_unique<File>();
    file_->target = resolve_target(path_, field_);
    if (!file_->target.direct) file_->fd = open_temp(file_->target, file_->temp, field_);
  }
  if (out_ || file_->target.direct) return spool_.append(text);
  std::string& pending = file_->pending;
  pending += text;
  if (pending.size() < (std::size_t{1} << 20)) return;
  write_fd(file_->fd, pending.data(), pending.size(), file_->target, field_);
  pending.clear();
}

void StreamedOutput::commit() {
  if (out_) {
    spool_.drain([&](const char* data, std::size_t size) { out_->write(data, static_cast<std::streamsize>(size)); });
    return;
  }
  if (!file_) write("");  // nothing written: the file is replaced by an empty one
  File& f = *file_;
  if (f.target.direct) {
    const auto write_all = [&](int fd) {
      spool_.drain([&](const char* data, std::size_t size) { write_fd(fd, data, size, f.target, field_); });
    };
    write_direct(f.target, write_all, field_);
    return;
  }
  write_fd(f.fd, f.pending.data(), f.pending.size(), f.target, field_);
  const int fd = f.fd;
  f.fd = -1;
  close_temp(fd, f.temp, f.target, field_);
  const SignalsHeld held;
  rename_temp(f.temp, f.target, field_);
}

}  // namespace mhacfg

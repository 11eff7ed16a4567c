// File I/O every command shares: JSON parsing limits, atomic replacement, output-path checks, and the
// one-line error values.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/temp_dir.hpp"

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/output_checks.hpp"

using namespace mhacfg;
using mhacfg::testing::TempDir;

namespace {


std::string slurp(const std::string& path) { return read_file(path, "test"); }

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// `from` bind-mounted onto the existing file `to` (as `docker run -v FROM:TO` does), unmounted at
// scope exit. `ok` is false where mounting is not permitted (not root, or a sandbox without it).
struct BindMount {
  std::string onto, error;
  bool ok = false;
  BindMount(const std::string& from, const std::string& to) : onto(to) {
    ok = ::mount(from.c_str(), onto.c_str(), nullptr, MS_BIND, nullptr) == 0;
    if (!ok) error = std::strerror(errno);
  }
  ~BindMount() {
    if (ok) ::umount2(onto.c_str(), MNT_DETACH);
  }
};

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("parse_json refuses what would crash or mislead later, naming the field", "[io][errors]") {
  CHECK(parse_json(R"({"a": [1, {"b": 2}]})", "f")["a"][1]["b"] == 2);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(input_error([&] { parse_json(deep, "f.json"); }) == "f.json = (JSON nested too deep): more than 64 levels");
  // At most 64 nested containers, however the innermost is filled.
  CHECK(input_error([&] { parse_json(std::string(64, '[') + std::string(64, ']'), "f"); }) == "no error");
  CHECK(input_error([&] { parse_json(std::string(64, '[') + "1" + std::string(64, ']'), "f"); }) == "no error");
  CHECK(input_error([&] { parse_json(std::string(65, '[') + std::string(65, ']'), "f"); }) != "no error");
  CHECK(input_error([&] { parse_json(std::string(64, '[') + "{}" + std::string(64, ']'), "f"); }) != "no error");
  // Brackets inside strings do not nest, an escaped quote does not end a string.
  const std::string in_string = "{\"a\": \"" + std::string(100, '[') + "\\\\\", \"b\": \"\\\"[[\"}";
  CHECK(parse_json(in_string, "f")["a"].get<std::string>().size() == 101);
  // Many objects side by side are one level each (the parse is linear in them; the benchmark times it).
  std::string wide = "{";
  for (int i = 0; i < 100000; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": {}";
  wide += "}";
  CHECK(parse_json(wide, "f").size() == 100000);
  CHECK(input_error([&] { parse_json(R"({"x": 1e400})", "f.json"); }) ==
        "f.json = (JSON number): a number is out of the range of a double (e.g. 1e400)");
  CHECK(input_error([&] { parse_json(std::string("{}\0garbage", 10), "f.json"); }) ==
        "f.json = (not JSON text): NUL byte at byte 3");
  CHECK(input_error([&] { parse_json("{", "f.json"); }) == "f.json = (malformed JSON): parse error at byte 2");
}

TEST_CASE("read_file refuses folders and inputs beyond its limit, endless devices included", "[io][errors]") {
  TempDir d;
  CHECK(input_error([&] { read_file(d.path, "--in"); }) == "--in = " + d.path + ": is a directory");
  CHECK(input_error([&] { read_file("/dev/zero", "--in"); }) == "--in = /dev/zero: larger than 256 MiB");
  write_file_atomic(d / "small.json", "{}");
  CHECK(read_file(d / "small.json", "--in") == "{}");
}

TEST_CASE("error values stay on one line and short", "[io][errors]") {
  CHECK(std::string(InputError("--params", "7\nB", "bad").what()) == "--params = 7\\nB: bad");
  CHECK(std::string(InputError("k", std::string("a\x01", 2), "bad").what()) == "k = a\\x01: bad");
  const std::string shown = InputError("--target", std::string(100000, 'a'), "unknown").what();
  CHECK(shown == "--target = " + std::string(kShownValueChars, 'a') + "... (100000 bytes): unknown");
  // Field names (long paths, file:line) are never cut; a cut value never splits a UTF-8 character.
  const std::string field = "/" + std::string(200, 'd') + "/config.json: num_attention_heads";
  CHECK(std::string(InputError(field, "30", "bad").what()) == field + " = 30: bad");
  const std::string utf = std::string(kShownValueChars - 1, 'a') + "\xc3\xa9tail";  // é straddles the cut
  CHECK(shown_value(utf) == std::string(kShownValueChars - 1, 'a') + "... (" + std::to_string(utf.size()) + " bytes)");
}

TEST_CASE("write_file_atomic replaces files whole, writes through devices and links, refuses folders", "[io]") {
  TempDir d;
  const std::string f = d / "out.json";
  write_file_atomic(f, "one\n");
  CHECK(slurp(f) == "one\n");
  write_file_atomic(f, "two\n");
  CHECK(slurp(f) == "two\n");

  // A link: the file it names is replaced and the link stays a link.
  const std::string link = d / "link.json";
  REQUIRE(::symlink("out.json", link.c_str()) == 0);
  write_file_atomic(link, "three\n");
  struct stat st {};
  REQUIRE(::lstat(link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(slurp(f) == "three\n");

  // A character device is written through, never replaced by a regular file.
  write_file_atomic("/dev/null", "discarded\n");
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));

  // A folder, a dangling link and a missing folder are input errors; nothing is left behind.
  CHECK(input_error([&] { write_file_atomic(d.path, "x"); }) == "--out = " + d.path + ": is a directory");
  const std::string dangling = d / "dangling";
  REQUIRE(::symlink("nowhere", dangling.c_str()) == 0);
  CHECK_THAT(input_error([&] { write_file_atomic(dangling, "x"); }), Catch::Contains("cannot write: the link's target"));
  CHECK_THAT(input_error([&] { write_file_atomic(d / "no/such/out.json", "x"); }), Catch::Contains("cannot write"));
}

TEST_CASE("write_file_atomic: long names, full devices and read-only files", "[io]") {
  TempDir d;
  // A name near the 255-byte limit: the temporary file's own name must not push past it.
  const std::string longest = d / std::string(250, 'a');
  write_file_atomic(longest, "long\n");
  CHECK(slurp(longest) == "long\n");
  // A full device is a runtime failure (exit 3), not an input error.
  CHECK_THROWS_AS(write_file_atomic("/dev/full", "x"), RuntimeFailure);
  // A read-only file is refused as the shell's `>` would (root may write it, as with `>`).
  const std::string ro = d / "ro.json";
  write_file_atomic(ro, "keep\n");
  ::chmod(ro.c_str(), 0444);
  if (::geteuid() != 0) {
    CHECK_THROWS_WITH(write_file_atomic(ro, "new\n"), Catch::Contains("cannot write: Permission denied"));
    CHECK(slurp(ro) == "keep\n");
  }
  // Replacements keep the replaced file's permissions.
  const std::string priv = d / "private.json";
  write_file_atomic(priv, "one\n");
  ::chmod(priv.c_str(), 0600);
  write_file_atomic(priv, "two\n");
  struct stat st {};
  REQUIRE(::stat(priv.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("write_files_atomic leaves the old set whole when one target cannot be replaced", "[io]") {
  TempDir d;
  write_files_atomic({{d / "a.svg", "old a"}, {d / "report.md", "old report"}});
  ::mkdir((d / "b.svg").c_str(), 0755);  // a folder where the new set has a file
  CHECK(input_error([&] {
          write_files_atomic({{d / "a.svg", "new a"}, {d / "b.svg", "new b"}, {d / "report.md", "new report"}}, "--out-dir");
        }) == "--out-dir = " + (d / "b.svg") + ": is a directory");
  CHECK(slurp(d / "a.svg") == "old a");
  CHECK(slurp(d / "report.md") == "old report");
  ::rmdir((d / "b.svg").c_str());
  write_files_atomic({{d / "a.svg", "new a"}, {d / "b.svg", "new b"}, {d / "report.md", "new report"}}, "--out-dir");
  CHECK(slurp(d / "a.svg") == "new a");
  CHECK(slurp(d / "b.svg") == "new b");
  CHECK(slurp(d / "report.md") == "new report");
  // No temporary file is left in the folder.
  CHECK(std::system(("test -z \"$(ls -a '" + d.path + "' | grep tmp)\"").c_str()) == 0);
}

TEST_CASE("a file this process's stdout is redirected to is appended to, not replaced", "[io]") {
  TempDir d;
  const std::string log = d / "log.txt";
  write_file_atomic(log, "earlier\n");
  // stdout redirected to the file (as `mhacfg ... --out /dev/stdout >> log.txt` would have it).
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
  REQUIRE(fd >= 0);
  ::dup2(fd, STDOUT_FILENO);
  ::close(fd);
  std::string error;
  try {
    write_file_atomic("/dev/stdout", "profile\n");
  } catch (const InputError& e) {
    error = e.what();
  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  CHECK(error.empty());
  CHECK(slurp(log) == "earlier\nprofile\n");
}

TEST_CASE("a set whose targets reach one folder by two spellings is written, not deadlocked", "[io]") {
  TempDir d;
  // b.svg is a link to real.svg in the same folder: its target is spelled by realpath (absolute), the
  // others relative to the folder as given. The folder must be locked once.
  write_file_atomic(d / "real.svg", "old");
  REQUIRE(::symlink("real.svg", (d / "b.svg").c_str()) == 0);
  write_files_atomic({{d / "a.svg", "new a"}, {d / "b.svg", "new b"}, {d / "report.md", "new report"}}, "--out-dir");
  CHECK(slurp(d / "real.svg") == "new b");
  CHECK(slurp(d / "a.svg") == "new a");
  CHECK(std::system(("test -z \"$(ls -a '" + d.path + "' | grep tmp)\"").c_str()) == 0);
}

TEST_CASE("two writers of the same set at once leave one writer's whole set", "[io]") {
  TempDir d;
  auto set_of = [&](const std::string& tag) {
    std::vector<std::pair<std::string, std::string>> files;
    for (const char* name : {"a.svg", "b.svg", "c.svg", "report.md"}) files.emplace_back(d / name, tag + " " + name);
    return files;
  };
  const auto first = set_of("first"), second = set_of("second");
  int mixed = 0;
  for (int round = 0; round < 200; ++round) {
    std::thread t1([&] { write_files_atomic(first, "--out-dir"); });
    std::thread t2([&] { write_files_atomic(second, "--out-dir"); });
    t1.join();
    t2.join();
    const std::string tag = slurp(d / "report.md").substr(0, slurp(d / "report.md").find(' '));
    for (const char* name : {"a.svg", "b.svg", "c.svg"}) mixed += slurp(d / name) != tag + " " + name;
  }
  CHECK(mixed == 0);
}

TEST_CASE("check_output_path fails before any work on paths that cannot be written", "[io][errors]") {
  TempDir d;
  check_output_path(d / "new.json", "--out");  // a new file in an existing folder
  check_output_path("/dev/null", "--out");      // written through: its folder needs no write permission
  CHECK(input_error([&] { check_output_path(d / "nodir/p.json", "--out"); }) ==
        "--out = " + (d / "nodir/p.json") + ": cannot write: folder " + (d / "nodir") + ": No such file or directory");
  CHECK(input_error([&] { check_output_path(d.path, "--save-measurements"); }) ==
        "--save-measurements = " + d.path + ": is a directory");
  CHECK(input_error([&] { check_output_path("", "--out"); }) == "--out = (empty): needs a file path");
}

TEST_CASE("another user's file in a sticky folder is refused before any work", "[io][errors]") {
  // /tmp is such a folder: the rename over another user's file would fail after the work was done.
  TempDir d;
  REQUIRE(::chmod(d.path.c_str(), 01777) == 0);
  { std::ofstream(d / "theirs.json") << "{}"; }
  REQUIRE(::chmod((d / "theirs.json").c_str(), 0666) == 0);  // writable by all, so only the sticky bit refuses
  check_output_path(d / "theirs.json", "--out");              // this process's own file: replaced as usual
  write_file_atomic(d / "theirs.json", "{\"v\": 2}", "--out");
  CHECK(slurp(d / "theirs.json") == "{\"v\": 2}");
  if (::geteuid() != 0) return;  // only root can run the other user's side below
  const std::string expected =
      "--out = " + (d / "theirs.json") + ": cannot replace another user's file in the sticky folder " + d.path;
  const pid_t pid = ::fork();
  if (pid == 0) {  // as nobody, the file and the folder are root's
    if (::setuid(65534) != 0) ::_exit(10);
    const bool checked = input_error([&] { check_output_path(d / "theirs.json", "--out"); }) == expected;
    const bool written = input_error([&] { write_file_atomic(d / "theirs.json", "lost", "--out"); }) == expected;
    ::_exit(checked && written ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(slurp(d / "theirs.json") == "{\"v\": 2}");
}

TEST_CASE("a bind-mounted file is refused before any work: rename cannot replace it", "[io][errors]") {
  TempDir d;
  write_file_atomic(d / "host.json", "host\n");
  write_file_atomic(d / "mounted.json", "under\n");
  const BindMount m(d / "host.json", d / "mounted.json");
  if (!m.ok) {
    WARN("skipped: cannot bind-mount a file here (" + m.error + ")");
    return;
  }
  CHECK(is_mount_point(d / "mounted.json"));  // one file system: the same device number, seen in mountinfo
  CHECK_FALSE(is_mount_point(d / "host.json"));
  const std::string why = ": is a mount point (a bind-mounted file), which a new file cannot be renamed over: "
                          "mount its folder instead and write inside it";
  CHECK(input_error([&] { check_output_path(d / "mounted.json", "--save-measurements"); }) ==
        "--save-measurements = " + (d / "mounted.json") + why);
  CHECK(input_error([&] { write_file_atomic(d / "mounted.json", "new\n"); }) == "--out = " + (d / "mounted.json") + why);
  // A link to it: the file the link names is the one checked.
  REQUIRE(::symlink("mounted.json", (d / "link.json").c_str()) == 0);
  CHECK(input_error([&] { write_file_atomic(d / "link.json", "new\n"); }) == "--out = " + (d / "link.json") + why);
  // A set: no file of it is replaced.
  CHECK(input_error([&] { write_files_atomic({{d / "host.json", "new"}, {d / "mounted.json", "new"}}, "--out-dir"); }) ==
        "--out-dir = " + (d / "mounted.json") + why);
  CHECK(slurp(d / "host.json") == "host\n");
  CHECK(std::system(("test -z \"$(ls -a '" + d.path + "' | grep tmp)\"").c_str()) == 0);
  // A name mountinfo escapes (a space is written \040), and a file from another file system (tmpfs).
  write_file_atomic(d / "with space.json", "under\n");
  const BindMount spaced(d / "host.json", d / "with space.json");
  REQUIRE(spaced.ok);
  CHECK(is_mount_point(d / "with space.json"));
  char shm[] = "/dev/shm/mhacfg-io-test-XXXXXX";
  const int fd = ::mkstemp(shm);
  if (fd < 0) return;  // no tmpfs at /dev/shm here
  ::close(fd);
  write_file_atomic(d / "other-fs.json", "under\n");
  {
    const BindMount other(shm, d / "other-fs.json");
    REQUIRE(other.ok);
    CHECK(is_mount_point(d / "other-fs.json"));
  }
  ::unlink(shm);
}

TEST_CASE("a link another user planted in a sticky world-writable folder is not followed", "[io][errors]") {
  TempDir shared, elsewhere, own;
  REQUIRE(::chmod(shared.path.c_str(), 01777) == 0);
  const std::string victim = elsewhere / "victim.json", link = shared / "out.json";
  write_file_atomic(victim, "keep\n");
  REQUIRE(::symlink(victim.c_str(), link.c_str()) == 0);
  write_file_atomic(link, "mine\n");  // this user's own link: followed, the file it names replaced
  CHECK(slurp(victim) == "mine\n");
  if (::geteuid() != 0) {
    WARN("skipped: giving a link to another user needs root (lchown)");
    return;
  }
  auto planted = [&](const std::string& path) {
    return "will not follow the link " + path + ": another user's (uid 65534) in the sticky world-writable folder " +
           shared.path + " (the fs.protected_symlinks rule); remove the link or write elsewhere";
  };
  REQUIRE(::lchown(link.c_str(), 65534, 65534) == 0);
  CHECK(input_error([&] { check_output_path(link, "--out"); }) == "--out = " + link + ": " + planted(link));
  CHECK(input_error([&] { write_file_atomic(link, "lost\n"); }) == "--out = " + link + ": " + planted(link));
  // Reached through a link of this user's elsewhere, or by a path with "..": the planted link is named.
  REQUIRE(::symlink(link.c_str(), (own / "via.json").c_str()) == 0);
  CHECK(input_error([&] { write_file_atomic(own / "via.json", "lost\n"); }) ==
        "--out = " + (own / "via.json") + ": " + planted(link));
  REQUIRE(::mkdir((shared / "sub").c_str(), 0755) == 0);
  CHECK(input_error([&] { check_output_path(shared / "sub/../out.json", "--out"); }) ==
        "--out = " + (shared / "sub/../out.json") + ": " + planted(link));
  CHECK(slurp(victim) == "mine\n");
  // A planted link to a folder, on the way to a new file (--out-dir's report): nothing is written there.
  const std::string reports = shared / "reports";
  REQUIRE(::symlink(elsewhere.path.c_str(), reports.c_str()) == 0);
  REQUIRE(::lchown(reports.c_str(), 65534, 65534) == 0);
  CHECK(input_error([&] { write_files_atomic({{reports + "/report.md", "x"}}, "--out-dir"); }) ==
        "--out-dir = " + reports + "/report.md: " + planted(reports));
  CHECK(input_error([&] { check_followed_links(reports, "--out-dir"); }) == "--out-dir = " + reports + ": " + planted(reports));
  CHECK_FALSE(exists(elsewhere / "report.md"));
}

TEST_CASE("links the fs.protected_symlinks rule allows are followed", "[io]") {
  if (::geteuid() != 0) {
    WARN("skipped: another user's link needs root to make (lchown)");
    return;
  }
  TempDir elsewhere;
  const std::string victim = elsewhere / "target.json";
  write_file_atomic(victim, "old\n");
  // Another user's link in: a sticky world-writable folder that user owns; a world-writable folder
  // without the sticky bit; a sticky folder only its owner may write.
  const std::pair<mode_t, uid_t> folders[] = {{01777, 65534}, {0777, 0}, {01755, 0}};
  for (const auto& [mode, owner] : folders) {
    TempDir d;
    REQUIRE(::chown(d.path.c_str(), owner, owner) == 0);
    REQUIRE(::chmod(d.path.c_str(), mode) == 0);
    REQUIRE(::symlink(victim.c_str(), (d / "out.json").c_str()) == 0);
    REQUIRE(::lchown((d / "out.json").c_str(), 65534, 65534) == 0);
    const std::string text = "mode " + std::to_string(mode) + "\n";
    write_file_atomic(d / "out.json", text);
    CHECK(slurp(victim) == text);
  }
  // A relative link, followed from its own folder.
  TempDir shared;
  REQUIRE(::chmod(shared.path.c_str(), 01777) == 0);
  const std::string rel = "../" + elsewhere.path.substr(elsewhere.path.find_last_of('/') + 1) + "/target.json";
  REQUIRE(::symlink(rel.c_str(), (shared / "rel.json").c_str()) == 0);
  write_file_atomic(shared / "rel.json", "relative\n");
  CHECK(slurp(victim) == "relative\n");
}

// File I/O shared by every tool: whole-file reads with clear errors and atomic replacement.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/streams.hpp"

namespace mhacfg {

// The largest input file read (configs, records, profiles are KB to MB).
constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;

// Reads a whole file; throws InputError naming `field` and the path when it cannot be read, is a
// folder, or holds more than kMaxInputBytes (a device such as /dev/zero is read only that far).
std::string read_file(const std::string& path, const std::string& field);

// Parses JSON text; throws InputError naming `field` with the parser's position on malformed input,
// on a NUL byte, on numbers beyond a double, and on nesting deeper than 64 levels.
nlohmann::json parse_json(const std::string& text, const std::string& field);

// JSON text for output (stdout, profiles, records): bytes that are not UTF-8 (a file name's) are
// written as U+FFFD rather than failing, and a number that is not finite, which JSON cannot hold (it
// would be written as null), is a broken invariant. indent -1: one line.
std::string json_text(const nlohmann::json& j, int indent = -1);

// Checks, before any work, that `path` could be written: not a folder, in an existing writable folder,
// replaceable by rename (not a mount point), and reached through no link that the fs.protected_symlinks
// rule refuses (output_checks.hpp). Throws InputError naming `field`. (Commands that measure for
// minutes call it first.)
void check_output_path(const std::string& path, const std::string& field);

// Writes `content` to `path` atomically (temporary file in the same folder, then rename): an
// existing file is only ever replaced by a complete new one. A symbolic link's target is replaced (the
// link stays); a character device or pipe (/dev/null, /dev/stdout) is written directly; a folder, a
// mount point, a link the fs.protected_symlinks rule refuses, or any other kind of file is refused.
// Throws InputError naming `field` when it cannot.
void write_file_atomic(const std::string& path, const std::string& content,
                       const std::string& field = "--out");

// The same for a set of files (a report and its plots): every target is checked and every new file
// written completely beside it before the first is renamed into place, so a failure leaves the old
// set whole. (The renames themselves, one per file, are not one atomic step.)
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files,
                        const std::string& field = "--out");

// One output written a piece at a time (predict's records) and replaced only when complete, as
// write_file_atomic replaces it: a file's pieces go into its temporary file beside it (made at the first
// piece, with the same checks and errors) and commit() renames it over the file. Standard output (the
// stream given), a device or a pipe get the pieces at commit() from a Spool. Destroyed without commit()
// (an error half-way), it writes nothing and removes its temporary file.
class StreamedOutput {
 public:
  explicit StreamedOutput(std::ostream& out);
  StreamedOutput(const std::string& path, const std::string& field = "--out");
  StreamedOutput(const StreamedOutput&) = delete;
  StreamedOutput& operator=(const StreamedOutput&) = delete;
  ~StreamedOutput();
  void write(const std::string& text);
  void commit();

 private:
  struct File;
  std::ostream* out_ = nullptr;
  std::string path_, field_;
  std::unique_ptr<File> file_;  // the target and its temporary file, from the first piece on
  Spool spool_;                 // the stream's or a device's pieces
};

}  // namespace mhacfg

// Files read and output written a piece at a time, for commands whose inputs outgrow memory (predict's
// records): a file read line by line with read_file's checks, and text held until a run succeeds.
#pragma once

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

namespace mhacfg {

// A file read one line at a time: read_file's checks and errors (a folder, an unreadable file, a read
// error), no limit on the file's size, and each line at most kMaxInputBytes (a device that never ends,
// /dev/zero, is refused with read_file's "larger than 256 MiB" once a line passes that). Lines end at
// '\n' (a '\r' before it stays, as std::getline keeps it); a last line without '\n' counts.
class LineReader {
 public:
  LineReader(const std::string& path, const std::string& field);
  // The next line into `line`; false at the end of the file.
  bool next(std::string& line);

 private:
  std::ifstream in_;
  std::string path_, field_;
  std::string buffer_;     // read, not yet returned
  std::size_t start_ = 0;  // where the next line begins in buffer_
  bool eof_ = false;
};

// Text held until a run has succeeded, so a command that streams its output writes nothing when it
// fails half-way (as the commands that build their output whole): up to kSpoolMemoryBytes in memory,
// the rest in an unlinked temporary file (std::tmpfile) that disappears with the process.
inline constexpr std::size_t kSpoolMemoryBytes = std::size_t{16} << 20;
class Spool {
 public:
  Spool() = default;
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  ~Spool();
  void append(const std::string& text);
  bool empty() const { return memory_.empty() && !file_; }
  // Hands the text, in order, to `write` in pieces of at most kSpoolMemoryBytes; the spool is then empty.
  void drain(const std::function<void(const char*, std::size_t)>& write);

 private:
  std::string memory_;
  std::FILE* file_ = nullptr;
};

}  // namespace mhacfg

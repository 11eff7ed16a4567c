#include "mhacfg/costmodel/streams.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"

namespace mhacfg {

LineReader::LineReader(const std::string& path, const std::string& field) : path_(path), field_(field) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(field, path, "is a directory");
  in_.open(path, std::ios::binary);
  if (!in_) throw InputError(field, path, std::string("cannot read file: ") + std::strerror(errno));
}

bool LineReader::next(std::string& line) {
  std::size_t scanned = start_;  // no '\n' in buffer_ before this
  for (;;) {
    const std::size_t nl = buffer_.find('\n', scanned);
    if (nl != std::string::npos) {
      line.assign(buffer_, start_, nl - start_);
      start_ = nl + 1;
      return true;
    }
    if (buffer_.size() - start_ > kMaxInputBytes)
      throw InputError(field_, path_, "larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB");
    if (eof_) {
      if (start_ == buffer_.size()) return false;
      line.assign(buffer_, start_, std::string::npos);
      start_ = buffer_.size();
      return true;
    }
    // Drop what was returned, then read on; the unfinished line is scanned only once.
    buffer_.erase(0, start_);
    start_ = 0;
    scanned = buffer_.size();
    char chunk[1 << 16];
    in_.read(chunk, sizeof chunk);
    buffer_.append(chunk, static_cast<std::size_t>(in_.gcount()));
    if (in_.bad()) throw InputError(field_, path_, "error while reading file");
    if (in_.eof()) eof_ = true;
  }
}

namespace {

[[noreturn]] void spool_failed() {
  throw RuntimeFailure(std::string("cannot hold the output in a temporary file: ") + std::strerror(errno));
}

}  // namespace

Spool::~Spool() {
  if (file_) std::fclose(file_);
}

void Spool::append(const std::string& text) {
  memory_ += text;
  if (memory_.size() <= kSpoolMemoryBytes) return;
  if (!file_ && !(file_ = std::tmpfile())) spool_failed();
  if (std::fwrite(memory_.data(), 1, memory_.size(), file_) != memory_.size()) spool_failed();
  memory_.clear();
}

void Spool::drain(const std::function<void(const char*, std::size_t)>& write) {
  if (!file_) {
    if (!memory_.empty()) write(memory_.data(), memory_.size());
    memory_.clear();
    return;
  }
  if (!memory_.empty() && std::fwrite(memory_.data(), 1, memory_.size(), file_) != memory_.size()) spool_failed();
  if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0) spool_failed();
  memory_.resize(kSpoolMemoryBytes);
  for (std::size_t n; (n = std::fread(memory_.data(), 1, memory_.size(), file_)) > 0;) write(memory_.data(), n);
  if (std::ferror(file_)) spool_failed();
  std::fclose(file_);
  file_ = nullptr;
  memory_.clear();
}

}  // namespace mhacfg

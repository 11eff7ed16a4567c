#include "mhacfg/costmodel/io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

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

nlohmann::json parse_json(const std::string& text, const std::string& field) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the position; the library's message is multi-part, keep it to one line.
    throw InputError(field, "(malformed JSON)", "parse error at byte " + std::to_string(e.byte));
  }
}

void write_file_atomic(const std::string& path, const std::string& content, const std::string& field) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(field, path, std::string("cannot write: ") + std::strerror(errno));
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw InputError(field, path, "error while writing");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw InputError(field, path, "cannot replace: " + why);
  }
}

}  // namespace mhacfg

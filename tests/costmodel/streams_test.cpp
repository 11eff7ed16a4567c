// Inputs read and outputs written a piece at a time (streams.hpp, io.hpp's StreamedOutput, records.hpp's
// for_each_record): the same lines, errors and all-or-nothing replacement as the whole-file versions.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/records.hpp"
#include "mhacfg/costmodel/streams.hpp"
#include "support/temp_dir.hpp"

using namespace mhacfg;
using mhacfg::testing::entries;
using mhacfg::testing::TempDir;

namespace {


void put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::vector<std::string> lines_of(const std::string& path) {
  LineReader in(path, "--in");
  std::vector<std::string> out;
  for (std::string line; in.next(line);) out.push_back(line);
  return out;
}

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}


}  // namespace

TEST_CASE("LineReader returns the lines std::getline does, across its read chunks", "[io][streams]") {
  TempDir d;
  put(d / "a", "one\r\n\n  three\nlast");
  CHECK(lines_of(d / "a") == std::vector<std::string>{"one\r", "", "  three", "last"});
  put(d / "b", "x\n");
  CHECK(lines_of(d / "b") == std::vector<std::string>{"x"});
  put(d / "empty", "");
  CHECK(lines_of(d / "empty").empty());
  // Lines longer than a 64 KiB read, and many of them.
  std::string text;
  std::vector<std::string> expected;
  for (int i = 0; i < 300; ++i) {
    expected.push_back(std::string(static_cast<std::size_t>(i) * 997, static_cast<char>('a' + i % 26)));
    text += expected.back() + "\n";
  }
  put(d / "long", text);
  std::istringstream ref(text);
  std::vector<std::string> by_getline;
  for (std::string l; std::getline(ref, l);) by_getline.push_back(l);
  CHECK(lines_of(d / "long") == by_getline);
  CHECK(lines_of(d / "long") == expected);
}

TEST_CASE("LineReader refuses what read_file refuses, with the same errors", "[io][streams][errors]") {
  TempDir d;
  CHECK(input_error([&] { LineReader(d.path, "--in"); }) == "--in = " + d.path + ": is a directory");
  CHECK(input_error([&] { LineReader(d / "missing", "--in"); }) ==
        "--in = " + (d / "missing") + ": cannot read file: No such file or directory");
  // A device that never ends a line is read only up to the limit.
  CHECK(input_error([&] { lines_of("/dev/zero"); }) == "--in = /dev/zero: larger than 256 MiB");
}

TEST_CASE("for_each_record sees the records read_records returns, with the same errors", "[io][streams][records]") {
  TempDir d;
  const std::string gemm = "{\"op\": \"gemm\", \"m\": 1, \"n\": 2, \"k\": 3}\n";
  put(d / "r.jsonl", gemm + "\n" + gemm);
  std::vector<std::string> wheres;
  CHECK(for_each_record(d / "r.jsonl", "--in", [&](MeasurementRecord& r) { wheres.push_back(r.where); }) == 2);
  CHECK(wheres == std::vector<std::string>{d / "r.jsonl:1", d / "r.jsonl:3"});
  put(d / "bad.jsonl", gemm + "{\"op\": \"gemm\", \"m\": 0, \"n\": 2, \"k\": 3}\n");
  int seen = 0;
  CHECK(input_error([&] { for_each_record(d / "bad.jsonl", "--in", [&](MeasurementRecord&) { ++seen; }); }) ==
        d / "bad.jsonl:2: m = 0: must be positive");
  CHECK(seen == 1);  // the record before the error was handed on
  put(d / "blank.jsonl", "\n \n");
  CHECK(input_error([&] { for_each_record(d / "blank.jsonl", "--in", [](MeasurementRecord&) {}); }) ==
        "--in = " + (d / "blank.jsonl") + ": holds no records");
}

TEST_CASE("Spool keeps its text in memory, then in a temporary file, and gives it back in order", "[io][streams]") {
  Spool small;
  small.append("ab");
  small.append("c");
  std::string back;
  small.drain([&](const char* p, std::size_t n) { back.append(p, n); });
  CHECK(back == "abc");
  CHECK(small.empty());
  // Past kSpoolMemoryBytes the text goes to a file: 40 MiB in 1 MiB pieces comes back whole.
  Spool big;
  std::string expected;
  for (int i = 0; i < 40; ++i) {
    const std::string piece(std::size_t{1} << 20, static_cast<char>('A' + i));
    big.append(piece);
    expected += piece;
  }
  back.clear();
  std::size_t pieces = 0;
  big.drain([&](const char* p, std::size_t n) {
    back.append(p, n);
    ++pieces;
    CHECK(n <= kSpoolMemoryBytes);
  });
  CHECK(back == expected);
  CHECK(pieces >= 3);
}

TEST_CASE("StreamedOutput replaces a file only at commit, and writes a stream only then", "[io][streams]") {
  TempDir d;
  const std::string target = d / "out.jsonl";
  put(target, "old\n");
  {
    StreamedOutput o(target);
    o.write("new 1\n");
    o.write(std::string(3u << 20, 'x') + "\n");  // past its write buffer: on disk in the temporary file
    CHECK(read_file(target, "t") == "old\n");
    CHECK(entries(d.path).size() == 2);  // the target and the hidden temporary beside it
    o.commit();
  }
  CHECK(read_file(target, "t") == "new 1\n" + std::string(3u << 20, 'x') + "\n");
  CHECK(entries(d.path) == std::vector<std::string>{"out.jsonl"});
  // Abandoned half-way (an error): the old file stays whole and no temporary is left.
  {
    StreamedOutput o(target);
    o.write("partial\n");
  }
  CHECK(read_file(target, "t") == "new 1\n" + std::string(3u << 20, 'x') + "\n");
  CHECK(entries(d.path) == std::vector<std::string>{"out.jsonl"});
  // A stream gets nothing before commit.
  std::ostringstream out;
  {
    StreamedOutput o(out);
    o.write("a\n");
    CHECK(out.str().empty());
    o.commit();
  }
  CHECK(out.str() == "a\n");
  std::ostringstream abandoned;
  {
    StreamedOutput o(abandoned);
    o.write("a\n");
  }
  CHECK(abandoned.str().empty());
  // The target's checks and errors are write_file_atomic's, at the first piece.
  StreamedOutput folder(d.path);
  CHECK(input_error([&] { folder.write("x"); }) == "--out = " + d.path + ": is a directory");
}

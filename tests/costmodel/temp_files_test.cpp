#include "mhacfg/costmodel/temp_files.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mhacfg;

namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

// Runs `body` in a child process and returns its wait status.
template <class F>
int in_child(F body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("a stop signal removes tracked temporaries and still ends the process", "[io][signals]") {
  for (const int sig : {SIGINT, SIGTERM}) {
    const std::string kept = "temp_files_test.kept", tracked = "temp_files_test.tracked." + std::to_string(sig);
    std::ofstream(kept) << "x";
    std::ofstream(tracked) << "x";
    const int status = in_child([&] {
      remove_temps_on_signals();
      track_temp_file(tracked);
      std::raise(sig);
    });
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK_FALSE(exists(tracked));
    CHECK(exists(kept));  // never tracked
    std::remove(kept.c_str());
  }
}

TEST_CASE("an untracked temporary stays, and a held signal waits", "[io][signals]") {
  const std::string done = "temp_files_test.renamed";
  std::ofstream(done) << "x";
  const int status = in_child([&] {
    remove_temps_on_signals();
    track_temp_file(done);
    {
      const SignalsHeld held;
      std::raise(SIGTERM);     // pending until `held` ends
      untrack_temp_file(done);  // as after a successful rename
    }
  });
  CHECK(WIFSIGNALED(status));
  CHECK(exists(done));
  std::remove(done.c_str());
}

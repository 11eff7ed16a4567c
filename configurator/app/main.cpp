// mhacfg: the thin entry point. All logic lives in the libraries (run_cli is what the tests call).
#include <csignal>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "mhacfg/configurator/cli/cli.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/temp_files.hpp"

int main(int argc, char** argv) {
  // A reader that went away (`| head`) makes writes fail with EPIPE, reported as a runtime failure,
  // instead of killing the process silently; a stop signal removes the temporaries of a pending write.
  std::signal(SIGPIPE, SIG_IGN);
  mhacfg::remove_temps_on_signals();
  std::ios::sync_with_stdio(false);
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const int code = mhacfg::run_cli(args, std::cout, std::cerr);
    std::cout.flush();
    if (!std::cout) {  // a full disk or a closed pipe: the output is lost, so the run did not succeed
      std::cerr << "mhacfg: runtime failure: cannot write to standard output\n";
      return code == mhacfg::kExitOk ? mhacfg::kExitRuntime : code;
    }
    return code;
  } catch (const std::bad_alloc&) {  // copying the arguments, or out of memory while reporting another error
    std::cerr << "mhacfg: runtime failure: out of memory\n";
    return mhacfg::kExitRuntime;
  }
}

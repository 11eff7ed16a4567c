// mhacfg: the thin entry point. All logic lives in the libraries (run_cli is what the tests call).
#include <iostream>
#include <string>
#include <vector>

#include "mhacfg/configurator/cli/cli.hpp"
#include "mhacfg/costmodel/errors.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int code = mhacfg::run_cli(args, std::cout, std::cerr);
  std::cout.flush();
  if (!std::cout) {  // a full disk or a closed pipe: the output is lost, so the run did not succeed
    std::cerr << "mhacfg: runtime failure: cannot write to standard output\n";
    return code == mhacfg::kExitOk ? mhacfg::kExitRuntime : code;
  }
  return code;
}

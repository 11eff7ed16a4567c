// mhacfg: the thin entry point. All logic lives in the libraries (run_cli is what the tests call).
#include <iostream>
#include <string>
#include <vector>

#include "mhacfg/configurator/cli.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int code = mhacfg::run_cli(args, std::cout, std::cerr);
  std::cout.flush();
  return code;
}

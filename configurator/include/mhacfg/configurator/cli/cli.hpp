// The command-line interface as a library function, so tests run exactly what users run.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace mhacfg {

// Runs `mhacfg <args...>` (args without the program name). Output goes to `out`, diagnostics to
// `err`; returns the exit code (0 ok, 1 infeasible, 2 invalid input, 3 runtime failure).
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace mhacfg

// Error channels: user/data errors are typed exceptions caught once in main and
// mapped to exit codes; broken invariants are always-on checks that name file:line.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace mhacfg {

// Exit codes of the CLI. Libraries never exit; main maps exceptions to these.
enum ExitCode : int {
  kExitOk = 0,
  kExitInfeasible = 1,  // no feasible configuration
  kExitInvalidInput = 2,
  kExitRuntime = 3,  // runtime or device failure
};

// Text as an error message shows it: control characters escaped (\n, \t, \xNN) so the message stays
// one line.
std::string escaped(const std::string& text);
// A value as an error message shows it: escaped, and past kShownValueChars cut (at a character
// boundary) with its full length stated. Field names (paths, file:line, keys) are escaped, never cut.
constexpr std::size_t kShownValueChars = 120;
std::string shown_value(const std::string& value);

// Invalid input: a file, flag, config key or record that cannot be accepted. The message is one line
// that names the field and the offending value.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  InputError(const std::string& field, const std::string& value, const std::string& reason)
      : std::runtime_error(escaped(field) + " = " + shown_value(value) + ": " + reason),
        field_(field), value_(value), reason_(reason) {}
  // The parts, for callers that keep them apart (the Python module's InputError); empty when the
  // error was built from one message.
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string field_, value_, reason_;
};

// A count that would not fit 64 bits: inputs too large together (e.g. batch x context x bytes per
// token). The library names the quantity; the CLI adds the size flags the user gave.
class OverflowError : public InputError {
 public:
  using InputError::InputError;
};

// The search found nothing that satisfies the constraints.
class InfeasibleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure of the machine or device while running (timers, allocation, kernels).
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void invariant_failed(const char* expr, const char* file, int line, const std::string& what);

}  // namespace mhacfg

// Always-on invariant check (independent of NDEBUG).
#define MHACFG_CHECK(cond, what)                                      \
  do {                                                                \
    if (!(cond)) ::mhacfg::invariant_failed(#cond, __FILE__, __LINE__, (what)); \
  } while (0)

// Temporary files that must not outlive the process: the atomic writers (io.hpp) create each new file
// as a hidden `.mhacfg.tmp.*` beside its target and rename it into place; a signal that stops the
// process in between would leave it behind. The writers track their temporaries here, and handlers for
// SIGINT, SIGTERM and SIGHUP remove every tracked file before the process dies of the signal.
#pragma once

#include <csignal>
#include <string>

namespace mhacfg {

// Installs the handlers (a program's main calls it once). A signal the process ignores (nohup) stays
// ignored. The handler only calls async-signal-safe functions (unlink, signal, raise): it removes the
// tracked files, restores the default action and raises the signal again, so the exit status still
// says which signal stopped the process.
void remove_temps_on_signals();

// Adds or removes a path from the set a signal removes. Paths longer than 4095 bytes, or more than 64
// at once, are not tracked (the writers never come near either).
void track_temp_file(const std::string& path);
void untrack_temp_file(const std::string& path);

// While alive, SIGINT, SIGTERM and SIGHUP wait (they are delivered when it ends): a signal cannot land
// between creating a file and tracking it, or between the renames of one set of files.
class SignalsHeld {
 public:
  SignalsHeld();
  ~SignalsHeld();
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t old_{};
};

}  // namespace mhacfg

#include "mhacfg/costmodel/temp_files.hpp"

#include <cerrno>
#include <cstring>

#include <pthread.h>
#include <unistd.h>

namespace mhacfg {

namespace {

constexpr int kSlots = 64;
constexpr std::size_t kPathBytes = 4096;

// Fixed storage: the handler may not allocate or take locks. `used` is set after the path is complete
// and cleared before the slot is reused.
struct Slot {
  volatile std::sig_atomic_t used = 0;
  char path[kPathBytes] = {};
};
Slot g_slots[kSlots];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void on_stop_signal(int sig) {
  const int saved = errno;
  for (Slot& s : g_slots)
    if (s.used) ::unlink(s.path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);  // delivered on return from this handler (the signal is blocked while it runs)
  errno = saved;
}

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kSignals) sigaddset(&set, sig);
  return set;
}

}  // namespace

void remove_temps_on_signals() {
  for (int sig : kSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sa.sa_mask = stop_signals();  // one handler at a time
    ::sigaction(sig, &sa, nullptr);
  }
}

void track_temp_file(const std::string& path) {
  if (path.size() >= kPathBytes) return;
  const SignalsHeld held;
  for (Slot& s : g_slots) {
    if (s.used) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.used = 1;
    return;
  }
}

void untrack_temp_file(const std::string& path) {
  const SignalsHeld held;
  for (Slot& s : g_slots)
    if (s.used && path == s.path) {
      s.used = 0;
      return;
    }
}

SignalsHeld::SignalsHeld() {
  const sigset_t set = stop_signals();
  ::pthread_sigmask(SIG_BLOCK, &set, &old_);
}

SignalsHeld::~SignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

}  // namespace mhacfg

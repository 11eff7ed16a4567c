// The one function a backend plugin exports (kBackendEntrySymbol in backend.hpp) returns
// plugin_info<ItsBackend>(): the versions the loader checks and the factory it calls.
#pragma once

#include "mhacfg/kernels/backend.hpp"

// The plugins build with hidden visibility (only the entry function is theirs to export).
#define MHACFG_PLUGIN_EXPORT __attribute__((visibility("default")))

namespace mhacfg::kernels {

template <class B>
const BackendPluginInfo* plugin_info() {
  static const BackendPluginInfo info{kBackendAbiVersion, kBackendLayoutBytes, MHACFG_VERSION,
                                      []() -> Backend* { return new B(); }};
  return &info;
}

}  // namespace mhacfg::kernels

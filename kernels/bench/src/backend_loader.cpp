// load_backend: finds a backend plugin, opens it with dlopen and checks that it was built with this
// mhacfg. Plugins stay loaded until the process exits: a backend's runtime (CUDA's) registers exit
// handlers of its own, and the few commands that measure load at most two.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/backend.hpp"

namespace mhacfg::kernels {

namespace {

// The folder of the running program, from /proc/self/exe; "" when it cannot be read.
std::string executable_dir() {
  std::string path(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= path.size()) return {};
  path.resize(static_cast<std::size_t>(n));
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

Backend* open_plugin(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    throw RuntimeFailure("cannot load backend plugin " + escaped(path) + ": " + escaped(why ? why : "dlopen failed"));
  }
  const auto entry = reinterpret_cast<BackendEntry>(::dlsym(handle, kBackendEntrySymbol));
  if (!entry) {
    ::dlclose(handle);
    throw RuntimeFailure("cannot load backend plugin " + escaped(path) + ": it exports no " + kBackendEntrySymbol);
  }
  const BackendPluginInfo* info = entry();
  const std::string version = info->mhacfg_version ? info->mhacfg_version : "";
  if (info->abi_version != kBackendAbiVersion || info->layout_bytes != kBackendLayoutBytes || version != MHACFG_VERSION) {
    const std::string theirs = "mhacfg " + escaped(version) + " (backend ABI " + std::to_string(info->abi_version) +
                               ", " + std::to_string(info->layout_bytes) + " layout bytes)";
    ::dlclose(handle);
    throw RuntimeFailure("cannot load backend plugin " + escaped(path) + ": it was built for " + theirs +
                         ", this is mhacfg " MHACFG_VERSION " (backend ABI " + std::to_string(kBackendAbiVersion) +
                         ", " + std::to_string(kBackendLayoutBytes) + " layout bytes); rebuild or reinstall it");
  }
  return info->create();
}

}  // namespace

std::string backend_file_name(const std::string& name) { return "libmhacfg_backend_" + name + ".so"; }

bool backend_was_built(const std::string& name) {
  const std::string built = "," MHACFG_BUILT_BACKENDS ",";  // e.g. ",cpu,cuda,"
  return built.find("," + name + ",") != std::string::npos;
}

std::vector<std::string> backend_search_dirs() {
  // The override is the only folder when set, so a test (or a user) knows which plugin it gets.
  if (const char* dir = std::getenv("MHACFG_BACKEND_DIR"); dir && *dir) return {dir};
  std::vector<std::string> dirs;
  if (const std::string exe = executable_dir(); !exe.empty()) {
    dirs.push_back(exe);
    dirs.push_back(exe + "/../" MHACFG_INSTALL_LIBDIR "/mhacfg");  // an installed tree moved elsewhere
  }
  dirs.push_back(MHACFG_INSTALL_FULL_LIBDIR "/mhacfg");
  return dirs;
}

Backend* load_backend(const std::string& name) {
  static std::mutex mutex;
  // Never destroyed (see the file header), and still reachable at exit for leak checkers.
  static auto& loaded = *new std::map<std::string, Backend*>();
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = loaded.find(name); it != loaded.end()) return it->second;
  for (const std::string& dir : backend_search_dirs()) {
    const std::string path = dir + "/" + backend_file_name(name);
    if (::access(path.c_str(), F_OK) != 0) continue;
    Backend* b = open_plugin(path);
    loaded[name] = b;
    return b;
  }
  return nullptr;
}

}  // namespace mhacfg::kernels

// The one Catch2 main shared by every test executable. The tests run the CLI in-process from their
// own folders, so the backend plugins (built next to build/mhacfg) are named with MHACFG_BACKEND_DIR
// unless the caller set it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char* argv[]) {
  ::setenv("MHACFG_BACKEND_DIR", MHACFG_PLUGIN_DIR, 0);
  return Catch::Session().run(argc, argv);
}

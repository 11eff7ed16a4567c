#include "mhacfg/configurator/commands.hpp"
#include "mhacfg/costmodel/errors.hpp"
namespace mhacfg {
int cmd_compare(const Args&, std::ostream&, std::ostream&) { throw RuntimeFailure("compare: not built yet"); }
}

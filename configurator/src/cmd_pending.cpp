#include "mhacfg/configurator/commands.hpp"
#include "mhacfg/costmodel/errors.hpp"
namespace mhacfg {
int cmd_compare(const Args&, std::ostream&, std::ostream&) { throw RuntimeFailure("compare: not built yet"); }
int cmd_calibrate(const Args&, std::ostream&, std::ostream&) { throw RuntimeFailure("calibrate: not built yet"); }
int cmd_bench(const Args&, std::ostream&, std::ostream&) { throw RuntimeFailure("bench: not built yet"); }
int cmd_predict(const Args&, std::ostream&, std::ostream&) { throw RuntimeFailure("predict: not built yet"); }
int cmd_validate(const Args&, std::ostream&, std::ostream&) { throw RuntimeFailure("validate: not built yet"); }
}

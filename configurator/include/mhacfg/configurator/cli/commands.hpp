// The subcommands. Each takes the arguments after its name and writes its result to `out`.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace mhacfg {

using Args = std::vector<std::string>;

int cmd_analyze(const Args& args, std::ostream& out, std::ostream& err);
int cmd_recommend(const Args& args, std::ostream& out, std::ostream& err);
int cmd_compare(const Args& args, std::ostream& out, std::ostream& err);
int cmd_profiles(const Args& args, std::ostream& out, std::ostream& err);
int cmd_models(const Args& args, std::ostream& out, std::ostream& err);
int cmd_calibrate(const Args& args, std::ostream& out, std::ostream& err);
int cmd_bench(const Args& args, std::ostream& out, std::ostream& err);
int cmd_predict(const Args& args, std::ostream& out, std::ostream& err);
int cmd_validate(const Args& args, std::ostream& out, std::ostream& err);

std::string tool_version();

}  // namespace mhacfg

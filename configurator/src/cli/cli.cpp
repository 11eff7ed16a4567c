#include "mhacfg/configurator/cli/cli.hpp"

#include <functional>
#include <new>
#include <ostream>

#include "mhacfg/configurator/cli/commands.hpp"
#include "mhacfg/configurator/common/suggest.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {

struct Command {
  const char* name;
  const char* summary;
  std::function<int(const Args&, std::ostream&, std::ostream&)> run;
};

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"recommend", "choose query heads, KV heads, head_dim and projection for a budget and a target", cmd_recommend},
      {"analyze", "exact parameter, KV-cache, FLOP and byte counts of one model", cmd_analyze},
      {"compare", "two or more models side by side with deltas", cmd_compare},
      {"profiles", "list device profiles, or show one", cmd_profiles},
      {"models", "list the model presets --model reads, with their shapes and sources", cmd_models},
      {"calibrate", "fit a device profile from kernel measurements (--device cpu|cuda, or --from FILE)", cmd_calibrate},
      {"bench", "measure records with the project's kernels", cmd_bench},
      {"predict", "add predicted_ms to measurement records", cmd_predict},
      {"validate", "prediction error of a profile against measured records", cmd_validate},
  };
  return table;
}

void usage(std::ostream& out) {
  out << "mhacfg " << tool_version() << ": attention design configurator\n\n"
      << "usage: mhacfg <command> [options]   (mhacfg <command> --help for its options)\n\ncommands:\n";
  for (const auto& c : commands()) out << "  " << c.name << std::string(12 - std::string(c.name).size(), ' ') << c.summary << "\n";
  out << "\nexit codes: 0 ok, 1 no feasible configuration, 2 invalid input, 3 runtime or device failure\n";
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      usage(args.empty() ? err : out);  // no command is an error: its usage goes with the errors
      return args.empty() ? kExitInvalidInput : kExitOk;
    }
    if (args[0] == "--version") {
      out << "mhacfg " << tool_version() << "\n";
      return kExitOk;
    }
    for (const auto& c : commands())
      if (args[0] == c.name) return c.run(Args(args.begin() + 1, args.end()), out, err);
    std::vector<std::string> names;
    for (const auto& c : commands()) names.emplace_back(c.name);
    throw InputError("command", args[0], "unknown command" + suggestion_suffix(args[0], names));
  } catch (const OverflowError& e) {
    // Name the sizes the user gave, which together made the count too large.
    std::string given;
    for (std::size_t i = 1; i < args.size(); ++i)
      for (const std::string flag : {"--params", "--d-model", "--layers", "--vocab", "--batch", "--seq", "--context", "--prompt-len"}) {
        std::string value;
        if (args[i] == flag && i + 1 < args.size()) value = args[i + 1];
        else if (args[i].rfind(flag + "=", 0) == 0) value = args[i].substr(flag.size() + 1);
        else continue;
        given += (given.empty() ? "" : ", ") + flag + " " + shown_value(value);
      }
    err << "mhacfg: error: " << e.what() << (given.empty() ? "" : " (" + given + ")") << "\n";
    return kExitInvalidInput;
  } catch (const InputError& e) {
    err << "mhacfg: error: " << e.what() << "\n";
    return kExitInvalidInput;
  } catch (const InfeasibleError& e) {
    err << "mhacfg: infeasible: " << e.what() << "\n";
    return kExitInfeasible;
  } catch (const RuntimeFailure& e) {
    err << "mhacfg: runtime failure: " << e.what() << "\n";
    return kExitRuntime;
  } catch (const std::bad_alloc&) {
    err << "mhacfg: runtime failure: out of memory\n";
    return kExitRuntime;
  } catch (const std::exception& e) {
    err << "mhacfg: internal error: " << e.what() << "\n";
    return kExitRuntime;
  }
}

}  // namespace mhacfg

// The commands' flag values and what they mean, without a command line: the CLI fills FlagValues from
// its arguments (cli_options.hpp: ParsedArgs), the Python module from keyword arguments, and both read
// them through the functions here, so a flag's parsing, default and error are stated once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/configurator/inputs/model_input.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/serving.hpp"

namespace mhacfg {

std::int64_t parse_int(const std::string& flag, const std::string& text, bool positive = true);
// A count with an optional suffix: 125M, 7B, 1.5e9, 70b, 1.2T.
std::int64_t parse_count(const std::string& flag, const std::string& text);
// What k and m mean after a number. Token lengths (--context, --prompt-len, --sliding-window,
// --attention-chunk, --index-topk) count in powers of 1024, as model cards write contexts: a "128k"
// context is max_position_embeddings 131072. Counts of sequences (--batch) count in powers of 1000.
enum class SizeUnits { tokens, sequences };
// An integer, or a number with k or m (either case) that scales to a whole one: "32k", "1.5k", "1M".
// Junk, a sign other than "-0", a fraction that is not whole and overflow are InputErrors naming `flag`.
std::int64_t parse_size(const std::string& flag, const std::string& text, SizeUnits units, bool positive = true);
double parse_double(const std::string& flag, const std::string& text, double min, double max);
bool parse_bool(const std::string& flag, const std::string& text);

// Flag values by name (without "--"), as text: every error names the flag and the value. A switch
// (--roofline) is present with no value, or, given in-process, with "true" or "false".
class FlagValues {
 public:
  void set(const std::string& name, std::vector<std::string> values) { values_[name] = std::move(values); }
  void set(const std::string& name, const std::string& value) { set(name, std::vector<std::string>{value}); }
  bool has(const std::string& name) const;
  std::string str(const std::string& name) const;
  std::optional<std::string> opt_str(const std::string& name) const;
  std::optional<std::int64_t> opt_int(const std::string& name, bool positive = true) const;
  // A token length or a count of sequences, with its suffix (parse_size).
  std::optional<std::int64_t> opt_tokens(const std::string& name, bool positive = true) const;
  std::optional<std::int64_t> opt_sequences(const std::string& name) const;
  std::vector<std::string> list(const std::string& name) const;  // repeated or positional values
  bool on(const std::string& name) const;                        // a switch given (and not "false")

  // The names given that no reader asked about: for in-process callers, whose names no parser checks,
  // an unknown name (InputError with "did you mean" among the names asked about).
  void check_all_read(const std::string& command) const;

  // config.json content given in-process (the Python module's dict), read where --hf-config is.
  nlohmann::json config;

 private:
  std::map<std::string, std::vector<std::string>> values_;
  mutable std::set<std::string> asked_;
};

ModelFlags read_model_flags(const FlagValues& a);
// --tp, --kv-dtype, --weight-dtype, --state-dtype and the rest of the deployment.
Workload read_deployment(const FlagValues& a, Workload w);
// --batch, --prompt-len and --context, then the deployment flags.
Workload read_workload(const FlagValues& a, Workload defaults);
// --engine: the serving engine whose costs beyond the kernels the times include (kDefaultEngine).
EngineModel read_engine(const FlagValues& a);
// The profile named by `flag` (a value of `a`, or `fallback` when absent), as --roofline asks.
Profile read_profile_flag(const FlagValues& a, const std::string& flag, const std::string& fallback);
// --memory-fraction: the share of device memory that holds the weights and the KV cache.
double read_memory_fraction(const FlagValues& a, double fraction);
// --set KEY=VALUE (serving records) as a JSON object: digits become integers, true/false booleans,
// the rest strings.
nlohmann::json read_serving_defaults(const FlagValues& a);
// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_commas(const std::string& text);

}  // namespace mhacfg

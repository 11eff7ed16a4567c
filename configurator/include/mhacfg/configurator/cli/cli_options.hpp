// Option parsing shared by the subcommands: strict number parsing with one-line errors naming the
// flag, the model/workload flag groups, and Boost.Program_options plumbing.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include "mhacfg/configurator/inputs/model_input.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/configurator/report/report.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/serving.hpp"

namespace mhacfg {

namespace po = boost::program_options;

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
// What --help says after a token length's default: "; k = 1024, m = 1048576: ...".
std::string tokens_help();
double parse_double(const std::string& flag, const std::string& text, double min, double max);
bool parse_bool(const std::string& flag, const std::string& text);

// Flags are declared as strings and parsed here, so every error names the flag and the value.
class ParsedArgs {
 public:
  ParsedArgs(const std::string& command, const po::options_description& desc, const std::vector<std::string>& args,
             const po::positional_options_description* positional = nullptr);
  bool has(const std::string& name) const { return vm_.count(name) > 0; }
  std::string str(const std::string& name) const;
  std::optional<std::string> opt_str(const std::string& name) const;
  std::optional<std::int64_t> opt_int(const std::string& name, bool positive = true) const;
  // A token length or a count of sequences, with its suffix (parse_size).
  std::optional<std::int64_t> opt_tokens(const std::string& name, bool positive = true) const;
  std::optional<std::int64_t> opt_sequences(const std::string& name) const;
  std::vector<std::string> list(const std::string& name) const;  // repeated or positional values

 private:
  po::variables_map vm_;
};

void add_model_options(po::options_description& d);
ModelFlags read_model_flags(const ParsedArgs& a);

// The deployment flags every command shares (--tp, --kv-dtype, --weight-dtype, --state-dtype), declared
// and read in one place so their names, defaults and errors agree.
void add_deployment_options(po::options_description& d, const Workload& defaults);
Workload read_deployment(const ParsedArgs& a, Workload w);

// --batch, --prompt-len and --context, then the deployment flags.
void add_workload_options(po::options_description& d, const Workload& defaults);
Workload read_workload(const ParsedArgs& a, Workload defaults);

void add_format_option(po::options_description& d, const std::vector<Format>& allowed);
// When `args` asks for help (--help or -h), writes the usage and options `d` to `out` and returns true.
bool print_help(const po::options_description& d, const std::vector<std::string>& args, std::ostream& out);
Format read_format(const ParsedArgs& a, const std::vector<Format>& allowed);
// A flag and the path it names.
using FlagPath = std::pair<std::string, std::string>;
// Throws InputError when an output names the same file as an input or as another output (compared as
// files: links and ./ spellings of one file are the same): writing it would lose the other.
void check_distinct_files(const std::vector<FlagPath>& inputs, const std::vector<FlagPath>& outputs);

// --out-dir: with --format markdown, the folder for report.md and its plots.
void add_out_dir_option(po::options_description& d);
// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> split_commas(const std::string& text);
// The current time as ISO 8601 UTC ("2026-12-02T07:00:00Z"), for provenance.
std::string utc_now();

// --engine: the serving engine whose costs beyond the kernels the times include (kDefaultEngine).
void add_engine_option(po::options_description& d);
EngineModel read_engine(const ParsedArgs& a);

// --roofline: predict with the profile's bare datasheet roofline instead of its fitted or
// transferred models.
void add_roofline_option(po::options_description& d);
// The profile named by `flag` (a value of `a`, or `fallback` when absent), as --roofline asks.
Profile read_profile_flag(const ParsedArgs& a, const std::string& flag, const std::string& fallback);
// --memory-fraction: the share of device memory that holds the weights and the KV cache.
void add_memory_fraction_option(po::options_description& d);
double read_memory_fraction(const ParsedArgs& a, double fraction);

// Serving records (validate, predict, calibrate --from): --engine NAME|FILE for every record, --profile
// is the command's own, and --set KEY=VALUE (repeatable) fills a field the records lack (SGLang's
// output names no model or GPU; vLLM's names no GPU unless --metadata did).
void add_serving_record_options(po::options_description& d);
// --set's fields as a JSON object: digits become integers, true/false booleans, the rest strings.
nlohmann::json read_serving_defaults(const ParsedArgs& a);

// --out-dir's folder, "" when not given; an empty value given is an InputError (it was ignored).
std::string read_out_dir(const ParsedArgs& a);

}  // namespace mhacfg

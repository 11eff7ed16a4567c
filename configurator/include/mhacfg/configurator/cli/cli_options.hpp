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

#include "mhacfg/configurator/inputs/flags.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/configurator/report/report.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/serving.hpp"

namespace mhacfg {

namespace po = boost::program_options;

// What --help says after a token length's default: "; k = 1024, m = 1048576: ...".
std::string tokens_help();

// Flags are declared as strings and parsed here; their values are read through FlagValues
// (inputs/flags.hpp), so every error names the flag and the value.
class ParsedArgs : public FlagValues {
 public:
  ParsedArgs(const std::string& command, const po::options_description& desc, const std::vector<std::string>& args,
             const po::positional_options_description* positional = nullptr);
};

void add_model_options(po::options_description& d);

// The deployment flags every command shares (--tp, --kv-dtype, --weight-dtype, --state-dtype), declared
// and read in one place so their names, defaults and errors agree.
void add_deployment_options(po::options_description& d, const Workload& defaults);

// --batch, --prompt-len and --context, then the deployment flags.
void add_workload_options(po::options_description& d, const Workload& defaults);

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
// The current time as ISO 8601 UTC ("2026-12-02T07:00:00Z"), for provenance.
std::string utc_now();

// --engine: the serving engine whose costs beyond the kernels the times include (kDefaultEngine).
void add_engine_option(po::options_description& d);

// --roofline: predict with the profile's bare datasheet roofline instead of its fitted or
// transferred models.
void add_roofline_option(po::options_description& d);
// --memory-fraction: the share of device memory that holds the weights and the KV cache.
void add_memory_fraction_option(po::options_description& d);

// Serving records (validate, predict, calibrate --from): --engine NAME|FILE for every record, --profile
// is the command's own, and --set KEY=VALUE (repeatable) fills a field the records lack (SGLang's
// output names no model or GPU; vLLM's names no GPU unless --metadata did).
void add_serving_record_options(po::options_description& d);

// --out-dir's folder, "" when not given; an empty value given is an InputError (it was ignored).
std::string read_out_dir(const ParsedArgs& a);

}  // namespace mhacfg

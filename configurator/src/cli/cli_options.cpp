#include "mhacfg/configurator/cli/cli_options.hpp"

#include "mhacfg/configurator/inputs/engines.hpp"

#include <algorithm>
#include <ctime>
#include <sstream>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "mhacfg/configurator/common/suggest.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

// Longer than any option mhacfg has: an unknown name past it is shown cut (a 131,000-character
// argument would otherwise be echoed whole, and compared with every option name).
constexpr std::size_t kLongestOptionName = 200;

ParsedArgs::ParsedArgs(const std::string& command, const po::options_description& desc,
                       const std::vector<std::string>& args, const po::positional_options_description* positional) {
  // No prefix guessing: --batch never silently means --batch-size.
  const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  try {
    po::command_line_parser parser(args);
    parser.options(desc).style(style);
    // No positional description: an empty one, so a stray argument is an error rather than dropped.
    const po::positional_options_description none;
    parser.positional(positional ? *positional : none);
    po::variables_map vm;
    po::store(parser.run(), vm);
    po::notify(vm);
    // Every option is declared as text, a list of texts or a switch (no value).
    for (const auto& [name, v] : vm) {
      const po::option_description* o = desc.find_nothrow(name, false);
      if (o && o->semantic()->max_tokens() == 0) set(name, std::vector<std::string>{});
      else if (const auto* text = boost::any_cast<std::string>(&v.value())) set(name, *text);
      else if (const auto* texts = boost::any_cast<std::vector<std::string>>(&v.value())) set(name, *texts);
      else set(name, std::vector<std::string>{});
    }
  } catch (const po::unknown_option& e) {
    std::vector<std::string> names;
    for (const auto& o : desc.options()) names.push_back("--" + o->long_name());
    const std::string name = e.get_option_name();
    // A name longer than any option is shown cut, with its length, and gets no suggestion.
    if (name.size() > kLongestOptionName) throw InputError("option", name, "unknown option for " + command);
    throw InputError(name, "(unknown)", "unknown option for " + command + suggestion_suffix(name, names));
  } catch (const po::multiple_occurrences& e) {
    throw InputError(e.get_option_name(), "(repeated)", "given more than once");
  } catch (const po::invalid_command_line_syntax& e) {
    throw InputError(e.get_option_name(), "(missing)", "needs a value");
  } catch (const po::too_many_positional_options_error&) {
    throw InputError(command, "(extra argument)", "takes no positional arguments; see mhacfg " + command + " --help");
  } catch (const po::error& e) {
    throw InputError(command, "(arguments)", e.what());
  }
}

std::string tokens_help() { return "; k = 1024, m = 1048576: 32k = 32768, as model cards write contexts"; }

void add_model_options(po::options_description& d) {
  d.add_options()
      ("hf-config", po::value<std::string>(), "Hugging Face config.json file")
      ("model", po::value<std::string>(), "shipped model preset (mhacfg models lists them)")
      ("d-model", po::value<std::string>(), "hidden size")
      ("layers", po::value<std::string>(), "number of layers")
      ("heads", po::value<std::string>(), "query heads")
      ("kv-heads", po::value<std::string>(), "KV heads (divides --heads)")
      ("head-dim", po::value<std::string>(), "Q/K width per head (MLA: nope + rope)")
      ("v-head-dim", po::value<std::string>(), "V width per head (default: --head-dim)")
      ("variant", po::value<std::string>(), "mha, gqa, mqa or mla")
      ("kv-lora-rank", po::value<std::string>(), "MLA latent width")
      ("q-lora-rank", po::value<std::string>(), "MLA query compression (0: none)")
      ("rope-head-dim", po::value<std::string>(), "MLA decoupled RoPE key width (default 64)")
      ("ffn-dim", po::value<std::string>(), "FFN width (default: Llama rule)")
      ("ffn", po::value<std::string>(), "gated or plain")
      ("vocab", po::value<std::string>(), "vocabulary size (default 32000 for flag-only models)")
      ("tie-embeddings", po::value<std::string>()->implicit_value("true"), "tie the LM head to the embedding")
      ("sliding-window", po::value<std::string>(), ("window of W tokens on every layer (0: none" + tokens_help() + ")").c_str())
      ("attention-chunk", po::value<std::string>(), ("chunked attention (Llama 4): chunks of C tokens on every layer (0: none" + tokens_help() + ")").c_str())
      ("global-every", po::value<std::string>(), "every N-th layer attends to everything (Gemma 3: 6, Llama 4: 4)")
      ("index-topk", po::value<std::string>(), "sparse attention (DeepSeek-V3.2): each query attends to an indexer's top K keys (0: dense; 2k = 2048)")
      ("index-heads", po::value<std::string>(), "the indexer's heads (default: the model's, else 64)")
      ("index-head-dim", po::value<std::string>(), "the indexer's head width (default: the model's, else 128)");
}

void add_deployment_options(po::options_description& d, const Workload& w) {
  d.add_options()
      ("tp", po::value<std::string>(), ("tensor-parallel degree (default " + std::to_string(w.tp) + ")").c_str())
      ("kv-dtype", po::value<std::string>(), ("KV-cache dtype: " + dtype_names() + " (default " + std::string(to_string(w.kv_dtype)) + ")").c_str())
      ("weight-dtype", po::value<std::string>(), ("weights dtype, of every component the two below leave (default " + std::string(to_string(w.weight_dtype)) + ")").c_str())
      ("attention-weight-dtype", po::value<std::string>(), "attention (and linear-attention) projection weights' dtype (default: --weight-dtype)")
      ("ffn-weight-dtype", po::value<std::string>(), "FFN and expert weights' dtype, e.g. nvfp4 beside --attention-weight-dtype bf16 (default: --weight-dtype)")
      ("state-dtype", po::value<std::string>(), ("linear-attention state dtype, of a hybrid model (default " + std::string(to_string(w.state_dtype)) + ")").c_str())
      ("ep", po::value<std::string>(), "expert-parallel degree: routed experts split whole over this many GPUs (default 1: split by --tp)")
      ("pp", po::value<std::string>(), "pipeline stages, the layers split evenly (default 1)")
      ("dp-attention", po::value<std::string>()->implicit_value("true"), "attention data parallel over the --tp GPUs: each runs every head for its own requests (SGLang --enable-dp-attention)")
      ("nodes", po::value<std::string>(), "nodes the GPUs span (default: as few as the profile's GPUs per node allow)");
}

void add_workload_options(po::options_description& d, const Workload& w) {
  d.add_options()
      ("batch", po::value<std::string>(), ("concurrent sequences (default " + std::to_string(w.batch) + "; k = 1000: 1k = 1000)").c_str())
      ("prompt-len", po::value<std::string>(), ("prefill tokens per sequence (default " + std::to_string(w.prompt_len) + tokens_help() + ")").c_str())
      ("context", po::value<std::string>(), ("KV length at decode, in tokens (default " + std::to_string(w.context) + tokens_help() + ")").c_str());
  add_deployment_options(d, w);
}

namespace {

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec) && !ec;
  const fs::path x = fs::weakly_canonical(fs::absolute(a, ec), ec), y = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !ec && x == y;
}

}  // namespace

void check_distinct_files(const std::vector<FlagPath>& inputs, const std::vector<FlagPath>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [flag, path] = outputs[i];
    for (const auto& [in_flag, in_path] : inputs)
      if (same_file(path, in_path))
        throw InputError(flag, path, "is the file " + in_flag + " reads (" + in_path + "): writing it would lose that input");
    for (std::size_t j = 0; j < i; ++j)
      if (same_file(path, outputs[j].second))
        throw InputError(flag, path, "is also " + outputs[j].first + "'s file: one output would replace the other");
  }
}

void add_out_dir_option(po::options_description& d) {
  d.add_options()("out-dir", po::value<std::string>(), "with --format markdown: write report.md and the plots (SVG) here");
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void add_engine_option(po::options_description& d) {
  d.add_options()("engine", po::value<std::string>(),
                  (std::string("serving engine the times describe: vllm, sglang, trtllm (their costs beyond the kernels), "
                               "none (kernels only) or an engine file from calibrate (default ") +
                   kDefaultEngine + ")").c_str());
}

void add_roofline_option(po::options_description& d) {
  d.add_options()("roofline", "predict with the bare datasheet roofline (no fitted or transferred kernel efficiency)");
}

void add_memory_fraction_option(po::options_description& d) {
  d.add_options()("memory-fraction", po::value<std::string>(),
                  ("share of device memory for weights + KV (default " + fmt_fixed(defaults::memory_fraction, 1) + ")").c_str());
}

std::string read_out_dir(const ParsedArgs& a) {
  const std::string dir = a.opt_str("out-dir").value_or("");
  if (a.has("out-dir") && dir.empty()) throw InputError("--out-dir", "(empty)", "needs a folder");
  return dir;
}

bool print_help(const po::options_description& d, const std::vector<std::string>& args, std::ostream& out) {
  const bool asked = std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (!asked) return false;
  out << d << "\n";
  return true;
}

void add_format_option(po::options_description& d, const std::vector<Format>& allowed) {
  std::string list;
  for (Format f : allowed) list += (list.empty() ? "" : "|") + std::string(to_string(f));
  d.add_options()("format", po::value<std::string>(), (list + " (default table)").c_str());
}

Format read_format(const ParsedArgs& a, const std::vector<Format>& allowed) {
  return a.has("format") ? parse_format(a.str("format"), allowed) : Format::table;
}

void add_serving_record_options(po::options_description& d) {
  d.add_options()("engine", po::value<std::string>(), "serving records: engine preset (vllm, sglang, trtllm, none) or engine JSON for every record (default: each record's engine)")
      ("set", po::value<std::vector<std::string>>()->composing(), "serving records: KEY=VALUE fills a field the records lack, e.g. --set gpu=H200 --set tp=2 (repeat it)")
      ("records-of", po::value<std::string>(), "serving records: only those measured with this engine (vllm, sglang, trtllm)");
}

}  // namespace mhacfg

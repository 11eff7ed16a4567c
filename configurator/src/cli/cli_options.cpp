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

std::int64_t parse_int(const std::string& flag, const std::string& text, bool positive) {
  std::size_t i = 0;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) i = 1;
  if (i == text.size()) throw InputError(flag, "\"" + text + "\"", "must be an integer");
  for (std::size_t j = i; j < text.size(); ++j)
    if (!std::isdigit(static_cast<unsigned char>(text[j]))) throw InputError(flag, text, "must be an integer");
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) throw InputError(flag, text, "out of range");
  if (positive && v <= 0) throw InputError(flag, text, "must be positive");
  if (!positive && v < 0) throw InputError(flag, text, "must not be negative");
  return v;
}

std::int64_t parse_count(const std::string& flag, const std::string& text) {
  if (text.empty()) throw InputError(flag, "\"\"", "must be a count such as 125M, 7B or 1.5e9");
  double scale = 1;
  std::string body = text;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': scale = 1e3; break;
    case 'M': scale = 1e6; break;
    case 'B': case 'G': scale = 1e9; break;
    case 'T': scale = 1e12; break;
    default: break;
  }
  if (scale != 1) body.pop_back();
  // Decimal only: strtod alone would also take leading spaces and hexadecimal ("0x10" = 16).
  const bool decimal = !body.empty() && (std::isdigit(static_cast<unsigned char>(body[0])) || body[0] == '.') &&
                       body.find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (!decimal) throw InputError(flag, text, "must be a count such as 125M, 7B or 1.5e9");
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(body.c_str(), &end);
  if (body.empty() || end != body.c_str() + body.size() || errno == ERANGE || !std::isfinite(v))
    throw InputError(flag, text, "must be a count such as 125M, 7B or 1.5e9");
  const double n = v * scale;
  if (n < 1) throw InputError(flag, text, "must be positive");
  if (n > 9.0e18) throw InputError(flag, text, "out of range");
  return static_cast<std::int64_t>(std::llround(n));
}

namespace {

// The scale of k and m: binary for token lengths, decimal for counts of sequences.
std::int64_t suffix_unit(SizeUnits units) { return units == SizeUnits::tokens ? 1024 : 1000; }

std::string size_example(SizeUnits units) {
  return units == SizeUnits::tokens ? "an integer or a token length such as 32k (32768) or 1M (1048576)"
                                    : "an integer or a count such as 1k (1000)";
}

}  // namespace

std::int64_t parse_size(const std::string& flag, const std::string& text, SizeUnits units, bool positive) {
  std::size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) i = 1;
  std::string body = text.substr(i);
  std::int64_t scale = 1;
  if (!body.empty()) {
    const char last = static_cast<char>(std::tolower(static_cast<unsigned char>(body.back())));
    if (last == 'k') scale = suffix_unit(units);
    if (last == 'm') scale = suffix_unit(units) * suffix_unit(units);
    if (scale != 1) body.pop_back();
  }
  // Digits, then optionally a point and digits ("1.5k"); nothing else (no blanks, signs or exponents).
  const std::size_t point = body.find('.');
  const std::string whole = body.substr(0, point), fraction = point == std::string::npos ? "" : body.substr(point + 1);
  auto digits = [](const std::string& s) { return s.find_first_not_of("0123456789") == std::string::npos; };
  if (whole.empty() || !digits(whole) || !digits(fraction) || (point != std::string::npos && fraction.empty()))
    throw InputError(flag, text.empty() ? "\"\"" : text, "must be " + size_example(units));
  if (negative && !(whole.find_first_not_of('0') == std::string::npos && fraction.find_first_not_of('0') == std::string::npos))
    throw InputError(flag, text, positive ? "must be positive" : "must not be negative");
  // Exact arithmetic: value = whole x scale + fraction x scale / 10^digits, which must be whole.
  constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
  if (whole.size() > 18 || fraction.size() > 9) throw InputError(flag, text, "out of range");
  const std::int64_t w = std::stoll(whole);
  if (w > kMost / scale) throw InputError(flag, text, "out of range");
  std::int64_t tenth = 1;
  for (std::size_t d = 0; d < fraction.size(); ++d) tenth *= 10;
  const std::int64_t f = fraction.empty() ? 0 : std::stoll(fraction);
  if ((f * scale) % tenth != 0) {
    const char* what = units == SizeUnits::tokens ? " number of tokens" : " number of sequences";
    throw InputError(flag, text, std::string("must be an integer") + (scale == 1 ? "" : what));
  }
  const std::int64_t v = w * scale + f * scale / tenth;
  if (v < 0) throw InputError(flag, text, "out of range");
  if (positive && v == 0) throw InputError(flag, text, "must be positive");
  return v;
}

double parse_double(const std::string& flag, const std::string& text, double min, double max) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
    throw InputError(flag, text, "must be a number");
  if (v < min || v > max)
    throw InputError(flag, text, "must be between " + fmt_fixed(min, 2) + " and " + fmt_fixed(max, 2));
  return v;
}

bool parse_bool(const std::string& flag, const std::string& text) {
  if (text == "true" || text == "1" || text == "yes") return true;
  if (text == "false" || text == "0" || text == "no") return false;
  throw InputError(flag, text, "must be true or false");
}

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
    po::store(parser.run(), vm_);
    po::notify(vm_);
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

std::string ParsedArgs::str(const std::string& name) const { return vm_[name].as<std::string>(); }

std::optional<std::string> ParsedArgs::opt_str(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return str(name);
}

std::optional<std::int64_t> ParsedArgs::opt_int(const std::string& name, bool positive) const {
  if (!has(name)) return std::nullopt;
  return parse_int("--" + name, str(name), positive);
}

std::optional<std::int64_t> ParsedArgs::opt_tokens(const std::string& name, bool positive) const {
  if (!has(name)) return std::nullopt;
  return parse_size("--" + name, str(name), SizeUnits::tokens, positive);
}

std::optional<std::int64_t> ParsedArgs::opt_sequences(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return parse_size("--" + name, str(name), SizeUnits::sequences, true);
}

std::vector<std::string> ParsedArgs::list(const std::string& name) const {
  if (!has(name)) return {};
  return vm_[name].as<std::vector<std::string>>();
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

ModelFlags read_model_flags(const ParsedArgs& a) {
  ModelFlags f;
  f.hf_config = a.opt_str("hf-config").value_or("");
  f.model = a.opt_str("model").value_or("");
  f.d_model = a.opt_int("d-model");
  f.layers = a.opt_int("layers");
  f.heads = a.opt_int("heads");
  f.kv_heads = a.opt_int("kv-heads");
  f.head_dim = a.opt_int("head-dim");
  f.v_head_dim = a.opt_int("v-head-dim");
  f.kv_lora_rank = a.opt_int("kv-lora-rank");
  f.q_lora_rank = a.opt_int("q-lora-rank", false);
  f.rope_head_dim = a.opt_int("rope-head-dim", false);
  f.ffn_dim = a.opt_int("ffn-dim");
  f.vocab = a.opt_int("vocab");
  f.sliding_window = a.opt_tokens("sliding-window", false);
  f.attention_chunk = a.opt_tokens("attention-chunk", false);
  f.global_every = a.opt_int("global-every");
  f.index_topk = a.opt_tokens("index-topk", false);
  f.index_heads = a.opt_int("index-heads");
  f.index_head_dim = a.opt_int("index-head-dim");
  f.variant = a.opt_str("variant");
  f.ffn = a.opt_str("ffn");
  if (a.has("tie-embeddings")) f.tie_embeddings = parse_bool("--tie-embeddings", a.str("tie-embeddings"));
  return f;
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

Workload read_deployment(const ParsedArgs& a, Workload w) {
  if (auto v = a.opt_int("tp")) w.tp = *v;
  if (auto v = a.opt_str("kv-dtype")) w.kv_dtype = parse_dtype(*v, "--kv-dtype");
  if (auto v = a.opt_str("weight-dtype")) w.weight_dtype = parse_dtype(*v, "--weight-dtype");
  if (auto v = a.opt_str("attention-weight-dtype")) w.attention_weight_dtype = parse_dtype(*v, "--attention-weight-dtype");
  if (auto v = a.opt_str("ffn-weight-dtype")) w.ffn_weight_dtype = parse_dtype(*v, "--ffn-weight-dtype");
  if (auto v = a.opt_str("state-dtype")) w.state_dtype = parse_dtype(*v, "--state-dtype");
  if (auto v = a.opt_int("ep")) w.ep = *v;
  if (auto v = a.opt_int("pp")) w.pp = *v;
  if (auto v = a.opt_str("dp-attention")) w.dp_attention = parse_bool("--dp-attention", *v);
  if (auto v = a.opt_int("nodes")) w.nodes = *v;
  return w;
}

void add_workload_options(po::options_description& d, const Workload& w) {
  d.add_options()
      ("batch", po::value<std::string>(), ("concurrent sequences (default " + std::to_string(w.batch) + "; k = 1000: 1k = 1000)").c_str())
      ("prompt-len", po::value<std::string>(), ("prefill tokens per sequence (default " + std::to_string(w.prompt_len) + tokens_help() + ")").c_str())
      ("context", po::value<std::string>(), ("KV length at decode, in tokens (default " + std::to_string(w.context) + tokens_help() + ")").c_str());
  add_deployment_options(d, w);
}

Workload read_workload(const ParsedArgs& a, Workload w) {
  if (auto v = a.opt_sequences("batch")) w.batch = *v;
  const auto prompt = a.opt_tokens("prompt-len");
  if (prompt) w.prompt_len = *prompt;
  if (auto v = a.opt_tokens("context")) w.context = *v;
  if (auto v = a.opt_int("tp")) w.tp = *v;
  // One sequence: its decode context holds its prompt. A default prompt shortens to a short context.
  if (w.prompt_len > w.context && !prompt) w.prompt_len = w.context;
  if (w.prompt_len > w.context)
    throw InputError("--prompt-len", std::to_string(w.prompt_len),
                     "must not exceed --context = " + std::to_string(w.context) +
                         (a.has("context") ? "" : " (the default)") + " (the decode context includes the prompt)");
  return read_deployment(a, w);
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

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
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

EngineModel read_engine(const ParsedArgs& a) { return load_engine(a.opt_str("engine").value_or(kDefaultEngine)); }
void add_roofline_option(po::options_description& d) {
  d.add_options()("roofline", "predict with the bare datasheet roofline (no fitted or transferred kernel efficiency)");
}

Profile read_profile_flag(const ParsedArgs& a, const std::string& flag, const std::string& fallback) {
  const std::string name = a.opt_str(flag).value_or(fallback);
  return load_profile(name, "--" + flag, a.has("roofline") ? ProfileBasis::roofline : ProfileBasis::as_shipped);
}

void add_memory_fraction_option(po::options_description& d) {
  d.add_options()("memory-fraction", po::value<std::string>(),
                  ("share of device memory for weights + KV (default " + fmt_fixed(defaults::memory_fraction, 1) + ")").c_str());
}

double read_memory_fraction(const ParsedArgs& a, double fraction) {
  if (auto v = a.opt_str("memory-fraction")) return parse_double("--memory-fraction", *v, 0.01, 1.0);
  return fraction;
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

nlohmann::json read_serving_defaults(const ParsedArgs& a) {
  nlohmann::json j = nlohmann::json::object();
  for (const std::string& kv : a.list("set")) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--set", kv, "must be KEY=VALUE");
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (!value.empty() && value.size() < 18 && value.find_first_not_of("0123456789") == std::string::npos) j[key] = std::stoll(value);
    else if (value == "true" || value == "false") j[key] = value == "true";
    else j[key] = value;
  }
  return j;
}

}  // namespace mhacfg

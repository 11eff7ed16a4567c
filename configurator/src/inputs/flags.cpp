#include "mhacfg/configurator/inputs/flags.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/configurator/common/suggest.hpp"
#include "mhacfg/configurator/inputs/engines.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

bool FlagValues::has(const std::string& name) const {
  asked_.insert(name);
  return values_.count(name) > 0;
}

std::string FlagValues::str(const std::string& name) const {
  // Several values given in-process (a Python list) are a comma list, as --variants takes them.
  const std::vector<std::string> v = list(name);
  if (v.empty()) throw InputError("--" + name, "(missing)", "needs a value");
  std::string text = v[0];
  for (std::size_t i = 1; i < v.size(); ++i) text += "," + v[i];
  return text;
}

std::optional<std::string> FlagValues::opt_str(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return str(name);
}

std::optional<std::int64_t> FlagValues::opt_int(const std::string& name, bool positive) const {
  if (!has(name)) return std::nullopt;
  return parse_int("--" + name, str(name), positive);
}

std::optional<std::int64_t> FlagValues::opt_tokens(const std::string& name, bool positive) const {
  if (!has(name)) return std::nullopt;
  return parse_size("--" + name, str(name), SizeUnits::tokens, positive);
}

std::optional<std::int64_t> FlagValues::opt_sequences(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return parse_size("--" + name, str(name), SizeUnits::sequences, true);
}

std::vector<std::string> FlagValues::list(const std::string& name) const {
  if (!has(name)) return {};
  return values_.at(name);
}

bool FlagValues::on(const std::string& name) const {
  if (!has(name)) return false;
  const std::vector<std::string>& v = values_.at(name);
  return v.empty() || parse_bool("--" + name, str(name));
}

void FlagValues::check_all_read(const std::string& command) const {
  std::vector<std::string> known;
  for (const std::string& name : asked_) known.push_back("--" + name);
  for (const auto& [name, values] : values_)
    if (!asked_.count(name))
      throw InputError("--" + name, values.empty() ? "(given)" : values.front(),
                       "unknown option for " + command + suggestion_suffix("--" + name, known));
}

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

ModelFlags read_model_flags(const FlagValues& a) {
  ModelFlags f;
  f.hf_config = a.opt_str("hf-config").value_or("");
  f.model = a.opt_str("model").value_or("");
  f.config = a.config;
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

Workload read_deployment(const FlagValues& a, Workload w) {
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

Workload read_workload(const FlagValues& a, Workload w) {
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

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

EngineModel read_engine(const FlagValues& a) { return load_engine(a.opt_str("engine").value_or(kDefaultEngine)); }


Profile read_profile_flag(const FlagValues& a, const std::string& flag, const std::string& fallback) {
  const std::string name = a.opt_str(flag).value_or(fallback);
  return load_profile(name, "--" + flag, a.on("roofline") ? ProfileBasis::roofline : ProfileBasis::as_shipped);
}

double read_memory_fraction(const FlagValues& a, double fraction) {
  if (auto v = a.opt_str("memory-fraction")) return parse_double("--memory-fraction", *v, 0.01, 1.0);
  return fraction;
}

nlohmann::json read_serving_defaults(const FlagValues& a) {
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

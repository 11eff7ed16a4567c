// The HF import's entry points, the model_type table and the helpers the families share (the families
// themselves are in hf_dense.cpp, hf_moe.cpp and hf_hybrid.cpp). Each family's keys and defaults follow
// its transformers Config class and modeling code: a key missing from config.json takes the class
// default, which differs between families (e.g. tie_word_embeddings: llama false, gemma true; head_dim:
// gemma 256, qwen3 128).
#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <optional>
#include <vector>

#include <sys/stat.h>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

#include "hf_config_families.hpp"

namespace mhacfg {

namespace hf {

std::string int_text(std::int64_t v) { return std::to_string(v); }

bool apply_layer_types(const JsonFields& f, ModelSpec& m, std::int64_t window,
                       std::optional<std::int64_t> chunk) {
  if (!f.has("layer_types")) return false;
  const auto& types = f.at("layer_types");
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.num_layers())
    throw InputError(f.name("layer_types"), json_value_text(types),
                     "must be a list of " + int_text(m.num_layers()) + " layer types");
  for (std::size_t i = 0; i < types.size(); ++i) {
    const auto& t = types[i];
    if (t == "full_attention") {
      m.layers[i].span = Span::full();
    } else if (t == "sliding_attention" && !chunk) {
      // No window set: full attention, as in transformers.
      m.layers[i].span = Span::window(std::max<std::int64_t>(window, 0));
    } else if (t == "chunked_attention" && chunk) {
      m.layers[i].span = Span::chunk(*chunk);
    } else {
      throw InputError(f.name("layer_types") + "[" + std::to_string(i) + "]", json_value_text(t),
                       std::string("unknown layer type (expected full_attention or ") +
                           (chunk ? "chunked_attention)" : "sliding_attention)"));
    }
  }
  return true;
}

std::int64_t int_or(const JsonFields& f, const char* key, std::int64_t fallback) {
  if (fallback > 0 && !f.present(key)) return fallback;
  return f.require_int(key);
}

std::int64_t layer_count(const JsonFields& f, const char* key, std::int64_t fallback) {
  return checked_layer_count(int_or(f, key, fallback), f.name(key));
}

void parse_llama_like(const JsonFields& f, ModelSpec& m, FamilyDefaults d) {
  m.d_model = int_or(f, "hidden_size", d.hidden);
  m.layers.assign(static_cast<std::size_t>(layer_count(f, "num_hidden_layers", d.layers)), LayerSpec{});
  AttentionSpec& a = m.attention;
  a.num_q_heads = int_or(f, "num_attention_heads", d.heads);
  const bool kv_missing = !f.present("num_key_value_heads");
  a.num_kv_heads = f.optional_int("num_key_value_heads").value_or(kv_missing && d.kv_heads > 0 ? d.kv_heads : a.num_q_heads);
  if (auto head_dim = f.optional_int("head_dim")) {
    a.head_dim = *head_dim;
  } else if (d.head_dim > 0) {
    a.head_dim = d.head_dim;
  } else {
    if (m.d_model % a.num_q_heads != 0)
      throw InputError(f.name("num_attention_heads"), int_text(a.num_q_heads),
                       "must divide hidden_size = " + int_text(m.d_model) + " when head_dim is not given");
    a.head_dim = m.d_model / a.num_q_heads;
  }
  a.v_head_dim = a.head_dim;
  m.vocab_size = int_or(f, "vocab_size", d.vocab);
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", d.tie);
  m.ffn.kind = FfnKind::gated;
  m.ffn.ffn_dim = int_or(f, "intermediate_size", d.ffn);
  m.norm = NormSpec{NormKind::rmsnorm, 2, true};
}

void set_variant_from_heads(ModelSpec& m) {
  m.attention.variant = variant_for_heads(m.attention.num_q_heads, m.attention.num_kv_heads);
}

void attention_bias(const JsonFields& f, ModelSpec& m, bool fallback) {
  AttentionSpec& a = m.attention;
  a.q_bias = a.k_bias = a.v_bias = a.o_bias = f.optional_bool("attention_bias", fallback);
}

std::int64_t window_key(const JsonFields& f, const char* key, std::int64_t family_default) {
  if (!f.present(key)) return family_default;
  return f.has(key) ? f.require_int(key) : 0;
}

void set_all_windows(ModelSpec& m, std::int64_t window) {
  for (auto& l : m.layers) l.span = Span::window(window);
}

std::int64_t experts_key(const JsonFields& f, const char* first, const char* second, std::int64_t fallback) {
  return int_or(f, f.present(first) || !f.present(second) ? first : second, fallback);
}

std::vector<bool> layer_set(const JsonFields& f, const char* key, const ModelSpec& m) {
  const auto& list = f.at(key);
  if (!list.is_array()) throw InputError(f.name(key), json_value_text(list), "must be a list of layer indices");
  std::vector<bool> in(m.layers.size(), false);
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string field = f.name(key) + "[" + std::to_string(k) + "]";
    const std::int64_t i = json_to_int(list[k], field, false);
    if (i >= m.num_layers())
      throw InputError(field, json_value_text(list[k]), "must be a layer index below " + int_text(m.num_layers()));
    in[static_cast<std::size_t>(i)] = true;
  }
  return in;
}

void windows_but_every(const JsonFields& f, ModelSpec& m, std::int64_t default_window, std::int64_t default_pattern) {
  const std::int64_t window = window_key(f, "sliding_window", default_window);
  if (apply_layer_types(f, m, window)) return;
  const std::int64_t pattern = int_or(f, "sliding_window_pattern", default_pattern);
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if (static_cast<std::int64_t>(i + 1) % pattern != 0) m.layers[i].span = Span::window(window);
}

JsonFields sub_config(const JsonFields& f, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  return JsonFields(f.has(key) ? f.at(key) : empty, f.name(key));
}

void vit_sizes(const JsonFields& v, VisionSpec& vs, const VisionSpec& d) {
  vs.kind = d.kind;
  vs.hidden = int_or(v, "hidden_size", d.hidden);
  vs.intermediate = int_or(v, "intermediate_size", d.intermediate);
  vs.layers = int_or(v, "num_hidden_layers", d.layers);
  vs.channels = int_or(v, "num_channels", d.channels);
  vs.image_size = int_or(v, "image_size", d.image_size);
  vs.patch_size = int_or(v, "patch_size", d.patch_size);
}

void head_dim_from_hidden(const JsonFields& f, ModelSpec& m) {
  AttentionSpec& a = m.attention;
  if (m.d_model % a.num_q_heads != 0)
    throw InputError(f.name("num_attention_heads"), int_text(a.num_q_heads), "must divide hidden_size = " + int_text(m.d_model));
  a.head_dim = a.v_head_dim = m.d_model / a.num_q_heads;
}

}  // namespace hf

namespace {

using namespace hf;

using Parser = std::function<void(const JsonFields&, ModelSpec&)>;

// In the order docs/models.md lists the families; RefinedWeb* are Falcon's pre-transformers names.
const std::vector<std::pair<std::string, Parser>>& parsers() {
  static const std::vector<std::pair<std::string, Parser>> table = {
      {"gpt2", parse_gpt2},
      {"llama", parse_llama},
      {"mistral", parse_mistral},
      {"mixtral", parse_mixtral},
      {"qwen2", parse_qwen2},
      {"qwen3", parse_qwen3},
      {"qwen2_moe", parse_qwen2_moe},
      {"qwen3_moe", parse_qwen3_moe},
      {"gemma", parse_gemma},
      {"gemma2", parse_gemma2},
      {"gemma3_text", parse_gemma3_text},
      {"gemma3", parse_gemma3},
      {"phi3", parse_phi3},
      {"gpt_oss", parse_gpt_oss},
      {"falcon", parse_falcon},
      {"RefinedWeb", parse_falcon},
      {"RefinedWebModel", parse_falcon},
      {"deepseek_v2", [](const JsonFields& f, ModelSpec& m) { parse_deepseek(f, m, false); }},
      {"deepseek_v3", [](const JsonFields& f, ModelSpec& m) { parse_deepseek(f, m, true); }},
      // Kimi K2 ships DeepSeek-V3's modelling code (architectures DeepseekV3ForCausalLM) and config keys.
      {"kimi_k2", [](const JsonFields& f, ModelSpec& m) { parse_deepseek(f, m, true); }},
      {"deepseek_v32", parse_deepseek_v32},
      {"glm4", parse_glm4},
      {"glm4_moe", parse_glm4_moe},
      {"glm_moe_dsa", parse_glm_moe_dsa},
      {"llama4_text", parse_llama4_text},
      {"llama4", parse_llama4},
      {"olmo2", parse_olmo2},
      {"olmo3", parse_olmo3},
      {"olmoe", parse_olmoe},
      {"exaone4", parse_exaone4},
      {"gpt_neox", parse_gpt_neox},
      {"starcoder2", parse_starcoder2},
      {"smollm3", parse_smollm3},
      {"granite", parse_granite},
      {"cohere", parse_cohere},
      {"cohere2", parse_cohere2},
      {"phi", parse_phi},
      {"seed_oss", parse_seed_oss},
      {"qwen3_next", parse_qwen3_next},
      {"granitemoehybrid", parse_granitemoehybrid},
      {"nemotron_h", parse_nemotron_h},
      {"falcon_h1", parse_falcon_h1},
      {"ernie4_5", parse_ernie4_5},
      {"ernie4_5_moe", parse_ernie4_5_moe},
      {"kimi_linear", parse_kimi_linear},
      {"minimax_m2", parse_minimax_m2},
      {"minimax", parse_minimax},
      // MiniMax-Text-01's and MiniMax-M1's remote code (MiniMaxText01Config, MiniMaxM1Config): minimax's keys.
      {"minimax_text_01", parse_minimax},
      {"minimax_m1", parse_minimax},
      {"apertus", parse_apertus},
      {"lfm2", parse_lfm2},
      {"lfm2_moe", parse_lfm2_moe},
      {"chatglm", parse_chatglm},
      {"glm4_moe_lite", parse_glm4_moe_lite},
      {"nemotron-nas", parse_nemotron_nas},
      {"hunyuan_v1_dense", parse_hunyuan_v1_dense},
      {"hunyuan_v1_moe", parse_hunyuan_v1_moe},
      {"dots1", parse_dots1},
      {"ministral3", parse_ministral3},
      {"mistral3", parse_mistral3},
      {"qwen2_5_vl", parse_qwen2_5_vl},
      {"qwen3_vl", parse_qwen3_vl},
      {"qwen3_vl_moe", parse_qwen3_vl_moe},
      {"glm4v_text", parse_glm4v_text},
      {"glm4v", parse_glm4v},
      {"glm4v_moe_text", parse_glm4v_moe_text},
      {"glm4v_moe", parse_glm4v_moe},
      {"glm46v", parse_glm46v},
      {"internvl", parse_internvl},
      {"lfm2_vl", parse_lfm2_vl},
      {"lfm2-vl", parse_lfm2_vl},  // Lfm2VlConfig.model_type, which the released files carry
      {"cohere2_vision", parse_cohere2_vision},
      {"smolvlm", parse_smolvlm},
      {"perception_lm", parse_perception_lm},
      {"afmoe", parse_afmoe},
      {"qwen3_5", parse_qwen3_5},
      {"qwen3_5_text", parse_qwen3_5_text},
      {"qwen3_5_moe", parse_qwen3_5_moe},
      {"qwen3_5_moe_text", parse_qwen3_5_moe_text},
      {"vaultgemma", parse_vaultgemma},
      {"arcee", parse_arcee},
      {"jais2", parse_jais2},
      {"cwm", parse_cwm},
      {"flex_olmo", parse_flex_olmo},
      {"bitnet", parse_bitnet},
      {"gemma3n_text", parse_gemma3n_text},
      {"gemma3n", parse_gemma3n},
      {"longcat_flash", parse_longcat_flash},
  };
  return table;
}

}  // namespace

void hf::parse_text_config(const JsonFields& t, ModelSpec& m, const std::string& fallback) {
  const std::string type = t.optional_string("model_type").value_or(fallback);
  const auto it = std::find_if(parsers().begin(), parsers().end(), [&](const auto& p) { return p.first == type; });
  if (it == parsers().end())
    throw InputError(t.name("model_type"), json_value_text(t.at("model_type")),
                     "a text model mhacfg does not read (docs/models-survey.md lists the types it reads)");
  it->second(t, m);
}

const std::vector<std::string_view>& supported_model_types() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const auto& [name, parser] : parsers()) v.push_back(name);
    return v;
  }();
  return names;
}

namespace {

// The library's field names and the config keys most families spell them with: an error about the
// model names the key the user wrote (num_key_value_heads, not num_kv_heads) when the config has it.
constexpr std::pair<const char*, const char*> kConfigKeys[] = {
    {"num_kv_heads", "num_key_value_heads"}, {"num_q_heads", "num_attention_heads"},
    {"d_model", "hidden_size"},              {"ffn_dim", "intermediate_size"},
    {"rope_head_dim", "qk_rope_head_dim"},
    {"top_k", "num_experts_per_tok"},
    {"top_k", "moe_topk"},                   // LongCat-Flash
    {"zero_experts", "zero_expert_num"},     // LongCat-Flash
    // The experts' count under the key the family's file spells it with (the first of them it has).
    {"num_routed_experts", "num_experts"},
    {"num_routed_experts", "n_routed_experts"},
    {"num_routed_experts", "num_local_experts"},
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string with_config_keys(std::string text, const JsonFields& f) {
  for (const auto& [field, key] : kConfigKeys) {
    if (!f.present(key)) continue;
    const std::string from = field;
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1)) {
      const bool whole = (at == 0 || !word_char(text[at - 1])) &&
                         (at + from.size() == text.size() || !word_char(text[at + from.size()]));
      if (whole) text.replace(at, from.size(), key);
    }
  }
  return text;
}

// The size keys the config gives, for an overflow message: the counts overflow because of them.
std::string config_sizes(const JsonFields& f) {
  std::string given;
  for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
                          "intermediate_size", "vocab_size", "n_routed_experts", "num_local_experts", "moe_intermediate_size"})
    if (f.present(key)) given += (given.empty() ? "" : ", ") + std::string(key) + " = " + json_value_text(f.at(key));
  return given;
}

// Edit distance between two model_types, less half their common prefix: qwen3_omni_moe is nearest
// qwen3_5_moe, glm4_moe_lite_v2 nearest glm4_moe_lite.
std::size_t type_distance(const std::string& a, std::string_view b) {
  std::string lower(a);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::size_t d = edit_distance(lower, b);
  std::size_t prefix = 0;
  while (prefix < lower.size() && prefix < b.size() && lower[prefix] == b[prefix]) ++prefix;
  return 2 * d - std::min(prefix, 2 * d);
}

// Why a model_type is refused: the three nearest supported types, and what the nearest would need to read
// this file (its first missing or invalid key), or that its keys would do but the layers are not assumed
// the same.
std::string unsupported_type_reason(const JsonFields& f, const std::string& type) {
  std::vector<std::pair<std::size_t, std::size_t>> ranked;  // (distance, table index)
  for (std::size_t i = 0; i < parsers().size(); ++i) ranked.emplace_back(type_distance(type, parsers()[i].first), i);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string closest;
  for (std::size_t k = 0; k < 3 && k < ranked.size(); ++k)
    closest += (closest.empty() ? "" : ", ") + parsers()[ranked[k].second].first;
  const auto& [nearest, parse] = parsers()[ranked.front().second];
  std::string fit;
  try {
    ModelSpec trial;
    parse(f, trial);
    if (trial.attention.variant != AttentionVariant::mla) set_variant_from_heads(trial);
    validate(trial);
    fit = "its keys also read as " + nearest + "'s, but mhacfg does not assume " + nearest + "'s layers";
  } catch (const OverflowError&) {  // an InputError too: first
    fit = "read as " + nearest + ", its sizes overflow the counts";
  } catch (const InputError& e) {
    std::string need = e.what();
    if (need.rfind(f.where() + ": ", 0) == 0) need.erase(0, f.where().size() + 2);  // the file is named once
    fit = "read as " + nearest + " it would need " + need;
  }
  return "unsupported model_type (closest supported: " + closest + "; " + fit + "; " +
         std::to_string(parsers().size()) + " types are read, docs/models-survey.md lists them and the ones refused)";
}

}  // namespace

namespace {

// model_types whose layers mhacfg cannot model, and why: refused with the reason rather than the nearest
// types read (docs/models-survey.md).
// None at present (minimax, the last, is read since lightning attention is a linear-attention kind).
constexpr std::array<std::pair<const char*, const char*>, 0> kRefused{};

}  // namespace

ModelSpec spec_from_hf_config(const nlohmann::json& config, const std::string& where) {
  JsonFields f(config, where);
  const std::string type = f.require_string("model_type");
  for (const auto& [refused, why] : kRefused)
    if (type == refused) throw InputError(f.name("model_type"), json_value_text(f.at("model_type")), why);
  const auto it = std::find_if(parsers().begin(), parsers().end(), [&](const auto& p) { return p.first == type; });
  if (it == parsers().end())
    throw InputError(f.name("model_type"), json_value_text(f.at("model_type")), unsupported_type_reason(f, type));
  ModelSpec m;
  m.name = where;
  m.family = type == "RefinedWeb" || type == "RefinedWebModel" ? "falcon" : type == "lfm2-vl" ? "lfm2_vl" : type;
  it->second(f, m);
  if (m.attention.variant != AttentionVariant::mla) set_variant_from_heads(m);
  try {
    validate(m);
    (void)count_params(m);  // sizes whose product overflows are the config's keys: name them here
  } catch (const OverflowError& e) {
    throw OverflowError(where + ": " + e.what() + " (" + config_sizes(f) + ")");
  } catch (const InputError& e) {
    throw InputError(where + ": " + with_config_keys(e.what(), f));
  }
  return m;
}

ModelSpec load_hf_config(const std::string& path) {
  // A model's folder (a Hub download) is read through its config.json and names the model.
  struct stat st {};
  const bool folder = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  std::string named = path;
  while (folder && named.size() > 1 && named.back() == '/') named.pop_back();
  const std::string file = folder ? named + "/config.json" : path;
  ModelSpec m = spec_from_hf_config(parse_json(read_file(file, "--hf-config"), file), file);
  const std::string last = named.substr(named.find_last_of('/') + 1);
  m.name = escaped(last.empty() ? named : last);  // on one line; errors above name the whole path
  return m;
}

}  // namespace mhacfg

// The model presets as a report: `mhacfg models` and the Python module's models().
#include "mhacfg/configurator/api/requests.hpp"
#include "mhacfg/configurator/common/describe.hpp"
#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/io.hpp"

namespace mhacfg {

namespace {

// "gqa", "mla, sparse", "gqa + Gated DeltaNet": the attention and, in a hybrid, its linear mixer.
std::string variant_text(const ModelSpec& m) {
  std::string v(to_string(m.attention.variant));
  if (m.attention.sparse()) v += ", sparse";
  if (m.num_linear_layers() > 0) v += " + " + linear_kind_text(m.linear.kind);
  return v;
}

// "32/8", or MLA's query heads and latent: "128/latent 512".
std::string heads_text(const ModelSpec& m) {
  const std::string kv = m.attention.variant == AttentionVariant::mla ? "latent " + std::to_string(m.attention.mla.kv_lora_rank)
                                                                      : std::to_string(m.attention.num_kv_heads);
  return std::to_string(m.attention.num_q_heads) + "/" + kv;
}

nlohmann::json optional_int(const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

Report models_report() {
  nlohmann::json list = nlohmann::json::array();
  Table t;
  t.columns = {"name", "family", "params", "variant", "q/kv heads", "head_dim", "context", "source"};
  t.right_align = {false, false, true, false, true, true, true, false};
  for (const ModelPreset& p : model_presets()) {
    const ModelSpec m = load_model_preset(p.name);
    const ParamCounts params = count_params(m);
    const bool mla = m.attention.variant == AttentionVariant::mla;
    list.push_back({{"name", p.name},
                    {"source", p.source},
                    {"family", m.family},
                    {"params", params.total},
                    {"params_active", params.active},
                    {"variant", std::string(to_string(m.attention.variant))},
                    {"num_q_heads", m.attention.num_q_heads},
                    {"num_kv_heads", m.attention.num_kv_heads},
                    {"kv_lora_rank", mla ? nlohmann::json(m.attention.mla.kv_lora_rank) : nlohmann::json(nullptr)},
                    {"head_dim", m.attention.head_dim},
                    {"v_head_dim", m.attention.v_head_dim},
                    {"layers", m.num_layers()},
                    {"linear_attention_layers", m.num_linear_layers()},
                    {"sparse", m.attention.sparse()},
                    {"max_context", optional_int(p.max_context)}});
    t.rows.push_back({p.name, m.family, billions(double(params.total)), variant_text(m), heads_text(m),
                      std::to_string(m.attention.head_dim), p.max_context ? std::to_string(*p.max_context) : "-", p.source});
  }
  nlohmann::json aliases = nlohmann::json::array();
  std::string alias_note, ambiguous_note;
  for (const PresetAlias& al : model_preset_aliases()) {
    aliases.push_back({{"name", al.name}, {"presets", al.presets}});
    std::string names;
    for (const auto& n : al.presets) names += (names.empty() ? "" : " or ") + n;
    std::string& note = al.presets.size() == 1 ? alias_note : ambiguous_note;
    note += (note.empty() ? "" : ", ") + al.name + (al.presets.size() == 1 ? " means " : " names ") + names;
  }
  Report r;
  r.tables.push_back(t);
  r.notes.push_back("--model NAME reads a preset (compare takes NAME alone); context is the config's max_position_embeddings "
                    "(GPT-2's n_positions), - where the file states none; params is the main model's, without MTP or vision modules.");
  if (!alias_note.empty()) r.notes.push_back("Aliases: " + alias_note + ".");
  if (!ambiguous_note.empty())
    r.notes.push_back("Refused as ambiguous: " + ambiguous_note + " (releases that count differently): give the versioned name.");
  r.json = {{"schema_version", kSchemaVersion}, {"presets", list}, {"aliases", aliases}};
  return r;
}

}  // namespace mhacfg

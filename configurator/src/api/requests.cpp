// analyze, recommend, compare and profiles as library calls (api/requests.hpp).
#include "mhacfg/configurator/api/requests.hpp"

#include <algorithm>
#include <sstream>

#include "mhacfg/configurator/common/describe.hpp"
#include "mhacfg/configurator/inputs/engines.hpp"
#include "mhacfg/configurator/inputs/model_source.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/configurator/report/analyze.hpp"
#include "mhacfg/configurator/search/design.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {

std::vector<AttentionVariant> parse_variants(const std::string& text) {
  std::vector<AttentionVariant> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(parse_variant(item, "--variants"));
  if (out.empty()) throw InputError("--variants", "\"" + text + "\"", "name at least one of mha, gqa, mqa, mla");
  return out;
}

RecommendOptions read_recommend_options(const FlagValues& a) {
  RecommendOptions o;
  if (auto v = a.opt_str("params")) o.params = parse_count("--params", *v);
  o.d_model = a.opt_int("d-model");
  o.layers = a.opt_int("layers");
  if (a.has("context") && a.has("seq")) throw InputError("--seq", a.str("seq"), "is --context's earlier name: give one of them");
  if (auto v = a.opt_tokens(a.has("seq") ? "seq" : "context")) o.workload = o.workload.serving(*v);
  o.workload = read_deployment(a, o.workload);
  if (auto v = a.opt_str("target")) o.target = *v;
  o.batch = a.opt_sequences("batch");
  if (auto v = a.opt_str("objective")) o.objective = parse_objective(*v);
  if (auto v = a.opt_str("quality")) o.quality = parse_quality(*v);
  if (auto v = a.opt_str("variants")) o.variants = parse_variants(*v);
  if (auto v = a.opt_tokens("index-topk")) o.index_topk = *v;
  o.engine = read_engine(a);
  if (auto v = a.opt_tokens("output-len")) o.output_len = *v;
  if (auto v = a.opt_str("ttft-ms")) o.ttft_ms = parse_double("--ttft-ms", *v, 1e-9, 1e12);
  if (auto v = a.opt_str("tpot-ms")) o.tpot_ms = parse_double("--tpot-ms", *v, 1e-9, 1e12);
  o.head_dim = a.opt_int("head-dim");
  if (auto v = a.opt_int("kv-heads-multiple-of")) o.kv_heads_multiple_of = *v;
  if (auto v = a.opt_str("max-kv-bytes-per-token")) o.max_kv_bytes_per_token = parse_count("--max-kv-bytes-per-token", *v);
  o.layer_pattern = {a.opt_tokens("sliding-window", false), a.opt_tokens("attention-chunk", false), a.opt_int("global-every")};
  if (auto v = a.opt_int("top")) o.top = static_cast<int>(std::min<std::int64_t>(*v, 1000));
  o.memory_fraction = read_memory_fraction(a, o.memory_fraction);
  if (auto v = a.opt_int("vocab")) o.vocab = *v;
  const auto hf = a.opt_str("hf-config"), preset = a.opt_str("model");
  const bool config = !a.config.is_null();
  if (hf && preset) throw InputError("--model", *preset, "cannot be combined with --hf-config");
  if (config && (hf || preset))
    throw InputError(hf ? "--hf-config" : "--model", hf ? *hf : *preset, "cannot be combined with a model's config.json content");
  if (hf || preset || config) {
    if (auto v = a.opt_str("vocab")) throw InputError("--vocab", *v, "comes from the model given with --hf-config or --model");
    o.base = config ? model_from_config_json(a.config) : hf ? load_hf_config_arg(*hf) : load_model_preset(*preset);
  }
  return o;
}

}  // namespace

AnalyzeRequest read_analyze_request(const FlagValues& f) {
  AnalyzeRequest r;
  r.model = resolve_model(read_model_flags(f));
  r.workload = read_workload(f, Workload{});
  validate(r.workload);
  if (f.has("target")) r.target = read_profile_flag(f, "target", defaults::target);
  else (void)f.on("roofline");  // asked about either way: without --target it changes nothing
  r.engine = read_engine(f);
  return r;
}

Report analyze_report(const AnalyzeRequest& r) {
  return analyze_report(r.model, r.workload, r.target ? &*r.target : nullptr, &r.engine);
}

RecommendRequest read_recommend_request(const FlagValues& f) {
  RecommendRequest r;
  r.options = read_recommend_options(f);
  r.profile = read_profile_flag(f, "target", r.options.target);
  return r;
}

CompareRequest read_compare_request(const FlagValues& f, std::vector<std::string> labels,
                                    const std::function<ModelSpec(std::size_t)>& model) {
  CompareRequest r;
  r.options.models = std::move(labels);
  if (r.options.models.size() < 2)
    throw InputError("compare", std::to_string(r.options.models.size()) + " model(s)", "needs at least two models to compare");
  r.options.workload = read_workload(f, Workload{});
  validate(r.options.workload);
  if (auto t = f.opt_str("target")) r.options.target = *t;
  r.options.memory_fraction = read_memory_fraction(f, r.options.memory_fraction);
  r.options.engine = read_engine(f);
  for (std::size_t i = 0; i < r.options.models.size(); ++i) {
    r.models.push_back(model(i));
    // An alias is shown by its preset's own name, which carries the version (mixtral-8x7b-v0.1).
    std::string& label = r.options.models[i];
    for (const PresetAlias& alias : model_preset_aliases())
      if (label == alias.name) label = r.models.back().name;
  }
  r.profile = read_profile_flag(f, "target", r.options.target);
  return r;
}

Report profiles_report() {
  nlohmann::json list = nlohmann::json::array();
  Table t;
  t.columns = {"name", "device", "basis", "fitted ops", "provenance"};
  for (const auto& name : shipped_profile_names()) {
    const Profile p = load_profile(name, "profiles");
    std::vector<std::string> ops;
    for (const auto& [cls, fit] : p.ops) ops.push_back(cls);
    std::string opsl;
    for (const auto& o : ops) opsl += (opsl.empty() ? "" : ", ") + o;
    const Basis b = p.basis();
    std::string prov = p.source == "measured" ? p.provenance.value("measured_at", std::string("")) + " " +
                                                    p.provenance.value("from", std::string(""))
                                              : "datasheet";
    list.push_back({{"name", p.name}, {"device", p.device}, {"kind", p.kind}, {"source", p.source}, {"ops", ops},
                    {"basis", basis_json(b)}, {"provenance", p.provenance}});
    const std::string kind = b.kind == BasisKind::transferred ? "transferred from " + b.from : to_string(b.kind);
    t.rows.push_back({p.name, p.device, kind, opsl.empty() ? "-" : opsl, prov});
  }
  Report r;
  r.json = {{"schema_version", "1.0"}, {"profiles", list}};
  r.tables.push_back(t);
  r.notes.push_back("Measured profiles predict with models fitted on the device; transferred ones with a measured profile's "
                    "models scaled to their datasheet (expected error in `profiles show NAME`); --roofline gives any "
                    "profile's bare datasheet roofline.");
  return r;
}

}  // namespace mhacfg

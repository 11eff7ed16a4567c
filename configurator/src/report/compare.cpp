#include "mhacfg/configurator/report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <sys/stat.h>

#include "mhacfg/configurator/report/analyze.hpp"
#include "mhacfg/configurator/inputs/model_input.hpp"
#include "mhacfg/configurator/inputs/presets.hpp"
#include "mhacfg/configurator/search/design.hpp"
#include "mhacfg/costmodel/memory_fit.hpp"
#include "mhacfg/configurator/search/quality.hpp"
#include "mhacfg/configurator/search/recommend.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/predict.hpp"

namespace mhacfg {

namespace {

std::string delta(double v, double base) {
  if (std::isnan(v) || std::isnan(base)) return "";  // a descriptive row
  if (base == 0) return v == 0 ? "=" : "n/a";
  const double p = (v / base - 1.0) * 100.0;
  if (std::fabs(p) < 0.05) return "=";
  return (p > 0 ? "+" : "") + fmt_fixed(p, std::fabs(p) < 10 ? 1 : 0) + " %";
}

struct Column {
  std::string label;
  ModelCounts counts;
  ModelTimes times;
  ServingTimes served;
  std::int64_t max_batch = 0;
  QualityRisk risk;
};


// Each model's counts, predictions, sequences that fit and quality risk.
std::vector<Column> columns(const CompareOptions& o, const std::vector<ModelSpec>& models, const Profile& profile) {
  const Predictor pred(profile);
  std::vector<Column> cols;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const ModelSpec& m = models[i];
    Column c;
    c.label = escaped(o.models[i]);  // one line in every format (a path may hold a newline)
    try {
      c.counts = count_model(m, o.workload);
    } catch (const InputError& e) {  // name the model (a tp that divides one model's heads and not another's)
      if (dynamic_cast<const OverflowError*>(&e)) throw OverflowError(shown_value(c.label) + ": " + e.what());
      throw InputError(shown_value(c.label) + ": " + e.what());
    }
    c.times = predict_model(m, o.workload, pred);
    c.served = predict_workload_served(m, o.workload, pred, o.engine);
    // A model without a cache (FFN blocks only) is not bounded by memory: it gets recommend's batch cap.
    const MemoryFit fit = fit_memory(m, o.workload, profile, o.memory_fraction);
    c.max_batch = fit.unbounded ? defaults::max_batch : fit.max_batch;
    c.risk = assess_quality(m);
    cols.push_back(std::move(c));
  }
  return cols;
}

// One row per quantity, each model's value and its delta against the first.
Table side_by_side(const std::vector<Column>& cols, const std::vector<ModelSpec>& models, const EngineModel& engine) {
  Table t;
  t.columns = {"quantity"};
  for (std::size_t i = 0; i < cols.size(); ++i) {
    t.columns.push_back(cols[i].label);
    if (i > 0) t.columns.push_back("vs " + cols[0].label);
  }
  t.right_align.assign(t.columns.size(), true);
  t.right_align[0] = false;
  auto row = [&](const std::string& name, auto value, auto text) {
    std::vector<std::string> cells = {name};
    const double base = value(cols[0]);
    for (std::size_t i = 0; i < cols.size(); ++i) {
      cells.push_back(text(cols[i]));
      if (i > 0) cells.push_back(delta(value(cols[i]), base));
    }
    t.rows.push_back(cells);
  };
  row("attention", [](const Column&) { return std::nan(""); }, [&](const Column& c) {
    const ModelSpec& m = models[&c - &cols[0]];
    const AttentionSpec& a = m.attention;
    return design_label(a, LabelStyle::heads) + (a.sparse() ? ", top " + std::to_string(a.indexer.topk) : "") +
           (a.sparse() && m.num_indexer_layers() < m.num_attention_layers()
                ? " (indexer on " + std::to_string(m.num_indexer_layers()) + " of " + std::to_string(m.num_attention_layers()) + " layers)"
                : "");
  });
  row("layers", [](const Column&) { return std::nan(""); },
      [&](const Column& c) { return layer_pattern_text(models[&c - &cols[0]]); });
  row("params total", [](const Column& c) { return double(c.counts.params.total); },
      [](const Column& c) { return fmt_count(double(c.counts.params.total)); });
  row("params active", [](const Column& c) { return double(c.counts.params.active); },
      [](const Column& c) { return fmt_count(double(c.counts.params.active)); });
  // Modules outside the total (DeepSeek-V3's MTP, Gemma 3's vision encoder, Qwen3.5's both), when any model
  // has them.
  if (std::any_of(cols.begin(), cols.end(), [](const Column& c) { return c.counts.params.mtp + c.counts.params.vision > 0; }))
    row("params extra", [](const Column&) { return std::nan(""); },  // different modules: no delta
        [](const Column& c) {
          const ParamCounts& p = c.counts.params;
          if (p.mtp + p.vision == 0) return std::string("0");
          const char* which = p.vision && p.mtp ? " vision + mtp" : p.vision ? " vision" : " mtp";
          return fmt_count(double(p.mtp + p.vision)) + which;
        });
  row("KV per token", [](const Column& c) { return double(c.counts.kv_cache.bytes_per_token); },
      [](const Column& c) { return fmt_bytes(double(c.counts.kv_cache.bytes_per_token)); });
  // A hybrid model's linear-attention state, a fixed size per sequence (in "KV at context" too).
  if (std::any_of(cols.begin(), cols.end(), [](const Column& c) { return c.counts.kv_cache.state_bytes_per_sequence > 0; }))
    row("state per sequence", [](const Column& c) { return double(c.counts.kv_cache.state_bytes_per_sequence); },
        [](const Column& c) { return fmt_bytes(double(c.counts.kv_cache.state_bytes_per_sequence)); });
  row("KV at context", [](const Column& c) { return double(c.counts.kv_cache.bytes_total); },
      [](const Column& c) { return fmt_bytes(double(c.counts.kv_cache.bytes_total)); });
  row("prefill FLOPs", [](const Column& c) { return double(c.counts.flops.prefill.total); },
      [](const Column& c) { return fmt_si(double(c.counts.flops.prefill.total), "FLOP"); });
  row("decode FLOPs/token", [](const Column& c) { return double(c.counts.flops.decode_per_token.total); },
      [](const Column& c) { return fmt_si(double(c.counts.flops.decode_per_token.total), "FLOP"); });
  row("prefill time", [](const Column& c) { return c.times.prefill_ms; }, [](const Column& c) { return fmt_ms(c.times.prefill_ms); });
  row("decode step", [](const Column& c) { return c.times.decode_step_ms; }, [](const Column& c) { return fmt_ms(c.times.decode_step_ms); });
  row("tokens/s at batch", [](const Column& c) { return c.times.tokens_per_s; },
      [](const Column& c) { return fmt_fixed(c.times.tokens_per_s, 0); });
  if (engine.name != "none") {
    row("TTFT (" + engine.name + ")", [](const Column& c) { return c.served.ttft_ms; }, [](const Column& c) { return fmt_ms(c.served.ttft_ms); });
    row("TPOT (" + engine.name + ")", [](const Column& c) { return c.served.tpot_ms; }, [](const Column& c) { return fmt_ms(c.served.tpot_ms); });
  }
  row("max batch", [](const Column& c) { return double(c.max_batch); }, [](const Column& c) { return std::to_string(c.max_batch); });
  row("quality risk", [](const Column&) { return std::nan(""); }, [](const Column& c) { return std::string(to_string(c.risk.level)); });
  return t;
}

nlohmann::json compare_json(const CompareOptions& o, const std::vector<Column>& cols, const std::vector<ModelSpec>& models,
                            const Profile& profile) {
  nlohmann::json items = nlohmann::json::array();
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const Column& c = cols[i];
    nlohmann::json j = {{"label", c.label}, {"model", model_json(models[i])}};
    j.update(counts_json(c.counts));
    j["predicted"] = times_json(c.times, TimesDetail::summary);
    j["predicted"]["ttft_ms"] = c.served.ttft_ms;
    j["predicted"]["tpot_ms"] = c.served.tpot_ms;
    j["predicted"]["engine"] = serving_breakdown_json(c.served, o.engine);
    j["predicted"]["basis"] = time_basis(c.times);
    j["predicted"]["extrapolated"] = c.times.extrapolated;
    j["max_batch"] = c.max_batch;
    j["quality_risk"] = std::string(to_string(c.risk.level));
    j["quality_reason"] = c.risk.reason;
    if (i > 0) {
      auto rel = [](double v, double b) { return b == 0 ? nlohmann::json(nullptr) : nlohmann::json(v / b - 1.0); };
      const Column& b = cols[0];
      j["delta_vs_first"] = {
          {"params_total", rel(double(c.counts.params.total), double(b.counts.params.total))},
          {"kv_bytes_per_token", rel(double(c.counts.kv_cache.bytes_per_token), double(b.counts.kv_cache.bytes_per_token))},
          {"kv_bytes_total", rel(double(c.counts.kv_cache.bytes_total), double(b.counts.kv_cache.bytes_total))},
          {"flops_prefill", rel(double(c.counts.flops.prefill.total), double(b.counts.flops.prefill.total))},
          {"flops_decode_per_token", rel(double(c.counts.flops.decode_per_token.total), double(b.counts.flops.decode_per_token.total))},
          {"prefill_ms", rel(c.times.prefill_ms, b.times.prefill_ms)},
          {"decode_step_ms", rel(c.times.decode_step_ms, b.times.decode_step_ms)},
          {"max_batch", rel(double(c.max_batch), double(b.max_batch))}};
    }
    items.push_back(j);
  }
  return {{"schema_version", kSchemaVersion}, {"command", "compare"}, {"workload", workload_json(o.workload)},
            {"target", profile.name}, {"memory_fraction", o.memory_fraction}, {"models", items}};
}

void add_notes(Report& r, const CompareOptions& o, const std::vector<ModelSpec>& models, const Profile& profile) {
  for (const auto& m : models)
    if (m.num_linear_layers() > 0) {
      r.notes.push_back(linear_roofline_note(m, profile));
      break;
    }
  std::vector<const IndexerSpec*> noted;  // one note per distinct indexer
  for (const auto& m : models) {
    const IndexerSpec& x = m.attention.indexer;
    const auto same = [&](const IndexerSpec* y) { return y->num_heads == x.num_heads && y->head_dim == x.head_dim && y->topk == x.topk; };
    if (!m.attention.sparse() || std::any_of(noted.begin(), noted.end(), same)) continue;
    noted.push_back(&x);
    r.notes.push_back(sparse_attention_note(m, profile));
  }
  for (const std::string& n : gemm_dtype_notes(profile, o.workload)) r.notes.push_back(n + ".");
  r.notes.push_back("Deltas are relative to the first model. Max batch: sequences of `context` tokens whose KV fits beside "
                    "the weights in " + fmt_fixed(o.memory_fraction * 100, 0) + " % of " + profile.name + "'s memory per GPU.");
}

}  // namespace

Report compare_report(const CompareOptions& o, const std::vector<ModelSpec>& models, const Profile& profile) {
  const std::vector<Column> cols = columns(o, models, profile);
  Report r;
  const Workload& w = o.workload;
  r.heading = "Compare on " + profile.name + " (" + basis_text(profile.basis()) +
              "): batch " + std::to_string(w.batch) + ", prompt " + std::to_string(w.prompt_len) + ", context " +
              std::to_string(w.context) + ", KV " + std::string(to_string(w.kv_dtype)) +
              (w.tp > 1 ? ", tp " + std::to_string(w.tp) : "");
  r.tables.push_back(side_by_side(cols, models, o.engine));
  r.csv = r.tables.back();
  r.json = compare_json(o, cols, models, profile);
  add_notes(r, o, models, profile);
  return r;
}

}  // namespace mhacfg

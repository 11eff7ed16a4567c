#include "mhacfg/configurator/report/plots.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "mhacfg/configurator/search/design.hpp"
#include "mhacfg/configurator/common/defaults.hpp"
#include "mhacfg/costmodel/memory_fit.hpp"
#include "mhacfg/configurator/search/quality.hpp"
#include "mhacfg/configurator/report/report.hpp"
#include "mhacfg/costmodel/predict.hpp"

namespace mhacfg {

namespace {

std::string basis(const Profile& p) { return p.name + ", " + basis_text(p.basis()); }

const char* risk_marker(RiskLevel r) {
  switch (r) {
    case RiskLevel::none: return "circle";
    case RiskLevel::low: return "square";
    case RiskLevel::medium: return "triangle";
    case RiskLevel::high:
    case RiskLevel::very_high: return "diamond";
  }
  return "circle";
}

}  // namespace

SvgPlot kv_vs_context_plot(const std::vector<PlotModel>& models, const Workload& w, const Profile& p, double fraction) {
  SvgPlot plot;
  plot.id = "kv-vs-context";
  plot.title = "KV cache against context (batch " + std::to_string(w.batch) + ", per GPU)";
  plot.x_label = "context (tokens)";
  plot.y_label = "weights + KV cache per GPU (bytes)";
  plot.log_x = plot.log_y = true;
  plot.y_bytes = true;
  const std::int64_t top = std::max<std::int64_t>(32768, 4 * w.context);
  for (std::size_t i = 0; i < models.size(); ++i) {
    SvgSeries s;
    s.name = models[i].label;
    s.highlight = models[i].highlight;
    s.markers = false;
    const double weights = served_weight_bytes_per_gpu(count_params(models[i].spec), w);
    for (std::int64_t ctx = 1024; ctx <= top; ctx *= 2) {
      Workload x = w;
      x.context = ctx;
      const double bytes = weights + double(count_kv_cache(models[i].spec, x).bytes_per_gpu);
      s.points.push_back({double(ctx), bytes, fmt_bytes(bytes) + " at " + std::to_string(ctx)});
    }
    plot.series.push_back(std::move(s));
  }
  plot.refs.push_back({true, double(p.spec.memory_bytes) * fraction,
                       p.name + " memory x " + fmt_fixed(fraction, 2) + " = " + fmt_bytes(double(p.spec.memory_bytes) * fraction)});
  plot.note = "Lines above the dashed line do not fit; sliding windows and chunks flatten a line once every window or chunk is full.";
  return plot;
}

SvgPlot decode_vs_batch_plot(const std::vector<PlotModel>& models, const Workload& w, const Profile& p, double fraction) {
  SvgPlot plot;
  plot.id = "decode-vs-batch";
  plot.title = "Decode time per step against batch (context " + std::to_string(w.context) + ")";
  plot.x_label = "batch (sequences)";
  plot.y_label = "decode step (ms, all layers)";
  plot.log_x = plot.log_y = true;
  const Predictor pred(p);
  for (const auto& m : models) {
    SvgSeries s;
    s.name = m.label;
    s.highlight = m.highlight;
    const std::int64_t cap = std::max<std::int64_t>(1, fit_memory(m.spec, w, p, fraction).batch_within(defaults::max_batch));
    for (std::int64_t b = 1; b <= cap; b = b * 2 > cap && b != cap ? cap : b * 2) {
      Workload x = w;
      x.batch = b;
      const ModelTimes t = predict_model(m.spec, x, pred);
      s.points.push_back({double(b), t.decode_step_ms,
                          "batch " + std::to_string(b) + ": " + fmt_ms(t.decode_step_ms) + ", " +
                              fmt_fixed(t.tokens_per_s, 0) + " tokens/s"});
      if (b == cap) break;
    }
    plot.series.push_back(std::move(s));
  }
  plot.note = "Each line ends at the largest batch whose KV fits (" + basis(p) + ").";
  return plot;
}

SvgPlot pareto_plot(const Recommendation& r) {
  SvgPlot plot;
  plot.id = "pareto";
  plot.title = "Candidates: KV per token against single-stream decode";
  plot.x_label = "KV cache per token (bytes)";
  plot.y_label = "decode step at batch 1 (ms)";
  plot.log_x = true;
  plot.x_bytes = true;
  for (RiskLevel level : {RiskLevel::none, RiskLevel::low, RiskLevel::medium, RiskLevel::high, RiskLevel::very_high}) {
    SvgSeries s;
    s.name = "risk " + std::string(to_string(level));
    s.line = false;
    s.marker = risk_marker(level);
    s.color = static_cast<int>(level);
    for (const auto& c : r.pareto)
      if (c.risk.level == level)
        s.points.push_back({double(c.counts.kv_cache.bytes_per_token), c.single.decode_step_ms,
                            design_label(c.spec.attention, LabelStyle::heads)});
    for (std::size_t i = 1; i < r.ranked.size() && i < static_cast<std::size_t>(r.options.top); ++i)
      if (const Candidate& c = r.ranked[i]; c.risk.level == level)
        s.points.push_back({double(c.counts.kv_cache.bytes_per_token), c.single.decode_step_ms,
                            "#" + std::to_string(c.rank) + " " + design_label(c.spec.attention, LabelStyle::shape)});
    if (!s.points.empty()) plot.series.push_back(std::move(s));
  }
  if (!r.ranked.empty()) {
    const Candidate& best = r.ranked.front();
    SvgSeries s;
    s.name = "recommended";
    s.line = false;
    s.highlight = true;
    s.annotate = true;
    s.marker = risk_marker(best.risk.level);
    s.color = 7;
    s.points.push_back({double(best.counts.kv_cache.bytes_per_token), best.single.decode_step_ms,
                        "#1 " + design_label(best.spec.attention, LabelStyle::heads)});
    plot.series.push_back(std::move(s));
  }
  plot.note = "Ranked designs and the Pareto frontier (memory vs decode time vs risk); marker shape = quality risk.";
  return plot;
}

SvgPlot pareto_plot(const std::vector<PlotModel>& models, const Workload& w, const Profile& p) {
  SvgPlot plot;
  plot.id = "pareto";
  plot.title = "Models: KV per token against single-stream decode";
  plot.x_label = "KV cache per token (bytes)";
  plot.y_label = "decode step at batch 1 (ms)";
  plot.log_x = true;
  plot.x_bytes = true;
  const Predictor pred(p);
  for (std::size_t i = 0; i < models.size(); ++i) {
    const Workload one = w.with_batch(1);
    const RiskLevel risk = assess_quality(models[i].spec).level;
    SvgSeries s;
    s.name = models[i].label + " (risk " + std::string(to_string(risk)) + ")";
    s.line = false;
    s.annotate = true;
    s.highlight = models[i].highlight;
    s.marker = risk_marker(risk);
    s.points.push_back({double(count_kv_cache(models[i].spec, one).bytes_per_token),
                        predict_model(models[i].spec, one, pred).decode_step_ms, models[i].label});
    plot.series.push_back(std::move(s));
  }
  plot.note = "Marker shape = quality risk (circle none, square low, triangle medium, diamond high).";
  return plot;
}

SvgPlot roofline_plot(const Profile& p, const std::vector<PlotModel>& models, const Workload& w) {
  SvgPlot plot;
  plot.id = "roofline";
  plot.title = "Roofline of " + p.name + " (" + p.source + ")";
  plot.x_label = "arithmetic intensity (FLOP/byte)";
  plot.y_label = "attained (FLOP/s)";
  plot.log_x = plot.log_y = true;
  const double peak = p.peak_flop_per_s(w.weight_dtype == DType::fp32 ? DType::fp32 : DType::bf16);
  const double bw = p.spec.mem_bw_bytes_per_s;
  SvgSeries roof;
  roof.name = "roofline (spec)";
  roof.markers = false;
  roof.color = 7;
  for (double ai = 0.05; ai <= 2e4; ai *= 1.5) roof.points.push_back({ai, std::min(peak, ai * bw), ""});
  plot.series.push_back(roof);
  if (p.measured.is_object() && p.measured.contains("points")) {
    std::map<std::string, SvgSeries> by_class;
    for (const auto& pt : p.measured["points"]) {
      const double flop = pt.value("flop", 0.0), bytes = pt.value("bytes", 0.0), ms = pt.value("time_ms", 0.0);
      if (flop <= 0 || bytes <= 0 || ms <= 0) continue;
      SvgSeries& s = by_class[pt.value("op_class", std::string("?"))];
      s.line = false;
      s.points.push_back({flop / bytes, flop / (ms * 1e-3), pt.value("op_class", std::string("?")) + ": " + fmt_ms(ms)});
    }
    for (auto& [cls, s] : by_class) {
      s.name = "measured " + cls;
      plot.series.push_back(std::move(s));
    }
  }
  const Predictor pred(p);
  for (const auto& m : models) {
    if (!m.highlight) continue;
    // A softmax-attention layer (a hybrid model's first may be linear attention; a model of linear layers only has none).
    const auto softmax = std::find_if(m.spec.layers.begin(), m.spec.layers.end(), [](const LayerSpec& l) { return l.softmax(); });
    if (softmax == m.spec.layers.end()) continue;
    const LayerSpec layer = *softmax;
    SvgSeries s;
    s.name = "predicted: " + m.label;
    s.line = false;
    s.highlight = true;
    s.marker = "diamond";
    s.annotate = true;
    auto add = [&](const std::string& what, double flop, double bytes, double ms) {
      if (ms > 0 && bytes > 0) s.points.push_back({flop / bytes, flop / (ms * 1e-3), what});
    };
    const AttentionShape dec = layer_attention_shape(m.spec, layer, w.batch, 1, w.context, true);
    add("decode attn", double(attention_flops(dec)), double(attention_bytes(dec, w.kv_dtype)),
        pred.attention(dec, Phase::decode, w.kv_dtype).time_ms);
    const AttentionShape pre = layer_attention_shape(m.spec, layer, 1, w.prompt_len, w.prompt_len, false);
    add("prefill attn", double(attention_flops(pre)), double(attention_bytes(pre, w.kv_dtype)),
        pred.attention(pre, Phase::prefill, w.kv_dtype).time_ms);
    if (m.spec.attention.sparse()) {  // the indexer scores every cached key: at long contexts the larger part
      const IndexerShape idx = layer_indexer_shape(m.spec, w.batch, 1, w.context);
      add("decode indexer", double(indexer_flops(idx)), double(indexer_bytes(idx)), pred.indexer(idx, Phase::decode).time_ms);
    }
    const GemmShape qkv{w.batch, m.spec.attention.num_q_heads * m.spec.attention.head_dim * (m.spec.attention.output_gate ? 2 : 1),
                        m.spec.d_model};
    add("Q proj (decode)", double(gemm_flops(qkv)), double(gemm_bytes(qkv, w.attention_weights())), pred.gemm(qkv, w.attention_weights()).time_ms);
    plot.series.push_back(std::move(s));
  }
  plot.note = "Peak " + fmt_si(peak, "FLOP/s") + ", bandwidth " + fmt_si(bw, "B/s") +
              (p.calibrated() ? "; dots are the calibration measurements." : "; no calibration points (datasheet profile).");
  return plot;
}

}  // namespace mhacfg

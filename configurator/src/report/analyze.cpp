#include "mhacfg/configurator/report/analyze.hpp"

#include <algorithm>

#include "mhacfg/costmodel/memory_fit.hpp"
#include "mhacfg/costmodel/serving.hpp"
#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/predict.hpp"
#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

namespace {

Table quantity_table(const std::string& title) {
  Table t;
  t.title = title;
  t.columns = {"quantity", "exact", "readable", "note"};
  t.right_align = {false, true, true, false};
  return t;
}

void row(Table& t, const std::string& name, WideCount v, const std::string& readable, const std::string& note = "") {
  t.rows.push_back({name, fmt_int(v), readable, note});
}

// "llama-3-8b (llama): d_model 4096, 32 layers, gqa 32q/8kv x 128; batch 1, ...": the model and workload.
std::string heading(const ModelSpec& m, const Workload& w) {
  const AttentionSpec& a = m.attention;
  std::string attn = std::string(to_string(a.variant)) + " " + std::to_string(a.num_q_heads) + "q" +
                     (a.variant == AttentionVariant::mla ? "" : "/" + std::to_string(a.num_kv_heads) + "kv") + " x " +
                     std::to_string(a.head_dim) + layer_kv_heads_text(m);
  if (a.v_head_dim != a.head_dim) attn += " (v " + std::to_string(a.v_head_dim) + ")";
  if (a.variant == AttentionVariant::mla)
    attn += ", kv_lora_rank " + std::to_string(a.mla.kv_lora_rank) + " + rope " + std::to_string(a.mla.rope_head_dim) +
            (a.mla.q_lora_rank ? ", q_lora_rank " + std::to_string(a.mla.q_lora_rank) : "");
  if (a.sparse())
    attn += ", sparse: top " + std::to_string(a.indexer.topk) + " keys by an indexer of " +
            std::to_string(a.indexer.num_heads) + " x " + std::to_string(a.indexer.head_dim) +
            (m.num_indexer_layers() < m.num_attention_layers()
                 ? " on " + std::to_string(m.num_indexer_layers()) + " layers, shared by the other " +
                       std::to_string(m.num_attention_layers() - m.num_indexer_layers())
                 : "");
  return m.name + " (" + m.family + "): d_model " + std::to_string(m.d_model) + ", " + layer_pattern_text(m) + ", " +
         attn + "; batch " + std::to_string(w.batch) + ", prompt " + std::to_string(w.prompt_len) + ", context " +
         std::to_string(w.context) + ", KV " + std::string(to_string(w.kv_dtype)) + ", weights " +
         weights_text(w) + (w.tp > 1 ? ", tp " + std::to_string(w.tp) : "");
}

Table params_table(const ModelSpec& m, const Workload& w, const ParamCounts& p) {
  Table params = quantity_table("Parameters");
  row(params, "total", p.total, fmt_count(double(p.total)), "main model, unique trainable");
  const bool dynamic = p.active_min != p.active_max;  // zero-computation experts: it varies per token
  row(params, "active per token", p.active, fmt_count(double(p.active)),
      dynamic ? "expected: top-k of routed + zero-computation experts spread evenly; embedding and head included"
              : p.active != p.total ? "top-k experts; embedding and head included" : "");
  if (dynamic) {
    row(params, "active per token, fewest", p.active_min, fmt_count(double(p.active_min)), "every pick a zero-computation expert");
    row(params, "active per token, most", p.active_max, fmt_count(double(p.active_max)), "every pick a routed expert");
  }
  row(params, "embedding", p.embedding, fmt_count(double(p.embedding)), m.learned_positions ? "tokens + positions" : "");
  row(params, "lm_head", p.lm_head, fmt_count(double(p.lm_head)), m.tie_embeddings ? "tied to the embedding" : "");
  const bool hybrid = p.linear_attention > 0;
  const bool some_softmax = m.num_attention_layers() < m.num_layers();  // other layers hold no attention
  row(params, "attention", p.attention, fmt_count(double(p.attention)), some_softmax ? "softmax-attention layers" : "all layers");
  row(params, "attention per layer", p.attention_per_layer, fmt_count(double(p.attention_per_layer)),
      layer_kv_heads_text(m).empty() ? "" : "a layer of the model's " + std::to_string(m.attention.num_kv_heads) + " KV heads");
  if (p.indexer) row(params, "indexer", p.indexer, fmt_count(double(p.indexer)), "of attention: sparse attention, whole on every GPU");
  if (hybrid) {
    row(params, "linear attention", p.linear_attention, fmt_count(double(p.linear_attention)), linear_kind_text(m.linear.kind) + " layers");
    row(params, "linear attention per layer", p.linear_attention_per_layer, fmt_count(double(p.linear_attention_per_layer)));
  }
  row(params, "ffn", p.ffn, fmt_count(double(p.ffn)), p.router ? "dense FFNs + experts" : "");
  if (p.router) row(params, "router", p.router, fmt_count(double(p.router)));
  row(params, "norms", p.norms, fmt_count(double(p.norms)));
  if (p.aux) row(params, "aux", p.aux, fmt_count(double(p.aux)), "residual-stream weights beside attention and FFN (AltUp, LAuReL, per-layer inputs)");
  if (w.tp > 1)
    row(params, "whole on every GPU", p.replicated, fmt_count(double(p.replicated)),
        "under tp: " + std::string(p.indexer ? "indexers, " : "") + (m.attention.variant == AttentionVariant::mla ? "MLA's q_a and kv_a, " : "") +
            (p.router ? "routers, " : "") + "norms");
  if (p.mtp) row(params, "mtp (extra)", p.mtp, fmt_count(double(p.mtp)), "not in total; shares embedding and head");
  if (p.vision) row(params, "vision (extra)", p.vision, fmt_count(double(p.vision)), "not in total; encoder + projector");
  return params;

}

Table kv_table(const ModelSpec& m, const Workload& w, const KvCacheCounts& kv, bool hybrid) {
  const AttentionSpec& a = m.attention;
  const bool some_softmax = m.num_attention_layers() < m.num_layers();  // other layers hold no attention
  Table kvt = quantity_table("KV cache (" + std::string(to_string(kv.dtype)) + ")");
  row(kvt, "bytes per token", kv.bytes_per_token, fmt_bytes(double(kv.bytes_per_token)),
      std::string(a.variant == AttentionVariant::mla ? "latent + RoPE key" : "K and V") + (a.sparse() ? " + indexer key" : "") +
          (m.num_kv_cache_layers() < m.num_attention_layers()
               ? ", the " + std::to_string(m.num_kv_cache_layers()) + " layers caching their own (the other " +
                     std::to_string(m.num_attention_layers() - m.num_kv_cache_layers()) + " read an earlier layer's)"
           : some_softmax ? ", softmax-attention layers"
                          : ", all layers"));
  if (a.sparse()) {
    const std::int64_t keys = mul(kv.indexer_bytes_per_token_per_layer, m.num_indexer_layers(), "KV-cache bytes");
    const bool shared = m.num_indexer_layers() < m.num_attention_layers();
    row(kvt, "indexer keys per token", keys, fmt_bytes(double(keys)),
        "of bytes per token: " + std::to_string(kv.indexer_bytes_per_token_per_layer) + " per layer" +
            (shared ? " with an indexer (" + std::to_string(m.num_indexer_layers()) + ")" : "") +
            " (fp8 + fp32 scale per 128), whole on every GPU");
  }
  if (kv.bytes_per_token_beyond_window != kv.bytes_per_token)
    row(kvt, "bytes per token beyond windows", kv.bytes_per_token_beyond_window,
        fmt_bytes(double(kv.bytes_per_token_beyond_window)), "full-attention layers only");
  row(kvt, "layer-tokens per sequence", kv.layer_tokens, fmt_count(double(kv.layer_tokens)),
      "sum over layers of tokens held at context " + std::to_string(w.context));
  if (hybrid) {
    row(kvt, "state per layer", kv.state_bytes_per_layer, fmt_bytes(double(kv.state_bytes_per_layer)),
        "one sequence: recurrent state + conv inputs, " + std::string(to_string(kv.state_dtype)));
    row(kvt, "state per sequence", kv.state_bytes_per_sequence, fmt_bytes(double(kv.state_bytes_per_sequence)),
        "linear-attention layers, any context");
  }
  row(kvt, "bytes total", kv.bytes_total, fmt_bytes(double(kv.bytes_total)),
      "batch " + std::to_string(w.batch) + " x context " + std::to_string(w.context) + (hybrid ? ", + batch x state" : ""));
  if (w.tp > 1)
    row(kvt, "bytes per GPU", kv.bytes_per_gpu, fmt_bytes(double(kv.bytes_per_gpu)),
        std::to_string(kv.kv_heads_per_gpu) + " KV head(s) per GPU, " +
            (w.dp_attention ? "whole: attention data parallel, each GPU caches ceil(batch / tp) sequences"
             : kv.replication > 1 ? "each replicated on " + std::to_string(kv.replication) + " GPUs"
                                  : "split") +
            (layer_kv_heads_text(m).empty() ? "" : " (the model's; each layer's own KV heads split or replicated alike)"));
  return kvt;

}

Table flops_table(const ModelCounts& c) {
  Table fl = quantity_table("FLOPs (matmuls, multiply-add = 2)");
  auto add_breakdown = [&](const std::string& label, const FlopBreakdown& f) {
    row(fl, label + " total", f.total, fmt_si(double(f.total), "FLOP"));
    row(fl, label + " projections", f.projections, fmt_si(double(f.projections), "FLOP"));
    row(fl, label + " attention core", f.attention_core, fmt_si(double(f.attention_core), "FLOP"));
    row(fl, label + " ffn", f.ffn, fmt_si(double(f.ffn), "FLOP"));
    row(fl, label + " lm_head", f.lm_head, fmt_si(double(f.lm_head), "FLOP"));
  };
  add_breakdown("prefill", c.flops.prefill);
  add_breakdown("decode/token", c.flops.decode_per_token);
  return fl;

}

Table bytes_table(const ModelCounts& c, const Workload& w, bool hybrid) {
  Table by = quantity_table("Bytes moved per decode step");
  row(by, "weights", c.bytes.weights, fmt_bytes(double(c.bytes.weights)),
      c.bytes.experts_read > 0 ? fmt_fixed(c.bytes.experts_read, 1) + " routed experts per MoE layer (uniform routing)" : "");
  row(by, "KV read", c.bytes.kv_read, fmt_bytes(double(c.bytes.kv_read)));
  row(by, "KV written", c.bytes.kv_written, fmt_bytes(double(c.bytes.kv_written)));
  if (hybrid) row(by, "state", c.bytes.state, fmt_bytes(double(c.bytes.state)), "linear-attention state, read and written");
  row(by, "step total", c.bytes.step, fmt_bytes(double(c.bytes.step)), "batch " + std::to_string(w.batch));
  row(by, "per token", c.bytes.per_token, fmt_bytes(double(c.bytes.per_token)), "step / batch");
  by.rows.push_back({"arithmetic intensity", fmt_fixed(c.bytes.arithmetic_intensity, 2), "FLOP/byte", "decode step"});
  return by;

}

// Predicted times on `profile`, whether the model fits its memory, and the notes on what is a roofline.
void add_predictions(Report& r, const ModelSpec& m, const Workload& w, const ModelCounts& c, const Profile* profile) {
  const AttentionSpec& a = m.attention;
  const bool hybrid = c.params.linear_attention > 0;
  const Predictor pred(*profile);
  const ModelTimes t = predict_model(m, w, pred);
  const std::string basis = time_basis(t);
  // Does it fit? Weights (split evenly over tp, as recommend counts them) and the KV cache per GPU.
  const MemoryFit fit = fit_memory(m, w, *profile, 1.0);
  const double weights_per_gpu = fit.weights_bytes_per_gpu;
  const double memory_per_gpu = weights_per_gpu + double(c.kv_cache.bytes_per_gpu);
  const bool fits = memory_per_gpu <= fit.budget_bytes;
  nlohmann::json& predicted = r.json["predicted"] = times_json(t, TimesDetail::full);
  predicted.update({{"profile", profile->name},
                    {"profile_source", profile->source},
                    {"basis", basis},
                    {"extrapolated", t.extrapolated},
                    {"memory_bytes_per_gpu", memory_per_gpu},
                    {"device_memory_bytes", profile->spec.memory_bytes},
                    {"fits_memory", fits}});
  Table tt;
  tt.title = "Predicted times on " + profile->name + " (" + basis + (t.extrapolated ? ", extrapolated" : "") + ")";
  tt.columns = {"quantity", "time", "note"};
  tt.right_align = {false, true, false};
  tt.rows = {{"prefill", fmt_ms(t.prefill_ms), "batch x prompt, per GPU"},
             {"prefill attention", fmt_ms(t.prefill_attention_ms), "core + projections"},
             {"decode step", fmt_ms(t.decode_step_ms), "one token for each of batch sequences"},
             {"decode attention", fmt_ms(t.decode_attention_ms), "core + projections"},
             {"decode ffn", fmt_ms(t.decode_ffn_ms), ""},
             {"tokens/s", fmt_fixed(t.tokens_per_s, 1), "batch / decode step"}};
  if (hybrid) {
    const std::string kind = linear_kind_text(m.linear.kind);
    tt.rows.insert(tt.rows.begin() + 2, {"prefill " + kind + " core", fmt_ms(t.prefill_linear_core_ms),
                                         "of prefill attention; roofline unless fitted"});
    tt.rows.insert(tt.rows.begin() + 5, {"decode " + kind + " core", fmt_ms(t.decode_linear_core_ms),
                                         "of decode attention; roofline unless fitted"});
  }
  if (a.sparse()) {
    const std::string note = roofline_for(t.basis, "indexer/") ? "the roofline: " + profile->name + " has no fit of the indexer"
                                                                : std::string(to_string(t.basis.kind));
    const auto at = [&](const std::string& q) {
      return std::find_if(tt.rows.begin(), tt.rows.end(), [&](const auto& row) { return row[0] == q; }) + 1;
    };
    tt.rows.insert(at("prefill attention"), {"prefill indexer", fmt_ms(t.prefill_indexer_ms), "of prefill attention; " + note});
    tt.rows.insert(at("decode attention"), {"decode indexer", fmt_ms(t.decode_indexer_ms), "of decode attention; " + note});
  }
  if (t.decode_comm_ms > 0) tt.rows.push_back({"decode collectives", fmt_ms(t.decode_comm_ms), "NCCL-style latency + bus bandwidth per link tier"});
  r.tables.push_back(tt);
  if (hybrid) r.notes.push_back(linear_roofline_note(m, *profile));
  if (a.sparse()) r.notes.push_back(sparse_attention_note(m, *profile));
  const std::vector<std::string> dtype_notes = gemm_dtype_notes(*profile, w);
  if (!dtype_notes.empty()) predicted["dtype_notes"] = dtype_notes;
  for (const std::string& n : dtype_notes) r.notes.push_back(n + ".");
  if (!fits)
    r.notes.push_back("Does not fit: weights " + fmt_bytes(weights_per_gpu) + " + KV cache " +
                      fmt_bytes(double(c.kv_cache.bytes_per_gpu)) + " per GPU exceed " + profile->name + "'s " +
                      fmt_bytes(double(profile->spec.memory_bytes)) +
                      "; the times above assume it did (more --tp, a smaller --batch or --context, or a narrower dtype).");
}

// An engine's view of the same workload: the first token of one request at the prompt, and a decode
// step at the batch and context with the ops, gaps and host costs the kernels leave out.
void add_served_times(Report& r, const ModelSpec& m, const Workload& w, const Profile& profile, const EngineModel& e) {
  const ServingTimes s = predict_workload_served(m, w, Predictor(profile), e);
  nlohmann::json& predicted = r.json["predicted"];
  predicted["ttft_ms"] = s.ttft_ms;
  predicted["tpot_ms"] = s.tpot_ms;
  predicted["engine"] = serving_breakdown_json(s, e);
  Table& tt = r.tables.back();
  const std::string by = e.name == "none" ? "kernels only" : e.name;
  tt.rows.push_back({"TTFT (" + by + ")", fmt_ms(s.ttft_ms), "one request's prompt, with the per-request cost"});
  tt.rows.push_back({"TPOT (" + by + ")", fmt_ms(s.tpot_ms), "decode step at the batch: + other ops, kernel gaps, host"});
}

// The csv: every leaf of the JSON document as key (dotted path) and value.
void flatten_to_csv(Report& r) {
  r.csv.columns = {"key", "value"};
  std::function<void(const nlohmann::json&, const std::string&)> flatten = [&](const nlohmann::json& j, const std::string& prefix) {
    for (const auto& [k, v] : j.items()) {
      const std::string key = prefix.empty() ? k : prefix + "." + k;
      if (v.is_object()) flatten(v, key);
      else r.csv.rows.push_back({key, v.is_string() ? v.get<std::string>() : json_text(v)});
    }
  };
  flatten(r.json, "");
}

}  // namespace

Report analyze_report(const ModelSpec& m, const Workload& w, const Profile* profile, const EngineModel* engine) {
  const ModelCounts c = count_model(m, w);
  Report r;
  r.json = {{"schema_version", kSchemaVersion}, {"command", "analyze"}, {"model", model_json(m)},
            {"workload", workload_json(w)}};
  r.json.update(counts_json(c));
  r.heading = heading(m, w);
  const bool hybrid = c.params.linear_attention > 0;
  r.tables = {params_table(m, w, c.params), kv_table(m, w, c.kv_cache, hybrid), flops_table(c), bytes_table(c, w, hybrid)};
  if (profile) add_predictions(r, m, w, c, profile);
  if (profile && engine) add_served_times(r, m, w, *profile, *engine);
  flatten_to_csv(r);
  r.notes.insert(r.notes.end(), m.notes.begin(), m.notes.end());
  r.notes.push_back(
      "Conventions: FLOPs count matmuls only; causal prefill counts the exact unmasked query-key pairs (not the "
      "half-square convention); MLA decode is counted absorbed, MLA prefill decompressed; the LM head runs on the last "
      "prompt position only.");
  return r;
}

}  // namespace mhacfg

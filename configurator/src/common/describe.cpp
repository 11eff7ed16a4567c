#include "mhacfg/configurator/common/describe.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "mhacfg/configurator/common/format.hpp"
#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/predict.hpp"
#include "mhacfg/costmodel/profile.hpp"

namespace mhacfg {

namespace {
// How many layers slide each window size, attend in each chunk size, or attend to everything; those
// with linear attention alone; those with both side by side (Falcon-H1), whose attention's local spans
// are counted apart.
struct LayerPattern {
  std::map<std::int64_t, std::int64_t> windows, chunks, parallel_local;
  std::int64_t global = 0, linear = 0, ffn_only = 0, parallel = 0;
  std::int64_t skipped = 0;  // neither attention nor an FFN (Llama-Nemotron's skipped blocks)
  // Llama-Nemotron's linear layers in place of attention or of the FFN (replace_with_linear).
  std::int64_t linear_map_mixers = 0, linear_map_ffns = 0;

  explicit LayerPattern(const ModelSpec& m) {
    for (const auto& l : m.layers) {
      if (l.ffn == LayerFfn::linear_map) ++linear_map_ffns;
      if (l.mixer == Mixer::linear_map) ++linear_map_mixers;
      else if (l.mixer == Mixer::none && l.ffn == LayerFfn::none) ++skipped;
      else if (l.mixer == Mixer::none) ++ffn_only;
      else if (l.mixer == Mixer::parallel) {
        ++parallel;
        if (l.local_span() > 0) ++parallel_local[l.local_span()];
      } else if (l.mixer == Mixer::linear) ++linear;
      else if (l.window() > 0) ++windows[l.window()];
      else if (l.chunk() > 0) ++chunks[l.chunk()];
      else ++global;
    }
  }
  static std::int64_t layers(const std::map<std::int64_t, std::int64_t>& sizes) {
    std::int64_t n = 0;
    for (const auto& [size, count] : sizes) n += count;
    return n;
  }
  static std::vector<std::int64_t> sizes(const std::map<std::int64_t, std::int64_t>& by_size) {
    std::vector<std::int64_t> v;
    for (const auto& [size, count] : by_size) v.push_back(size);
    return v;
  }
};
}  // namespace

namespace {
// Softmax layers by their KV heads (layer_kv_heads), the most heads first; empty when all are the model's.
std::map<std::int64_t, std::int64_t, std::greater<>> kv_heads_layers(const ModelSpec& m) {
  std::map<std::int64_t, std::int64_t, std::greater<>> by_heads;
  bool own = false;
  for (const auto& l : m.layers) {
    if (!l.softmax()) continue;
    ++by_heads[layer_kv_heads(m, l)];
    own = own || l.kv_heads > 0;
  }
  if (!own) by_heads.clear();
  return by_heads;
}

nlohmann::json attention_json(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  nlohmann::json attn = {{"variant", std::string(to_string(a.variant))},
                         {"num_q_heads", a.num_q_heads},
                         {"num_kv_heads", a.num_kv_heads},
                         {"group_size", a.group_size()},
                         {"head_dim", a.head_dim},
                         {"v_head_dim", a.v_head_dim},
                         {"q_bias", a.q_bias},
                         {"k_bias", a.k_bias},
                         {"v_bias", a.v_bias},
                         {"o_bias", a.o_bias},
                         {"qk_norm", a.qk_norm},
                         {"qk_norm_full_width", a.qk_norm && a.qk_norm_full_width},
                         {"sinks", a.sinks},
                         {"output_gate", a.output_gate}};
  if (a.variant == AttentionVariant::mla)
    attn["mla"] = {{"q_lora_rank", a.mla.q_lora_rank == 0 ? nlohmann::json(nullptr) : nlohmann::json(a.mla.q_lora_rank)},
                   {"kv_lora_rank", a.mla.kv_lora_rank},
                   {"qk_nope_head_dim", a.mla.qk_nope_head_dim},
                   {"rope_head_dim", a.mla.rope_head_dim}};
  if (a.sparse())
    attn["indexer"] = {{"num_heads", a.indexer.num_heads}, {"head_dim", a.indexer.head_dim}, {"topk", a.indexer.topk},
                       {"layers", m.num_indexer_layers()}};
  // Only where layers have KV heads of their own (Llama-Nemotron's variable GQA), as other models' outputs were before.
  for (const auto& [heads, layers] : kv_heads_layers(m)) attn["layer_kv_heads"].push_back({{"kv_heads", heads}, {"layers", layers}});
  return attn;
}

nlohmann::json layer_pattern_json(const ModelSpec& m) {
  const LayerPattern pattern(m);
  nlohmann::json j = {{"full_attention_layers", pattern.global},
          {"sliding_window_layers", LayerPattern::layers(pattern.windows)},
          {"windows", LayerPattern::sizes(pattern.windows)},
          {"chunked_attention_layers", LayerPattern::layers(pattern.chunks)},
          {"chunks", LayerPattern::sizes(pattern.chunks)},
          {"linear_attention_layers", pattern.linear},
          {"parallel_layers", pattern.parallel},
          {"ffn_only_layers", pattern.ffn_only},
          {"skipped_layers", pattern.skipped}};
  // Only where layers read an earlier layer's K/V (Gemma 3n), as other models' outputs were before.
  if (m.num_kv_cache_layers() < m.num_attention_layers()) j["kv_shared_layers"] = m.num_attention_layers() - m.num_kv_cache_layers();
  // Llama-Nemotron's replace_with_linear blocks, only where a model has them.
  if (pattern.linear_map_mixers > 0) j["linear_for_attention_layers"] = pattern.linear_map_mixers;
  if (pattern.linear_map_ffns > 0) j["linear_for_ffn_layers"] = pattern.linear_map_ffns;
  return j;
}

nlohmann::json moe_json(const ModelSpec& m, std::int64_t moe_layers) {
  nlohmann::json j = {{"moe_layers", moe_layers},
                      {"num_routed_experts", m.moe.num_routed_experts},
                      {"num_shared_experts", m.moe.num_shared_experts},
                      {"expert_ffn_dim", m.moe.expert_ffn_dim},
                      {"shared_ffn_dim", shared_ffn_width(m.moe)},
                      {"shared_gate", m.moe.shared_gate},
                      {"top_k", m.moe.top_k},
                      {"router_bias", m.moe.router_bias}};
  if (m.moe.zero_experts > 0) j["zero_experts"] = m.moe.zero_experts;  // identity experts (LongCat-Flash)
  return j;
}

nlohmann::json linear_attention_json(const LinearAttentionSpec& la) {
  if (la.kind == LinearKind::short_conv)  // channels, no heads or recurrent state
    return {{"kind", "short_conv"}, {"channels", la.value_dim()}, {"conv_kernel", la.conv_kernel}};
  nlohmann::json j = {{"kind", std::string(to_string(la.kind))}, {"num_k_heads", la.num_k_heads},
                      {"num_v_heads", la.num_v_heads},           {"head_k_dim", la.head_k_dim},
                      {"head_v_dim", la.head_v_dim},             {"conv_kernel", la.conv_kernel}};
  if (la.kind == LinearKind::lightning) j["block_size"] = la.block_size;  // no convolution: conv_kernel 0
  return j;
}

nlohmann::json vision_json(const VisionSpec& v) {
  nlohmann::json vj = {{"kind", std::string(to_string(v.kind))}, {"hidden_size", v.hidden}, {"intermediate_size", v.intermediate},
                       {"layers", v.layers}, {"num_channels", v.channels}, {"patch_size", v.patch_size}};
  const bool qwen = v.kind == VisionKind::qwen2_5_vl || v.kind == VisionKind::qwen3_vl;
  if (!qwen && v.kind != VisionKind::lfm2_vl) vj["image_size"] = v.image_size;
  if (v.kind == VisionKind::siglip) vj["pooling_head"] = v.pooling_head;
  if (v.kind == VisionKind::llama4) {
    vj["projector_input_dim"] = v.projector_input_dim;
    vj["projector_output_dim"] = v.projector_output_dim;
    vj["vision_output_dim"] = v.output_dim;
  }
  const bool glm = v.kind == VisionKind::glm4v;
  if (v.kind == VisionKind::pixtral || qwen || glm) vj["spatial_merge_size"] = v.merge;
  if (v.kind == VisionKind::pixtral) {
    vj["projector_feature_layers"] = v.feature_layers;
    vj["projector_bias"] = v.projector_bias;
  }
  if (qwen || glm) {
    vj["temporal_patch_size"] = v.temporal_patch;
    vj["out_hidden_size"] = v.out_hidden;
  }
  if (glm) vj["attention_bias"] = v.attention_bias;
  if (v.kind == VisionKind::smolvlm) vj["scale_factor"] = v.merge;
  if (v.kind == VisionKind::lfm2_vl) {
    vj["num_patches"] = v.positions;
    vj["downsample_factor"] = v.merge;
    vj["projector_hidden_size"] = v.out_hidden;
    vj["projector_bias"] = v.projector_bias;
    vj["projector_layernorm"] = v.projector_norm;
  }
  if (v.kind == VisionKind::internvl) {
    vj["pixel_shuffle"] = v.merge;
    vj["attention_bias"] = v.attention_bias;
    vj["qk_norm"] = v.qk_norm;
    vj["rms_norm"] = v.rms_norm;
  }
  if (v.kind == VisionKind::qwen3_vl) {
    vj["num_position_embeddings"] = v.positions;
    vj["deepstack_mergers"] = v.deepstack;
  }
  return vj;
}
}  // namespace

nlohmann::json model_json(const ModelSpec& m) {
  std::int64_t moe_layers = 0;
  for (const auto& l : m.layers) moe_layers += l.moe();
  nlohmann::json j = {{"name", m.name},
                      {"family", m.family},
                      {"d_model", m.d_model},
                      {"layers", m.num_layers()},
                      {"vocab_size", m.vocab_size},
                      {"tie_embeddings", m.tie_embeddings},
                      {"lm_head_bias", m.lm_head_bias},
                      {"learned_positions", m.learned_positions},
                      {"attention", attention_json(m)},
                      {"layer_pattern", layer_pattern_json(m)},
                      {"ffn",
                       {{"kind", std::string(to_string(m.ffn.kind))}, {"ffn_dim", m.ffn.ffn_dim}, {"bias", m.ffn.bias}}},
                      {"norm",
                       {{"kind", std::string(to_string(m.norm.kind))},
                        {"per_layer", m.norm.per_layer},
                        {"final_norm", m.norm.final_norm}}}};
  if (moe_layers > 0) j["moe"] = moe_json(m, moe_layers);
  if (m.num_linear_layers() > 0) j["linear_attention"] = linear_attention_json(m.linear);
  if (m.extra.mtp_modules > 0) j["extra"]["mtp_modules"] = m.extra.mtp_modules;
  if (m.extra.vision.hidden > 0) j["extra"]["vision"] = vision_json(m.extra.vision);
  // BitNet's sub-norms and Gemma 3n's residual-stream weights, only where a family has them.
  if (m.attention.output_norm) j["attention"]["output_norm"] = true;
  if (m.ffn.inner_norm) j["ffn"]["inner_norm"] = true;
  const AuxSpec& x = m.aux;
  if (x.layer_matmul + x.layer_other + x.model_matmul + x.model_other + x.table_rows > 0)
    j["aux"] = {{"layer_matmul", x.layer_matmul}, {"layer_other", x.layer_other}, {"model_matmul", x.model_matmul},
                {"model_other", x.model_other},   {"table_rows", x.table_rows},   {"table_width", x.table_width}};
  return j;
}

std::string linear_kind_text(LinearKind k) {
  switch (k) {
    case LinearKind::mamba2: return "Mamba2";
    case LinearKind::kda: return "KDA";
    case LinearKind::short_conv: return "short convolution";
    case LinearKind::lightning: return "lightning";
    case LinearKind::gated_deltanet: break;
  }
  return "Gated DeltaNet";
}

std::string sparse_attention_note(const ModelSpec& m, const Profile& profile) {
  const IndexerSpec& x = m.attention.indexer;
  const bool fitted = profile.ops.count("indexer/prefill") > 0 && profile.ops.count("indexer/decode") > 0;
  // Predictor::indexer asks for the fp8 peak; a profile without one falls back to its bf16 (or lowest) peak.
  const std::string peak = profile.spec.peak_flop_per_s.count("fp8") ? "fp8 peak" : "peak (the profile lists no fp8 peak)";
  return "Sparse attention (" + m.name + "): each query attends to the indexer's top " + std::to_string(x.topk) +
         " keys, costed as that many keys read (gathered as fast as contiguous ones); the indexer scores every cached key "
         "with " + std::to_string(x.num_heads) + " heads of " + std::to_string(x.head_dim) +
         (fitted ? ", from " + profile.name + "'s fit of it."
                 : ", predicted by the roofline of its FLOPs at the " + peak + " and its bytes: " + profile.name +
                       " has no fit of it (mhacfg's CPU indexer kernel measures it, calibrate --device cpu; there is no CUDA "
                       "kernel for it yet).");
}

std::string linear_roofline_note(const ModelSpec& m, const Profile& profile) {
  const std::string core = "The " + linear_kind_text(m.linear.kind) + " layers' core (its recurrence and convolution) ";
  const bool kda = m.linear.kind == LinearKind::kda;  // classes of its own
  const std::string suffix = kda ? "/kda" : m.linear.kind == LinearKind::lightning ? "/lightning" : "";
  const bool prefill = profile.ops.count("linear_attention/prefill" + suffix) > 0;
  const bool decode = profile.ops.count("linear_attention/decode" + suffix) > 0;
  if (prefill && decode)
    return core + "is calibrated: " + profile.name + " fits " + (kda ? "KDA timings" : "mhacfg's linear-attention kernel") +
           " (linear_attention/prefill" + suffix + " and /decode" + suffix + ").";
  const std::string rest =
      "; its projections and the softmax layers are " +
      (profile.calibrated() ? basis_text(profile.basis()) + "." : std::string("the roofline too."));
  if (m.linear.kind == LinearKind::lightning)  // its own classes (linear_attention/*/lightning), never fitted
    return "The lightning attention layers' core (the decayed state's update and read; in prefill, attention within "
           "blocks of " + std::to_string(m.linear.block_size) + " tokens) is the roofline of " + profile.name +
           "'s ceilings: no kernel of mhacfg's runs it and no profile fits it" + rest;
  if (prefill || decode) {
    const std::string fitted = prefill ? "prefill" : "decode", missing = prefill ? "decode" : "prefill";
    return core + "is calibrated in " + fitted + " (linear_attention/" + fitted + suffix + ") and the roofline of " + profile.name +
           "'s ceilings in " + missing + rest;
  }
  if (m.linear.kind == LinearKind::short_conv)
    return "The short convolution layers' core (a depthwise convolution of " + std::to_string(m.linear.conv_kernel) +
           " taps; the gating products are elementwise) is the roofline of " + profile.name +
           "'s ceilings: no kernel of mhacfg's runs it and no profile fits it" + rest;
  if (kda)
    return core + "is the roofline of " + profile.name +
           "'s ceilings: the profile has no fit of it (calibrate --device cpu fits mhacfg's CPU kernel of it; the CUDA "
           "kernel does not run KDA; calibrate --from fits imported timings, records of kind kda)" + rest;
  return core + "is the roofline of " + profile.name +
         "'s ceilings: the profile has no fit of it (calibrate --device cpu fits mhacfg's CPU kernel; calibrate --from, "
         "imported timings)" + rest;
}

std::string profile_basis_note(const Profile& p) {
  const Basis b = p.basis();
  switch (b.kind) {
    case BasisKind::measured:
      return "Times come from " + p.name + "'s models fitted to timings on the device (" + basis_text(b) + ").";
    case BasisKind::transferred:
      return "Times come from " + b.from + "'s fitted models scaled to " + p.name + "'s datasheet (" + basis_text(b) +
             "); calibrate on the device for measured numbers.";
    case BasisKind::kernel_class:  // a profile's own basis is its fits' (kernel classes price single ops)
    case BasisKind::roofline: break;
  }
  return "Times are the bare roofline of " + p.name +
         "'s datasheet ceilings (no kernel efficiency or launch overhead); calibrate for measured numbers.";
}

std::string layer_kv_heads_text(const ModelSpec& m) {
  std::string parts;
  for (const auto& [heads, layers] : kv_heads_layers(m))
    parts += (parts.empty() ? "" : ", ") + std::to_string(heads) + " on " + std::to_string(layers);
  return parts.empty() ? "" : " (KV heads per layer: " + parts + ")";
}

std::string layer_pattern_text(const ModelSpec& m) {
  const LayerPattern p(m);
  const std::string count = std::to_string(m.num_layers()) + " layers";
  if (p.windows.empty() && p.chunks.empty() && p.linear == 0 && p.ffn_only == 0 && p.parallel == 0 && p.skipped == 0 &&
      p.linear_map_mixers == 0 && p.linear_map_ffns == 0)
    return count;
  std::string parts;
  auto part = [&](const std::string& text) { parts += (parts.empty() ? "" : ", ") + text; };
  if (p.linear > 0) part(std::to_string(p.linear) + " " + linear_kind_text(m.linear.kind));
  if (p.parallel > 0) {
    std::string local;
    for (const auto& [span, n] : p.parallel_local) local += ", " + std::to_string(n) + " local over " + std::to_string(span) + " tokens";
    part(std::to_string(p.parallel) + " " + linear_kind_text(m.linear.kind) + " beside attention" +
         (local.empty() ? "" : " (" + local.substr(2) + ")"));
  }
  for (const auto& [w, n] : p.windows) part(std::to_string(n) + " with " + std::to_string(w) + "-token windows");
  for (const auto& [c, n] : p.chunks) part(std::to_string(n) + " in " + std::to_string(c) + "-token chunks");
  if (p.global > 0) part(std::to_string(p.global) + " global");
  if (p.ffn_only > 0) part(std::to_string(p.ffn_only) + " FFN only");
  if (p.skipped > 0) part(std::to_string(p.skipped) + " skipped");
  const std::int64_t shared_kv = m.num_attention_layers() - m.num_kv_cache_layers();
  if (shared_kv > 0) part(std::to_string(shared_kv) + " reading an earlier layer's K/V");
  if (p.linear_map_mixers > 0) part(std::to_string(p.linear_map_mixers) + " with a linear layer for attention");
  if (p.linear_map_ffns > 0) part(std::to_string(p.linear_map_ffns) + " with a linear layer for the FFN");
  return count + " (" + parts + ")";
}

nlohmann::json workload_json(const Workload& w) {
  nlohmann::json j = {{"batch", w.batch},
                      {"prompt_len", w.prompt_len},
                      {"context", w.context},
                      {"kv_dtype", std::string(to_string(w.kv_dtype))},
                      {"weight_dtype", std::string(to_string(w.weight_dtype))},
                      {"tp", w.tp},
                      {"state_dtype", std::string(to_string(w.state_dtype))}};
  add_component_dtypes(j, w);
  return j;
}

void add_component_dtypes(nlohmann::json& j, const Workload& w) {
  if (w.attention_weight_dtype) j["attention_weight_dtype"] = std::string(to_string(*w.attention_weight_dtype));
  if (w.ffn_weight_dtype) j["ffn_weight_dtype"] = std::string(to_string(*w.ffn_weight_dtype));
}

std::string weights_text(const Workload& w) {
  std::string s(to_string(w.weight_dtype));
  if (w.attention_weights() == w.weight_dtype && w.ffn_weights() == w.weight_dtype) return s;
  return s + " (attention " + std::string(to_string(w.attention_weights())) + ", FFN " +
         std::string(to_string(w.ffn_weights())) + ")";
}

nlohmann::json count_json(WideCount v) {
  if (fits_int64(v)) return static_cast<std::int64_t>(v);
  return static_cast<double>(v);
}

namespace {
nlohmann::json breakdown_json(const FlopBreakdown& f) {
  return {{"projections", count_json(f.projections)}, {"attention_core", count_json(f.attention_core)},
          {"ffn", count_json(f.ffn)}, {"lm_head", count_json(f.lm_head)}, {"total", count_json(f.total)}};
}
}  // namespace

nlohmann::json counts_json(const ModelCounts& c) {
  const ParamCounts& p = c.params;
  const KvCacheCounts& kv = c.kv_cache;
  nlohmann::json j = {
      {"params",
       {{"total", p.total}, {"embedding", p.embedding}, {"lm_head", p.lm_head}, {"attention", p.attention},
        {"attention_per_layer", p.attention_per_layer}, {"indexer", p.indexer}, {"replicated", p.replicated}, {"ffn", p.ffn}, {"router", p.router}, {"norms", p.norms},
        {"active", p.active}, {"mtp", p.mtp}, {"vision", p.vision}, {"linear_attention", p.linear_attention},
        {"linear_attention_per_layer", p.linear_attention_per_layer}}},
      {"kv_cache",
       {{"dtype", std::string(to_string(kv.dtype))}, {"bytes_per_token", kv.bytes_per_token},
        {"bytes_per_token_per_layer", kv.bytes_per_token_per_layer},
        {"indexer_bytes_per_token_per_layer", kv.indexer_bytes_per_token_per_layer},
        {"bytes_per_token_beyond_window", kv.bytes_per_token_beyond_window}, {"layer_tokens", kv.layer_tokens},
        {"bytes_total", kv.bytes_total}, {"kv_heads_per_gpu", kv.kv_heads_per_gpu}, {"replication", kv.replication},
        {"bytes_per_gpu", kv.bytes_per_gpu}, {"state_dtype", std::string(to_string(kv.state_dtype))},
        {"state_bytes_per_layer", kv.state_bytes_per_layer}, {"state_bytes_per_sequence", kv.state_bytes_per_sequence}}},
      {"flops",
       {{"prefill", count_json(c.flops.prefill.total)}, {"decode_per_token", count_json(c.flops.decode_per_token.total)},
        {"decode_step", count_json(c.flops.decode_step)}, {"prefill_breakdown", breakdown_json(c.flops.prefill)},
        {"decode_per_token_breakdown", breakdown_json(c.flops.decode_per_token)}}},
      {"bytes",
       {{"decode_per_token", c.bytes.per_token}, {"decode_step", c.bytes.step}, {"weights", c.bytes.weights},
        {"kv_read", c.bytes.kv_read}, {"kv_written", c.bytes.kv_written}, {"state", c.bytes.state},
        {"arithmetic_intensity", c.bytes.arithmetic_intensity}, {"moe_experts_read_per_layer", c.bytes.experts_read}}}};
  if (p.aux > 0) j["params"]["aux"] = p.aux;  // only the families that have such weights (Gemma 3n)
  // Zero-computation experts (LongCat-Flash): `active` is an expectation; what a token uses varies.
  if (p.active_min != p.active_max) {
    j["params"]["active_dynamic"] = true;
    j["params"]["active_min"] = p.active_min;
    j["params"]["active_max"] = p.active_max;
  }
  return j;
}

nlohmann::json serving_breakdown_json(const ServingTimes& s, const EngineModel& e) {
  return {{"name", e.name},
          {"source", e.source},
          {"batch", s.batch},
          {"decode_kernels_ms", s.decode_kernels_ms},
          {"decode_other_ops_ms", s.decode_other_ops_ms},
          {"decode_kernel_gaps_ms", s.decode_gaps_ms},
          {"step_overhead_ms", s.step_overhead_ms},
          {"prefill_kernels_ms", s.prefill_kernels_ms},
          {"prefill_other_ms", s.prefill_other_ms},
          {"request_overhead_ms", s.request_overhead_ms}};
}

nlohmann::json times_json(const ModelTimes& t, TimesDetail detail) {
  struct Field {
    const char* name;
    double ModelTimes::*ms;
    TimesDetail from;  // the least detail that lists it
  };
  using D = TimesDetail;
  static const Field fields[] = {
      {"prefill_ms", &ModelTimes::prefill_ms, D::summary},
      {"prefill_attention_ms", &ModelTimes::prefill_attention_ms, D::candidate},
      {"prefill_linear_core_ms", &ModelTimes::prefill_linear_core_ms, D::full},
      {"prefill_indexer_ms", &ModelTimes::prefill_indexer_ms, D::full},
      {"decode_step_ms", &ModelTimes::decode_step_ms, D::summary},
      {"decode_attention_ms", &ModelTimes::decode_attention_ms, D::summary},
      {"decode_attention_core_ms", &ModelTimes::decode_attention_core_ms, D::candidate},
      {"decode_linear_core_ms", &ModelTimes::decode_linear_core_ms, D::summary},
      {"decode_indexer_ms", &ModelTimes::decode_indexer_ms, D::summary},
      {"decode_projections_ms", &ModelTimes::decode_projections_ms, D::candidate},
      {"decode_ffn_ms", &ModelTimes::decode_ffn_ms, D::full},
      {"decode_lm_head_ms", &ModelTimes::decode_lm_head_ms, D::full},
      {"decode_comm_ms", &ModelTimes::decode_comm_ms, D::full},
      {"tokens_per_s", &ModelTimes::tokens_per_s, D::summary},
  };
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : fields)
    if (detail >= f.from) j[f.name] = t.*f.ms;
  j["basis"] = basis_text(t.basis);
  j["basis_detail"] = basis_json(t.basis);
  return j;
}

}  // namespace mhacfg

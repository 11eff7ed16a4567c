#include "mhacfg/costmodel/predict.hpp"

#include <algorithm>
#include <cmath>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/comm.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

RangePoint range_point(const OpFeatures& f) {
  RangePoint p = {{"flop", f.flop}, {"bytes", f.bytes}, {"parallel_units", f.streams}, {"rows", f.rows}};
  if (f.head_dim > 0) p.emplace_back("head_dim", f.head_dim);
  return p;
}

Predictor::Predictor(const Profile& profile) : profile_(profile) {}

Predictor Predictor::with_working_set(double bytes) const {
  Predictor p(profile_);
  p.working_set_ = bytes;
  return p;
}

Prediction Predictor::predict(const std::string& op_class, const OpFeatures& op, const RangePoint& point,
                              DType dtype) const {
  if (const KernelClass* k = profile_.kernel_class_for(op_class)) {
    Prediction p;
    p.basis = kernel_class_op_basis(op_class, k->name);
    if (op.streams <= 0 || (op.flop <= 0 && op.bytes <= 0)) return p;  // not launched
    p.launches = 1;
    p.time_ms = kernel_class_seconds(*k, profile_, op) * 1e3;
    p.extrapolated = k->head_dim > 0 && op.head_dim != k->head_dim;  // a latent width the kernel does not run
    return p;
  }
  const auto it = profile_.ops.find(op_class);
  return predict(op_class, it != profile_.ops.end() ? &it->second : nullptr, op, point, dtype);
}

Prediction Predictor::predict(const std::string& op_class, const OpFit* fitted, const OpFeatures& op,
                              const RangePoint& point, DType dtype) const {
  OpFeatures f = op;
  f.resident_bytes = std::max(f.bytes, working_set_);
  Prediction p;
  // An op with no output (a GEMM with a zero dimension: no FFN left within a tiny budget) is not
  // launched: no time, where a fitted model would divide by its zero parallel units.
  if (f.streams <= 0 || (f.flop <= 0 && f.bytes <= 0)) {
    p.basis = fitted ? profile_.basis() : roofline_op_basis(op_class);
    return p;
  }
  p.launches = 1;
  if (!fitted) {
    p.basis = roofline_op_basis(op_class);
    const OpModel roof = roofline_model(profile_.peak_flop_per_s(compute_dtype(dtype)), profile_.spec.mem_bw_bytes_per_s);
    p.time_ms = predict_seconds(roof, f) * 1e3;
    return p;
  }
  const OpFit& fit = *fitted;
  p.basis = profile_.basis();
  p.time_ms = predict_seconds(fit.model, f) * 1e3;
  // Values that load can still combine into nonsense (a 1e300 half-point): never print it as a time.
  if (!std::isfinite(p.time_ms) || p.time_ms < 0)
    throw InputError("--profile " + profile_.name, "fits." + op_class,
                     "its fitted model predicts a non-finite time (" + std::to_string(p.time_ms) + " ms): refit the profile");
  for (const auto& [name, value] : point) {
    const auto r = fit.range.find(name);
    if (r != fit.range.end() && (value < r->second.first || value > r->second.second)) p.extrapolated = true;
  }
  return p;
}

Prediction Predictor::op(const OpClass& cls, const OpFeatures& f, DType dtype) const {
  return predict(cls.to_string(), f, range_point(f), dtype);
}

Prediction Predictor::attention(const AttentionShape& s, Phase phase, DType dtype) const {
  const AttentionOp a{phase, s};
  const OpClass own = a.op_class(dtype), plain = a.op_class();
  const std::string own_text = own.to_string(), plain_text = plain.to_string();
  // A class keyed by its KV dtype ("attention/decode/fp8") that the profile did not fit, where the plain
  // class is fitted: the plain fit with this dtype's bytes, as every profile predicted it before fp8 KV
  // had a class of its own.
  const bool fall_back = own_text != plain_text && !profile_.ops.count(own_text) && profile_.ops.count(plain_text);
  return op(fall_back ? plain : own, a.features(dtype, profile_.cpu_facts()), dtype);
}

Prediction Predictor::gemm(const GemmShape& g, DType dtype) const {
  const GemmOp a{g};
  const OpFeatures f = a.features(dtype, profile_.cpu_facts());
  const std::string own = a.op_class(dtype).to_string(), plain = a.op_class().to_string();
  const auto fit = profile_.ops.find(plain);
  if (own == plain || profile_.ops.count(own) || fit == profile_.ops.end()) return op(a.op_class(dtype), f, dtype);
  // A narrow dtype's GEMM where the profile fitted only 16-bit (or fp32) GEMMs: that fit's efficiencies
  // with its peak scaled by the datasheet ratio of the dtypes' peaks, the bytes the dtype's.
  OpFit scaled = fit->second;
  scaled.model.peak_flop_per_s *= profile_.peak_flop_per_s(compute_dtype(dtype)) / profile_.peak_flop_per_s(DType::bf16);
  Prediction p = predict(own, &scaled, f, range_point(f), dtype);
  p.basis.dtype_transferred_ops.insert(own);
  return p;
}

Prediction Predictor::linear_attention(const LinearAttentionShape& s, Phase phase, DType dtype) const {
  const LinearAttentionOp a{phase, s};
  return op(a.op_class(), a.features(dtype, profile_.cpu_facts()), dtype);
}

Prediction Predictor::indexer(const IndexerShape& s, Phase phase) const {
  const IndexerOp a{phase, s};
  return op(a.op_class(), a.features(DType::fp8, profile_.cpu_facts()), DType::fp8);
}

namespace {
void accumulate(Prediction& total, const Prediction& part, double times = 1.0) {
  total.time_ms += part.time_ms * times;
  total.launches += part.launches * times;
  total.basis = combine(total.basis, part.basis);
  total.extrapolated = total.extrapolated || part.extrapolated;
}
}  // namespace

Prediction Predictor::record(const MeasurementRecord& r) const {
  r.flops();  // one kernel call: its counts fit 64 bits
  if (const auto* g = std::get_if<GemmOp>(&r.shape)) return gemm(g->shape, r.dtype);  // its dtype's class or the transfer
  if (const auto* at = std::get_if<AttentionOp>(&r.shape)) return attention(at->shape, at->phase, r.dtype);
  const auto* block = std::get_if<AttentionBlockOp>(&r.shape);
  if (!block) return op(r.cls(), r.features(profile_.cpu_facts()), r.dtype);
  const GemmShape qkv = block->qkv_gemm(), o = block->o_gemm();
  // The three ops' inputs share the cache from one block call to the next.
  const double bytes =
      op_features(qkv, r.dtype).bytes + op_features(block->shape, r.dtype).bytes + op_features(o, r.dtype).bytes;
  const Predictor in_block = with_working_set(std::max(working_set_, bytes));
  Prediction total;
  accumulate(total, in_block.gemm(qkv, r.dtype));
  accumulate(total, in_block.attention(block->shape, block->phase, r.dtype));
  accumulate(total, in_block.gemm(o, r.dtype));
  return total;
}

namespace {

struct Accum {
  Prediction core, projections, ffn, lm_head;
  double linear_core_ms = 0;            // the part of `core` that is linear attention's
  double indexer_ms = 0;                // the part of `core` that is the indexers'
};

void ffn_time(const ModelSpec& m, const LayerSpec& layer, const Workload& w, const Predictor& p, std::int64_t tokens,
              Accum& acc, double times);

// One layer's ops on one GPU under tensor parallelism `tp`, for `tokens` new tokens of `batch`
// sequences with queries of q_len against kv_len keys.
void layer_time(const ModelSpec& m, const LayerSpec& layer, const Workload& w, const Predictor& p,
                std::int64_t batch, std::int64_t q_len, std::int64_t kv_len, bool decode, Accum& acc, double times) {
  const AttentionSpec& a = m.attention;
  const std::int64_t ffn_tokens = batch * q_len;  // the FFN/experts see every token of the step
  // Attention data parallel: each rank runs every head for its share of the requests.
  const std::int64_t tp = w.dp_attention ? 1 : w.tp;
  if (w.dp_attention) batch = (batch + w.tp - 1) / w.tp;
  const std::int64_t tokens = batch * q_len;
  const std::int64_t d = m.d_model;
  const std::int64_t heads = a.num_q_heads / tp;
  const DType wd = w.attention_weights();
  if (layer.mixer == Mixer::none) {  // an FFN-only block (Nemotron-H)
    ffn_time(m, layer, w, p, ffn_tokens, acc, times);
    return;
  }
  if (layer.mixer == Mixer::linear_map) {  // a d_model x d_model linear in place of attention, split over tp
    accumulate(acc.projections, p.gemm({tokens, std::max<std::int64_t>(1, d / tp), d}, wd), times);
    ffn_time(m, layer, w, p, ffn_tokens, acc, times);
    return;
  }
  if (layer.has_linear()) {
    const LinearAttentionSpec& la = m.linear;
    const LinearShard sh = linear_shard(m, tp);
    const std::int64_t vh = sh.v_heads;
    // in_proj_qkvz and in_proj_ba as one GEMM (Mamba2: in_proj); the core; out_proj.
    accumulate(acc.projections, p.gemm({tokens, linear_in_projection_outputs(la, sh), d}, wd), times);
    if (la.kind == LinearKind::kda)
      accumulate(acc.projections, p.gemm({tokens, kda_gate_up_outputs(la, sh), la.head_v_dim}, wd), times);
    const Prediction core = p.linear_attention(layer_linear_attention_shape(m, batch, q_len, tp),
                                               decode ? Phase::decode : Phase::prefill, w.state_dtype);
    accumulate(acc.core, core, times);
    acc.linear_core_ms += core.time_ms * times;
    accumulate(acc.projections, p.gemm({tokens, d, vh * la.head_v_dim}, wd), times);
    if (layer.mixer != Mixer::parallel) {
      ffn_time(m, layer, w, p, ffn_tokens, acc, times);
      return;
    }  // Falcon-H1: the attention beside it, then the FFN
  }
  AttentionShape s = layer_attention_shape(m, layer, batch, q_len, kv_len, decode);
  s.num_q_heads = heads;
  if (a.variant == AttentionVariant::mla) {
    const MlaSpec& l = a.mla;
    if (!decode) s.num_kv_heads = heads;  // decompressed K/V per head
    if (l.q_lora_rank > 0) {
      accumulate(acc.projections, p.gemm({tokens, l.q_lora_rank, d}, wd), times);
      accumulate(acc.projections, p.gemm({tokens, heads * a.head_dim, l.q_lora_rank}, wd), times);
    } else {
      accumulate(acc.projections, p.gemm({tokens, heads * a.head_dim, d}, wd), times);
    }
    accumulate(acc.projections, p.gemm({tokens, l.kv_lora_rank + l.rope_head_dim, d}, wd), times);
    if (decode) {  // absorbed: q_nope W_UK before attention, W_UV after it
      accumulate(acc.projections, p.gemm({tokens, heads * l.kv_lora_rank, l.qk_nope_head_dim}, wd), times);
      accumulate(acc.projections, p.gemm({tokens, heads * a.v_head_dim, l.kv_lora_rank}, wd), times);
    } else {
      accumulate(acc.projections, p.gemm({tokens, heads * (l.qk_nope_head_dim + a.v_head_dim), l.kv_lora_rank}, wd), times);
    }
  } else {
    // This layer's KV heads (layer_kv_heads) split over tp or replicated, as its cache is (count_kv_cache).
    const std::int64_t kv_heads_per_gpu = kv_head_shard(layer_kv_heads(m, layer), tp, "num_kv_heads").per_gpu;
    s.num_kv_heads = kv_heads_per_gpu;
    const std::int64_t q_width = heads * a.head_dim * (a.output_gate ? 2 : 1);  // + the output gate
    // A layer reading an earlier layer's K/V (Gemma 3n's shared layers) projects only its queries.
    const std::int64_t kv_width = layer.shared_kv ? 0 : kv_heads_per_gpu * (a.head_dim + a.v_head_dim);
    accumulate(acc.projections, p.gemm({tokens, q_width + kv_width, d}, wd), times);
  }
  if (a.sparse() && !layer.shared_topk) {  // the indexer, whole on every GPU: wq_b, then wk with weights_proj, then the scores
    const IndexerSpec& x = a.indexer;
    const char* what = "indexer widths";
    accumulate(acc.projections, p.gemm({tokens, mul(x.num_heads, x.head_dim, what), indexer_query_input(m)}, wd), times);
    accumulate(acc.projections, p.gemm({tokens, add(x.head_dim, x.num_heads, what), d}, wd), times);
    const Prediction scores = p.indexer(layer_indexer_shape(m, batch, q_len, kv_len), decode ? Phase::decode : Phase::prefill);
    accumulate(acc.core, scores, times);
    acc.indexer_ms += scores.time_ms * times;
  }
  const Prediction core = p.attention(s, decode ? Phase::decode : Phase::prefill, w.kv_dtype);
  accumulate(acc.core, core, times);
  accumulate(acc.projections, p.gemm({tokens, d, heads * a.v_head_dim}, wd), times);
  ffn_time(m, layer, w, p, ffn_tokens, acc, times);
}

// One layer's FFN or experts on one GPU for `tokens` tokens.
void ffn_time(const ModelSpec& m, const LayerSpec& layer, const Workload& w, const Predictor& p, std::int64_t tokens,
              Accum& acc, double times) {
  if (layer.ffn == LayerFfn::none) return;  // a mixer-only block (Nemotron-H)
  const std::int64_t tp = w.tp;
  const std::int64_t d = m.d_model;
  const DType wd = w.ffn_weights();
  if (layer.ffn == LayerFfn::linear_map) {  // a d_model x d_model linear in place of the FFN, split over tp
    accumulate(acc.ffn, p.gemm({tokens, std::max<std::int64_t>(1, d / tp), d}, wd), times);
    return;
  }
  const std::int64_t up = m.ffn.kind == FfnKind::gated ? 2 : 1;  // gate and up fused
  if (!layer.moe()) {
    const std::int64_t f = dense_ffn_dim(m, layer) / tp;  // the layer's own width (Llama-Nemotron)
    accumulate(acc.ffn, p.gemm({tokens, up * f, d}, wd), times);
    accumulate(acc.ffn, p.gemm({tokens, d, f}, wd), times);
    return;
  }
  const MoeSpec& moe = m.moe;
  // The router, with Qwen2-MoE's shared-FFN gate as one more output.
  accumulate(acc.ffn, p.gemm({tokens, router_outputs(moe), d}, w.weight_dtype), times);
  if (moe.num_shared_experts > 0) {
    const std::int64_t f = shared_ffn_width(moe) / tp;
    accumulate(acc.ffn, p.gemm({tokens, up * f, d}, wd), times);
    accumulate(acc.ffn, p.gemm({tokens, d, f}, wd), times);
  }
  // Uniform routing: E (1 - (1 - k/E)^tokens) experts run, sharing tokens * k rows. They run as one
  // grouped GEMM per matrix, as serving engines' fused MoE kernels do: the active experts' weights side
  // by side, `rows` rows each. It has the FLOPs and weight bytes of one GEMM per expert, and one
  // launch's fixed cost instead of one per expert (on the H200 a small cuBLAS GEMM costs ~10 us
  // whatever its size: Qwen3-30B-A3B's 8 experts x 2 matrices x 48 layers would add ~7 ms per token).
  // Under expert parallelism a GPU holds E / ep whole experts and runs the tokens routed to them.
  // With zero-computation experts (LongCat-Flash) the router picks top_k of routed + zero experts and
  // only the picks of routed ones run: expected_routed_experts rows per token.
  const double e = double(moe.num_routed_experts);
  const double scored = e + double(moe.zero_experts);
  const double ep = double(w.ep);
  const double experts = e / ep * (1.0 - std::pow(1.0 - double(moe.top_k) / scored, double(tokens)));
  const double routed_rows = moe.zero_experts > 0 ? double(tokens) * expected_routed_experts(moe) : double(tokens * moe.top_k);
  const std::int64_t rows = std::max<std::int64_t>(1, std::llround(routed_rows / ep / std::max(experts, 1.0)));
  const std::int64_t slice = w.ep > 1 ? moe.expert_ffn_dim : moe.expert_ffn_dim / tp;
  const std::int64_t width = std::max<std::int64_t>(1, std::llround(experts * double(slice)));
  accumulate(acc.ffn, p.gemm({rows, up * width, d}, wd), times);
  accumulate(acc.ffn, p.gemm({rows, d, width}, wd), times);
}

struct Comm {
  double ms = 0;
  double collectives = 0;
  void add(double t, double times) {
    if (t <= 0) return;
    ms += t * times;
    collectives += times;
  }
};

// The collectives of one step that moves `tokens` tokens through every layer. Tensor parallel: each
// mixer and each FFN ends in an all-reduce (two per layer, one per Nemotron-H block, three per
// Falcon-H1 layer). Attention data parallel: the attention needs none; the FFN gathers every rank's
// tokens and scatters them back (an all-reduce's traffic), or under expert parallelism dispatches
// each token to its top-k experts' GPUs and combines them (two all-to-alls). Pipeline stages pass
// the activations on (pp - 1 sends).
Comm step_comm(const ModelSpec& m, const Workload& w, const Profile& prof, double tokens) {
  Comm c;
  const Interconnect& ic = prof.spec.interconnect;
  // `tokens` rows of d_model activations in the activation dtype (docs/cost-model.md, "Communication").
  const double act = tokens * double(m.d_model) * double(dtype_bits(activation_dtype(w))) / 8.0;
  const double ar = all_reduce_ms(ic, w, w.tp, act);  // closing a row-parallel projection under tp
  for (const auto& l : m.layers) {
    if (!w.dp_attention) c.add(ar, double(l.mixer != Mixer::none) + double(l.mixer == Mixer::parallel));
    if (l.ffn == LayerFfn::none) continue;
    if (w.dp_attention && l.moe() && w.ep > 1)  // each rank's tokens, top_k copies, out and back
      c.add(all_to_all_ms(ic, w, w.ep, act / double(w.tp) * expected_routed_experts(m.moe)), 2.0);
    else
      c.add(ar, 1.0);
  }
  if (w.pp > 1) c.add(all_to_all_ms(ic, w, 2, act), double(w.pp - 1));  // a send to the next stage
  return c;
}

Accum phase_time(const ModelSpec& m, const Workload& w, const Predictor& p, std::int64_t batch, std::int64_t q_len,
                 std::int64_t kv_len, bool decode) {
  Accum acc;
  std::size_t i = 0;
  while (i < m.layers.size()) {  // runs of identical layers are predicted once
    std::size_t j = i + 1;
    while (j < m.layers.size() && same_kind(m.layers[j], m.layers[i])) ++j;
    layer_time(m, m.layers[i], w, p, batch, q_len, kv_len, decode, acc, double(j - i));
    i = j;
  }
  accumulate(acc.lm_head, p.gemm({batch, m.vocab_size / w.tp, m.d_model}, w.weight_dtype));
  return acc;
}

}  // namespace

ModelTimes predict_model(const ModelSpec& m, const Workload& w, const Predictor& whole) {
  ModelTimes t;
  const KvCacheCounts kv = count_kv_cache(m, w);
  // A step runs every layer's ops in turn: the weights and the KV cache on this GPU compete for the
  // cache between one call of an op and the next (what a warm-cache CPU profile needs to know).
  const double weight_bytes = served_weight_bytes_per_gpu(count_params(m), w);
  const Predictor p = whole.with_working_set(weight_bytes + double(kv.bytes_per_gpu));
  const Accum pre = phase_time(m, w, p, w.batch, w.prompt_len, w.prompt_len, false);
  const Comm pre_comm = step_comm(m, w, p.profile(), double(w.batch * w.prompt_len));
  t.prefill_attention_ms = pre.core.time_ms + pre.projections.time_ms;
  t.prefill_ms = t.prefill_attention_ms + pre.ffn.time_ms + pre.lm_head.time_ms + pre_comm.ms;
  t.prefill_launches = pre.core.launches + pre.projections.launches + pre.ffn.launches + pre.lm_head.launches +
                       pre_comm.collectives;

  // Pipeline stages decode micro-batches of batch / pp in turn: a token passes every stage, and the
  // stages work on the other micro-batches meanwhile (a step is a micro-batch's trip through them).
  const std::int64_t micro = (w.batch + w.pp - 1) / w.pp;
  const Accum dec = phase_time(m, w, p, micro, 1, w.context, true);
  const Comm dec_comm = step_comm(m, w, p.profile(), double(micro));
  t.decode_attention_core_ms = dec.core.time_ms;
  t.decode_linear_core_ms = dec.linear_core_ms;
  t.prefill_linear_core_ms = pre.linear_core_ms;
  t.decode_indexer_ms = dec.indexer_ms;
  t.prefill_indexer_ms = pre.indexer_ms;
  t.decode_projections_ms = dec.projections.time_ms;
  t.decode_attention_ms = dec.core.time_ms + dec.projections.time_ms;
  t.decode_ffn_ms = dec.ffn.time_ms;
  t.decode_lm_head_ms = dec.lm_head.time_ms;
  t.decode_comm_ms = dec_comm.ms;
  t.decode_step_ms = t.decode_attention_ms + t.decode_ffn_ms + t.decode_lm_head_ms + t.decode_comm_ms;
  t.tokens_per_s = double(w.batch) / (t.decode_step_ms * 1e-3);
  t.decode_launches = dec.core.launches + dec.projections.launches + dec.ffn.launches + dec.lm_head.launches +
                      dec_comm.collectives;
  for (const Accum* a : {&pre, &dec}) {
    for (const Prediction* x : {&a->core, &a->projections, &a->ffn, &a->lm_head}) {
      t.basis = combine(t.basis, x->basis);
      t.extrapolated = t.extrapolated || x->extrapolated;
    }
  }
  return t;
}

std::string time_basis(const ModelTimes& a, const ModelTimes& b) { return basis_text(combine(a.basis, b.basis)); }

}  // namespace mhacfg

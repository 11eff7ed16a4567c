// The recommender's search space: the query widths, head counts, KV heads and MLA ranks it enumerates
// (each candidate the base model with another attention; recommend.cpp evaluates and ranks them).
#include <algorithm>
#include <set>

#include "mhacfg/configurator/inputs/model_input.hpp"
#include "recommend_internal.hpp"

namespace mhacfg {

namespace {

// Query-projection widths searched: 7/8 d_model (Gemma-2 runs 0.89) to 2 d_model (Qwen3-0.6B) on a
// grid of d_model/8, at least 64.
std::vector<std::int64_t> q_widths(std::int64_t d) {
  const std::int64_t step = std::max<std::int64_t>(64, d / 8 / 64 * 64);
  std::set<std::int64_t> w = {d};
  for (std::int64_t x = (7 * d / 8 + step - 1) / step * step; x <= 2 * d; x += step) w.insert(x);
  return {w.begin(), w.end()};
}

// MLA's query heads (of 128): the widths above, and on to DeepSeek-V3's 128 heads of 128 on d_model
// 7168 (2.29 d_model; V2: 128 heads on 5120, 3.2 d_model), to 3.25 d_model; with every power of two in range.
std::vector<std::int64_t> mla_heads(std::int64_t d) {
  const std::int64_t step = std::max<std::int64_t>(64, d / 8 / 64 * 64);
  std::set<std::int64_t> h;
  for (std::int64_t x = (7 * d / 8 + step - 1) / step * step; x <= 13 * d / 4; x += step)
    if (x % 128 == 0) h.insert(x / 128);
  for (std::int64_t p = 1; p * 128 <= 13 * d / 4; p *= 2)
    if (p * 128 >= 7 * d / 8) h.insert(p);
  return {h.begin(), h.end()};
}

// No query compression, and from d_model 4096 up also DeepSeek's ~3/8 d_model (V2: 1536 of 5120).
std::vector<std::int64_t> mla_q_lora_ranks(std::int64_t d) {
  if (d < 4096) return {0};
  return {0, (3 * d / 8 + 64) / 128 * 128};
}

}  // namespace

// Every variant is enumerated; those outside --variants are evaluated only to be reported.
// With a base model every candidate is that model with another attention; its biases, q/k norms,
// sinks and output gate carry over to the MHA/GQA/MQA candidates (not from an MLA base, whose flags mean other things);
// a sparse model's indexer carries over to every candidate (the top-k selection is independent of the heads).
std::vector<ModelSpec> enumerate(const RecommendOptions& o, const Shape& shape) {
  std::vector<ModelSpec> out;
  ModelSpec base = o.base ? *o.base : baseline(shape.d_model, shape.layers, o.vocab);
  if (!o.base) apply_layer_pattern(o.layer_pattern, base);  // recommend() applied it to a base model
  base.name = "candidate";
  for (LayerSpec& l : base.layers) l.kv_heads = 0;  // a candidate's KV heads are the same in every layer
  const AttentionSpec flags = base.attention.variant == AttentionVariant::mla ? AttentionSpec{} : base.attention;
  for (std::int64_t width : q_widths(shape.d_model)) {
    for (std::int64_t hd = 32; hd <= 256; hd += 8) {
        if (width % hd != 0) continue;
        const std::int64_t nq = width / hd;
        for (std::int64_t nkv = 1; nkv <= nq; ++nkv) {
          if (nq % nkv != 0) continue;
          const AttentionVariant v = variant_for_heads(nq, nkv);
          ModelSpec m = base;
          m.attention = AttentionSpec{v, nq, nkv, hd, hd, flags.q_bias, flags.k_bias, flags.v_bias,
                                      flags.o_bias, flags.qk_norm, flags.sinks, {}, flags.qk_norm_full_width,
                                      flags.output_gate};
          m.attention.indexer = base.attention.indexer;
          out.push_back(std::move(m));
        }
      }
  }
  // MLA as DeepSeek-V2/V3 build it: per-head nope and value width 128, RoPE 64, latent 2..8 x 128;
  // query compression from d_model 4096 up.
  const std::int64_t vhd = 128;
  for (std::int64_t nq : mla_heads(shape.d_model))
    for (std::int64_t mult : {2, 3, 4, 6, 8})
      for (std::int64_t q_lora : mla_q_lora_ranks(shape.d_model)) {
        ModelSpec m = base;
        m.attention = AttentionSpec{AttentionVariant::mla, nq, nq, vhd + 64, vhd, false, false, false, false, false, false, {}};
        m.attention.mla = MlaSpec{q_lora, mult * vhd, vhd, 64};
        m.attention.indexer = base.attention.indexer;
        out.push_back(std::move(m));
      }
  if (o.index_topk > 0) {  // each design dense and sparse
    IndexerSpec x = base.attention.sparse() ? base.attention.indexer
                                            : IndexerSpec{CustomDefaults::indexer_heads, CustomDefaults::indexer_head_dim, 0};
    x.topk = o.index_topk;
    const std::size_t n = out.size();
    for (std::size_t i = 0; i < n; ++i) {
      ModelSpec sparse = out[i];  // a sparse base's layers that share the top-k keep sharing it
      sparse.attention.indexer = x;
      remove_indexer(out[i]);
      out.push_back(std::move(sparse));
    }
  }
  return out;
}

}  // namespace mhacfg

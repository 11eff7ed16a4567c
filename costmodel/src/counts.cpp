// Parameter, KV-cache, FLOP and byte counts: the one place these are computed (kernels, benchmarks and
// the time model count through these functions, never their own copies).
#include "mhacfg/costmodel/counts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "layer_kinds.hpp"

namespace mhacfg {

void validate(const Workload& w) {
  if (w.batch <= 0) throw InputError("batch", std::to_string(w.batch), "must be positive");
  if (w.prompt_len <= 0) throw InputError("prompt_len", std::to_string(w.prompt_len), "must be positive");
  if (w.context <= 0) throw InputError("context", std::to_string(w.context), "must be positive");
  if (w.tp <= 0) throw InputError("tp", std::to_string(w.tp), "must be positive");
  if (w.ep <= 0) throw InputError("ep", std::to_string(w.ep), "must be positive");
  if (w.pp <= 0) throw InputError("pp", std::to_string(w.pp), "must be positive");
  if (w.nodes < 0) throw InputError("nodes", std::to_string(w.nodes), "must be 0 (auto) or positive");
}

namespace {

constexpr const char* kParams = "parameter count";
constexpr const char* kKv = "KV-cache bytes";
constexpr const char* kFlops = "FLOP count";
constexpr const char* kBytes = "decode bytes";

bool is_mla(const ModelSpec& m) { return m.attention.variant == AttentionVariant::mla; }

std::int64_t norm_params(const ModelSpec& m, std::int64_t width) {
  return m.norm.kind == NormKind::layernorm ? 2 * width : width;  // LayerNorm: weight + bias
}

// Weight elements of one dense FFN of width f: gated = gate, up (d x f) and down (f x d).
std::int64_t ffn_matrix_params(const ModelSpec& m, std::int64_t f) {
  return mul(m.ffn.kind == FfnKind::gated ? 3 : 2, m.d_model, f, kParams);
}
std::int64_t ffn_params(const ModelSpec& m, std::int64_t f) {
  std::int64_t p = ffn_matrix_params(m, f);
  if (m.ffn.bias) p = add(p, (m.ffn.kind == FfnKind::gated ? 2 * f : f) + m.d_model, kParams);
  if (m.ffn.inner_norm) p = add(p, norm_params(m, f), kParams);  // BitNet's ffn_sub_norm before down_proj
  return add(p, m.ffn.activation_params, kParams);
}

std::int64_t attention_projection_weights(const ModelSpec& m, std::int64_t kv_heads);

// The lightning indexer's matmul weights (0 without one): wq_b, and wk beside weights_proj.
std::int64_t indexer_matmul_weights(const ModelSpec& m) {
  const IndexerSpec& x = m.attention.indexer;
  if (!m.attention.sparse()) return 0;
  return add(mul(indexer_query_input(m), x.num_heads, x.head_dim, kParams), mul(m.d_model, add(x.head_dim, x.num_heads, kParams), kParams),
             kParams);
}

// Matmul weight elements a token passes through in the attention projections (and indexer) of one layer
// of `kv_heads` KV heads (layer_kv_heads).
std::int64_t attention_matmul_weights(const ModelSpec& m, std::int64_t kv_heads) {
  return add(attention_projection_weights(m, kv_heads), indexer_matmul_weights(m), kParams);
}

std::int64_t attention_projection_weights(const ModelSpec& m, std::int64_t kv_heads) {
  const AttentionSpec& a = m.attention;
  const std::int64_t d = m.d_model;
  if (is_mla(m)) {
    const MlaSpec& l = a.mla;
    const std::int64_t q_out = mul(a.num_q_heads, a.head_dim, kParams);
    const std::int64_t q = l.q_lora_rank > 0 ? add(mul(d, l.q_lora_rank, kParams), mul(l.q_lora_rank, q_out, kParams), kParams)
                                             : mul(d, q_out, kParams);
    const std::int64_t kv_a = mul(d, l.kv_lora_rank + l.rope_head_dim, kParams);
    const std::int64_t kv_b = mul(l.kv_lora_rank, a.num_q_heads, l.qk_nope_head_dim + a.v_head_dim, kParams);
    const std::int64_t o = mul(a.num_q_heads, a.v_head_dim, d, kParams);
    return add(add(q, kv_a, kParams), add(kv_b, o, kParams), kParams);
  }
  const std::int64_t q = mul(mul(d, a.num_q_heads, a.head_dim, kParams), a.output_gate ? 2 : 1, kParams);  // + the gate
  const std::int64_t k = mul(d, kv_heads, a.head_dim, kParams);
  const std::int64_t v = mul(d, kv_heads, a.v_head_dim, kParams);
  const std::int64_t o = mul(a.num_q_heads, a.v_head_dim, d, kParams);
  return add(add(q, k, kParams), add(v, o, kParams), kParams);
}

// The matmul weights of one MHA/GQA layer's K and V projections, which a layer reading another's cache
// (LayerSpec::shared_kv) does not run; 0 for MLA (no layer shares its latent).
std::int64_t kv_matmul_weights(const ModelSpec& m, std::int64_t kv_heads) {
  const AttentionSpec& a = m.attention;
  if (is_mla(m)) return 0;
  return mul(m.d_model, kv_heads, a.head_dim + a.v_head_dim, kParams);
}

// AuxSpec's parameters beside the embedding table: every layer's and the model's.
std::int64_t aux_params(const ModelSpec& m) {
  const AuxSpec& x = m.aux;
  return add(mul(m.num_layers(), add(x.layer_matmul, x.layer_other, kParams), kParams), add(x.model_matmul, x.model_other, kParams),
             kParams);
}
// AuxSpec's matmul weights one token passes.
std::int64_t aux_matmul_weights(const ModelSpec& m) {
  return add(mul(m.num_layers(), m.aux.layer_matmul, kFlops), m.aux.model_matmul, kFlops);
}

// Routed-expert weights of one MoE layer.
std::int64_t expert_params(const ModelSpec& m) { return ffn_params(m, m.moe.expert_ffn_dim); }
// The router, and Qwen2-MoE's gate on the shared FFN (one more output of the router's input); it scores
// the zero-computation experts too (LongCat-Flash), and its bias covers every expert it scores.
std::int64_t router_params(const ModelSpec& m) {
  const std::int64_t scored = add(m.moe.num_routed_experts, m.moe.zero_experts, kParams);
  return add(mul(router_outputs(m.moe), m.d_model, kParams), m.moe.router_bias ? scored : 0, kParams);
}
std::int64_t shared_expert_params(const ModelSpec& m) {
  const std::int64_t width = shared_ffn_width(m.moe);
  return width > 0 ? ffn_params(m, width) : 0;
}

// A d_model x d_model linear layer in place of attention or of the FFN (Llama-Nemotron's replace_with_linear).
std::int64_t linear_map_params(const ModelSpec& m) { return mul(m.d_model, m.d_model, kParams); }
std::int64_t linear_map_mixers(const ModelSpec& m) {
  return std::count_if(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) { return l.mixer == Mixer::linear_map; });
}

// FFN-side parameters of one layer (dense FFN, or experts + shared experts), without the router.
std::int64_t layer_ffn_params(const ModelSpec& m, const LayerSpec& l) {
  if (l.ffn == LayerFfn::none) return 0;
  if (l.ffn == LayerFfn::linear_map) return linear_map_params(m);
  if (!l.moe()) return ffn_params(m, dense_ffn_dim(m, l));
  return add(mul(m.moe.num_routed_experts, expert_params(m), kParams), shared_expert_params(m), kParams);
}

// Norms of one layer: norm.per_layer, half before (and after) the mixer, half the FFN's; a layer whose
// attention or FFN is skipped (Llama-Nemotron) has no norm for it. A one-norm block (Falcon-7B's shared
// norm, Nemotron-H's single-module blocks) keeps its norm.
std::int64_t layer_norm_count(const ModelSpec& m, const LayerSpec& l) {
  const std::int64_t half = m.norm.per_layer / 2;
  return m.norm.per_layer - (l.mixer == Mixer::none ? half : 0) - (l.ffn == LayerFfn::none ? half : 0);
}

std::int64_t layer_params(const ModelSpec& m, const LayerSpec& l) {
  std::int64_t mixer = add(l.softmax() ? attention_params(m, layer_kv_heads(m, l)) : 0,
                           l.has_linear() ? linear_attention_params_per_layer(m) : 0, kParams);
  if (l.mixer == Mixer::linear_map) mixer = linear_map_params(m);
  std::int64_t p = add(mixer, layer_ffn_params(m, l), kParams);
  if (l.moe()) p = add(p, router_params(m), kParams);
  return add(p, mul(layer_norm_count(m, l), norm_params(m, m.d_model), kParams), kParams);
}

// FLOPs of `tokens` tokens through matmuls of `weights` weight elements: 2 per multiply-add.
WideCount matmul_flops(std::int64_t tokens, std::int64_t weights) {
  return wide_mul(wide_mul(2, tokens, kFlops), weights, kFlops);
}

// The routed experts' matmuls for `tokens` tokens in one MoE layer: top_k experts each; with
// zero-computation experts the expected top_k x routed / (routed + zero) (expected_routed_experts),
// rounded down.
WideCount routed_expert_flops(const ModelSpec& m, std::int64_t tokens) {
  const MoeSpec& moe = m.moe;
  const std::int64_t matrix = ffn_matrix_params(m, moe.expert_ffn_dim);
  if (moe.zero_experts <= 0) return matmul_flops(tokens, mul(moe.top_k, matrix, kFlops));
  const WideCount all_real = wide_mul(matmul_flops(tokens, matrix), mul(moe.top_k, moe.num_routed_experts, kFlops), kFlops);
  return all_real / (WideCount(moe.num_routed_experts) + moe.zero_experts);
}

// FFN FLOPs for `tokens` tokens through one layer: matmuls of the dense FFN, or the router, top_k
// routed experts and the shared experts.
WideCount layer_ffn_flops(const ModelSpec& m, const LayerSpec& l, std::int64_t tokens) {
  if (l.ffn == LayerFfn::none) return 0;
  if (l.ffn == LayerFfn::linear_map) return matmul_flops(tokens, linear_map_params(m));  // x W
  if (!l.moe()) return matmul_flops(tokens, ffn_matrix_params(m, dense_ffn_dim(m, l)));  // x W_gate, x W_up, h W_down
  const WideCount router = matmul_flops(tokens, mul(m.d_model, router_outputs(m.moe), kFlops));  // x W_router (+ the shared gate)
  const WideCount routed = routed_expert_flops(m, tokens);
  const WideCount shared = matmul_flops(tokens, ffn_matrix_params(m, shared_ffn_width(m.moe)));
  return wide_add(router, wide_add(routed, shared, kFlops), kFlops);
}

// Cached elements per token in one layer of `kv_heads` KV heads (layer_kv_heads).
std::int64_t kv_elements_per_token_per_layer(const ModelSpec& m, std::int64_t kv_heads) {
  const AttentionSpec& a = m.attention;
  if (is_mla(m)) return a.mla.kv_lora_rank + a.mla.rope_head_dim;  // the compressed latent + RoPE key
  return mul(kv_heads, a.head_dim + a.v_head_dim, kKv);            // K and V of every KV head
}
std::int64_t kv_elements_per_token(const ModelSpec& m, const LayerSpec& l) {
  return kv_elements_per_token_per_layer(m, layer_kv_heads(m, l));
}

std::int64_t cached_tokens(const LayerSpec& l, std::int64_t context) {
  return l.full_attention() ? context : std::min(context, l.local_span());
}

// Tokens cached over the layers with a cache of their own (a layer sharing another's K/V holds none).
std::int64_t layer_tokens(const LayerKinds& kinds, std::int64_t context) {
  return kinds.sum(kKv, [&](const LayerSpec& l) { return l.shared_kv ? 0 : cached_tokens(l, context); });
}

// The softmax layers grouped by their KV heads (layer_kv_heads), in the order the counts first appear:
// one group unless layers have KV heads of their own (LayerSpec::kv_heads). `sum` is f(layer) summed
// over the group's layers (1: how many; cached tokens), in `quantity`'s overflow check.
struct KvHeadGroup {
  std::int64_t kv_heads = 0;
  std::int64_t sum = 0;
};
template <typename F>
std::vector<KvHeadGroup> kv_head_groups(const ModelSpec& m, const LayerKinds& kinds, const char* quantity, F f) {
  std::vector<std::int64_t> heads;
  const auto note = [&](const LayerSpec& l) {
    if (l.softmax() && std::find(heads.begin(), heads.end(), layer_kv_heads(m, l)) == heads.end()) heads.push_back(layer_kv_heads(m, l));
  };
  for (std::size_t k = 0; k < kinds.n; ++k) note(*kinds.kinds[k].layer);
  for (const LayerSpec* l : kinds.rest) note(*l);
  std::vector<KvHeadGroup> groups;
  for (const std::int64_t h : heads)
    groups.push_back({h, kinds.sum(quantity, [&](const LayerSpec& l) -> std::int64_t {
                        return l.softmax() && layer_kv_heads(m, l) == h ? f(l) : 0;
                      })});
  return groups;
}

std::int64_t moe_layer_count(const ModelSpec& m) {
  return std::count_if(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) { return l.moe(); });
}

std::int64_t linear_layer_count(const ModelSpec& m) { return m.num_linear_layers(); }

void finish(FlopBreakdown& f) {
  f.total = wide_add(wide_add(f.projections, f.attention_core, kFlops), wide_add(f.ffn, f.lm_head, kFlops), kFlops);
}

}  // namespace

std::int64_t attention_params_per_layer(const ModelSpec& m) { return attention_params(m, m.attention.num_kv_heads); }

std::int64_t attention_params(const ModelSpec& m, std::int64_t kv_heads) {
  const AttentionSpec& a = m.attention;
  std::int64_t p = attention_matmul_weights(m, kv_heads);
  if (is_mla(m)) {
    const MlaSpec& l = a.mla;
    if (l.q_lora_rank > 0) p = add(p, l.q_lora_rank * (a.q_bias ? 2 : 1), kParams);  // q_a_layernorm (+ q_a bias)
    p = add(p, l.kv_lora_rank + (a.k_bias ? l.kv_lora_rank + l.rope_head_dim : 0), kParams);  // kv_a_layernorm (+ bias)
    // Without query compression q_proj has no bias (DeepSeek's modelling: bias=False whatever
    // attention_bias says), so q_bias adds nothing there.
  } else {
    if (a.q_bias) p = add(p, a.num_q_heads * a.head_dim, kParams);
    if (a.k_bias) p = add(p, kv_heads * a.head_dim, kParams);
    if (a.v_bias) p = add(p, kv_heads * a.v_head_dim, kParams);
    if (a.qk_norm && a.qk_norm_full_width)  // q_norm and k_norm over all heads' widths
      p = add(p, norm_params(m, mul(a.num_q_heads + kv_heads, a.head_dim, kParams)), kParams);
    else if (a.qk_norm)
      p = add(p, norm_params(m, 2 * a.head_dim), kParams);  // q_norm and k_norm, shared by the heads
  }
  if (a.o_bias) p = add(p, m.d_model, kParams);
  if (a.output_norm) p = add(p, norm_params(m, mul(a.num_q_heads, a.v_head_dim, kParams)), kParams);  // before o_proj
  if (a.sinks) p = add(p, a.num_q_heads, kParams);  // one sink logit per query head
  if (a.sparse()) p = add(p, mul(2, a.indexer.head_dim, kParams), kParams);  // the indexer's k_norm: a LayerNorm's weight and bias
  return p;
}

namespace {
// MLA's down-projections of one layer, which serving engines replicate under tp: q_a_proj with
// q_a_layernorm (and q_a's bias) when queries are compressed, kv_a_proj_with_mqa with kv_a_layernorm
// (and its bias); 0 for other attention.
std::int64_t mla_down_params_per_layer(const ModelSpec& m) {
  if (!is_mla(m)) return 0;
  const AttentionSpec& a = m.attention;
  const MlaSpec& l = a.mla;
  const std::int64_t kv_out = l.kv_lora_rank + l.rope_head_dim;
  std::int64_t p = add(mul(m.d_model, kv_out, kParams), l.kv_lora_rank + (a.k_bias ? kv_out : 0), kParams);
  if (l.q_lora_rank > 0) p = add(p, add(mul(m.d_model, l.q_lora_rank, kParams), l.q_lora_rank * (a.q_bias ? 2 : 1), kParams), kParams);
  return p;
}

// The K and V projections with their biases of an MHA/GQA layer of `kv_heads` KV heads.
std::int64_t kv_projection_params_per_layer(const ModelSpec& m, std::int64_t kv_heads) {
  const AttentionSpec& a = m.attention;
  const std::int64_t k = mul(add(m.d_model, a.k_bias ? 1 : 0, kParams), kv_heads, a.head_dim, kParams);
  return add(k, mul(add(m.d_model, a.v_bias ? 1 : 0, kParams), kv_heads, a.v_head_dim, kParams), kParams);
}

}  // namespace

static ParamCounts count_params(const ModelSpec& m, const LayerKinds& kinds) {
  ParamCounts p;
  const std::int64_t d = m.d_model;
  p.embedding = add(mul(m.vocab_size + m.learned_positions, d, kParams), mul(m.aux.table_rows, m.aux.table_width, kParams), kParams);
  p.lm_head = add(m.tie_embeddings ? 0 : mul(m.vocab_size, d, kParams), m.lm_head_bias ? m.vocab_size : 0, kParams);
  p.attention_per_layer = attention_params_per_layer(m);
  // wq_b, wk, weights_proj and k_norm's weight and bias in every softmax layer with an indexer of its
  // own; attention_per_layer is such a layer's, and a layer that shares the top-k has no indexer.
  const std::int64_t indexer_per_layer =
      m.attention.sparse() ? add(indexer_matmul_weights(m), mul(2, m.attention.indexer.head_dim, kParams), kParams) : 0;
  const std::int64_t sharing = m.num_attention_layers() - m.num_indexer_layers();
  // Each softmax layer with its own KV heads (layer_kv_heads).
  p.attention = kinds.sum(kParams, [&](const LayerSpec& l) { return l.softmax() ? attention_params(m, layer_kv_heads(m, l)) : 0; }) -
                mul(indexer_per_layer, sharing, kParams);
  // Linear layers in place of attention (Llama-Nemotron) count as attention: they take its place and dtype.
  p.attention = add(p.attention, mul(linear_map_params(m), linear_map_mixers(m), kParams), kParams);
  p.indexer = mul(indexer_per_layer, m.num_indexer_layers(), kParams);
  p.linear_attention_per_layer = linear_attention_params_per_layer(m);
  p.linear_attention = mul(p.linear_attention_per_layer, linear_layer_count(m), kParams);
  p.ffn = kinds.sum(kParams, [&](const LayerSpec& l) { return layer_ffn_params(m, l); });
  const std::int64_t moe_layers = moe_layer_count(m);
  p.router = mul(moe_layers, router_params(m), kParams);
  p.routed_experts = moe_layers > 0 ? mul(moe_layers, m.moe.num_routed_experts, expert_params(m), kParams) : 0;
  p.norms = add(mul(kinds.sum(kParams, [&](const LayerSpec& l) { return layer_norm_count(m, l); }), norm_params(m, d), kParams),
                m.norm.final_norm ? norm_params(m, d) : 0, kParams);
  p.aux = aux_params(m);
  p.total = add(add(add(p.embedding, p.lm_head, kParams), add(p.attention, p.ffn, kParams), kParams),
                add(add(p.router, p.norms, kParams), add(p.linear_attention, p.aux, kParams), kParams), kParams);
  p.replicated = add(add(p.indexer, mul(mla_down_params_per_layer(m), m.num_attention_layers(), kParams), kParams),
                     add(p.router, p.norms, kParams), kParams);
  if (!is_mla(m) && m.num_attention_layers() > 0) {
    for (const KvHeadGroup& g : kv_head_groups(m, kinds, kParams, [](const LayerSpec&) -> std::int64_t { return 1; })) {
      const std::int64_t params = mul(kv_projection_params_per_layer(m, g.kv_heads), g.sum, kParams);
      p.kv_projection = add(p.kv_projection, params, kParams);
      p.kv_projections.push_back({g.kv_heads, params});
    }
  }
  // Per token the routed experts it runs; with zero-computation experts their number varies per token
  // (active_min, active_max) and `active` is its expectation (expected_routed_experts), rounded.
  const std::int64_t all_routed = moe_layers > 0 ? mul(moe_layers, m.moe.num_routed_experts, expert_params(m), kParams) : 0;
  const auto with_routed = [&](std::int64_t experts) {
    return p.total - all_routed + (moe_layers > 0 ? mul(moe_layers, experts, expert_params(m), kParams) : 0);
  };
  p.active_min = with_routed(fewest_routed_experts(m.moe));
  p.active_max = with_routed(most_routed_experts(m.moe));
  if (m.moe.zero_experts <= 0 || moe_layers == 0) {
    p.active = with_routed(m.moe.top_k);
  } else {
    const WideCount used = wide_mul(mul(moe_layers, expert_params(m), kParams), mul(m.moe.top_k, m.moe.num_routed_experts, kParams), kParams);
    const WideCount experts = WideCount(m.moe.num_routed_experts) + m.moe.zero_experts;
    p.active = p.total - all_routed + narrow((2 * used + experts) / (2 * experts), kParams);  // rounded to nearest
  }
  if (m.extra.mtp_modules > 0) {
    // Per module: enorm + hnorm, eh_proj (2d -> d), one block like the last softmax-attention layer
    // (Qwen3-Next's MTP layer has gated attention whatever its last layer is), shared_head norm.
    const auto last = std::find_if(m.layers.rbegin(), m.layers.rend(), [](const LayerSpec& l) { return l.softmax(); });
    const LayerSpec& block = last != m.layers.rend() ? *last : m.layers.back();
    const std::int64_t module = add(add(mul(2, norm_params(m, d), kParams), mul(2 * d, d, kParams), kParams),
                                    add(layer_params(m, block), norm_params(m, d), kParams), kParams);
    p.mtp = mul(m.extra.mtp_modules, module, kParams);
  }
  p.vision = vision_params(m);
  return p;
}

static KvCacheCounts count_kv_cache(const ModelSpec& m, const Workload& w, const LayerKinds& kinds) {
  KvCacheCounts kv;
  kv.dtype = w.kv_dtype;
  // A layer of the model's KV heads; a layer with KV heads of its own (LayerSpec::kv_heads) caches its own width.
  const std::int64_t elems = kv_elements_per_token_per_layer(m, m.attention.num_kv_heads);
  // A sparse model's indexer keys sit beside the K/V (or latent) of every token, in their own format.
  const std::int64_t idx = m.attention.sparse() ? indexer_key_bytes(m.attention.indexer.head_dim) : 0;
  kv.indexer_bytes_per_token_per_layer = idx;
  kv.bytes_per_token_per_layer = add(stored_bytes(w.kv_dtype, elems, kKv), idx, kKv);
  // Layers with an indexer of their own hold its keys (sparse attention has no windows: every token).
  const auto own_indexer = [&](const LayerSpec& l) -> std::int64_t { return m.attention.sparse() && l.softmax() && !l.shared_topk; };
  // A layer that reads an earlier layer's K/V (LayerSpec::shared_kv) caches none of its own.
  const auto own_elements = [&](const LayerSpec& l) -> std::int64_t { return l.softmax() && !l.shared_kv ? kv_elements_per_token(m, l) : 0; };
  kv.bytes_per_token = add(stored_bytes(w.kv_dtype, kinds.sum(kKv, own_elements), kKv), mul(idx, m.num_indexer_layers(), kKv), kKv);
  const std::int64_t full_elements = kinds.sum(kKv, [&](const LayerSpec& l) { return l.full_attention() ? own_elements(l) : 0; });
  const std::int64_t full_indexer_layers = kinds.sum(kKv, [&](const LayerSpec& l) { return l.full_attention() ? own_indexer(l) : 0; });
  kv.bytes_per_token_beyond_window = add(stored_bytes(w.kv_dtype, full_elements, kKv), mul(idx, full_indexer_layers, kKv), kKv);
  kv.layer_tokens = layer_tokens(kinds, w.context);
  kv.indexer_layer_tokens = kinds.sum(kKv, [&](const LayerSpec& l) { return own_indexer(l) ? cached_tokens(l, w.context) : 0; });
  // Tokens cached in the layers of each KV-head count (one group unless layers have KV heads of their own).
  const std::vector<KvHeadGroup> groups =
      kv_head_groups(m, kinds, kKv, [&](const LayerSpec& l) { return l.shared_kv ? 0 : cached_tokens(l, w.context); });
  const auto group_bytes = [&](const KvHeadGroup& g) {
    return stored_bytes(w.kv_dtype, mul(w.batch, g.sum, kv_elements_per_token_per_layer(m, g.kv_heads), kKv), kKv);
  };
  std::int64_t cached_elements = 0;
  for (const KvHeadGroup& g : groups) cached_elements = add(cached_elements, mul(g.sum, kv_elements_per_token_per_layer(m, g.kv_heads), kKv), kKv);
  kv.bytes_total = stored_bytes(w.kv_dtype, mul(w.batch, cached_elements, kKv), kKv);
  const std::int64_t indexer_total = mul(w.batch, kv.indexer_layer_tokens, idx, kKv);
  kv.state_dtype = w.state_dtype;
  kv.state_bytes_per_layer = dtype_bytes(w.state_dtype, linear_attention_state_elements(m), kKv);
  kv.state_bytes_per_sequence = mul(kv.state_bytes_per_layer, linear_layer_count(m), kKv);
  const std::int64_t state_total = mul(w.batch, kv.state_bytes_per_sequence, kKv);

  const AttentionSpec& a = m.attention;
  if (a.num_q_heads % w.tp != 0)
    throw InputError("tp", std::to_string(w.tp), "must divide num_q_heads = " + std::to_string(a.num_q_heads));
  if (is_mla(m)) {
    kv.kv_heads_per_gpu = 1;  // the latent is shared by all heads: every GPU holds it whole
    kv.replication = w.tp;
    kv.bytes_per_gpu = kv.bytes_total;
  } else {
    // The model's KV heads split over tp GPUs or replicated on them; each layer with KV heads of its own
    // (LayerSpec::kv_heads) by the same rule, its cache split or replicated as its heads are.
    const KvHeadShard shard = kv_head_shard(a.num_kv_heads, w.tp, "num_kv_heads");
    kv.kv_heads_per_gpu = shard.per_gpu;
    kv.replication = shard.replication;
    for (const KvHeadGroup& g : groups) {
      std::string heads = "num_kv_heads";
      if (g.kv_heads != a.num_kv_heads) {
        const auto first = std::find_if(m.layers.begin(), m.layers.end(),
                                        [&](const LayerSpec& l) { return l.softmax() && layer_kv_heads(m, l) == g.kv_heads; });
        heads = "layers[" + std::to_string(first - m.layers.begin()) + "].kv_heads";
      }
      const KvHeadShard s = kv_head_shard(g.kv_heads, w.tp, heads);
      kv.bytes_per_gpu = add(kv.bytes_per_gpu, group_bytes(g) / (w.tp / s.replication), kKv);
    }
  }
  // The indexer is not split under tp: every GPU holds every indexer key, as it holds MLA's latent.
  kv.bytes_total = add(kv.bytes_total, indexer_total, kKv);
  kv.bytes_per_gpu = add(kv.bytes_per_gpu, indexer_total, kKv);
  if (state_total > 0) {  // linear-attention heads split over the GPUs, their state with them
    kv.bytes_total = add(kv.bytes_total, state_total, kKv);
    const std::int64_t per_gpu = dtype_bytes(w.state_dtype, linear_attention_state_elements_per_gpu(m, w.tp), kKv);
    kv.bytes_per_gpu = add(kv.bytes_per_gpu, mul(w.batch, per_gpu, linear_layer_count(m), kKv), kKv);
  }
  // Attention data parallel: each of the tp ranks holds its own requests' cache, every head of it, and
  // a sequence lives on one rank: the fullest holds ceil(batch / tp) whole sequences.
  if (w.dp_attention && w.tp > 1) {
    kv.kv_heads_per_gpu = is_mla(m) ? 1 : a.num_kv_heads;  // the model's; a layer's own KV heads likewise whole
    kv.replication = 1;
    kv.bytes_per_gpu = w.batch > 0 ? mul(kv.bytes_total / w.batch, (w.batch + w.tp - 1) / w.tp, kKv) : 0;
  }
  if (w.pp > 1) kv.bytes_per_gpu = (kv.bytes_per_gpu + w.pp - 1) / w.pp;  // each stage caches its layers
  return kv;
}

static FlopCounts count_flops(const ModelSpec& m, const Workload& w, const LayerKinds& kinds) {
  FlopCounts f;
  const std::int64_t tokens = mul(w.batch, w.prompt_len, kFlops);
  const std::int64_t lm_head = mul(2 * m.d_model, m.vocab_size, kFlops);  // h W_vocab for one position

  // Prefill: every projection and FFN matmul on each prompt token; the LM head on the last position.
  // Weights one token passes through in every layer's attention (softmax or linear) projections.
  // Layers that share another layer's top-k run no indexer projections.
  const std::int64_t sharing = m.attention.sparse() ? m.num_attention_layers() - m.num_indexer_layers() : 0;
  // Layers that read an earlier layer's K/V run no K and V projections; AuxSpec's matmuls run once per layer or model.
  // Each softmax layer projects its own KV heads (layer_kv_heads).
  const std::int64_t attn_w = kinds.sum(kFlops, [&](const LayerSpec& l) -> std::int64_t {
    if (!l.softmax()) return 0;
    const std::int64_t h = layer_kv_heads(m, l);
    return attention_matmul_weights(m, h) - (l.shared_kv ? kv_matmul_weights(m, h) : 0);
  });
  std::int64_t mixer_w = add(add(attn_w - mul(indexer_matmul_weights(m), sharing, kFlops),
                                 mul(linear_attention_matmul_weights(m), linear_layer_count(m), kFlops), kFlops),
                             aux_matmul_weights(m), kFlops);
  mixer_w = add(mixer_w, mul(linear_map_params(m), linear_map_mixers(m), kFlops), kFlops);  // x W in place of attention
  f.prefill.projections = matmul_flops(tokens, mixer_w);
  f.prefill.attention_core = kinds.sum(kFlops, [&](const LayerSpec& l) {
    const WideCount linear = l.has_linear() ? linear_attention_core_flops(m, w.batch, w.prompt_len) : 0;
    if (!l.softmax()) return linear;
    const WideCount indexer = l.shared_topk ? 0 : indexer_flops(layer_indexer_shape(m, w.batch, w.prompt_len, w.prompt_len));
    return wide_add(wide_add(linear, indexer, kFlops),
                    attention_flops(layer_attention_shape(m, l, w.batch, w.prompt_len, w.prompt_len, false)), kFlops);
  });
  f.prefill.ffn = kinds.sum(kFlops, [&](const LayerSpec& l) { return layer_ffn_flops(m, l, tokens); });
  f.prefill.lm_head = wide_mul(w.batch, lm_head, kFlops);
  finish(f.prefill);

  // Decode: one token of one sequence at KV length `context`. MLA's absorbed projections (W_UK into
  // the query, W_UV after attention) cost the same as applying kv_b to the one new token.
  FlopBreakdown& d = f.decode_per_token;
  d.projections = matmul_flops(1, mixer_w);
  d.attention_core = kinds.sum(kFlops, [&](const LayerSpec& l) {
    const WideCount linear = l.has_linear() ? linear_attention_core_flops(m, 1, 1) : 0;
    if (!l.softmax()) return linear;
    const WideCount indexer = l.shared_topk ? 0 : indexer_flops(layer_indexer_shape(m, 1, 1, w.context));
    return wide_add(wide_add(linear, indexer, kFlops), attention_flops(layer_attention_shape(m, l, 1, 1, w.context, true)), kFlops);
  });
  d.ffn = kinds.sum(kFlops, [&](const LayerSpec& l) { return layer_ffn_flops(m, l, 1); });
  d.lm_head = lm_head;
  finish(d);
  f.decode_step = wide_mul(w.batch, d.total, kFlops);
  return f;
}

KvHeadShard kv_head_shard(std::int64_t kv_heads, std::int64_t tp, const std::string& heads) {
  if (kv_heads % tp == 0) return {kv_heads / tp, 1};
  if (tp % kv_heads == 0) return {1, tp / kv_heads};
  throw InputError("tp", std::to_string(tp), "must divide " + heads + " = " + std::to_string(kv_heads) + " or be a multiple of it");
}

ParamCounts count_params(const ModelSpec& m) { return count_params(m, LayerKinds(m)); }
KvCacheCounts count_kv_cache(const ModelSpec& m, const Workload& w) { return count_kv_cache(m, w, LayerKinds(m)); }
FlopCounts count_flops(const ModelSpec& m, const Workload& w) { return count_flops(m, w, LayerKinds(m)); }

ModelCounts count_model(const ModelSpec& m, const Workload& w) {
  validate(w);
  const LayerKinds kinds(m);
  ModelCounts c;
  c.params = count_params(m, kinds);
  c.kv_cache = count_kv_cache(m, w, kinds);
  c.flops = count_flops(m, w, kinds);

  // Weights read once per decode step. Routed experts: under uniform routing a MoE layer touches
  // E * (1 - (1 - k/E)^batch) distinct experts in expectation.
  DecodeBytes& b = c.bytes;
  const std::int64_t moe_layers = moe_layer_count(m);
  const std::int64_t table = mul(m.vocab_size, m.d_model, kBytes);
  std::int64_t params_read = c.params.total - c.params.embedding;
  if (m.tie_embeddings) params_read = add(params_read, table, kBytes);  // the LM head reads the table
  params_read = add(params_read, mul(w.batch, m.d_model, m.learned_positions > 0 ? 2 : 1, kBytes), kBytes);
  params_read = add(params_read, mul(w.batch, m.aux.table_width, kBytes), kBytes);  // a per-layer-embedding row per token
  double expert_params_read = 0;
  std::int64_t routed_params = 0;
  if (moe_layers > 0) {
    // The router picks top_k of the routed and zero-computation experts; only the routed ones are read.
    const double e = static_cast<double>(m.moe.num_routed_experts);
    const double scored = e + static_cast<double>(m.moe.zero_experts);
    b.experts_read = e * (1.0 - std::pow(1.0 - static_cast<double>(m.moe.top_k) / scored, static_cast<double>(w.batch)));
    routed_params = mul(moe_layers, m.moe.num_routed_experts, expert_params(m), kBytes);
    params_read -= routed_params;
    expert_params_read = b.experts_read * static_cast<double>(moe_layers) * static_cast<double>(expert_params(m));
  }
  // Each component in its dtype with its scales: attention, FFN (the routed experts read), the rest.
  const double attention_params = static_cast<double>(c.params.attention + c.params.linear_attention);
  const double ffn_params = static_cast<double>(c.params.ffn - routed_params) + expert_params_read;
  const double rest_params = static_cast<double>(params_read) + expert_params_read - attention_params - ffn_params;
  const double weight_bits = attention_params * storage_bits_per_element(w.attention_weights()) +
                             ffn_params * storage_bits_per_element(w.ffn_weights()) +
                             rest_params * storage_bits_per_element(w.weight_dtype);
  b.weights = static_cast<std::int64_t>(std::llround(weight_bits / 8.0));
  // The keys one decode step reads in each layer: its cache, except in a chunked layer, whose step
  // reads only the current chunk's keys.
  // Each layer's keys are its own KV heads' width (layer_kv_heads).
  const std::int64_t read_elements = kinds.sum(kBytes, [&](const LayerSpec& l) -> std::int64_t {
    if (!l.softmax()) return 0;
    return mul(attention_kv_tokens_read(layer_attention_shape(m, l, 1, 1, w.context, true)), kv_elements_per_token(m, l), kBytes);
  });
  b.kv_read = stored_bytes(w.kv_dtype, mul(w.batch, read_elements, kBytes), kBytes);
  // A sparse model's indexer reads every cached key to choose the top k that the attention reads.
  b.kv_read = add(b.kv_read, mul(w.batch, c.kv_cache.indexer_layer_tokens, c.kv_cache.indexer_bytes_per_token_per_layer, kBytes), kBytes);
  b.kv_written = mul(w.batch, c.kv_cache.bytes_per_token, kBytes);
  b.state = mul(2 * w.batch, c.kv_cache.state_bytes_per_sequence, kBytes);
  b.step = add(add(b.weights, b.kv_read, kBytes), add(b.kv_written, b.state, kBytes), kBytes);
  b.per_token = static_cast<std::int64_t>(std::llround(static_cast<double>(b.step) / static_cast<double>(w.batch)));
  b.arithmetic_intensity = static_cast<double>(c.flops.decode_step) / static_cast<double>(b.step);
  return c;
}

}  // namespace mhacfg

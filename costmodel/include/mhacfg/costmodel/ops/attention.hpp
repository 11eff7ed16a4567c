// The attention op: one attention call (MHA/GQA/MQA, sliding windows, chunks, MLA absorbed). Its
// shape, FLOP and byte counts, the facts of mhacfg's CPU kernels its time model counts with, its
// features, and its record fields (costmodel/ops/attention/).
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/op_class.hpp"
#include "mhacfg/costmodel/op_features.hpp"

namespace mhacfg {

struct FitSpec;

// One attention call over `batch` sequences. Queries are the last q_len positions of a sequence of
// kv_len tokens. With kv_lora_rank > 0 it is MLA in the absorbed form: every head attends over one
// shared latent of kv_lora_rank + rope_head_dim per token (K), whose first kv_lora_rank dims are V;
// head_dim, v_head_dim and num_kv_heads are then ignored.
struct AttentionShape {
  std::int64_t batch = 1;
  std::int64_t q_len = 1;
  std::int64_t kv_len = 1;
  std::int64_t num_q_heads = 1;
  std::int64_t num_kv_heads = 1;
  std::int64_t head_dim = 128;
  std::int64_t v_head_dim = 128;
  bool causal = true;
  std::int64_t window = 0;  // 0: no sliding window
  std::int64_t kv_lora_rank = 0;
  std::int64_t rope_head_dim = 0;
  // 0: none. Chunked local attention (Llama 4): a query at position p sees the keys of its own chunk,
  // [p - p % chunk, p]. At most one of window and chunk is set, and either only with causal.
  std::int64_t chunk = 0;

  bool is_mla() const { return kv_lora_rank > 0; }
  std::int64_t qk_dim() const { return is_mla() ? kv_lora_rank + rope_head_dim : head_dim; }
  std::int64_t v_dim() const { return is_mla() ? kv_lora_rank : v_head_dim; }
  std::int64_t kv_heads() const { return is_mla() ? 1 : num_kv_heads; }
};

// The first key a causal query at position `pos` sees: pos - window + 1 (from 0) with a sliding
// window, the start of its chunk with chunked attention, else 0. Keys end at the query itself.
inline std::int64_t first_visible_key(std::int64_t pos, std::int64_t window, std::int64_t chunk) {
  if (window > 0) return pos >= window ? pos - window + 1 : 0;
  if (chunk > 0) return pos - pos % chunk;
  return 0;
}

// Query-key pairs that are computed (unmasked) for one sequence and one head: exact for causal masks,
// sliding windows and chunks (not the half-square convention of FlashAttention's reports).
std::int64_t attention_pairs(std::int64_t q_len, std::int64_t kv_len, bool causal, std::int64_t window,
                             std::int64_t chunk = 0);
// The same for a shape's q_len, kv_len, mask, window and chunk.
std::int64_t attention_pairs(const AttentionShape& s);

// Matmul FLOPs (a multiply-add is 2) of the attention core: S = Q K^T and O = P V, per query head.
// Exact and wide (a layer's prefill passes 2^63 at 16M tokens); a record checks its own fit 64 bits.
WideCount attention_flops(const AttentionShape& s);

// KV positions a query block touches: all kv_len, or only those inside the window or the chunks.
std::int64_t attention_kv_tokens_read(const AttentionShape& s);

// Minimum bytes moved: Q and K/V read once (the MLA latent once), O written once.
std::int64_t attention_bytes(const AttentionShape& s, DType dtype);

// K/V elements read once: per token, K and V of every KV head (MLA: the latent).
std::int64_t attention_kv_elements(const AttentionShape& s);
// K/V bytes read (the figure bandwidth is quoted on).
std::int64_t attention_kv_bytes(const AttentionShape& s, DType dtype);

// Rows of one query tile of the attention work decomposition (FlashAttention-style kernels use
// 128 rows up to head_dim 128 and 64 beyond).
std::int64_t attention_tile_rows(std::int64_t head_dim);
// Calls with at most this many queries per sequence are decode-shaped.
inline constexpr std::int64_t kDecodeMaxQueries = 16;

// The CPU prefill kernel stacks facts.prefill_tile_rows / group positions of a GQA group's heads into
// one query tile and multiplies it against every key up to the tile's last position, in key tiles of
// facts.prefill_key_tile (the first one of a block takes the rest): a causal mask is applied to
// computed scores, so the triangle above the diagonal of each tile is work done.
// Query-key pairs per query head and sequence that the CPU prefill kernel computes (masked or not).
double cpu_prefill_pairs_computed(const AttentionShape& s, const CpuKernelFacts& facts = {});
// Sum over the CPU prefill kernel's query tiles (one sequence, one KV head) of rows x key tiles.
double cpu_prefill_tile_rows(const AttentionShape& s, const CpuKernelFacts& facts = {});

OpFeatures op_features(const AttentionShape& s, DType dtype, const CpuKernelFacts& facts = {});

// An attention record's op fields (records.hpp); the op's entry in op_registry.hpp.
struct AttentionOp {
  static constexpr OpKind kind = OpKind::attention;
  static constexpr std::string_view name = "attention";
  static constexpr bool phased = true;
  static constexpr OpVariant fitted_variant = OpVariant::mla;  // MLA decode has a class of its own
  static constexpr DType default_dtype = DType::bf16;
  static constexpr std::string_view only_default_dtype = "";  // any dtype

  // An fp8 KV cache in decode runs a kernel of its own (e4m3 K/V converted in shared memory: half the
  // bytes per key, a conversion per element), fitted as "attention/decode/fp8"; every other dtype,
  // prefill and MLA share the plain classes.
  static constexpr bool keys_dtype(Phase p, OpVariant v, DType t) {
    return p == Phase::decode && v == OpVariant::none && t == DType::fp8;
  }

  Phase phase = Phase::prefill;
  AttentionShape shape;

  OpClass op_class() const;
  // The class of this call with K/V stored in `dtype` ("attention/decode/fp8"; keyed_class).
  OpClass op_class(DType dtype) const { return keyed_class(op_class(), dtype); }
  OpFeatures features(DType dtype, const CpuKernelFacts& facts = {}) const { return op_features(shape, dtype, facts); }
  // The record's shape fields (phase, heads, widths, mask); throws InputError naming the field.
  static AttentionOp from_json(const JsonFields& f);
  void to_json(nlohmann::json& j) const;
  // What a class of this op fits; `warm_cache`: a CPU profile (time_model.hpp's cache term).
  static FitSpec fit_spec(const OpClass& c, bool warm_cache);
};

}  // namespace mhacfg

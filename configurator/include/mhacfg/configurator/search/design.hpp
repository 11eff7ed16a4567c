// How a design is named and matched: the one label every output gives a design, and the
// equivalences the ranking and the reports use.
#pragma once

#include <string>

#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

// How much of a design its label names; every output names designs through design_label.
enum class LabelStyle {
  full,   // "gqa 32q/8kv x 128", "mla 16q/latent 512+64 x 192/128 q_lora 1536", " sparse top 2048" after
  table,  // "gqa 32/8", "mla 16q latent 512+64 qL1536", " top2048" after: the ranking's design column
  heads,  // "gqa 32/8 x 128": a model among models (compare, plot legends)
  shape,  // "32/8 x 128": a point beside others of its variant
};
std::string design_label(const AttentionSpec& a, LabelStyle style = LabelStyle::full);
// The width that holds a candidate to the budget: the experts' in a model with MoE layers, else the
// dense FFN's; and its name in sentences ("expert FFN width", "FFN width").
bool absorbs_in_experts(const ModelSpec& m);
// The same attention design (variant, heads, head_dims, MLA ranks).
bool same_attention(const AttentionSpec& a, const AttentionSpec& b);
// The same design class, one of which the ranking lists: variant, head_dims and MLA ranks.
bool same_class(const AttentionSpec& a, const AttentionSpec& b);
// Whether tp GPUs can serve the heads: the query heads split evenly; the KV heads split evenly or each
// is replicated on tp / kv_heads GPUs (MLA's latent is held whole, or per rank under attention data
// parallel). The search's tp constraints and the rationales read these.
bool q_heads_split(const AttentionSpec& a, std::int64_t tp);
bool kv_heads_shard(const AttentionSpec& a, std::int64_t tp);

}  // namespace mhacfg

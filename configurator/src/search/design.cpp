#include "mhacfg/configurator/search/design.hpp"

#include <algorithm>

namespace mhacfg {

std::string design_label(const AttentionSpec& a, LabelStyle style) {
  const std::string q = std::to_string(a.num_q_heads), kv = std::to_string(a.num_kv_heads);
  const std::string d = std::to_string(a.head_dim), topk = std::to_string(a.indexer.topk);
  const std::string variant(to_string(a.variant));
  const bool mla = a.variant == AttentionVariant::mla;
  const std::string latent = std::to_string(a.mla.kv_lora_rank) + "+" + std::to_string(a.mla.rope_head_dim);
  switch (style) {
    case LabelStyle::full: {
      const std::string sparse = a.sparse() ? " sparse top " + topk : "";
      if (mla)
        return variant + " " + q + "q/latent " + latent + " x " + d + "/" + std::to_string(a.v_head_dim) +
               (a.mla.q_lora_rank ? " q_lora " + std::to_string(a.mla.q_lora_rank) : "") + sparse;
      return variant + " " + q + "q/" + kv + "kv x " + d + sparse;
    }
    case LabelStyle::table: {
      const std::string sparse = a.sparse() ? " top" + topk : "";
      if (mla)
        return "mla " + q + "q latent " + latent + (a.mla.q_lora_rank ? " qL" + std::to_string(a.mla.q_lora_rank) : "") +
               sparse;
      return variant + " " + q + "/" + kv + sparse;
    }
    case LabelStyle::heads: return variant + " " + q + "/" + kv + " x " + d;
    case LabelStyle::shape: return q + "/" + kv + " x " + d;
  }
  return "";  // not reached: every style returns above
}

bool same_attention(const AttentionSpec& a, const AttentionSpec& b) {
  return a.variant == b.variant && a.num_q_heads == b.num_q_heads && a.num_kv_heads == b.num_kv_heads &&
         a.head_dim == b.head_dim && a.v_head_dim == b.v_head_dim && a.mla.kv_lora_rank == b.mla.kv_lora_rank &&
         a.mla.q_lora_rank == b.mla.q_lora_rank && a.mla.rope_head_dim == b.mla.rope_head_dim &&
         a.indexer.topk == b.indexer.topk;
}

bool same_class(const AttentionSpec& a, const AttentionSpec& b) {
  return a.variant == b.variant && a.head_dim == b.head_dim && a.v_head_dim == b.v_head_dim &&
         a.mla.kv_lora_rank == b.mla.kv_lora_rank && a.mla.q_lora_rank == b.mla.q_lora_rank && a.indexer.topk == b.indexer.topk;
}

bool absorbs_in_experts(const ModelSpec& m) {
  return std::any_of(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) { return l.moe(); });
}

bool q_heads_split(const AttentionSpec& a, std::int64_t tp) { return a.num_q_heads % tp == 0; }

bool kv_heads_shard(const AttentionSpec& a, std::int64_t tp) {
  return a.variant == AttentionVariant::mla || a.num_kv_heads % tp == 0 || tp % a.num_kv_heads == 0;
}

}  // namespace mhacfg

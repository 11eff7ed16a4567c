// Resolves a model from the CLI's inputs: --hf-config FILE or --model NAME as the base, explicit
// architecture flags on top (or alone, defining a custom model).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "mhacfg/configurator/common/defaults.hpp"
#include "mhacfg/costmodel/model_spec.hpp"

namespace mhacfg {

struct ModelFlags {
  std::string hf_config;
  std::string model;
  std::optional<std::int64_t> d_model, layers, heads, kv_heads, head_dim, v_head_dim;
  std::optional<std::int64_t> kv_lora_rank, q_lora_rank, rope_head_dim;
  std::optional<std::int64_t> ffn_dim, vocab, sliding_window;
  std::optional<std::int64_t> attention_chunk, global_every;  // chunks on every layer; every N-th layer global
  // Sparse attention: each query attends to the top index_topk keys of an indexer (0: dense attention).
  std::optional<std::int64_t> index_topk, index_heads, index_head_dim;
  std::optional<std::string> variant, ffn;
  std::optional<bool> tie_embeddings;
  nlohmann::json config;  // config.json content given in-process (the Python module's dict), as --hf-config
};

// Windows on a model's softmax layers (--sliding-window, --attention-chunk, --global-every): a window W
// or chunks of C on every softmax layer (each replaces the other kind, 0 removes it), then every N-th
// softmax layer global and the others local with the model's local span. A hybrid model's
// linear-attention layers stay as they are. Throws InputError naming the flag.
struct LayerPatternFlags {
  std::optional<std::int64_t> sliding_window, attention_chunk, global_every;
  bool any() const { return sliding_window || attention_chunk || global_every; }
};
void apply_layer_pattern(const LayerPatternFlags& f, ModelSpec& m);

// Llama's FFN width rule: 2/3 of 4 d_model for a gated FFN (4 d_model for a plain one), rounded up
// to a multiple of 256.
std::int64_t default_ffn_dim(std::int64_t d_model, FfnKind kind);

// Throws InputError naming the flag.
ModelSpec resolve_model(const ModelFlags& flags);

}  // namespace mhacfg

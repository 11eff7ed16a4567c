// HF import of Gemma 3n (transformers' gemma3n_text and its gemma3n wrapper: Gemma3nTextConfig,
// Gemma3nConfig and modeling_gemma3n.py; google/gemma-3n-E2B and -E4B): the language model, whose
// layers share their K/V across the last num_kv_shared_layers and carry AltUp, LAuReL and per-layer
// inputs beside attention and MLP. The wrapper's vision and audio towers are not counted.
#include "hf_config_families.hpp"

#include <cstddef>
#include <string>
#include <vector>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

namespace {

constexpr const char* kWidths = "Gemma 3n widths";

// intermediate_size: one width for every layer, or a list of num_hidden_layers widths (Gemma3nTextMLP
// takes the layer's entry). Default 16384.
void gemma3n_ffn_widths(const JsonFields& f, ModelSpec& m) {
  if (!f.present("intermediate_size") || !f.at("intermediate_size").is_array()) {
    m.ffn.ffn_dim = int_or(f, "intermediate_size", 16384);
    return;
  }
  const auto& list = f.at("intermediate_size");
  if (static_cast<std::int64_t>(list.size()) != m.num_layers())
    throw InputError(f.name("intermediate_size"), json_value_text(list),
                     "must be one width or a list of num_hidden_layers = " + int_text(m.num_layers()) + " widths");
  std::vector<std::int64_t> widths;
  for (std::size_t i = 0; i < list.size(); ++i)
    widths.push_back(json_to_int(list[i], f.name("intermediate_size") + "[" + std::to_string(i) + "]", true));
  m.ffn.ffn_dim = widths.front();
  for (std::size_t i = 0; i < widths.size(); ++i) m.layers[i].ffn_dim = widths[i] != widths.front() ? widths[i] : 0;
}

// layer_types (default: full_attention every fifth layer, from the fifth, sliding_attention elsewhere),
// sliding layers windowed by sliding_window (512).
void gemma3n_spans(const JsonFields& f, ModelSpec& m) {
  const std::int64_t window = window_key(f, "sliding_window", 512);
  if (apply_layer_types(f, m, window)) return;
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    if ((i + 1) % 5 != 0) m.layers[i].span = Span::window(window);
}

// num_kv_shared_layers (15): the last ones read the K/V of the last earlier layer of their type
// (Gemma3nTextAttention's kv_shared_layer_index), which transformers requires to exist.
void gemma3n_kv_sharing(const JsonFields& f, ModelSpec& m) {
  const std::int64_t shared = f.present("num_kv_shared_layers") ? f.require_int("num_kv_shared_layers", false) : 15;
  if (shared >= m.num_layers())
    throw InputError(f.name("num_kv_shared_layers"), int_text(shared),
                     "must be below num_hidden_layers = " + int_text(m.num_layers()) +
                         " (the shared layers read the K/V of earlier layers)");
  const std::size_t first = static_cast<std::size_t>(m.num_layers() - shared);
  for (std::size_t i = first; i < m.layers.size(); ++i) {
    bool producer = false;
    for (std::size_t j = 0; j < first && !producer; ++j) producer = m.layers[j].span == m.layers[i].span;
    if (!producer)
      throw InputError(f.name("num_kv_shared_layers"), int_text(shared),
                       "layer " + std::to_string(i) + " would read the K/V of an earlier layer of its type, and the first " +
                           std::to_string(first) + " layers have none");
    m.layers[i].shared_kv = true;
  }
}

}  // namespace

// Gemma3nTextConfig (the E4B's sizes by default: 35 layers of 2048, 8 heads of 256 and 2 KV heads, a
// vocabulary of 262400, tied). Every layer (Gemma3nTextDecoderLayer): q, k, v and o without biases
// (attention_bias), q_norm and k_norm over head_dim (v_norm has no weights), Gemma's four RMSNorms, a
// gated MLP of its intermediate_size. Beside them (AuxSpec): AltUp (correct_output_scale and router_norm
// of hidden_size, correction_coefs n x n, prediction_coefs n x n^2, modality_router hidden_size x n, for
// n = altup_num_inputs, 4; the router runs twice, counted once), LAuReL (linear_left and linear_right
// through laurel_rank, 64, and post_laurel_norm), per_layer_input_gate and per_layer_projection through
// hidden_size_per_layer_input p (256) and post_per_layer_input_norm. Once per model: embed_tokens_per_layer
// (vocab_size_per_layer_input, 262144, rows of num_hidden_layers x p), per_layer_model_projection
// (hidden_size -> num_hidden_layers x p) with per_layer_projection_norm (p), and n - 1 AltUp projections
// and n - 1 unembedding projections of hidden_size x hidden_size. Activation sparsity (the first layers'
// top-k on the gate) has no weights and is not modelled.
void parse_gemma3n_text(const JsonFields& f, ModelSpec& m) {
  m.d_model = int_or(f, "hidden_size", 2048);
  m.layers.assign(static_cast<std::size_t>(layer_count(f, "num_hidden_layers", 35)), LayerSpec{});
  AttentionSpec& a = m.attention;
  a.num_q_heads = int_or(f, "num_attention_heads", 8);
  a.num_kv_heads = int_or(f, "num_key_value_heads", 2);
  a.head_dim = a.v_head_dim = int_or(f, "head_dim", 256);
  if (m.d_model % a.num_q_heads != 0)  // Gemma3nTextConfig.validate_architecture
    throw InputError(f.name("num_attention_heads"), int_text(a.num_q_heads), "must divide hidden_size = " + int_text(m.d_model));
  attention_bias(f, m, false);
  a.qk_norm = true;
  m.vocab_size = int_or(f, "vocab_size", 262400);
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", true);
  m.ffn.kind = FfnKind::gated;
  m.norm = NormSpec{NormKind::rmsnorm, 4, true};
  gemma3n_ffn_widths(f, m);
  gemma3n_spans(f, m);
  gemma3n_kv_sharing(f, m);

  const std::int64_t d = m.d_model;
  const std::int64_t n = int_or(f, "altup_num_inputs", 4);
  const std::int64_t rank = int_or(f, "laurel_rank", 64);
  const std::int64_t p = int_or(f, "hidden_size_per_layer_input", 256);
  const std::int64_t pl_vocab = int_or(f, "vocab_size_per_layer_input", 262144);
  AuxSpec& x = m.aux;
  x.layer_matmul = add(add(mul(2, d, rank, kWidths), mul(2, d, p, kWidths), kWidths), mul(d, n, kWidths), kWidths);
  x.layer_other = add(mul(4, d, kWidths), add(mul(n, n, kWidths), mul(n, n, n, kWidths), kWidths), kWidths);
  const std::int64_t per_layer_width = mul(m.num_layers(), p, kWidths);
  x.model_matmul = add(mul(d, per_layer_width, kWidths), mul(2 * (n - 1), d, d, kWidths), kWidths);
  x.model_other = p;
  x.table_rows = pl_vocab;
  x.table_width = per_layer_width;
  m.notes.push_back("AltUp, LAuReL and the per-layer inputs are counted (params.aux, their matmuls in the FLOPs; the "
                    "per-layer embedding table in params.embedding) but not in the predicted times.");
}

// Gemma3nConfig: text_config read as gemma3n_text (its class defaults for what it leaves out). The
// vision tower (vision_config: a timm MobileNet-V5), the audio encoder (audio_config: a USM Conformer)
// and their embedders into the language model (embed_vision, embed_audio) are not counted.
void parse_gemma3n(const JsonFields& f, ModelSpec& m) {
  parse_gemma3n_text(sub_config(f, "text_config"), m);
  m.notes.push_back("Gemma 3n's vision tower (vision_config), audio encoder (audio_config) and their embedders are not "
                    "counted: params are the language model's.");
}

}  // namespace mhacfg::hf

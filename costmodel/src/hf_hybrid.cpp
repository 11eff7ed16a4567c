// HF import of the hybrid families whose layers mix softmax attention with linear attention or short
// convolutions (Qwen3-Next, Granite 4.0-H, Nemotron-H, Kimi Linear, LFM2, Falcon-H1, MiniMax-Text-01 and
// MiniMax-M1), and Llama-Nemotron's layers that differ one from the next (nemotron-nas).
#include "hf_config_families.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg::hf {

namespace {

// A hybrid's layer_types, naming each layer `softmax` (attention) or `linear` (linear attention), if
// present.
bool apply_linear_layer_types(const JsonFields& f, ModelSpec& m, const char* softmax, const char* linear) {
  if (!f.has("layer_types")) return false;
  const auto& types = f.at("layer_types");
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.num_layers())
    throw InputError(f.name("layer_types"), json_value_text(types), "must be a list of " + int_text(m.num_layers()) + " layer types");
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i] != softmax && types[i] != linear)
      throw InputError(f.name("layer_types") + "[" + std::to_string(i) + "]", json_value_text(types[i]),
                       std::string("unknown layer type (expected ") + softmax + " or " + linear + ")");
    m.layers[i].mixer = linear_if(types[i] == linear);
  }
  return true;
}

// LFM2's layers: layer_types ("conv" or "full_attention"), else full_attn_idxs (0-based indices of the
// attention layers), else every layer attention (Lfm2Config). A conv layer is the gated short
// convolution: in_proj (hidden_size -> B, C, x), a depthwise convolution of conv_L_cache (3) taps over
// hidden_size channels, out_proj; conv_bias on all three.
void lfm2_layers(const JsonFields& f, ModelSpec& m) {
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::short_conv;
  la.num_k_heads = la.num_v_heads = m.d_model;  // channels
  la.head_k_dim = 0;
  la.head_v_dim = 1;
  la.conv_kernel = int_or(f, "conv_L_cache", 3);
  la.conv_bias = la.in_bias = la.out_bias = f.optional_bool("conv_bias", false);
  la.gated_norm = false;
  if (apply_linear_layer_types(f, m, "full_attention", "conv")) return;
  if (!f.has("full_attn_idxs")) return;  // every layer attention
  const auto& idxs = f.at("full_attn_idxs");
  if (!idxs.is_array()) throw InputError(f.name("full_attn_idxs"), json_value_text(idxs), "must be a list of 0-based layer indices");
  for (auto& l : m.layers) l.mixer = Mixer::linear;
  for (std::size_t i = 0; i < idxs.size(); ++i) {
    const std::string at = f.name("full_attn_idxs") + "[" + std::to_string(i) + "]";
    const std::int64_t n = json_to_int(idxs[i], at, false);
    if (n >= m.num_layers()) throw InputError(at, int_text(n), "must be a layer index in 0.." + int_text(m.num_layers() - 1));
    m.layers[static_cast<std::size_t>(n)].mixer = Mixer::attention;
  }
}

// The LFM2 attention: heads of hidden_size / heads (or head_dim), no biases, q/k norms over head_dim;
// two RMSNorms per layer, the final one (embedding_norm) after the last layer; tied unless
// tie_embedding / tie_word_embeddings say otherwise.
void lfm2_common(const JsonFields& f, ModelSpec& m, FamilyDefaults d) {
  parse_llama_like(f, m, d);
  m.attention.qk_norm = true;
  if (f.present("tie_embedding")) m.tie_embeddings = f.optional_bool("tie_embedding", true);
  lfm2_layers(f, m);
}

}  // namespace

void qwen_next_layers(const JsonFields& f, ModelSpec& m, FamilyDefaults d) {
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.attention.qk_norm = true;
  m.attention.output_gate = true;
  LinearAttentionSpec& la = m.linear;
  la.num_k_heads = int_or(f, "linear_num_key_heads", 16);
  la.num_v_heads = int_or(f, "linear_num_value_heads", 32);
  la.head_k_dim = int_or(f, "linear_key_head_dim", 128);
  la.head_v_dim = int_or(f, "linear_value_head_dim", 128);
  la.conv_kernel = int_or(f, "linear_conv_kernel_dim", 4);
  if (!apply_linear_layer_types(f, m, "full_attention", "linear_attention")) {
    const std::int64_t interval = int_or(f, "full_attention_interval", 4);
    for (std::size_t i = 0; i < m.layers.size(); ++i)
      m.layers[i].mixer = linear_if(static_cast<std::int64_t>(i + 1) % interval != 0);
  }
}

void qwen_next_experts(const JsonFields& f, ModelSpec& m, std::int64_t experts, std::int64_t top_k) {
  qwen_moe_layers(f, m, experts, 512, top_k);
  m.moe.num_shared_experts = 1;
  m.moe.shared_ffn_dim = int_or(f, "shared_expert_intermediate_size", 512);
  m.moe.shared_gate = true;
}

// Qwen3NextConfig (Qwen3-Next): qwen_next_layers with 16 heads of 256 and 2 KV heads; the experts of
// qwen_next_experts (512, top 10) on every layer by default; untied. The checkpoints' mtp.* weights
// (Qwen3-Next-80B-A3B: one module) are not in the config or the model.
void parse_qwen3_next(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{256, false, 2};
  d.hidden = 2048, d.layers = 48, d.heads = 16, d.ffn = 5632, d.vocab = 151936;
  qwen_next_layers(f, m, d);
  qwen_next_experts(f, m, 512, 10);
}

// GraniteMoeHybridConfig (Granite 4.0, 4.0-H): layer_types names each layer "mamba" (Mamba2) or
// "attention" (default: every layer Mamba2). Attention: heads of hidden_size / heads (no head_dim key),
// KV heads default to the heads, attention_bias on q/k/v/o, no q/k norms (NoPE or RoPE: no weights).
// Mamba2: mamba_n_heads (128) heads of mamba_d_head (mamba_expand x hidden_size / heads), mamba_n_groups
// (1) groups of mamba_d_state (256), a convolution of mamba_d_conv (4) with mamba_conv_bias (true),
// mamba_proj_bias (false). Every layer has the shared MLP (gated, shared_intermediate_size, 1024) and,
// with num_local_experts > 0 (8), the experts (gated, intermediate_size wide, top num_experts_per_tok, 2)
// behind a router without bias; two RMSNorms per layer; untied unless tie_word_embeddings.
void parse_granitemoehybrid(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 0};
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 11008, d.vocab = 32000;
  parse_llama_like(f, m, d);
  if (f.present("head_dim")) {  // GraniteMoeHybridAttention ignores the key: hidden_size / heads
    if (m.d_model % m.attention.num_q_heads != 0)
      throw InputError(f.name("num_attention_heads"), int_text(m.attention.num_q_heads),
                       "must divide hidden_size = " + int_text(m.d_model));
    m.attention.head_dim = m.attention.v_head_dim = m.d_model / m.attention.num_q_heads;
  }
  attention_bias(f, m, false);
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::mamba2;
  la.num_v_heads = int_or(f, "mamba_n_heads", 128);
  la.num_k_heads = int_or(f, "mamba_n_groups", 1);
  la.head_k_dim = int_or(f, "mamba_d_state", 256);
  la.conv_kernel = int_or(f, "mamba_d_conv", 4);
  const std::int64_t inner = m.d_model * int_or(f, "mamba_expand", 2);
  if (f.has("mamba_d_head") && f.at("mamba_d_head") != "auto") {
    la.head_v_dim = f.require_int("mamba_d_head");
  } else {
    if (inner % la.num_v_heads != 0)
      throw InputError(f.name("mamba_n_heads"), int_text(la.num_v_heads),
                       "must divide mamba_expand x hidden_size = " + int_text(inner));
    la.head_v_dim = inner / la.num_v_heads;
  }
  if (la.head_v_dim * la.num_v_heads != inner)
    throw InputError(f.name("mamba_d_head"), int_text(la.head_v_dim),
                     "x mamba_n_heads must equal mamba_expand x hidden_size = " + int_text(inner));
  la.conv_bias = f.optional_bool("mamba_conv_bias", true);
  la.in_bias = la.out_bias = f.optional_bool("mamba_proj_bias", false);
  if (!apply_linear_layer_types(f, m, "attention", "mamba")) {
    for (auto& l : m.layers) l.mixer = Mixer::linear;
  }
  const std::int64_t shared = int_or(f, "shared_intermediate_size", 1024);
  const std::int64_t experts = f.present("num_local_experts") ? f.require_int("num_local_experts", false) : 8;
  if (experts < 0)
    throw InputError(f.name("num_local_experts"), int_text(experts), "must not be negative");
  if (experts == 0) {  // the shared MLP alone: a dense FFN
    m.ffn.ffn_dim = shared;
    return;
  }
  m.moe.num_routed_experts = experts;
  m.moe.expert_ffn_dim = int_or(f, "intermediate_size", 11008);
  m.moe.top_k = int_or(f, "num_experts_per_tok", 2);
  m.moe.num_shared_experts = 1;
  m.moe.shared_ffn_dim = shared;
  for (auto& l : m.layers) l.ffn = LayerFfn::moe;
}

// NemotronHConfig (Nemotron-H, Nemotron 3): blocks of one module each, named by hybrid_override_pattern
// ("M" Mamba2, "*" attention, "-" MLP, "E" experts) or by layers_block_type (linear_attention,
// full_attention, mlp, moe; or the older mamba, attention); the pattern's length is the layer count.
// One RMSNorm per block. Attention: head_dim (128), KV heads (8), attention_bias. Mamba2: mamba_num_heads
// (128) of mamba_head_dim (64), n_groups (8) of ssm_state_size (128), conv_kernel (4) with use_conv_bias
// (true), mamba_proj_bias (false). MLP and experts: up and down without a gate (relu2), mlp_bias;
// n_routed_experts (8) of moe_intermediate_size (7688), top num_experts_per_tok (2), n_shared_experts (1)
// x moe_shared_expert_intermediate_size (7688); the router's e_score_correction_bias is a buffer, not
// a parameter. Untied. Not modelled (an error): moe_latent_size (Nemotron 3 Super's latent experts).
void parse_nemotron_h(const JsonFields& f, ModelSpec& m) {
  std::vector<LayerSpec> blocks;
  auto block_of = [&](const std::string& t, const std::string& field, const nlohmann::json& v) {
    if (t == "linear_attention" || t == "mamba" || t == "M") return LayerSpec::linear().with_ffn(LayerFfn::none);
    if (t == "full_attention" || t == "attention" || t == "*") return LayerSpec::attention().with_ffn(LayerFfn::none);
    if (t == "mlp" || t == "-") return LayerSpec::ffn_only(LayerFfn::dense);
    if (t == "moe" || t == "E") return LayerSpec::ffn_only(LayerFfn::moe);
    throw InputError(field, json_value_text(v), "unknown block type (expected M, *, - or E; or linear_attention, full_attention, mlp, moe)");
  };
  if (f.has("hybrid_override_pattern")) {
    const auto& v = f.at("hybrid_override_pattern");
    if (!v.is_string() || v.get<std::string>().empty())
      throw InputError(f.name("hybrid_override_pattern"), json_value_text(v), "must be a string of M, *, - and E");
    const std::string pattern = v.get<std::string>();
    if (static_cast<std::int64_t>(pattern.size()) > kMaxLayers)
      throw InputError(f.name("hybrid_override_pattern"), "(" + int_text(static_cast<std::int64_t>(pattern.size())) + " blocks)",
                       "must name at most " + int_text(kMaxLayers) + " blocks");
    for (std::size_t i = 0; i < pattern.size(); ++i)
      blocks.push_back(block_of(std::string(1, pattern[i]),
                                f.name("hybrid_override_pattern") + "[" + std::to_string(i) + "]",
                                nlohmann::json(std::string(1, pattern[i]))));
  } else {
    const char* key = f.has("layers_block_type") ? "layers_block_type" : "layer_types";
    if (!f.has(key)) throw InputError(f.name("hybrid_override_pattern"), "(missing)", "names the blocks (or layers_block_type)");
    const auto& list = f.at(key);
    if (!list.is_array() || list.empty()) throw InputError(f.name(key), json_value_text(list), "must be a list of block types");
    if (static_cast<std::int64_t>(list.size()) > kMaxLayers)
      throw InputError(f.name(key), "(" + int_text(static_cast<std::int64_t>(list.size())) + " blocks)",
                       "must name at most " + int_text(kMaxLayers) + " blocks");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = f.name(key) + "[" + std::to_string(i) + "]";
      if (!list[i].is_string()) throw InputError(field, json_value_text(list[i]), "must be a block type");
      blocks.push_back(block_of(list[i].get<std::string>(), field, list[i]));
    }
  }
  FamilyDefaults d{128, false, 8};
  d.hidden = 4096, d.layers = static_cast<std::int64_t>(blocks.size()), d.heads = 32, d.ffn = 21504, d.vocab = 131072;
  parse_llama_like(f, m, d);
  m.layers = blocks;  // the pattern's length, whatever num_hidden_layers says (as transformers)
  m.norm.per_layer = 1;
  attention_bias(f, m, false);
  m.ffn.kind = FfnKind::plain;
  m.ffn.bias = f.optional_bool("mlp_bias", false);
  if (f.has("moe_latent_size"))
    throw InputError(f.name("moe_latent_size"), json_value_text(f.at("moe_latent_size")),
                     "latent experts (Nemotron 3 Super) are not modelled");
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::mamba2;
  la.num_v_heads = int_or(f, "mamba_num_heads", 128);
  la.head_v_dim = int_or(f, "mamba_head_dim", 64);
  la.num_k_heads = int_or(f, "n_groups", 8);
  la.head_k_dim = int_or(f, "ssm_state_size", 128);
  la.conv_kernel = int_or(f, "conv_kernel", 4);
  la.conv_bias = f.optional_bool("use_conv_bias", true);
  la.in_bias = la.out_bias = f.optional_bool("mamba_proj_bias", false);
  if (la.num_v_heads % la.num_k_heads != 0)  // named by this family's keys (validate names Granite's)
    throw InputError(f.name("n_groups"), int_text(la.num_k_heads), "must divide mamba_num_heads = " + int_text(la.num_v_heads));
  if (std::any_of(blocks.begin(), blocks.end(), [](const LayerSpec& l) { return l.moe(); })) {
    m.moe.num_routed_experts = int_or(f, "n_routed_experts", 8);
    m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", 7688);
    m.moe.top_k = int_or(f, "num_experts_per_tok", 2);
    m.moe.num_shared_experts = f.optional_int("n_shared_experts", false).value_or(1);
    m.moe.shared_ffn_dim = mul(m.moe.num_shared_experts, int_or(f, "moe_shared_expert_intermediate_size", 7688), "shared FFN width");
  }
}

// KimiLinearConfig (Kimi Linear, remote code): KDA layers (linear_attn_config.kda_layers, 1-based)
// beside MLA layers (the rest). KDA: linear_attn_config's num_heads heads of head_dim for keys and
// values alike, short convolutions of short_conv_kernel_size without bias. MLA: DeepSeek's layout
// (q_lora_rank null: no query compression; kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim)
// without RoPE (mla_use_nope), the rope dims kept; head_dim and num_key_value_heads are not read.
// num_experts (null: dense) gated experts of moe_intermediate_size, top num_experts_per_token,
// num_shared_experts as one FFN, on layers from first_k_dense_replace on every moe_layer_freq-th; the
// router's e_score_correction_bias is a parameter. Dense layers use intermediate_size; untied.
void parse_kimi_linear(const JsonFields& f, ModelSpec& m) {
  parse_llama_like(f, m, {1, false, 0});  // head_dim placeholder; MLA sets it below
  AttentionSpec& a = m.attention;
  a.variant = AttentionVariant::mla;
  a.mla.q_lora_rank = f.optional_int("q_lora_rank").value_or(0);
  a.mla.kv_lora_rank = f.require_int("kv_lora_rank");
  a.mla.qk_nope_head_dim = f.require_int("qk_nope_head_dim");
  a.mla.rope_head_dim = f.require_int("qk_rope_head_dim");
  a.head_dim = add(a.mla.qk_nope_head_dim, a.mla.rope_head_dim, "qk_nope_head_dim + qk_rope_head_dim");
  a.v_head_dim = f.require_int("v_head_dim");
  a.num_kv_heads = a.num_q_heads;
  if (f.present("num_experts") && f.has("num_experts")) {
    m.moe.num_routed_experts = f.require_int("num_experts");
    m.moe.expert_ffn_dim = f.require_int("moe_intermediate_size");
    m.moe.top_k = f.require_int("num_experts_per_token");
    m.moe.num_shared_experts = f.optional_int("num_shared_experts", false).value_or(0);
    m.moe.router_bias = true;
    const std::int64_t first_dense = f.optional_int("first_k_dense_replace", false).value_or(0);
    const std::int64_t freq = f.optional_int("moe_layer_freq").value_or(1);
    for (std::int64_t i = 0; i < m.num_layers(); ++i)
      m.layers[static_cast<std::size_t>(i)].ffn = moe_if(i >= first_dense && i % freq == 0);
  }
  if (!f.has("linear_attn_config")) return;  // every layer MLA
  const JsonFields c = sub_config(f, "linear_attn_config");
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::kda;
  la.num_k_heads = la.num_v_heads = c.require_int("num_heads");
  la.head_k_dim = la.head_v_dim = c.require_int("head_dim");
  la.conv_kernel = c.require_int("short_conv_kernel_size");
  if (!c.has("kda_layers")) return;
  const auto& layers = c.at("kda_layers");
  if (!layers.is_array())
    throw InputError(c.name("kda_layers"), json_value_text(layers), "must be a list of 1-based layer numbers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string at = c.name("kda_layers") + "[" + std::to_string(i) + "]";
    const std::int64_t n = json_to_int(layers[i], at, true);
    if (n > m.num_layers())
      throw InputError(at, int_text(n), "must be a layer number in 1.." + int_text(m.num_layers()) + " (1-based)");
    m.layers[static_cast<std::size_t>(n - 1)].mixer = Mixer::linear;
  }
}

// MiniMaxConfig (minimax: MiniMax-Text-01, MiniMax-M1; the -hf checkpoints) and the remote code's
// MiniMaxText01Config and MiniMaxM1Config (minimax_text_01, minimax_m1: the released checkpoints), whose
// keys for what is counted are the same but the layer list: layer_types ("full_attention" or
// "linear_attention"), else attn_type_list (1 softmax, 0 lightning), else MiniMaxConfig's default, softmax
// on the even layers (0, 2, ...). Softmax layers: Mixtral's attention (num_key_value_heads 8, head_dim
// else hidden_size / heads, no biases; partial RoPE, rotary_dim, has no weights), sliding_window on them.
// Lightning layers (LinearKind::lightning): the attention's heads and head_dim, block_size (256). Every
// layer: num_local_experts (num_experts; 8) gated experts of intermediate_size, top num_experts_per_tok
// (2), a router without bias; two RMSNorms; untied. The residual scales (full_attn_/linear_attn_/mlp_
// alpha and beta factors, the remote code's layernorm_*_alpha/beta) and postnorm are scalars without
// weights. The remote code's shared MLP (shared_intermediate_size > 0) is refused: no release has one.
void parse_minimax(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 8};
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 14336, d.vocab = 32000;
  parse_llama_like(f, m, d);
  m.moe.num_routed_experts = experts_key(f, "num_local_experts", "num_experts", 8);
  m.moe.expert_ffn_dim = m.ffn.ffn_dim;
  m.moe.top_k = int_or(f, "num_experts_per_tok", 2);
  for (auto& l : m.layers) l.ffn = LayerFfn::moe;
  if (f.has("shared_intermediate_size")) {
    const auto& v = f.at("shared_intermediate_size");
    const bool none = v.is_array() ? std::all_of(v.begin(), v.end(), [](const nlohmann::json& x) { return x == 0; }) : v == 0;
    if (!none)
      throw InputError(f.name("shared_intermediate_size"), json_value_text(v),
                       "a shared MLP beside the experts is not modelled (MiniMax-Text-01 and MiniMax-M1 have none: 0)");
  }
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::lightning;
  la.num_k_heads = la.num_v_heads = m.attention.num_q_heads;
  la.head_k_dim = la.head_v_dim = m.attention.head_dim;
  la.conv_kernel = 0;
  la.block_size = int_or(f, "block_size", 256);
  if (!apply_linear_layer_types(f, m, "full_attention", "linear_attention")) {
    if (f.has("attn_type_list")) {
      const auto& types = f.at("attn_type_list");
      if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.num_layers())
        throw InputError(f.name("attn_type_list"), json_value_text(types), "must be a list of " + int_text(m.num_layers()) + " layer types");
      for (std::size_t i = 0; i < types.size(); ++i) {
        if (types[i] != 0 && types[i] != 1)
          throw InputError(f.name("attn_type_list") + "[" + std::to_string(i) + "]", json_value_text(types[i]),
                           "unknown layer type (expected 1, softmax attention, or 0, lightning attention)");
        m.layers[i].mixer = linear_if(types[i] == 0);
      }
    } else {
      for (std::size_t i = 0; i < m.layers.size(); ++i) m.layers[i].mixer = linear_if(i % 2 == 1);
    }
  }
  const std::int64_t window = window_key(f, "sliding_window", 0);
  for (auto& l : m.layers)
    if (l.softmax()) l.span = Span::window(window);
}

// Lfm2Config (LFM2-350M ... 2.6B): a gated FFN whose width is block_ff_dim (else intermediate_size),
// with block_auto_adjust_ff_dim (true) two thirds of it, times block_ffn_dim_multiplier (1.0) and
// rounded up to block_multiple_of (256) when the multiplier is not null.
void parse_lfm2(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, true, 8};
  d.hidden = 2560, d.layers = 32, d.heads = 32, d.ffn = 12288, d.vocab = 65536;
  lfm2_common(f, m, d);
  std::int64_t width = f.has("block_ff_dim") ? f.require_int("block_ff_dim") : m.ffn.ffn_dim;
  if (f.optional_bool("block_auto_adjust_ff_dim", true)) {
    width = 2 * width / 3;
    const bool multiplied = !f.present("block_ffn_dim_multiplier") || f.has("block_ffn_dim_multiplier");
    if (multiplied) {
      const double mult = f.present("block_ffn_dim_multiplier") ? f.require_number("block_ffn_dim_multiplier") : 1.0;
      const double scaled = mult * double(width);
      if (!(scaled >= 1 && scaled < 1e15))
        throw InputError(f.name("block_ffn_dim_multiplier"), json_value_text(f.at("block_ffn_dim_multiplier")),
                         "gives an FFN width out of range");
      width = static_cast<std::int64_t>(scaled);
      const std::int64_t multiple = int_or(f, "block_multiple_of", 256);
      width = mul(multiple, (width + multiple - 1) / multiple, "FFN width");
    }
  }
  m.ffn.ffn_dim = width;
}

// Lfm2MoeConfig (LFM2-8B-A1B): the first num_dense_layers (2) have a gated FFN of intermediate_size
// (7168) as is; the rest num_experts (32) gated experts of moe_intermediate_size (1792), top
// num_experts_per_tok (4), a router without bias (expert_bias is a buffer).
void parse_lfm2_moe(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, true, 8};
  d.hidden = 2048, d.layers = 24, d.heads = 32, d.ffn = 7168, d.vocab = 65536;
  lfm2_common(f, m, d);
  m.moe.num_routed_experts = int_or(f, "num_experts", 32);
  m.moe.expert_ffn_dim = int_or(f, "moe_intermediate_size", 1792);
  m.moe.top_k = int_or(f, "num_experts_per_tok", 4);
  const std::int64_t dense = f.optional_int("num_dense_layers", false).value_or(2);
  for (std::int64_t i = 0; i < m.num_layers(); ++i) m.layers[static_cast<std::size_t>(i)].ffn = moe_if(i >= dense);
}

// FalconH1Config (Falcon-H1): every layer runs attention and a Mamba2 mixer side by side on the same
// input (their outputs added; muP multipliers are scalars and mup_vector a non-persistent buffer), then
// the MLP; two RMSNorms per layer, untied unless tie_word_embeddings. Attention: heads of head_dim
// (hidden_size / heads when missing), num_key_value_heads (8), attention_bias on q/k/v/o. Mamba2:
// mamba_d_ssm channels (1024 when the key is missing, mamba_expand x hidden_size when null) in
// mamba_n_heads (128) heads of mamba_d_head ("auto": mamba_d_ssm / heads), mamba_n_groups (1) of
// mamba_d_state (256), a convolution of mamba_d_conv (4) with mamba_conv_bias (true), in_proj's bias with
// mamba_proj_bias (false), out_proj's with projectors_bias (false), the gated RMSNorm only with
// mamba_rms_norm (false). MLP: gated, intermediate_size, mlp_bias.
void parse_falcon_h1(const JsonFields& f, ModelSpec& m) {
  FamilyDefaults d{0, false, 8};
  d.hidden = 4096, d.layers = 32, d.heads = 32, d.ffn = 14336, d.vocab = 128000;
  parse_llama_like(f, m, d);
  attention_bias(f, m, false);
  m.ffn.bias = f.optional_bool("mlp_bias", false);
  LinearAttentionSpec& la = m.linear;
  la.kind = LinearKind::mamba2;
  la.num_v_heads = int_or(f, "mamba_n_heads", 128);
  la.num_k_heads = int_or(f, "mamba_n_groups", 1);
  la.head_k_dim = int_or(f, "mamba_d_state", 256);
  la.conv_kernel = int_or(f, "mamba_d_conv", 4);
  const std::int64_t inner = !f.present("mamba_d_ssm") ? 1024
                             : f.has("mamba_d_ssm")    ? f.require_int("mamba_d_ssm")
                                                       : mul(m.d_model, int_or(f, "mamba_expand", 2), "mamba_expand x hidden_size");
  if (f.has("mamba_d_head") && f.at("mamba_d_head") != "auto") {
    la.head_v_dim = f.require_int("mamba_d_head");
  } else {
    if (inner % la.num_v_heads != 0)
      throw InputError(f.name("mamba_n_heads"), int_text(la.num_v_heads), "must divide mamba_d_ssm = " + int_text(inner));
    la.head_v_dim = inner / la.num_v_heads;
  }
  if (mul(la.head_v_dim, la.num_v_heads, "mamba_d_head x mamba_n_heads") != inner)
    throw InputError(f.name("mamba_d_head"), int_text(la.head_v_dim), "x mamba_n_heads must equal mamba_d_ssm = " + int_text(inner));
  la.conv_bias = f.optional_bool("mamba_conv_bias", true);
  la.in_bias = f.optional_bool("mamba_proj_bias", false);
  la.out_bias = f.optional_bool("projectors_bias", false);
  la.gated_norm = f.optional_bool("mamba_rms_norm", false);
  for (auto& l : m.layers) l.mixer = Mixer::parallel;  // the window, if any, stays
}

namespace {

// DeciLM's _ffn_mult_to_intermediate_size: int(2 * ffn_mult * hidden_size / 3) rounded up to a multiple of 256.
std::int64_t nas_ffn_width(const JsonFields& ffn, std::int64_t d_model) {
  const double mult = ffn.require_number("ffn_mult");
  const double width = 2.0 * mult * static_cast<double>(d_model) / 3.0;  // Python's order of operations
  if (!(width >= 1.0 && width < 1e15))
    throw InputError(ffn.name("ffn_mult"), json_value_text(ffn.at("ffn_mult")), "must give an FFN width of at least 1");
  const auto w = static_cast<std::int64_t>(width);
  return (w + 255) / 256 * 256;
}

// A block_configs part's key that the counts do not model, if it is set (true, or not null).
void refuse_nas_key(const JsonFields& part, const char* key, const std::string& why) {
  if (!part.has(key)) return;
  const auto& v = part.at(key);
  if (v.is_boolean() && !v.get<bool>()) return;
  throw InputError(part.name(key), json_value_text(v), why);
}

}  // namespace

// DeciLMConfig (nemotron-nas: Llama-3.3-Nemotron-Super-49B, Llama-3.1-Nemotron-Ultra-253B; NVIDIA's remote
// modeling_decilm.py): Llama's layout with a block_configs entry per layer, whose count is the layer
// count. attention: no_op (the layer has no attention and no input norm), replace_with_linear (a
// hidden_size x hidden_size linear without a bias after the input norm: DeciLMLinearAttention's
// linear_attn; no cache) or n_heads_in_group (num_attention_heads / n_heads_in_group KV heads); ffn: no_op
// (no FFN and no post-attention norm), replace_with_linear (DeciLMLinearMLP's hidden_size x hidden_size
// linear_mlp) or ffn_mult (a gated FFN of nas_ffn_width); no_op wins over replace_with_linear, as in the
// modelling code. head_dim is hidden_size / heads unless given; attention_bias and mlp_bias (false); untied.
// The model's FFN width is the most layers'; the others keep their own. Likewise the KV heads, which may
// differ from block to block (Llama-3.1-Nemotron-51B's "Variable Grouped Query Attention"): the model's are
// the most attention layers' (ties: the first's), a layer with others keeps its own (LayerSpec::kv_heads).
// Refused, naming the block: sparsify, windows, sink tokens and parallel (Mamba) blocks.
void parse_nemotron_nas(const JsonFields& f, ModelSpec& m) {
  if (!f.has("block_configs") || !f.at("block_configs").is_array() || f.at("block_configs").empty())
    throw InputError(f.name("block_configs"), f.present("block_configs") ? json_value_text(f.at("block_configs")) : "(missing)",
                     "must list one block (attention and ffn) per layer");
  const auto& blocks = f.at("block_configs");
  m.d_model = f.require_int("hidden_size");
  m.layers.assign(static_cast<std::size_t>(checked_layer_count(static_cast<std::int64_t>(blocks.size()), f.name("block_configs"))),
                  LayerSpec{});
  AttentionSpec& a = m.attention;
  a.num_q_heads = f.require_int("num_attention_heads");
  if (f.has("head_dim")) a.head_dim = f.require_int("head_dim");
  else head_dim_from_hidden(f, m);
  a.v_head_dim = a.head_dim;
  attention_bias(f, m, false);
  m.vocab_size = f.require_int("vocab_size");
  m.tie_embeddings = f.optional_bool("tie_word_embeddings", false);
  m.ffn = FfnSpec{FfnKind::gated, 0, f.optional_bool("mlp_bias", false), 0};
  m.norm = NormSpec{NormKind::rmsnorm, 2, true};
  const std::string unmodelled = "is not modelled (Llama-Nemotron Super and Ultra use none)";
  std::vector<std::pair<std::int64_t, std::int64_t>> heads;  // KV heads -> attention layers, in order of appearance
  std::map<std::int64_t, std::int64_t> widths;  // FFN width -> layers
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::string at = f.name("block_configs") + "[" + std::to_string(i) + "]";
    if (!blocks[i].is_object()) throw InputError(at, json_value_text(blocks[i]), "must be a block (attention and ffn)");
    const JsonFields block(blocks[i], at);
    refuse_nas_key(block, "parallel_blocks", "parallel (Mamba) blocks " + unmodelled);
    const JsonFields attn = sub_config(block, "attention"), ffn = sub_config(block, "ffn");
    for (const char* key : {"sparsify", "window_length", "num_sink_tokens", "mamba"})
      refuse_nas_key(attn, key, std::string(key) + " " + unmodelled);
    refuse_nas_key(ffn, "sparsify", std::string("sparsify ") + unmodelled);
    LayerSpec& l = m.layers[i];
    if (attn.optional_bool("no_op", false)) {
      l.mixer = Mixer::none;
    } else if (attn.optional_bool("replace_with_linear", false)) {
      l.mixer = Mixer::linear_map;
    } else {
      const std::int64_t g = attn.require_int("n_heads_in_group");
      if (g <= 0 || a.num_q_heads % g != 0)
        throw InputError(attn.name("n_heads_in_group"), int_text(g),
                         "must divide num_attention_heads = " + int_text(a.num_q_heads));
      l.kv_heads = a.num_q_heads / g;
      const auto seen = std::find_if(heads.begin(), heads.end(), [&](const auto& h) { return h.first == l.kv_heads; });
      if (seen == heads.end()) heads.emplace_back(l.kv_heads, 1);
      else ++seen->second;
    }
    if (ffn.optional_bool("no_op", false)) {
      l.ffn = LayerFfn::none;
    } else if (ffn.optional_bool("replace_with_linear", false)) {
      l.ffn = LayerFfn::linear_map;
    } else {
      l.ffn_dim = nas_ffn_width(ffn, m.d_model);
      ++widths[l.ffn_dim];
    }
  }
  if (heads.empty()) throw InputError(f.name("block_configs"), "(no attention)", "must give at least one layer attention");
  // The most attention layers' KV heads are the model's (ties: the first's); a layer keeps its own only when they differ.
  std::int64_t most_heads = 0;
  for (const auto& [h, n] : heads)
    if (n > most_heads) most_heads = n, a.num_kv_heads = h;
  for (auto& l : m.layers)
    if (l.kv_heads == a.num_kv_heads) l.kv_heads = 0;
  // The most layers' width is the model's (ties: the wider); a layer keeps its own only when it differs.
  std::int64_t most = 0;
  for (const auto& [width, n] : widths)
    if (n >= most) most = n, m.ffn.ffn_dim = width;
  for (auto& l : m.layers)
    if (l.ffn_dim == m.ffn.ffn_dim) l.ffn_dim = 0;
}

}  // namespace mhacfg::hf

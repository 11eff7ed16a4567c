// The one model specification every input (HF config.json, presets, flags, the recommender's
// candidates) resolves to, and every count is computed from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg {

enum class AttentionVariant { mha, gqa, mqa, mla };
enum class FfnKind { gated, plain };  // gated: gate, up, down (3 matrices); plain: up, down
// layernorm carries a bias; layernorm_no_bias (Cohere's) centres like a LayerNorm, with a weight only.
enum class NormKind { rmsnorm, layernorm, layernorm_no_bias };

std::string_view to_string(AttentionVariant v);
std::string_view to_string(FfnKind k);
std::string_view to_string(NormKind k);
AttentionVariant parse_variant(std::string_view name, const std::string& field);
FfnKind parse_ffn_kind(std::string_view name, const std::string& field);

// Multi-head latent attention (DeepSeek-V2/V3). K and V are decompressed from a shared latent of
// kv_lora_rank dims plus a decoupled RoPE key of rope_head_dim dims; only those are cached.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;  // 0: queries are projected directly from d_model
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t rope_head_dim = 0;
};

// DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): a lightning indexer of num_heads heads of head_dim
// scores every cached token for each query and the attention reads only the topk best. Its weights per
// layer: wq_b (the queries, from MLA's compressed query of q_lora_rank, else from d_model), wk (one key
// of head_dim per token, cached beside the K/V or latent), k_norm (a LayerNorm: weight and bias) and
// weights_proj (d_model -> num_heads head weights); none of them split under tensor parallelism.
struct IndexerSpec {
  std::int64_t num_heads = 0;  // 0: no indexer, dense attention
  std::int64_t head_dim = 0;
  std::int64_t topk = 0;
};

struct AttentionSpec {
  AttentionVariant variant = AttentionVariant::mha;
  std::int64_t num_q_heads = 0;
  std::int64_t num_kv_heads = 0;  // MLA: the logical KV heads after decompression (= num_q_heads)
  std::int64_t head_dim = 0;      // Q/K width per head; MLA: qk_nope_head_dim + rope_head_dim
  std::int64_t v_head_dim = 0;
  // Projection biases. For MLA q_bias/k_bias sit on the down projections (q_a, kv_a), as in
  // DeepSeek's `attention_bias`.
  bool q_bias = false;
  bool k_bias = false;
  bool v_bias = false;
  bool o_bias = false;
  bool qk_norm = false;  // per-head RMSNorm of q and k (head_dim weights each), as in Qwen3
  bool sinks = false;    // a learned logit per query head in the softmax's denominator (GPT-OSS)
  MlaSpec mla;
  // With qk_norm: the norms span every head's width (num_q_heads * head_dim and num_kv_heads *
  // head_dim weights), as OLMo 2's and OLMoE's do, instead of one head_dim shared by the heads.
  bool qk_norm_full_width = false;
  // A sigmoid gate on the attention output, computed by q_proj beside the queries (Qwen3-Next's gated
  // attention): q_proj is 2 x num_q_heads x head_dim wide.
  bool output_gate = false;
  IndexerSpec indexer{};  // last: the initialisers above keep their meaning
  // An RMSNorm over the attention output (num_q_heads x v_head_dim weights) before o_proj (BitNet's
  // attn_sub_norm).
  bool output_norm = false;

  bool sparse() const { return indexer.num_heads > 0; }
  std::int64_t group_size() const { return num_q_heads / num_kv_heads; }
};

// Linear attention on the layers whose mixer is Mixer::linear or Mixer::parallel: instead of a KV
// cache the layer keeps, per sequence, a num_v_heads x head_k_dim x head_v_dim recurrent state and the
// last conv_kernel - 1 inputs of its causal depthwise convolution over q, k and v, with key_dim =
// num_k_heads x head_k_dim, value_dim = num_v_heads x head_v_dim and conv_dim = 2 key_dim + value_dim.
// Two kinds:
// - gated_deltanet (Qwen3-Next): in_proj_qkvz (d_model -> 2 key_dim + 2 value_dim), in_proj_ba
//   (d_model -> 2 num_v_heads), conv1d (conv_dim x conv_kernel), dt_bias and A_log (num_v_heads each),
//   a gated RMSNorm of head_v_dim shared by the heads, out_proj (value_dim -> d_model).
// - mamba2 (Granite 4.0-H; Mamba2's SSD): heads of head_v_dim = mamba_d_head, n_groups = num_k_heads
//   groups of B and C with d_state = head_k_dim. in_proj (d_model -> z, x, B, C and dt: 2 value_dim +
//   2 key_dim + num_v_heads), conv1d over x, B and C, dt_bias, A_log and D (num_v_heads each), a gated
//   RMSNorm over value_dim, out_proj.
// - kda (Kimi Linear's Kimi Delta Attention): q_proj and k_proj (d_model -> key_dim), v_proj (-> value_dim),
//   short convolutions over q, k and v (conv_dim x conv_kernel, no bias), the per-channel decay and the
//   output gate each low-rank (f_a, g_a: d_model -> head_v_dim; f_b, g_b: head_v_dim -> value_dim),
//   b_proj (d_model -> num_v_heads), A_log per head, dt_bias per value channel, o_norm of head_v_dim,
//   o_proj (value_dim -> d_model).
// - lightning (MiniMax-Text-01, MiniMax-M1: MiniMaxLightningAttention): num_k_heads = num_v_heads heads of
//   head_k_dim = head_v_dim, no convolution (conv_kernel 0) and a fixed decay per head (buffers, not
//   parameters). qkv_proj (d_model -> 2 key_dim + value_dim, SiLU on all three), output_gate (d_model ->
//   value_dim, a sigmoid gate), an RMSNorm over value_dim, out_proj (value_dim -> d_model); no biases.
//   Its state per sequence: num_v_heads x head_k_dim x head_v_dim. Prefill runs in blocks of block_size.
// conv_bias, in_bias and out_bias (the in and out projections' biases) and gated_norm (Falcon-H1's
// mamba_rms_norm: without it the Mamba2 mixer has no gated RMSNorm) are mamba2's options; Gated
// DeltaNet has no biases and always its norm.
// (LinearKind is in ops.hpp, with the core's shape and counts.)

struct LinearAttentionSpec {
  std::int64_t num_k_heads = 0;
  std::int64_t num_v_heads = 0;  // 0: no linear attention
  std::int64_t head_k_dim = 0;
  std::int64_t head_v_dim = 0;
  std::int64_t conv_kernel = 0;
  LinearKind kind = LinearKind::gated_deltanet;  // last: {heads, ..., kernel} initialisers keep their meaning
  bool conv_bias = false;
  bool in_bias = false;
  bool out_bias = false;
  bool gated_norm = true;
  std::int64_t block_size = 0;  // lightning: the prefill's blocks (MiniMaxConfig's block_size)

  // Widths, overflow-checked (InputError naming the quantity).
  std::int64_t key_dim() const;
  std::int64_t value_dim() const;
  std::int64_t conv_dim() const;
};

// What mixes a layer's tokens.
enum class Mixer {
  attention,  // softmax attention (full, windowed or chunked)
  linear,     // linear attention (ModelSpec::linear) instead of softmax attention
  // Falcon-H1: softmax attention and the linear mixer side by side on the same input, their outputs
  // added; the attention's span as for `attention`.
  parallel,
  none,  // Nemotron-H's FFN-only block (MLP or experts); Llama-Nemotron's layers whose attention is skipped
  // A d_model x d_model linear layer (no bias) in place of attention, after the layer's input norm
  // (Llama-Nemotron's replace_with_linear): it mixes no tokens and caches nothing.
  linear_map,
};

// The FFN after the mixer. Nemotron-H's mixer-only blocks (attention, Mamba2) have none, nor Llama-Nemotron's
// layers whose FFN is skipped (a layer with neither passes its input on unchanged); linear_map is a
// d_model x d_model linear layer (no bias) in place of the FFN (Llama-Nemotron's replace_with_linear).
enum class LayerFfn { dense, moe, none, linear_map };

// How far back a layer's softmax attention reads. full: every earlier token. window W: each query
// attends to at most W keys (itself included). chunk C (Llama 4's chunked local attention): a query at
// position p attends to the keys of its chunk, [p - p % C, p]. Either way the cache holds at most
// `tokens`: the window, or a whole chunk before the next begins.
struct Span {
  enum class Kind { full, window, chunk };
  Kind kind = Kind::full;
  std::int64_t tokens = 0;  // the window or chunk; 0 with full

  static Span full() { return Span{}; }
  // 0 is full attention, as configs and flags write it. A negative size is kept for validate() to name.
  static Span window(std::int64_t w) { return w == 0 ? full() : Span{Kind::window, w}; }
  static Span chunk(std::int64_t c) { return c == 0 ? full() : Span{Kind::chunk, c}; }
  bool local() const { return kind != Kind::full; }
};
inline bool operator==(const Span& a, const Span& b) { return a.kind == b.kind && a.tokens == b.tokens; }

// Per-layer structure: its mixer, its FFN and its attention's span; one of each, so a layer cannot
// both slide a window and attend in chunks, or have experts without an FFN. What the enums still
// allow but the counts do not model (a span without softmax attention) is refused by validate().
struct LayerSpec {
  Mixer mixer = Mixer::attention;
  LayerFfn ffn = LayerFfn::dense;
  Span span;
  // A sparse model's layer that attends to the top-k keys the previous layer with an indexer chose
  // (GlmMoeDsaConfig's "shared" indexer_types, GLM-5.2's IndexShare): no indexer, no indexer keys.
  bool shared_topk = false;
  // The width of this layer's dense FFN when it differs from the model's (Llama-Nemotron's per-layer
  // widths); 0: FfnSpec::ffn_dim. Read it through dense_ffn_dim().
  std::int64_t ffn_dim = 0;
  // Softmax attention over the K/V an earlier layer cached (Gemma 3n's num_kv_shared_layers): the layer
  // caches and writes no K/V of its own and does not run its K and V projections (which the checkpoint
  // still holds: they are counted), but reads the earlier layer's cache as a layer of its span would.
  bool shared_kv = false;
  // This softmax layer's KV heads when they differ from the model's (Llama-Nemotron's Variable Grouped
  // Query Attention: n_heads_in_group per block); 0: AttentionSpec::num_kv_heads. Read it through
  // layer_kv_heads(): its K/V projections, its cache and its split over tensor-parallel GPUs.
  std::int64_t kv_heads = 0;

  static LayerSpec attention() { return LayerSpec{}; }
  static LayerSpec linear() { return LayerSpec{Mixer::linear, LayerFfn::dense, Span{}, false}; }
  static LayerSpec parallel() { return LayerSpec{Mixer::parallel, LayerFfn::dense, Span{}, false}; }
  static LayerSpec ffn_only(LayerFfn ffn) { return LayerSpec{Mixer::none, ffn, Span{}, false}; }
  LayerSpec with_ffn(LayerFfn f) const {
    LayerSpec l = *this;
    l.ffn = f;
    return l;
  }
  LayerSpec with_span(Span s) const {
    LayerSpec l = *this;
    l.span = s;
    return l;
  }
  LayerSpec with_window(std::int64_t w) const { return with_span(Span::window(w)); }
  LayerSpec with_ffn_dim(std::int64_t f) const {
    LayerSpec l = *this;
    l.ffn_dim = f;
    return l;
  }
  LayerSpec with_chunk(std::int64_t c) const { return with_span(Span::chunk(c)); }
  LayerSpec with_kv_heads(std::int64_t h) const {
    LayerSpec l = *this;
    l.kv_heads = h;
    return l;
  }

  // Softmax attention (windowed, chunked or full), alone or beside a linear mixer.
  bool softmax() const { return mixer == Mixer::attention || mixer == Mixer::parallel; }
  // Linear attention, alone or beside softmax attention.
  bool has_linear() const { return mixer == Mixer::linear || mixer == Mixer::parallel; }
  bool moe() const { return ffn == LayerFfn::moe; }
  // Softmax attention over every earlier token: the cache grows with the context.
  bool full_attention() const { return softmax() && !span.local(); }
  // The most tokens the layer's cache holds: its window or chunk, else 0 (every token).
  std::int64_t local_span() const { return span.tokens; }
  std::int64_t window() const { return span.kind == Span::Kind::window ? span.tokens : 0; }
  std::int64_t chunk() const { return span.kind == Span::Kind::chunk ? span.tokens : 0; }
};

// For importers that read a per-layer flag: experts or the dense FFN; linear or softmax attention.
inline LayerFfn moe_if(bool moe) { return moe ? LayerFfn::moe : LayerFfn::dense; }
inline Mixer linear_if(bool linear) { return linear ? Mixer::linear : Mixer::attention; }

// Layers that count and cost the same: the same mixer, FFN (and its width), span, indexer and KV heads.
inline bool same_kind(const LayerSpec& a, const LayerSpec& b) {
  return a.mixer == b.mixer && a.ffn == b.ffn && a.span == b.span && a.shared_topk == b.shared_topk &&
         a.ffn_dim == b.ffn_dim && a.shared_kv == b.shared_kv && a.kv_heads == b.kv_heads;
}

struct FfnSpec {
  FfnKind kind = FfnKind::gated;
  std::int64_t ffn_dim = 0;  // intermediate width of the dense FFN
  bool bias = false;
  std::int64_t activation_params = 0;  // learned scalars of each MLP's activation (Apertus' xIELU: alpha_p, alpha_n)
  // An RMSNorm over the intermediate width before down_proj in every MLP (BitNet's ffn_sub_norm).
  bool inner_norm = false;
};

// Mixture of experts on the layers whose FFN is LayerFfn::moe. Shared experts always run, as one FFN of
// num_shared_experts * expert_ffn_dim (DeepSeek, GLM-4.5) or of its own width (Qwen2-MoE).
struct MoeSpec {
  std::int64_t num_routed_experts = 0;
  std::int64_t num_shared_experts = 0;
  std::int64_t expert_ffn_dim = 0;
  std::int64_t shared_ffn_dim = 0;  // the shared FFN's width; 0: num_shared_experts * expert_ffn_dim
  std::int64_t top_k = 0;
  bool router_bias = false;  // a per-expert bias on the router (DeepSeek-V3 e_score_correction_bias)
  bool shared_gate = false;  // a sigmoid gate on the shared FFN, d_model weights (Qwen2-MoE)
  // Zero-computation (identity) experts beside the routed ones (LongCat-Flash): the router scores
  // num_routed_experts + zero_experts and picks top_k among all of them; a pick of an identity expert
  // passes the token on with no weights and no FLOPs, so the routed experts a token runs vary per token.
  std::int64_t zero_experts = 0;
};
// The width of the shared experts' FFN (0 without shared experts).
std::int64_t shared_ffn_width(const MoeSpec& moe);
// The router's outputs: every routed and zero-computation expert, and Qwen2-MoE's shared-FFN gate.
std::int64_t router_outputs(const MoeSpec& moe);
// The routed experts a token runs in expectation: top_k, or with zero-computation experts top_k x routed /
// (routed + zero), as when the router spreads its picks evenly over every expert (the load balancing's aim).
double expected_routed_experts(const MoeSpec& moe);
// The fewest and the most routed experts a token can run: top_k without zero-computation experts;
// with them max(0, top_k - zero) and min(top_k, routed).
std::int64_t fewest_routed_experts(const MoeSpec& moe);
std::int64_t most_routed_experts(const MoeSpec& moe);

struct NormSpec {
  NormKind kind = NormKind::rmsnorm;
  std::int64_t per_layer = 2;  // 1 for Falcon-7B's shared norm, 4 for Gemma-2's sandwich norms
  bool final_norm = true;
};

// A multimodal checkpoint's vision encoder and its projector into the language model. Every kind is
// pre-norm ViT layers (two norms, attention over q/k/v/o and an MLP) over patches.
// - siglip (Gemma 3): LayerNorms, q/k/v/o and a two-layer MLP with biases; a patch convolution with a
//   bias, learned positions, a final LayerNorm, optionally SigLIP's attention-pooling head; then an
//   RMSNorm over the image embedding and a hidden x d_model projection.
// - llama4 (Llama 4): siglip's layers; a patch linear without a bias, a class embedding, learned
//   positions for the patches and the class token, LayerNorms before and after the layers; the
//   pixel-shuffle adapter (intermediate -> projector_input_dim -> projector_output_dim, no biases); then
//   an output_dim x d_model projection without a bias.
// - pixtral (Mistral 3): RMSNorms, q/k/v/o and a gated MLP without biases, a patch convolution without a
//   bias and an RMSNorm before the layers (2D RoPE: no position parameters); Mistral 3's projector: an
//   RMSNorm, the patch merger ((merge^2 x hidden) -> hidden, no bias), then (feature_layers x hidden) ->
//   d_model and d_model -> d_model, with biases when projector_bias.
// - qwen2_5_vl (Qwen2.5-VL): RMSNorms, a fused qkv and a proj with biases, a gated MLP with biases, a
//   Conv3d patch embedding (temporal_patch x patch x patch, no bias); the merger: an RMSNorm, then
//   (merge^2 x hidden) -> the same width -> out_hidden, with biases.
// - qwen3_vl (Qwen3-VL): LayerNorms, the fused qkv and proj, a plain MLP with biases, the Conv3d with a
//   bias, `positions` learned position embeddings; the merger with a LayerNorm over hidden, and
//   `deepstack` more mergers whose LayerNorm is over the merged (merge^2 x hidden) width.
// - glm4v (GLM-4.1V, GLM-4.5V): a Conv3d patch embedding with a bias and its RMSNorm, (image_size /
//   patch_size)^2 learned position embeddings, RMSNorm blocks with a fused qkv (biases with
//   `attention_bias`), a proj and a gated MLP out_hidden wide, none biased; a final RMSNorm, a Conv2d
//   (merge x merge, biased) from hidden to out_hidden, and the merger: a proj (out_hidden^2), a LayerNorm
//   and a gated MLP `intermediate` wide, without biases.
// - smolvlm (SmolVLM, SmolVLM2): siglip's encoder without a pooling head; the connector: a pixel shuffle of
//   merge x merge patches (scale_factor), then one (merge^2 x hidden) -> d_model linear without a bias.
// - internvl (InternVL's InternViT, -hf layout): a class token, a biased patch Conv2d, (image / patch)^2 + 1
//   learned positions; layers of two norms (LayerNorm, or RMSNorm with `rms_norm`), q/k/v (biases with
//   `attention_bias`) with RMSNorms over hidden on q and k with `qk_norm`, a biased projection, a plain
//   biased MLP and two layer-scale vectors; the projector: a LayerNorm over the pixel-unshuffled
//   (merge^2 x hidden) width, then -> d_model -> d_model, biased.
// - lfm2_vl (LFM2-VL, LFM2.5-VL: SigLIP2 NaFlex): a biased patch linear, `positions` learned position
//   embeddings (no fixed image size), siglip's layers and final LayerNorm, no pooling head; the projector:
//   a pixel unshuffle of merge x merge patches, a LayerNorm over that width with `projector_norm`, then
//   -> out_hidden -> d_model, biased with `projector_bias`.
enum class VisionKind { siglip, llama4, pixtral, qwen2_5_vl, qwen3_vl, glm4v, smolvlm, internvl, lfm2_vl };
std::string_view to_string(VisionKind k);

struct VisionSpec {
  VisionKind kind = VisionKind::siglip;
  std::int64_t hidden = 0;  // 0: no vision encoder
  std::int64_t intermediate = 0;
  std::int64_t layers = 0;
  std::int64_t channels = 0;
  std::int64_t image_size = 0;  // 0 for the Qwen kinds and lfm2_vl (no fixed image size)
  std::int64_t patch_size = 0;
  bool pooling_head = false;  // siglip
  std::int64_t projector_input_dim = 0;   // llama4
  std::int64_t projector_output_dim = 0;  // llama4
  std::int64_t output_dim = 0;            // llama4: the projector's input width
  std::int64_t merge = 0;                 // pixtral, qwen, glm4v, smolvlm, internvl: merge x merge patches -> one token
  std::int64_t feature_layers = 0;        // pixtral: the encoder layers the projector concatenates
  bool projector_bias = false;            // pixtral, lfm2_vl
  std::int64_t temporal_patch = 0;        // qwen, glm4v: frames per patch
  std::int64_t out_hidden = 0;            // qwen, glm4v: the merger's output width; lfm2_vl: the projector's
  std::int64_t positions = 0;             // qwen3_vl, lfm2_vl: learned position embeddings
  std::int64_t deepstack = 0;             // qwen3_vl: deepstack mergers
  bool attention_bias = false;            // glm4v, internvl: biases on q/k/v
  bool qk_norm = false;                   // internvl
  bool rms_norm = false;                  // internvl: RMSNorms in place of LayerNorms
  bool projector_norm = false;            // lfm2_vl: a LayerNorm before the projector
};

// Modules that ship with a checkpoint but are not part of the main model (reported separately).
struct ExtraSpec {
  // DeepSeek-V3 multi-token prediction: each module is two RMSNorms on its inputs, a 2d -> d
  // projection, one transformer block and a final RMSNorm; it shares the embedding and LM head.
  std::int64_t mtp_modules = 0;
  VisionSpec vision;
};

// Weights beside the mixers and FFNs that a family puts on the residual stream (Gemma 3n's AltUp,
// LAuReL and per-layer inputs), in the total: per layer and once per model, `matmul` weights every
// token passes once (2 FLOPs per weight per token) and `other` parameters (norms, scales, coefficient
// maps) counted but not as FLOPs; and a second embedding table of `table_rows` x `table_width` (Gemma
// 3n's per-layer embeddings), counted in the embedding, of which each token reads one row.
struct AuxSpec {
  std::int64_t layer_matmul = 0;
  std::int64_t layer_other = 0;
  std::int64_t model_matmul = 0;
  std::int64_t model_other = 0;
  std::int64_t table_rows = 0;
  std::int64_t table_width = 0;
};

struct ModelSpec {
  std::string name;    // preset name or file the spec came from
  std::string family;  // HF model_type, or "custom"
  std::int64_t d_model = 0;
  std::int64_t vocab_size = 0;
  bool tie_embeddings = false;
  bool lm_head_bias = false;  // a bias on the LM head, counted even when its weight is tied (Phi)
  std::int64_t learned_positions = 0;  // rows of a learned position-embedding table (GPT-2), else 0
  AttentionSpec attention;
  std::vector<LayerSpec> layers;
  FfnSpec ffn;
  MoeSpec moe;
  NormSpec norm;
  ExtraSpec extra;
  LinearAttentionSpec linear;
  AuxSpec aux;
  // What an import assumed, one sentence each (defaults taken for keys the config leaves out).
  std::vector<std::string> notes;

  std::int64_t num_layers() const { return static_cast<std::int64_t>(layers.size()); }
  // Layers with softmax attention (every layer but the linear-attention and FFN-only ones).
  std::int64_t num_attention_layers() const;
  std::int64_t num_linear_layers() const;
  // Softmax layers with an indexer of their own (a sparse model's; 0 with dense attention).
  std::int64_t num_indexer_layers() const;
  // Softmax layers that cache K/V of their own (all of them but Gemma 3n's KV-shared layers).
  std::int64_t num_kv_cache_layers() const;
};

// The width of layer `l`'s dense FFN: its own, or the model's.
inline std::int64_t dense_ffn_dim(const ModelSpec& m, const LayerSpec& l) { return l.ffn_dim > 0 ? l.ffn_dim : m.ffn.ffn_dim; }
// Layer `l`'s KV heads: its own, or the model's.
inline std::int64_t layer_kv_heads(const ModelSpec& m, const LayerSpec& l) {
  return l.kv_heads > 0 ? l.kv_heads : m.attention.num_kv_heads;
}

// Dense attention in place of a sparse model's: no indexer, and no layer sharing its top-k.
void remove_indexer(ModelSpec& m);

// Variant implied by head counts for non-MLA attention: equal -> mha, one KV head -> mqa, else gqa.
AttentionVariant variant_for_heads(std::int64_t num_q_heads, std::int64_t num_kv_heads);

// Throws InputError naming the first invalid field (zero/negative sizes, heads that do not divide,
// variant inconsistent with the head counts, MLA ranks missing, MoE fields inconsistent).
void validate(const ModelSpec& spec);

// The most layers a model may declare (the deepest published models have a few hundred): a larger
// count is an input error, raised before one LayerSpec per layer is allocated.
constexpr std::int64_t kMaxLayers = 100000;
// `layers` if it is in [1, kMaxLayers]; otherwise InputError naming `field`.
std::int64_t checked_layer_count(std::int64_t layers, const std::string& field);

}  // namespace mhacfg

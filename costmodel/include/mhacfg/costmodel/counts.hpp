// Exact counts of a model under a workload: parameters, KV cache, FLOPs, bytes moved per decode step.
// Conventions (docs/models.md, "Counting conventions"): FLOPs count matmuls only, a multiply-add is 2; causal
// prefill counts the exact unmasked pairs; MLA decode is counted absorbed, MLA prefill decompressed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/dtype.hpp"
#include "mhacfg/costmodel/model_spec.hpp"
#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg {

struct Workload {
  std::int64_t batch = 1;         // concurrent sequences
  std::int64_t prompt_len = 2048; // prefill tokens per sequence
  std::int64_t context = 8192;    // KV length at decode, including the token being decoded
  DType kv_dtype = DType::bf16;
  DType weight_dtype = DType::bf16;
  std::int64_t tp = 1;  // tensor-parallel degree
  DType state_dtype = DType::bf16;  // linear-attention state (recurrent and conv), as engines keep it
  // Parallelism beyond tp (docs/cost-model.md "Parallelism"): the GPUs serving one replica are
  // tp x pp; experts are split over ep of them (ep divides tp x dp) and, with dp_attention, attention
  // runs data-parallel (each rank its own requests, attention weights and latent cache whole).
  std::int64_t ep = 1;        // expert-parallel degree (1: experts split by tp)
  std::int64_t pp = 1;        // pipeline stages, layers split evenly
  bool dp_attention = false;  // attention data parallel across the tp ranks
  std::int64_t nodes = 0;     // nodes the replica spans; 0: as few as the profile's GPUs per node allow
  // Per-component weight dtypes (docs/cost-model.md "Dtypes"), unset: weight_dtype. Attention: the
  // softmax- and linear-attention projections (with MLA's and the indexers'); FFN: dense FFNs and the
  // shared and routed experts. The rest (embedding, LM head, routers, norms) stays in weight_dtype.
  std::optional<DType> attention_weight_dtype = std::nullopt;
  std::optional<DType> ffn_weight_dtype = std::nullopt;

  DType attention_weights() const { return attention_weight_dtype.value_or(weight_dtype); }
  DType ffn_weights() const { return ffn_weight_dtype.value_or(weight_dtype); }

  // The same deployment at another batch or tensor-parallel degree: a workload is built once from
  // the options and derived, never re-assembled field by field.
  Workload with_batch(std::int64_t b) const {
    Workload w = *this;
    w.batch = b;
    return w;
  }
  Workload with_tp(std::int64_t t) const {
    Workload w = *this;
    w.tp = t;
    return w;
  }
  // Serving sequences of `tokens`: the prompt is the whole context (recommend's workload).
  Workload serving(std::int64_t tokens) const {
    Workload w = *this;
    w.prompt_len = w.context = tokens;
    return w;
  }
};
void validate(const Workload& w);

struct ParamCounts {
  std::int64_t total = 0;      // unique trainable parameters of the main model
  std::int64_t embedding = 0;  // token embedding (+ learned positions, + Gemma 3n's per-layer embeddings)
  std::int64_t lm_head = 0;    // untied output projection; 0 when tied to the embedding
  std::int64_t attention = 0;  // all softmax-attention layers (projections, biases, MLA norms, q/k norms)
  std::int64_t attention_per_layer = 0;  // a layer of the model's KV heads (AttentionSpec::num_kv_heads)
  std::int64_t indexer = 0;    // of attention: a sparse model's indexers, all layers (held whole on every GPU)
  std::int64_t linear_attention = 0;  // all linear-attention layers (Gated DeltaNet), 0 without
  std::int64_t linear_attention_per_layer = 0;
  std::int64_t ffn = 0;        // dense FFNs and experts, all layers
  std::int64_t router = 0;
  std::int64_t routed_experts = 0;  // of ffn: the routed experts, all MoE layers (split by ep when ep > 1)
  std::int64_t norms = 0;      // per-layer and final norms
  std::int64_t aux = 0;        // residual-stream weights beside the mixers and FFNs (AuxSpec), 0 without
  std::int64_t active = 0;     // used per token (routed experts: top_k of them, or their expectation, below)
  // The fewest and the most a token uses: equal to active, except with zero-computation experts
  // (MoeSpec::zero_experts), where a token runs max(0, top_k - zero) to min(top_k, routed) routed experts
  // and `active` is the expectation, top_k x routed / (routed + zero) of them (expected_routed_experts).
  std::int64_t active_min = 0;
  std::int64_t active_max = 0;
  std::int64_t mtp = 0;        // extra modules (DeepSeek-V3 MTP), not part of total
  std::int64_t vision = 0;     // vision encoder + projector (vision_params), not part of total
  // Of total: what every GPU holds whole under tensor parallelism, as vLLM and SGLang shard (their
  // ReplicatedLinear and plain norm weights): a sparse model's indexers, MLA's down-projections (q_a_proj,
  // kv_a_proj_with_mqa) with their norms and biases, the routers and the norms.
  std::int64_t replicated = 0;
  // Of attention: the MHA/GQA layers' K and V projections (with biases), and the same by KV-head count
  // (one entry unless layers have KV heads of their own, LayerSpec::kv_heads): under tp beyond a layer's
  // KV heads each GPU holds one head's share (the K/V heads are replicated, as the cache's are).
  struct KvProjection {
    std::int64_t kv_heads = 0;
    std::int64_t params = 0;
  };
  std::int64_t kv_projection = 0;
  std::vector<KvProjection> kv_projections;
};

// A multimodal checkpoint's vision encoder and its projector into the language model (VisionSpec's
// kinds; 0 without one): counts_vision.cpp.
std::int64_t vision_params(const ModelSpec& m);

// Weight bytes one GPU holds to serve the model under tp: the replicated parameters whole, the K/V
// projections split over min(tp, kv_heads), the rest split evenly; the main model, plus a multimodal
// checkpoint's vision encoder (loaded to serve images). DeepSeek-V3's and GLM-4.5's MTP modules are left
// out: engines load them only for speculative decoding.
// Each component in its dtype (Workload::attention_weights, ffn_weights, weight_dtype) with its
// quantisation scales (storage_bits_per_element). Under the workload's other parallelism: with ep > 1
// the routed experts are split over ep GPUs (whole experts, not tp slices); with dp_attention every GPU
// holds the attention whole (its own requests' attention); with pp each stage holds 1/pp of the layers
// (embedding and LM head counted as an even share: the first and last stages hold them).
double served_weight_bytes_per_gpu(const ParamCounts& p, const Workload& w);
// Every weight in `weight_dtype`, tp only.
double served_weight_bytes_per_gpu(const ParamCounts& p, DType weight_dtype, std::int64_t tp);

// Counts in bytes include the quantisation scales a dtype stores per block (stored_bytes): an int4,
// nvfp4 or mxfp4 cache's and weights' block scales; per-tensor scales (fp8) are not counted.
struct KvCacheCounts {
  DType dtype = DType::bf16;
  // One token, one layer of the model's KV heads (all of them / the latent; + the indexer key where it has an indexer).
  std::int64_t bytes_per_token_per_layer = 0;
  std::int64_t indexer_bytes_per_token_per_layer = 0;  // of which a sparse model's indexer key (fp8 + scales)
  std::int64_t bytes_per_token = 0;                // one token held in every layer
  std::int64_t bytes_per_token_beyond_window = 0;  // growth per token once every window is full
  std::int64_t layer_tokens = 0;   // sum over layers of tokens held for one sequence at `context`
  std::int64_t indexer_layer_tokens = 0;  // the same over layers with an indexer of their own (its keys)
  std::int64_t bytes_total = 0;    // batch x context, windows and chunks honoured, + batch x state
  // The model's KV heads under tp (MLA: 1 latent, held whole on each GPU); a layer with KV heads of its
  // own (LayerSpec::kv_heads) is split or replicated by the same rule (kv_head_shard), in bytes_per_gpu.
  std::int64_t kv_heads_per_gpu = 0;
  std::int64_t replication = 1;       // GPUs holding a copy of each KV head
  std::int64_t bytes_per_gpu = 0;     // KV and linear-attention state held on one GPU
  // Linear-attention layers: a fixed state per sequence instead of K/V per token (0 without them).
  DType state_dtype = DType::bf16;
  std::int64_t state_bytes_per_layer = 0;     // one sequence, one layer: recurrent + conv state
  std::int64_t state_bytes_per_sequence = 0;  // one sequence, every linear-attention layer
};

// FLOPs are exact 128-bit counts (WideCount): a 10M-token prefill's attention passes 2^63.
struct FlopBreakdown {
  // Q, K, V, O (and MLA down/up; linear attention's in/out) projections, and AuxSpec's matmuls
  WideCount projections = 0;
  WideCount attention_core = 0;  // Q K^T and P V; linear attention's delta rule and convolution
  WideCount ffn = 0;             // dense FFN, experts and router
  WideCount lm_head = 0;
  WideCount total = 0;
};

struct FlopCounts {
  FlopBreakdown prefill;           // batch x prompt_len tokens; LM head on the last position only
  FlopBreakdown decode_per_token;  // one token of one sequence at KV length `context`
  WideCount decode_step = 0;       // batch x decode_per_token
};

// Minimum bytes moved by one decode step of `batch` sequences: every weight read once, the KV cache
// read once, the new K/V written. Activations are not counted.
struct DecodeBytes {
  std::int64_t weights = 0;
  std::int64_t kv_read = 0;
  std::int64_t kv_written = 0;
  std::int64_t state = 0;          // linear-attention state, read and written once each
  std::int64_t step = 0;           // the sum
  std::int64_t per_token = 0;      // step / batch, rounded
  double arithmetic_intensity = 0; // decode-step FLOPs per byte
  double experts_read = 0;         // MoE: expected distinct routed experts per MoE layer
};

struct ModelCounts {
  ParamCounts params;
  KvCacheCounts kv_cache;
  FlopCounts flops;
  DecodeBytes bytes;
};

ParamCounts count_params(const ModelSpec& m);
KvCacheCounts count_kv_cache(const ModelSpec& m, const Workload& w);
FlopCounts count_flops(const ModelSpec& m, const Workload& w);
ModelCounts count_model(const ModelSpec& m, const Workload& w);

// Parameters of one layer's attention block: a layer of the model's KV heads, or of `kv_heads` (layer_kv_heads).
std::int64_t attention_params_per_layer(const ModelSpec& m);
std::int64_t attention_params(const ModelSpec& m, std::int64_t kv_heads);
// How tp GPUs hold `kv_heads` MHA/GQA KV heads (their cache and their K/V projections): split,
// kv_heads / tp each, when tp divides them; else one each, every head on tp / kv_heads GPUs, when they
// divide tp; otherwise InputError on tp naming `heads`.
struct KvHeadShard {
  std::int64_t per_gpu = 0;
  std::int64_t replication = 1;
};
KvHeadShard kv_head_shard(std::int64_t kv_heads, std::int64_t tp, const std::string& heads);
// A multimodal checkpoint's vision encoder and its projector into d_model (0 without one):
// ParamCounts::vision.
std::int64_t vision_params(const ModelSpec& m);
// Parameters of one linear-attention layer's block (0 without linear attention).
std::int64_t linear_attention_params_per_layer(const ModelSpec& m);
// Matmul weights of one linear-attention layer's projections: in_proj_qkvz, in_proj_ba, out_proj
// (Mamba2: in_proj, out_proj; lightning: qkv_proj, output_gate, out_proj).
std::int64_t linear_attention_matmul_weights(const ModelSpec& m);
// FLOPs of one linear-attention layer's core for `batch` sequences of q_len tokens: per value head and
// token the products with the head_k_dim x head_v_dim state (Gated DeltaNet's delta rule: S^T k, the
// rank-one update k delta^T, S^T q; Mamba2: the update x B^T and the read h C), counted in this recurrent
// form in prefill too; and the depthwise convolution's multiply-adds. Lightning attention's prefill
// adds its blocks' intra-block attention (linear_attention_flops).
WideCount linear_attention_core_flops(const ModelSpec& m, std::int64_t batch, std::int64_t q_len);
// Elements of one sequence's state in one linear-attention layer: the recurrent state and the last
// conv_kernel - 1 convolution inputs.
std::int64_t linear_attention_state_elements(const ModelSpec& m);
// One GPU's share of a linear-attention layer under tensor parallelism tp: its value heads (tp must
// divide them) and key heads (Mamba2: groups), split when tp divides them, else one per GPU, replicated
// when tp is a multiple of them (as vLLM does Mamba2's single group). InputError otherwise.
struct LinearShard {
  std::int64_t k_heads = 0;
  std::int64_t v_heads = 0;
};
LinearShard linear_shard(const ModelSpec& m, std::int64_t tp);
// Outputs per token of the input projection(s) of `s`'s heads (the in GEMM's width): q and k (Mamba2:
// C and B), v (x) and the output gate z, and per value head Gated DeltaNet's beta and alpha or Mamba2's dt;
// KDA's q, k, v, beta per value head and the low-rank halves of its decay and output gate (head_v_dim
// each, whole on every GPU); lightning's q, k, v and its output gate.
std::int64_t linear_in_projection_outputs(const LinearAttentionSpec& la, const LinearShard& s);
// KDA's second GEMM: the decay's and the output gate's up-projections (head_v_dim -> each head's
// head_v_dim); 0 for the other kinds.
std::int64_t kda_gate_up_outputs(const LinearAttentionSpec& la, const LinearShard& s);
// State elements of one sequence in one linear-attention layer on one GPU.
std::int64_t linear_attention_state_elements_per_gpu(const ModelSpec& m, std::int64_t tp);
// The core of one linear-attention layer on one GPU (tp: its shard's heads) as an op shape.
LinearAttentionShape layer_linear_attention_shape(const ModelSpec& m, std::int64_t batch, std::int64_t q_len,
                                                  std::int64_t tp = 1);
// The width the indexer's queries are projected from: MLA's compressed query (q_lora_rank), else d_model.
std::int64_t indexer_query_input(const ModelSpec& m);
// The lightning indexer of one softmax layer as an op shape (num_heads 0 without one: no FLOPs).
IndexerShape layer_indexer_shape(const ModelSpec& m, std::int64_t batch, std::int64_t q_len, std::int64_t kv_len);
// The attention core of one layer as an op shape: prefill (decompressed for MLA) or decode (absorbed);
// a sparse model's queries attend to the indexer's top k keys (the shape's window is k).
AttentionShape layer_attention_shape(const ModelSpec& m, const LayerSpec& layer, std::int64_t batch,
                                     std::int64_t q_len, std::int64_t kv_len, bool decode);

}  // namespace mhacfg

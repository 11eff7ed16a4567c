// The hybrid families of hf_hybrid.cpp (Qwen3-Next, Granite 4.0-H, Nemotron-H, Kimi Linear, LFM2,
// Falcon-H1, MiniMax-Text-01/M1) and Llama-Nemotron's layers that differ one from the next: their layers, states and counts
// on real config.json files.
#include <catch2/catch.hpp>

#include <cmath>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/predict.hpp"

using namespace mhacfg;
using mhacfg::testing::edited;
using mhacfg::testing::fixture;

namespace {

// A datasheet roofline with an H200's bandwidth and bf16 peak: times are FLOPs or bytes over the rates.
Profile h200_roofline() {
  Profile roof;
  roof.name = "roofline";
  roof.spec.mem_bw_bytes_per_s = 4.8e12;
  roof.spec.peak_flop_per_s = {{"bf16", 989.4e12}};
  return roof;
}

}  // namespace

TEST_CASE("qwen3_next: Gated DeltaNet layers with a fixed state, gated attention every fourth layer", "[hf_config][kv]") {
  const ModelSpec q = fixture("qwen3-next-80b-a3b-instruct");
  REQUIRE(q.num_layers() == 48);
  for (std::size_t i = 0; i < 48; ++i) CHECK(q.layers[i].has_linear() == ((i + 1) % 4 != 0));
  CHECK(q.num_attention_layers() == 12);
  CHECK(q.attention.output_gate);
  CHECK(q.attention.qk_norm);
  CHECK(q.attention.variant == AttentionVariant::gqa);
  const ParamCounts p = count_params(q);
  // The tensor shapes of transformers' Qwen3NextAttention: q_proj 8192 x 2048 (queries and the gate),
  // k_proj and v_proj 512 x 2048, o_proj 2048 x 4096, q_norm and k_norm 256.
  CHECK(p.attention_per_layer == 8192LL * 2048 + 2 * 512 * 2048 + 2048 * 4096 + 2 * 256);
  // Qwen3NextGatedDeltaNet: in_proj_qkvz 12288 x 2048, in_proj_ba 64 x 2048, conv1d 8192 x 1 x 4,
  // dt_bias and A_log 32 each, norm 128, out_proj 2048 x 4096.
  CHECK(p.linear_attention_per_layer == 12288LL * 2048 + 64 * 2048 + 8192 * 4 + 2 * 32 + 128 + 2048 * 4096);
  CHECK(p.attention == 12 * p.attention_per_layer);
  CHECK(p.linear_attention == 36 * p.linear_attention_per_layer);
  // The checkpoint's one MTP module (mtp.fc, three norms, a gated-attention layer with the experts) is
  // the rest of the Hub's total.
  ModelSpec with_mtp = q;
  with_mtp.extra.mtp_modules = 1;
  CHECK(count_params(with_mtp).total + count_params(with_mtp).mtp == 81'324'862'720);
  // The KV cache grows in the 12 softmax layers only; the 36 linear layers hold a 32 x 128 x 128
  // recurrent state and the convolution's last 3 inputs of 8192 channels, whatever the context.
  Workload w;
  w.batch = 2;
  w.context = 32768;
  const KvCacheCounts kv = count_kv_cache(q, w);
  CHECK(kv.bytes_per_token == 12 * 2 * 2 * 256 * 2);
  CHECK(kv.state_bytes_per_layer == (32 * 128 * 128 + 8192 * 3) * 2);
  CHECK(kv.state_bytes_per_sequence == 36 * kv.state_bytes_per_layer);
  CHECK(kv.layer_tokens == 12 * 32768);
  CHECK(kv.bytes_total == 2 * (12LL * 32768 * 2048 + kv.state_bytes_per_sequence));
  w.state_dtype = DType::fp32;  // transformers keeps the recurrent state in float32
  CHECK(count_kv_cache(q, w).state_bytes_per_layer == (32 * 128 * 128 + 8192 * 3) * 4);
  // At tp 4 each GPU holds one of the 2 KV heads (replicated twice) and a quarter of the linear heads.
  w.tp = 4;
  const KvCacheCounts kv4 = count_kv_cache(q, w);
  CHECK(kv4.bytes_per_gpu == 2LL * 12 * 32768 * 2048 / 2 + 2 * kv4.state_bytes_per_sequence / 4);
  w.state_dtype = DType::bf16;
  // A decode step reads the softmax layers' caches and reads and writes each state once.
  w.tp = 1;
  const ModelCounts c = count_model(q, w);
  CHECK(c.bytes.state == 2 * 2 * c.kv_cache.state_bytes_per_sequence);
  CHECK(c.bytes.kv_read == 2LL * 12 * 32768 * 2048);
  // Decode FLOPs of the linear layers' core: per value head 6 x 128 x 128, the convolution 2 x 8192 x 4.
  Workload short_ctx = w;
  short_ctx.context = 1;
  const std::int64_t softmax_core = count_flops(q, short_ctx).decode_per_token.attention_core -
                                    36 * (6LL * 32 * 128 * 128 + 2 * 8192 * 4);
  CHECK(softmax_core == 12 * 2 * 2 * 16 * 256);  // one key: q k and p v for 16 heads of 256
  // layer_types, when given, names the layers; an unknown type is refused.
  const ModelSpec typed = edited("qwen3-next-80b-a3b-instruct", [](nlohmann::json& j) {
    std::vector<std::string> t(48, "full_attention");
    t[0] = "linear_attention";
    j["layer_types"] = t;
  });
  CHECK(typed.num_attention_layers() == 47);
  CHECK_THROWS_WITH(edited("qwen3-next-80b-a3b-instruct",
                           [](nlohmann::json& j) { j["layer_types"] = std::vector<std::string>(48, "sliding_attention"); }),
                    Catch::Contains("layer_types[0] = \"sliding_attention\": unknown layer type (expected full_attention or "
                                    "linear_attention)"));
  CHECK_THROWS_WITH(edited("qwen3-next-80b-a3b-instruct", [](nlohmann::json& j) { j["linear_num_key_heads"] = 12; }),
                    Catch::Contains("linear_num_key_heads = 12: must divide linear_num_value_heads = 32"));
  // Widths too large for exact counts are input errors, not wrapped numbers.
  // The import counts the model once, so the error names the config and its size keys.
  CHECK_THROWS_WITH(edited("qwen3-next-80b-a3b-instruct", [](nlohmann::json& j) { j["linear_key_head_dim"] = 1LL << 62; }),
                    Catch::Contains("would overflow") && Catch::Contains("qwen3-next-80b-a3b-instruct"));
  CHECK_THROWS_WITH(edited("qwen3-next-80b-a3b-instruct", [](nlohmann::json& j) { j["head_dim"] = 1LL << 61; }),
                    Catch::Contains("would overflow") && Catch::Contains("head_dim"));
}

TEST_CASE("granitemoehybrid: Mamba2 layers beside four attention layers, a shared MLP beside the experts", "[hf_config][kv]") {
  const ModelSpec g = fixture("granite-4.0-h-small");
  REQUIRE(g.num_layers() == 40);
  for (std::size_t i = 0; i < 40; ++i) CHECK(g.layers[i].has_linear() == (i % 10 != 5));
  CHECK(g.linear.kind == LinearKind::mamba2);
  CHECK(g.attention.head_dim == 128);  // hidden_size / heads
  const ParamCounts p = count_params(g);
  // transformers' GraniteMoeHybridMambaLayer with d_inner 8192, conv_dim 8192 + 2 x 128: in_proj
  // 16768 x 4096 (z, x, B, C, dt), conv1d 8448 x 1 x 4 with its bias, dt_bias, A_log and D of 128,
  // the gated norm over 8192, out_proj 4096 x 8192.
  CHECK(p.linear_attention_per_layer == 16768LL * 4096 + 8448 * 4 + 8448 + 3 * 128 + 8192 + 4096LL * 8192);
  CHECK(p.attention_per_layer == 4096LL * 4096 * 2 + 2LL * 4096 * 1024);
  // Every layer: 72 experts of 768 and the shared MLP of 1536, gated; a router of 72 x 4096.
  CHECK(p.ffn == 40 * (72LL * 3 * 4096 * 768 + 3LL * 4096 * 1536));
  CHECK(p.router == 40LL * 72 * 4096);
  // The state: 128 heads of 64 x 128 and 3 inputs of 8448 channels, per Mamba2 layer.
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(g, w);
  CHECK(kv.state_bytes_per_layer == (128 * 64 * 128 + 8448 * 3) * 2);
  CHECK(kv.bytes_per_token == 4 * 2 * 8 * 128 * 2);
  // Under tp 2 the heads split; the single group's B and C are held by both GPUs.
  CHECK(linear_attention_state_elements_per_gpu(g, 2) == 64 * 64 * 128 + (2 * 128 + 64 * 64) * 3);
  // Decode FLOPs of a Mamba2 core per token: the update and the read, 2 x 2 x 128 x 64 x 128, and the
  // convolution's 2 x 8448 x 4.
  w.context = 1;
  const std::int64_t core = count_flops(g, w).decode_per_token.attention_core;
  CHECK(core == 36 * (4LL * 128 * 64 * 128 + 2 * 8448 * 4) + 4 * 2 * 2 * 32 * 128);
  // Without experts the shared MLP is the layers' dense FFN; without layer_types every layer is Mamba2.
  const ModelSpec dense = edited("granite-4.0-h-small", [](nlohmann::json& j) {
    j["num_local_experts"] = 0;
    j.erase("layer_types");
  });
  for (const auto& l : dense.layers) {
    CHECK(l.has_linear());
    CHECK_FALSE(l.moe());
  }
  CHECK(dense.ffn.ffn_dim == 1536);
  CHECK(count_params(dense).total == 32'207'337'984 - 40LL * (72LL * 3 * 4096 * 768 + 72 * 4096) -
                                         4 * p.attention_per_layer + 4 * p.linear_attention_per_layer);
  CHECK_THROWS_WITH(edited("granite-4.0-h-small", [](nlohmann::json& j) { j["mamba_d_head"] = 32; }),
                    Catch::Contains("mamba_d_head = 32: x mamba_n_heads must equal mamba_expand x hidden_size = 8192"));
  CHECK_THROWS_WITH(edited("granite-4.0-h-small", [](nlohmann::json& j) { j["layer_types"][3] = "linear_attention"; }),
                    Catch::Contains("layer_types[3] = \"linear_attention\": unknown layer type (expected attention or mamba)"));
  CHECK_THROWS_WITH(edited("granite-4.0-h-small", [](nlohmann::json& j) { j["num_local_experts"] = -1; }),
                    Catch::Contains("num_local_experts = -1: must not be negative"));
}

TEST_CASE("nemotron_h: blocks of one module each, Mamba2, attention, MLP or experts", "[hf_config][kv]") {
  const ModelSpec n = fixture("nemotron-3-nano-30b-a3b");
  const std::string pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
  REQUIRE(n.num_layers() == 52);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    CHECK(n.layers[i].has_linear() == (c == 'M'));
    CHECK(n.layers[i].moe() == (c == 'E'));
    CHECK((n.layers[i].mixer == Mixer::none) == (c == 'E' || c == '-'));
    CHECK((n.layers[i].ffn == LayerFfn::none) == (c == 'M' || c == '*'));
  }
  CHECK(n.num_attention_layers() == 6);
  CHECK(n.num_linear_layers() == 23);
  CHECK(n.norm.per_layer == 1);
  CHECK(n.ffn.kind == FfnKind::plain);  // relu2: up and down, no gate
  const ParamCounts p = count_params(n);
  // NemotronHMamba2Mixer: 64 heads of 64, 8 groups of 128: in_proj 10304 x 2688, conv1d 6144 x 4 with
  // its bias, dt_bias, A_log and D of 64, the gated norm over 4096, out_proj 2688 x 4096.
  CHECK(p.linear_attention_per_layer == 10304LL * 2688 + 6144 * 4 + 6144 + 3 * 64 + 4096 + 2688LL * 4096);
  CHECK(p.attention_per_layer == 2LL * 2688 * 4096 + 2LL * 2688 * 256);
  // 23 expert blocks: 128 experts and the shared expert (3712), up and down each; the router.
  CHECK(p.ffn == 23 * (128LL * 2 * 2688 * 1856 + 2LL * 2688 * 3712));
  CHECK(p.router == 23LL * 128 * 2688);
  CHECK(p.norms == 53 * 2688);
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(n, w);
  CHECK(kv.bytes_per_token == 6 * 2 * 2 * 128 * 2);
  CHECK(kv.state_bytes_per_layer == (64 * 64 * 128 + 6144 * 3) * 2);
  CHECK(kv.state_bytes_per_sequence == 23 * kv.state_bytes_per_layer);
  CHECK(kv.layer_tokens == 6 * 131072);
  // Decode FLOPs: an expert block has no attention core, a Mamba2 block no FFN.
  w.context = 1;
  const FlopCounts f = count_flops(n, w);
  CHECK(f.decode_per_token.attention_core == 23 * (4LL * 64 * 64 * 128 + 2 * 6144 * 4) + 6 * 2 * 2 * 32 * 128);
  CHECK(f.decode_per_token.ffn == 23 * 2 * (128LL * 2688 + 6 * 2 * 2688 * 1856 + 2LL * 2688 * 3712));
  // layers_block_type, in the current names or the older ones, gives the same model.
  const ModelSpec listed = edited("nemotron-3-nano-30b-a3b", [&](nlohmann::json& j) {
    j.erase("hybrid_override_pattern");
    std::vector<std::string> t;
    for (char c : pattern) t.push_back(c == 'M' ? "linear_attention" : c == 'E' ? "moe" : c == '*' ? "attention" : "mlp");
    j["layers_block_type"] = t;
  });
  CHECK(count_params(listed).total == p.total);
  CHECK_THROWS_WITH(edited("nemotron-3-nano-30b-a3b", [](nlohmann::json& j) { j["hybrid_override_pattern"] = "MEX*"; }),
                    Catch::Contains("hybrid_override_pattern[2] = \"X\": unknown block type"));
  CHECK_THROWS_WITH(edited("nemotron-3-nano-30b-a3b", [](nlohmann::json& j) { j["moe_latent_size"] = 1024; }),
                    Catch::Contains("moe_latent_size = 1024: latent experts (Nemotron 3 Super) are not modelled"));
  // Nemotron-Nano-9B-v2: Mamba2, attention and MLP blocks, no experts.
  const ModelSpec nano = fixture("nvidia-nemotron-nano-9b-v2");
  CHECK(nano.num_linear_layers() == 27);
  CHECK(nano.num_attention_layers() == 4);
  CHECK(count_params(nano).ffn == 25LL * 2 * 4480 * 15680);
}

TEST_CASE("kimi_linear: KDA layers beside MLA without RoPE, DeepSeek-V3's experts", "[hf_config][kv]") {
  const ModelSpec k = fixture("kimi-linear-48b-a3b-instruct");
  REQUIRE(k.num_layers() == 27);
  // kda_layers is 1-based: layers 4, 8, ..., 24 and 27 (0-based 3, 7, ..., 23, 26) are MLA.
  for (std::size_t i = 0; i < 27; ++i) CHECK(k.layers[i].has_linear() == ((i + 1) % 4 != 0 && i != 26));
  CHECK(k.num_linear_layers() == 20);
  CHECK(k.linear.kind == LinearKind::kda);
  CHECK(k.attention.variant == AttentionVariant::mla);
  CHECK(k.attention.mla.q_lora_rank == 0);
  CHECK(k.attention.head_dim == 192);  // nope 128 + the unrotated 64; the file's head_dim 72 is not read
  const ParamCounts p = count_params(k);
  // KDA: q, k, v (32 x 128 each), the three 4-tap convolutions without bias, the decay's and the output
  // gate's low rank (2304 -> 128 -> 4096), b_proj, A_log (32), dt_bias (4096), o_norm (128), o_proj.
  CHECK(p.linear_attention_per_layer == 3LL * 2304 * 4096 + 3 * 4096 * 4 + 2 * (2304 * 128 + 128 * 4096) + 2304 * 32 + 32 + 4096 + 128 +
                                            4096LL * 2304);
  CHECK(p.linear_attention_per_layer == 39'514'272);
  // MLA: q_proj 2304 -> 32 x 192, kv_a 2304 -> 576, its norm, kv_b 512 -> 32 x 256, o_proj.
  CHECK(p.attention_per_layer == 2304LL * 6144 + 2304 * 576 + 512 + 512LL * 8192 + 4096LL * 2304);
  // Experts on layers 1..26 with e_score_correction_bias; layer 0 dense.
  CHECK_FALSE(k.layers[0].moe());
  for (std::size_t i = 1; i < 27; ++i) CHECK(k.layers[i].moe());
  CHECK(p.router == 26LL * (256 * 2304 + 256));
  // The caches: MLA's latent and rope key on 7 layers; per KDA layer 32 x 128 x 128 and 3 x 4096 x 3.
  Workload w;
  w.context = 131072;
  const KvCacheCounts kv = count_kv_cache(k, w);
  CHECK(kv.bytes_per_token == 7 * 576 * 2);
  CHECK(kv.state_bytes_per_layer == (32 * 128 * 128 + 12288 * 3) * 2);
  w.state_dtype = DType::fp32;  // vLLM keeps KDA's recurrent state in fp32
  CHECK(count_kv_cache(k, w).state_bytes_per_sequence == 20LL * (32 * 128 * 128 + 12288 * 3) * 4);
  // Without linear_attn_config every layer is MLA.
  const ModelSpec all_mla = edited("kimi-linear-48b-a3b-instruct", [](nlohmann::json& j) { j.erase("linear_attn_config"); });
  CHECK(all_mla.num_linear_layers() == 0);
  CHECK(count_params(all_mla).total == 49'122'681'728 - 20 * p.linear_attention_per_layer + 20 * p.attention_per_layer);
  CHECK_THROWS_WITH(edited("kimi-linear-48b-a3b-instruct", [](nlohmann::json& j) { j["linear_attn_config"]["kda_layers"][0] = 28; }),
                    Catch::Contains("kda_layers[0] = 28: must be a layer number in 1..27 (1-based)"));
  CHECK_THROWS_WITH(edited("kimi-linear-48b-a3b-instruct", [](nlohmann::json& j) { j["linear_attn_config"]["kda_layers"][0] = 0; }),
                    Catch::Contains("kda_layers[0] = 0"));
}

TEST_CASE("minimax: lightning attention on 7 layers in 8, softmax on the 8th, 32 experts everywhere", "[hf_config][kv]") {
  const ModelSpec m = fixture("minimax-m1-80k");  // MiniMax-M1-80k's file (minimax_m1, attn_type_list)
  REQUIRE(m.num_layers() == 80);
  for (std::size_t i = 0; i < 80; ++i) {
    CHECK(m.layers[i].has_linear() == ((i + 1) % 8 != 0));
    CHECK(m.layers[i].full_attention() == ((i + 1) % 8 == 0));
    CHECK(m.layers[i].moe());
  }
  CHECK(m.num_linear_layers() == 70);
  CHECK(m.linear.kind == LinearKind::lightning);
  CHECK(m.linear.num_v_heads == 64);
  CHECK(m.linear.head_k_dim == 128);
  CHECK(m.linear.conv_kernel == 0);
  CHECK(m.linear.block_size == 256);  // MiniMaxConfig's default: the file has no block_size
  const ParamCounts p = count_params(m);
  // qkv_proj 6144 -> 3 x 64 x 128, output_gate 6144 -> 8192, the RMSNorm over 8192, out_proj 8192 -> 6144.
  CHECK(p.linear_attention_per_layer == 6144LL * 3 * 8192 + 6144LL * 8192 + 8192 + 8192LL * 6144);
  // Softmax: 64 query heads and 8 KV heads of 128, no biases.
  CHECK(p.attention_per_layer == 2LL * 6144 * 8192 + 2LL * 6144 * 1024);
  CHECK(p.router == 80LL * 32 * 6144);
  // Two experts of 32 run per token: the rest are the difference.
  CHECK(p.total - p.active == 80LL * 30 * 3 * 6144 * 9216);
  // The cache: K and V of 8 heads x 128 on the 10 softmax layers; per lightning layer a 128 x 128 state
  // per head and no convolution inputs.
  Workload w;
  w.context = 1'000'000;
  const KvCacheCounts kv = count_kv_cache(m, w);
  CHECK(kv.bytes_per_token == 10 * 2 * 8 * 128 * 2);
  CHECK(kv.state_bytes_per_layer == 64 * 128 * 128 * 2);
  CHECK(kv.state_bytes_per_sequence == 70LL * 64 * 128 * 128 * 2);
  w.tp = 8;  // the heads split: each GPU holds 8 of the 64 states
  CHECK(linear_attention_state_elements_per_gpu(m, 8) == 8 * 128 * 128);

  // MiniMaxConfig's own keys (the -hf checkpoints): layer_types; without it, softmax on the even layers.
  const ModelSpec hf = edited("minimax-m1-80k", [](nlohmann::json& j) {
    j["model_type"] = "minimax";
    nlohmann::json types = nlohmann::json::array();
    for (const auto& t : j["attn_type_list"]) types.push_back(t == 1 ? "full_attention" : "linear_attention");
    j.erase("attn_type_list");
    j["layer_types"] = types;
  });
  CHECK(count_params(hf).total == p.total);
  const ModelSpec alternating = edited("minimax-m1-80k", [](nlohmann::json& j) {
    j["model_type"] = "minimax";
    j.erase("attn_type_list");
  });
  for (std::size_t i = 0; i < 80; ++i) CHECK(alternating.layers[i].has_linear() == (i % 2 == 1));
  // A window applies to the softmax layers only.
  const ModelSpec windowed = edited("minimax-m1-80k", [](nlohmann::json& j) { j["sliding_window"] = 4096; });
  CHECK(windowed.layers[7].window() == 4096);
  CHECK(windowed.layers[0].window() == 0);
  CHECK_THROWS_WITH(edited("minimax-m1-80k", [](nlohmann::json& j) { j["shared_intermediate_size"] = 4736; }),
                    Catch::Contains("shared_intermediate_size = 4736: a shared MLP beside the experts is not modelled"));
  CHECK(count_params(edited("minimax-m1-80k", [](nlohmann::json& j) { j["shared_intermediate_size"] = nlohmann::json::array({0}); })).total == p.total);

  // FLOPs: a decode step's lightning core is the state's update and read, 2 x 2 x 128 x 128 per head; a
  // prefill adds each block's attention, 2 b^2 (128 + 128) per head for blocks of b = 256 and the rest.
  CHECK(to_string(linear_attention_core_flops(m, 1, 1)) == to_string(WideCount(64) * 4 * 128 * 128));
  const std::int64_t prompt = 1000;  // three blocks of 256 and one of 232
  CHECK(to_string(linear_attention_core_flops(m, 2, prompt)) ==
        to_string(2 * 64 * (WideCount(prompt) * 4 * 128 * 128 + WideCount(3 * 256 * 256 + 232 * 232) * 2 * 256)));

  // The core is priced in classes of its own, on the roofline: no profile fits it.
  const Profile roof = h200_roofline();
  const Predictor pred(roof);
  const LinearAttentionShape decode = layer_linear_attention_shape(m, 8, 1);
  const Prediction core = pred.linear_attention(decode, Phase::decode, DType::bf16);
  CHECK(LinearAttentionOp{Phase::decode, decode}.op_class().to_string() == "linear_attention/decode/lightning");
  CHECK(core.basis.kind == BasisKind::roofline);
  CHECK(core.time_ms > 0);
  w = Workload{};
  w.batch = 4;
  w.prompt_len = 4096;
  const ModelTimes t = predict_model(m, w, pred);
  CHECK(t.prefill_linear_core_ms > 0);
  CHECK(t.decode_linear_core_ms > 0);
}

TEST_CASE("lfm2: gated short convolutions beside attention, the FFN width adjusted, LFM2-MoE's experts", "[hf_config][kv]") {
  const ModelSpec s = fixture("lfm2-350m");
  REQUIRE(s.num_layers() == 16);
  // full_attn_idxs (0-based) names the attention layers; the rest are short convolutions.
  for (std::size_t i = 0; i < 16; ++i) {
    const bool attention = i == 2 || i == 5 || i == 8 || i == 10 || i == 12 || i == 14;
    CHECK(s.layers[i].has_linear() == !attention);
  }
  CHECK(s.linear.kind == LinearKind::short_conv);
  CHECK(s.ffn.ffn_dim == 4608);  // block_ff_dim 6656: 2/3 of it is 4437, rounded up to 256
  const ParamCounts p = count_params(s);
  // A conv layer: in_proj 1024 -> 3 x 1024, the 3-tap depthwise convolution, out_proj; no biases.
  CHECK(p.linear_attention_per_layer == 3LL * 1024 * 1024 + 1024 * 3 + 1024LL * 1024);
  // Attention 16/8 heads of 64 with q/k norms over head_dim.
  CHECK(p.attention_per_layer == 2LL * 1024 * 1024 + 2LL * 1024 * 512 + 2 * 64);
  // The caches: K and V on 6 layers; per conv layer the last 2 inputs of 1024 channels, no recurrent state.
  Workload w;
  w.context = 32768;
  const KvCacheCounts kv = count_kv_cache(s, w);
  CHECK(kv.bytes_per_token == 6 * 2 * 8 * 64 * 2);
  CHECK(kv.state_bytes_per_layer == 1024 * 2 * 2);
  CHECK(kv.state_bytes_per_sequence == 10 * 1024 * 2 * 2);
  // Decode core FLOPs: the attention layers' and each convolution's 2 x 1024 x 3.
  w.context = 1;
  CHECK(count_flops(s, w).decode_per_token.attention_core == 6 * 2 * 2 * 16 * 64 + 10 * 2 * 1024 * 3);
  // conv_bias: in_proj's 3 x 1024, the convolution's 1024 and out_proj's 1024 in each conv layer.
  CHECK(count_params(edited("lfm2-350m", [](nlohmann::json& j) { j["conv_bias"] = true; })).total - 354'483'968 == 10 * 5 * 1024);
  // LFM2-700M's shapes (1536 wide, 24 heads, block_ff_dim 10240 -> 6912): the model card's 742,489,344.
  const ModelSpec s700 = edited("lfm2-350m", [](nlohmann::json& j) {
    j["hidden_size"] = 1536;
    j["num_attention_heads"] = 24;
    j["block_ff_dim"] = 10240;
  });
  CHECK(s700.ffn.ffn_dim == 6912);
  CHECK(count_params(s700).total == 742'489'344);
  // Without the adjustment the width is the file's; without a multiplier it is not rounded.
  CHECK(edited("lfm2-350m", [](nlohmann::json& j) { j["block_auto_adjust_ff_dim"] = false; }).ffn.ffn_dim == 6656);
  CHECK(edited("lfm2-350m", [](nlohmann::json& j) { j["block_ffn_dim_multiplier"] = nullptr; }).ffn.ffn_dim == 4437);
  // layer_types (newer files) give the same layers; neither key: every layer attention.
  const ModelSpec typed = edited("lfm2-350m", [](nlohmann::json& j) {
    j.erase("full_attn_idxs");
    j["layer_types"] = nlohmann::json::array();
    for (int i = 0; i < 16; ++i) j["layer_types"].push_back(i == 2 || i == 5 || i == 8 || i == 10 || i == 12 || i == 14 ? "full_attention" : "conv");
  });
  for (std::size_t i = 0; i < 16; ++i) CHECK(typed.layers[i].has_linear() == s.layers[i].has_linear());
  CHECK(edited("lfm2-350m", [](nlohmann::json& j) { j.erase("full_attn_idxs"); }).num_linear_layers() == 0);
  CHECK_THROWS_WITH(edited("lfm2-350m", [](nlohmann::json& j) { j["full_attn_idxs"][0] = 16; }),
                    Catch::Contains("full_attn_idxs[0] = 16: must be a layer index in 0..15"));
  // Under tp 2 each GPU convolves half the channels.
  CHECK(linear_attention_state_elements_per_gpu(s, 2) == 512 * 2);

  const ModelSpec moe = fixture("lfm2-8b-a1b");
  CHECK_FALSE(moe.layers[0].moe());
  CHECK_FALSE(moe.layers[1].moe());
  for (std::size_t i = 2; i < 24; ++i) CHECK(moe.layers[i].moe());
  CHECK(moe.ffn.ffn_dim == 7168);  // as is: no adjustment in LFM2-MoE
  CHECK_FALSE(moe.moe.router_bias);
  CHECK(moe.num_linear_layers() == 18);
  // Active: the embedding (tied), 2 dense FFNs, 4 of 32 experts and the router per sparse layer: the card's "1.5B".
  CHECK(std::llround(double(count_params(moe).active) / 1e8) == 16);
}

TEST_CASE("falcon_h1: attention and Mamba2 side by side in every layer, both counted, cached and costed", "[hf_config][kv]") {
  const ModelSpec h = fixture("falcon-h1-0.5b-base");
  REQUIRE(h.num_layers() == 36);
  for (const auto& l : h.layers) {
    CHECK(l.mixer == Mixer::parallel);
    CHECK(l.softmax());
    CHECK(l.full_attention());
  }
  CHECK(h.num_attention_layers() == 36);
  CHECK(h.num_linear_layers() == 36);
  const ParamCounts p = count_params(h);
  // Attention 8/2 heads of 64 on 1024; Mamba2 d_ssm 1536 = 24 heads of 64, one group of 128: in_proj
  // 1024 x (2 x 1536 + 2 x 128 + 24), conv1d 1792 x 4 with its bias, dt_bias, A_log, D; no gated norm
  // (mamba_rms_norm false); out_proj 1536 x 1024.
  CHECK(p.attention_per_layer == 2LL * 1024 * 512 + 2LL * 1024 * 128);
  CHECK(p.linear_attention_per_layer == 1024LL * (2 * 1536 + 2 * 128 + 24) + 1792 * 4 + 1792 + 3 * 24 + 1536LL * 1024);
  CHECK(p.attention == 36 * p.attention_per_layer);
  CHECK(p.linear_attention == 36 * p.linear_attention_per_layer);
  // Each layer caches K and V of 2 heads of 64 per token and keeps the Mamba2 state beside them.
  Workload w;
  w.context = 16384;
  const KvCacheCounts kv = count_kv_cache(h, w);
  CHECK(kv.bytes_per_token == 36 * 2 * 2 * 64 * 2);
  CHECK(kv.state_bytes_per_layer == (24 * 64 * 128 + 1792 * 3) * 2);
  CHECK(kv.state_bytes_per_sequence == 36 * kv.state_bytes_per_layer);
  // Decode FLOPs of the core per token: both mixers in every layer.
  const std::int64_t attention = 2LL * 2 * 8 * 64 * 16384;
  const std::int64_t mamba = 4LL * 24 * 64 * 128 + 2 * 1792 * 4;
  CHECK(count_flops(h, w).decode_per_token.attention_core == 36 * (attention + mamba));
  // The options: the gated norm (mamba_rms_norm, on in the 1.5B and 7B), in_proj's bias, out_proj's
  // (projectors_bias), and attention_bias on q, k, v and o.
  auto params_with = [](const char* key) {
    return count_params(edited("falcon-h1-0.5b-base", [&](nlohmann::json& j) { j[key] = true; })).total - 521'411'104;
  };
  CHECK(params_with("mamba_rms_norm") == 36 * 1536);
  CHECK(params_with("mamba_proj_bias") == 36 * (2 * 1536 + 2 * 128 + 24));
  CHECK(params_with("projectors_bias") == 36 * 1024);
  CHECK(params_with("attention_bias") == 36 * (512 + 2 * 128 + 1024));
  CHECK(count_params(fixture("falcon-h1-7b-instruct")).linear_attention_per_layer -
            count_params(edited("falcon-h1-7b-instruct", [](nlohmann::json& j) { j["mamba_rms_norm"] = false; })).linear_attention_per_layer ==
        3072);
  // mamba_d_ssm: missing 1024, null mamba_expand x hidden_size; mamba_d_head "auto" divides it.
  const ModelSpec missing = edited("falcon-h1-0.5b-base", [](nlohmann::json& j) {
    j.erase("mamba_d_ssm");
    j["mamba_d_head"] = "auto";
    j["mamba_n_heads"] = 16;
  });
  CHECK(missing.linear.value_dim() == 1024);
  CHECK(missing.linear.head_v_dim == 64);
  const ModelSpec null = edited("falcon-h1-0.5b-base", [](nlohmann::json& j) {
    j["mamba_d_ssm"] = nullptr;
    j["mamba_d_head"] = "auto";
    j["mamba_n_heads"] = 32;
  });
  CHECK(null.linear.value_dim() == 2048);
  CHECK_THROWS_WITH(edited("falcon-h1-0.5b-base", [](nlohmann::json& j) { j.erase("mamba_d_ssm"); }),
                    Catch::Contains("mamba_d_head = 64: x mamba_n_heads must equal mamba_d_ssm = 1024"));
  // Under tp 2: 4 query heads and one KV head, 12 Mamba2 heads per GPU.
  Workload t2 = w;
  t2.tp = 2;
  CHECK(count_kv_cache(h, t2).kv_heads_per_gpu == 1);
  CHECK(linear_attention_state_elements_per_gpu(h, 2) == 12 * 64 * 128 + (2 * 128 + 12 * 64) * 3);
}

TEST_CASE("nemotron-nas: a block per layer, layers without attention, FFN widths of their own", "[hf_config][kv]") {
  const ModelSpec n = fixture("llama-3.3-nemotron-super-49b-v1");
  REQUIRE(n.num_layers() == 80);
  // block_configs: layers 6, 7, 11 (and 28 more) skip attention; ffn_mult 2.625, 5.25 and 3.28125 give
  // round_up(int(2 x ffn_mult x 8192 / 3), 256) = 14336, 28672 and 17920.
  CHECK(n.layers[0].mixer == Mixer::attention);
  CHECK(n.layers[6].mixer == Mixer::none);
  CHECK(n.layers[7].mixer == Mixer::none);
  CHECK(n.layers[11].mixer == Mixer::none);
  CHECK(n.num_attention_layers() == 49);
  CHECK(n.ffn.ffn_dim == 28672);  // the most layers' width
  CHECK(dense_ffn_dim(n, n.layers[0]) == 14336);
  CHECK(dense_ffn_dim(n, n.layers[1]) == 28672);
  CHECK(n.layers[1].ffn_dim == 0);  // the model's width is not repeated
  CHECK(dense_ffn_dim(n, n.layers[11]) == 17920);
  CHECK(n.attention.num_kv_heads == 8);  // 64 heads / n_heads_in_group 8
  CHECK(n.attention.head_dim == 128);
  const ParamCounts p = count_params(n);
  // Widths over the 80 FFNs: 49 x 28672, 6 x 14336, 1 x 17920, 10 x 7168, 8 x 5632, 6 x 2816.
  const std::int64_t widths = 49LL * 28672 + 6 * 14336 + 17920 + 10 * 7168 + 8 * 5632 + 6 * 2816;
  CHECK(p.ffn == 3 * 8192 * widths);
  CHECK(p.attention == 49 * (2LL * 8192 * 8192 + 2LL * 8192 * 1024));
  CHECK(p.norms == (49 + 80 + 1) * 8192);  // an input norm only before attention; a final norm
  Workload w;
  w.context = 4096;
  const KvCacheCounts kv = count_kv_cache(n, w);
  CHECK(kv.bytes_per_token == 49 * 8 * 128 * 2 * 2);
  CHECK(kv.layer_tokens == 49 * 4096);
  const FlopCounts f = count_flops(n, w);
  CHECK(f.decode_per_token.ffn == 2 * 3 * 8192 * widths);
  // Predictions price each layer's own width: with a datasheet roofline, a prefill's FFN GEMMs are
  // compute-bound, so their time is their FLOPs over the peak (the same model at one width costs more).
  const Profile roof = h200_roofline();
  w.batch = 4;
  w.prompt_len = 8192;
  ModelSpec uniform = n;
  for (auto& l : uniform.layers) l.ffn_dim = 0;
  const ModelTimes own = predict_model(n, w, Predictor(roof)), one = predict_model(uniform, w, Predictor(roof));
  const double ffn_flop = 2.0 * 4 * 8192 * 3 * 8192 * double(widths);
  CHECK(own.prefill_ms - own.prefill_attention_ms - one.prefill_ms + one.prefill_attention_ms ==
        Approx((ffn_flop - 2.0 * 4 * 8192 * 3 * 8192 * 80 * 28672) / 989.4e12 * 1e3));
  // Ultra: 81 of 162 layers skip both attention and the FFN and pass their input on unchanged.
  const ModelSpec u = fixture("llama-3.1-nemotron-ultra-253b-v1");
  REQUIRE(u.num_layers() == 162);
  const auto identity = std::count_if(u.layers.begin(), u.layers.end(),
                                      [](const LayerSpec& l) { return l.mixer == Mixer::none && l.ffn == LayerFfn::none; });
  CHECK(identity == 81);
  CHECK(u.num_attention_layers() == 64);
  const ParamCounts up = count_params(u);
  CHECK(up.norms == (64 + 81 + 1) * 16384);  // 64 attention and 81 FFN norms, the final norm
  CHECK(std::llround(double(up.total) / 1e9) == 253);  // "253B": no exact published figure (PUBLISHED.md)
  CHECK(count_kv_cache(u, w).bytes_per_token == 64 * 8 * 128 * 2 * 2);
}

TEST_CASE("nemotron-nas: replace_with_linear puts a hidden_size x hidden_size linear in place of attention or the FFN", "[hf_config][kv]") {
  // Llama-3.1-Nemotron-51B's kind of block (its config.json was not found to check: PUBLISHED.md), on the
  // Super's released blocks: block 3 has attention (8 KV heads) and an FFN of ffn_mult 5.25 (28672 wide).
  const std::string name = "llama-3.3-nemotron-super-49b-v1";
  const ModelSpec base = fixture(name);
  const ParamCounts p0 = count_params(base);
  const std::int64_t d = 8192, attention = 2 * d * d + 2 * d * 1024, ffn = 3 * d * 28672;
  Workload w;
  w.context = 4096;

  const ModelSpec a = edited(name, [](nlohmann::json& j) { j["block_configs"][3]["attention"]["replace_with_linear"] = true; });
  CHECK(a.layers[3].mixer == Mixer::linear_map);
  CHECK(a.num_attention_layers() == 48);
  const ParamCounts pa = count_params(a);
  CHECK(pa.attention == 48 * attention + d * d);  // linear_attn: hidden_size x hidden_size, no bias
  CHECK(pa.total == p0.total - attention + d * d);
  CHECK(pa.norms == p0.norms);  // the input norm stays
  CHECK(count_kv_cache(a, w).bytes_per_token == 48 * 8 * 128 * 2 * 2);  // no cache for it
  CHECK(count_flops(a, w).decode_per_token.projections == count_flops(base, w).decode_per_token.projections - 2 * attention + 2 * d * d);

  const ModelSpec f = edited(name, [](nlohmann::json& j) { j["block_configs"][3]["ffn"]["replace_with_linear"] = true; });
  CHECK(f.layers[3].ffn == LayerFfn::linear_map);
  const ParamCounts pf = count_params(f);
  CHECK(pf.ffn == p0.ffn - ffn + d * d);  // linear_mlp: hidden_size x hidden_size, no bias
  CHECK(pf.norms == p0.norms);
  CHECK(count_flops(f, w).decode_per_token.ffn == count_flops(base, w).decode_per_token.ffn - 2 * ffn + 2 * d * d);

  // no_op wins over replace_with_linear, as in the modelling code.
  const ModelSpec skip = edited(name, [](nlohmann::json& j) {
    j["block_configs"][3]["attention"]["no_op"] = true;
    j["block_configs"][3]["attention"]["replace_with_linear"] = true;
  });
  CHECK(skip.layers[3].mixer == Mixer::none);

  // The predictions price the linear layers as GEMMs: with a datasheet roofline a prefill's are
  // compute-bound, d x d per token.
  const Profile roof = h200_roofline();
  w.batch = 4;
  w.prompt_len = 8192;
  const ModelSpec both = edited(name, [](nlohmann::json& j) {
    j["block_configs"][3]["attention"]["replace_with_linear"] = true;
    j["block_configs"][3]["ffn"]["replace_with_linear"] = true;
    j["block_configs"][3]["attention"]["n_heads_in_group"] = nullptr;
  });
  ModelSpec without = both;  // the same model with block 3 skipped whole
  without.layers[3].mixer = Mixer::none;
  without.layers[3].ffn = LayerFfn::none;
  const ModelTimes t = predict_model(both, w, Predictor(roof)), t0 = predict_model(without, w, Predictor(roof));
  CHECK(t.prefill_ms - t0.prefill_ms == Approx(2 * (2.0 * 4 * 8192 * d * d) / 989.4e12 * 1e3));
}

TEST_CASE("nemotron-nas: KV heads of each block's own (variable GQA) in the weights, the cache and its split", "[hf_config][kv]") {
  // Llama-3.1-Nemotron-51B's "Variable Grouped Query Attention" (its card: a different number of KV heads
  // in each block; its config.json was not found: PUBLISHED.md), on the Super's released blocks (64 query
  // heads of 128, n_heads_in_group 8: 8 KV heads in each of 49 attention layers): block 0 with
  // n_heads_in_group 4 (16 KV heads), block 1 with 16 (4), block 2 with 64 (1); the other 46 keep 8.
  const std::string name = "llama-3.3-nemotron-super-49b-v1";
  const ModelSpec base = fixture(name);
  const ModelSpec m = edited(name, [](nlohmann::json& j) {
    j["block_configs"][0]["attention"]["n_heads_in_group"] = 4;
    j["block_configs"][1]["attention"]["n_heads_in_group"] = 16;
    j["block_configs"][2]["attention"]["n_heads_in_group"] = 64;
  });
  REQUIRE(m.num_attention_layers() == 49);
  REQUIRE(m.layers[0].softmax());
  REQUIRE(m.layers[1].softmax());
  REQUIRE(m.layers[2].softmax());
  CHECK(m.attention.num_kv_heads == 8);  // the most layers' (46)
  CHECK(m.attention.variant == AttentionVariant::gqa);
  CHECK(layer_kv_heads(m, m.layers[0]) == 16);
  CHECK(layer_kv_heads(m, m.layers[1]) == 4);
  CHECK(layer_kv_heads(m, m.layers[2]) == 1);
  CHECK(layer_kv_heads(m, m.layers[3]) == 8);
  CHECK(m.layers[3].kv_heads == 0);  // the model's count is not repeated
  ModelSpec bad = m;
  bad.layers[0].kv_heads = 3;
  CHECK_THROWS_WITH(validate(bad), Catch::Contains("layers[0].kv_heads = 3: must divide num_q_heads = 64"));
  bad.layers[0].kv_heads = 4;
  bad.layers[6].kv_heads = 4;  // block 6 has no attention
  CHECK_THROWS_WITH(validate(bad), Catch::Contains("layers[6].kv_heads = 4: only a softmax-attention layer has KV heads of its own"));

  // By hand, from the shapes: each layer's K and V projections are 8192 x (KV heads x 128), no bias. Against
  // the Super's published 49,867,145,216 (PUBLISHED.md), the three blocks add (16 - 8) + (4 - 8) + (1 - 8)
  // = -3 KV heads' worth: 2 x 8192 x 128 x -3 = -6,291,456.
  const std::int64_t kv_head_weights = 2LL * 8192 * 128;  // K and V of one KV head in one layer
  const ParamCounts p = count_params(m);
  CHECK(p.total == 49'867'145'216 - 3 * kv_head_weights);
  CHECK(p.total == 49'860'853'760);
  CHECK(p.kv_projection == (46 * 8 + 16 + 4 + 1) * kv_head_weights);

  // The cache: K and V of 128 bf16 values per KV head per token, 512 bytes; 46 x 8 + 16 + 4 + 1 = 389 heads.
  Workload w;
  w.batch = 2;
  w.context = 4096;
  const ModelCounts c = count_model(m, w);
  CHECK(c.kv_cache.bytes_per_token == 389 * 512);
  CHECK(c.kv_cache.bytes_per_token == 199'168);
  CHECK(c.kv_cache.bytes_total == 2LL * 4096 * 389 * 512);
  // A decode step reads every layer's cache whole (no windows): 2 sequences x 4096 tokens x 389 x 512 bytes,
  // and writes one token's.
  CHECK(c.bytes.kv_read == 2LL * 4096 * 389 * 512);
  CHECK(c.bytes.kv_read == 1'631'584'256);
  CHECK(c.bytes.kv_written == 2LL * 389 * 512);
  // Decode projections: 2 FLOPs per weight, 3 fewer KV heads' K/V weights than the Super's.
  CHECK(count_flops(base, w).decode_per_token.projections - c.flops.decode_per_token.projections == 2 * 3 * kv_head_weights);

  // tp 8, per layer: 16 KV heads split 2 per GPU, 8 split 1 per GPU, 4 and 1 replicated one whole head
  // per GPU (on 2 and on 8 GPUs): 46 + 2 + 1 + 1 = 50 heads per GPU, 512 bytes per token each.
  w.tp = 8;
  const KvCacheCounts kv8 = count_kv_cache(m, w);
  CHECK(kv8.bytes_per_gpu == 2LL * 4096 * 50 * 512);
  CHECK(kv8.bytes_per_gpu == 209'715'200);
  CHECK(kv8.kv_heads_per_gpu == 1);  // the model's 8
  CHECK(kv8.replication == 1);
  // The K/V projections likewise: each GPU holds 50 heads' K and V weights where the Super's hold 49, the
  // rest of the weights being the same: one head's more, in bf16.
  CHECK(served_weight_bytes_per_gpu(p, w) - served_weight_bytes_per_gpu(count_params(base), w) == Approx(2.0 * kv_head_weights));
  // The timed decode attention reads each layer's own heads per GPU: at tp 1 389 heads against the
  // Super's 392, at tp 8 50 against 49 (NVLink between the 8 GPUs: the collectives are not compared here).
  Profile roof = h200_roofline();
  roof.spec.interconnect = interconnect_from_kinds(LinkKind::nvlink4, 8, LinkKind::none);
  w.tp = 1;
  CHECK(predict_model(m, w, Predictor(roof)).decode_attention_core_ms < predict_model(base, w, Predictor(roof)).decode_attention_core_ms);
  w.tp = 8;
  CHECK(predict_model(m, w, Predictor(roof)).decode_attention_core_ms > predict_model(base, w, Predictor(roof)).decode_attention_core_ms);
}

TEST_CASE("nemotron-nas refuses what the counts do not model, naming the block", "[hf_config][errors]") {
  const std::string name = "llama-3.3-nemotron-super-49b-v1";
  CHECK_THROWS_WITH(edited(name, [](nlohmann::json& j) { j["block_configs"][2]["attention"]["n_heads_in_group"] = 3; }),
                    Catch::Contains("block_configs[2]: attention: n_heads_in_group = 3: must divide num_attention_heads = 64"));
  CHECK_THROWS_WITH(edited(name, [](nlohmann::json& j) { j["block_configs"][0]["ffn"]["ffn_mult"] = -1.0; }),
                    Catch::Contains("block_configs[0]: ffn: ffn_mult = -1.0: must give an FFN width of at least 1"));
  CHECK_THROWS_WITH(edited(name, [](nlohmann::json& j) { j.erase("block_configs"); }),
                    Catch::Contains("block_configs = (missing): must list one block (attention and ffn) per layer"));
  // A layer that skips its FFN has no post-attention norm either.
  const ModelSpec skip = edited(name, [](nlohmann::json& j) { j["block_configs"][1]["ffn"]["no_op"] = true; });
  CHECK(skip.layers[1].ffn == LayerFfn::none);
  CHECK(count_params(fixture(name)).norms - count_params(skip).norms == 8192);
}

// Whole-model predictions: a layer's ops on a profile, warm-cache blocks, MoE experts as grouped
// GEMMs, linear-attention and hybrid mixers, tensor-parallel all-reduces and sparse indexers.
#include <catch2/catch.hpp>

#include <cmath>

#include "mhacfg/costmodel/comm.hpp"
#include "mhacfg/costmodel/fit.hpp"
#include "mhacfg/costmodel/hf_config.hpp"
#include "mhacfg/costmodel/predict.hpp"

using namespace mhacfg;

namespace {
// A GPU of 800 TFLOP/s and 4 TB/s whose `classes` are fitted as the roofline plus 10 us per launch.
Profile launch_profile(std::initializer_list<const char*> classes) {
  Profile prof;
  prof.name = "launch";
  prof.kind = "gpu";
  prof.spec.mem_bw_bytes_per_s = 4e12;
  prof.spec.peak_flop_per_s["bf16"] = 800e12;
  OpFit fit;
  fit.model = roofline_model(800e12, 4e12);
  fit.model.t0_s = 10e-6;
  for (const char* cls : classes) prof.ops[cls] = fit;
  return prof;
}
}  // namespace

TEST_CASE("a block's ops share a warm cache: its prediction uses the block's bytes", "[fit][model]") {
  Profile p;
  p.name = "warm";
  p.kind = "cpu";
  p.spec.mem_bw_bytes_per_s = 10e9;
  p.spec.peak_flop_per_s["fp32"] = 100e9;
  OpModel m;
  m.peak_flop_per_s = 100e9;
  m.bw_bytes_per_s = 10e9;
  m.cache_bytes = 48e6;
  m.cache_bw_bytes_per_s = 100e9;
  OpFit fit;
  fit.model = m;
  p.ops["gemm"] = fit;
  p.ops["attention/decode"] = fit;
  const Predictor pred(p);
  MeasurementRecord block;
  block.shape = AttentionBlockOp{Phase::decode, AttentionShape{4, 1, 2048, 16, 4, 128, 128, false, 0, 0, 0}, 2048};  // 33.6 MB of K/V
  block.dtype = DType::fp32;
  const GemmShape qkv{4, 16 * 128 + 4 * 256, 2048}, o{4, 2048, 16 * 128};  // 25 + 16.8 MB of weights
  const double alone = pred.gemm(qkv, DType::fp32).time_ms + pred.attention(block.attention(), Phase::decode, DType::fp32).time_ms +
                       pred.gemm(o, DType::fp32).time_ms;
  const double together = pred.record(block).time_ms;
  // Alone each op (17-34 MB) mostly fits the 48 MB cache; together their 75 MB mostly come from memory.
  CHECK(together > 1.5 * alone);
  const double bytes = op_features(qkv, DType::fp32).bytes + op_features(block.attention(), DType::fp32).bytes +
                       op_features(o, DType::fp32).bytes;
  CHECK(together == Approx(pred.with_working_set(bytes).gemm(qkv, DType::fp32).time_ms +
                           pred.with_working_set(bytes).attention(block.attention(), Phase::decode, DType::fp32).time_ms +
                           pred.with_working_set(bytes).gemm(o, DType::fp32).time_ms));
}

TEST_CASE("a model's decode step on a warm-cache profile reads its weights from memory", "[fit][model]") {
  // Every layer's ops run in turn: Llama-3-8B's 16 GB of weights never stay in a 48 MB cache, so
  // the step must cost the same as on a profile with no cache at all, not a cache-speed figure.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/llama-3-8b.json");
  Profile warm;
  warm.name = "warm";
  warm.kind = "cpu";
  warm.spec.mem_bw_bytes_per_s = 10e9;
  warm.spec.peak_flop_per_s["fp32"] = 100e9;
  warm.spec.peak_flop_per_s["bf16"] = 100e9;
  OpModel model;
  model.peak_flop_per_s = 100e9;
  model.bw_bytes_per_s = 10e9;
  model.cache_bytes = 48e6;
  model.cache_bw_bytes_per_s = 100e9;
  OpFit fit;
  fit.model = model;
  for (const char* cls : {"gemm", "attention/decode", "attention/prefill"}) warm.ops[cls] = fit;
  Profile cold = warm;
  for (auto& [cls, f] : cold.ops) f.model.cache_bytes = 0;
  Workload w;
  w.batch = 1;
  w.context = 4096;
  w.prompt_len = 512;
  const ModelTimes hot = predict_model(m, w, Predictor(warm));
  const ModelTimes none = predict_model(m, w, Predictor(cold));
  CHECK(hot.decode_step_ms == Approx(none.decode_step_ms).epsilon(0.01));
  // Alone, one 4096 x 4096 bf16 projection (32 MB) would have come from the cache.
  const GemmShape o{1, 4096, 4096};
  CHECK(Predictor(warm).gemm(o, DType::bf16).time_ms < 0.5 * Predictor(cold).gemm(o, DType::bf16).time_ms);
}

TEST_CASE("a MoE layer's routed experts are predicted as one grouped GEMM per matrix", "[fit][model]") {
  // On a profile whose GEMMs cost 10 us per launch plus their bytes, Mixtral's decode at batch 1 (2 of
  // 8 experts, each 3 x 4096 x 14336) pays per layer: the router, one gate+up GEMM over both experts'
  // weights, one down GEMM. One launch per expert would add 2 x 10 us per layer.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/mixtral-8x7b.json");
  const Profile prof = launch_profile({"gemm"});
  const Predictor p(prof);
  Workload w;
  w.batch = 1;
  w.context = 4096;
  const ModelTimes t = predict_model(m, w, p);
  const double per_layer = p.gemm({1, 8, 4096}, DType::bf16).time_ms + p.gemm({1, 2 * 2 * 14336, 4096}, DType::bf16).time_ms +
                           p.gemm({1, 4096, 2 * 14336}, DType::bf16).time_ms;
  CHECK(t.decode_ffn_ms == Approx(32 * per_layer).epsilon(1e-9));
  // The grouped GEMMs read exactly the two active experts' weights: beside the launches, the FFN time
  // is their bytes at the profile's bandwidth.
  const double expert_bytes = 32.0 * 2 * 3 * 4096 * 14336 * 2;
  CHECK(t.decode_ffn_ms - 32 * 3 * 0.010 == Approx(expert_bytes / 4e12 * 1e3).epsilon(0.01));
}

TEST_CASE("a linear-attention layer: calibrated projections, its core the roofline of its state and FLOPs", "[fit][model]") {
  // Qwen3-Next decoding 4 sequences at 8192 tokens on a profile that calibrates GEMMs and softmax
  // attention (10 us per launch) but has no linear_attention class: the 36 Gated DeltaNet layers' cores
  // are each max(FLOPs / peak, bytes / bandwidth), the bytes being the bf16 state read and written once
  // (32 x 128 x 128 recurrent + 8192 x 3 conv elements per sequence) and the 4 tokens' q, k, v, beta,
  // alpha and output; the FLOPs the delta rule's 6 x 128 x 128 per value head and the convolution's
  // 2 x 8192 x 4, per token.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/qwen3-next-80b-a3b-instruct.json");
  Profile prof = launch_profile({"gemm", "attention/decode", "attention/prefill"});
  const Predictor p(prof);
  Workload w;
  w.batch = 4;
  w.context = 8192;
  w.prompt_len = 1024;
  const ModelTimes t = predict_model(m, w, p);
  CHECK(t.basis.kind == BasisKind::measured);
  CHECK(t.basis.roofline_ops == std::set<std::string>{"linear_attention/decode", "linear_attention/prefill"});
  CHECK_FALSE(roofline_for(t.basis, "indexer/"));
  CHECK(time_basis(t) == "measured; roofline for linear_attention/decode, linear_attention/prefill");
  const double state_bytes = 2.0 * 4 * (32 * 128 * 128 + 8192 * 3) * 2;
  const double io_bytes = 4.0 * (8192 + 4096 + 64) * 2;
  const double flops = 4.0 * (6 * 32 * 128 * 128 + 2 * 8192 * 4);
  const double linear_ms = std::max(flops / 800e12, (state_bytes + io_bytes) / 4e12) * 1e3;
  AttentionShape s = layer_attention_shape(m, m.layers[3], 4, 1, 8192, true);
  const double softmax_ms = p.attention(s, Phase::decode, DType::bf16).time_ms;
  CHECK(t.decode_attention_core_ms == Approx(36 * linear_ms + 12 * softmax_ms).epsilon(1e-9));
  CHECK(t.decode_linear_core_ms == Approx(36 * linear_ms).epsilon(1e-9));  // the uncalibrated part, reported apart
  // The projections: in_proj_qkvz with in_proj_ba, and out_proj, in each linear layer; q (with the
  // gate), k and v as one GEMM, and o, in each softmax layer.
  const double projections = 36 * (p.gemm({4, 12288 + 64, 2048}, DType::bf16).time_ms + p.gemm({4, 2048, 4096}, DType::bf16).time_ms) +
                             12 * (p.gemm({4, 8192 + 1024, 2048}, DType::bf16).time_ms + p.gemm({4, 2048, 4096}, DType::bf16).time_ms);
  CHECK(t.decode_projections_ms == Approx(projections).epsilon(1e-9));
  // A profile that carries the class uses it, and the times are calibrated.
  prof.ops["linear_attention/decode"] = prof.ops.at("gemm");
  prof.ops["linear_attention/prefill"] = prof.ops.at("gemm");
  const ModelTimes all = predict_model(m, w, Predictor(prof));
  CHECK(all.basis.kind == BasisKind::measured);
  CHECK(all.basis.roofline_ops.empty());
  CHECK(time_basis(all) == "measured");
  CHECK(all.decode_attention_core_ms == Approx(36 * (linear_ms + 0.010) + 12 * softmax_ms).epsilon(1e-9));
}

TEST_CASE("a parallel hybrid layer (Falcon-H1) pays for its attention and its Mamba2 mixer", "[fit][model]") {
  // Falcon-H1-0.5B decoding 4 sequences at 4096 tokens: every one of its 36 layers runs the softmax
  // attention core and the Mamba2 core (the roofline: no linear_attention class), both mixers'
  // projections, then the MLP once; under tp 2 each layer ends in three all-reduces.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/falcon-h1-0.5b-base.json");
  const Profile prof = launch_profile({"gemm", "attention/decode", "attention/prefill"});
  const Predictor p(prof);
  Workload w;
  w.batch = 4;
  w.context = 4096;
  w.prompt_len = 512;
  const ModelTimes t = predict_model(m, w, p);
  CHECK(time_basis(t) == "measured; roofline for linear_attention/decode, linear_attention/prefill");
  const double linear_ms = p.linear_attention(layer_linear_attention_shape(m, 4, 1), Phase::decode, DType::bf16).time_ms;
  const double softmax_ms = p.attention(layer_attention_shape(m, m.layers[0], 4, 1, 4096, true), Phase::decode, DType::bf16).time_ms;
  CHECK(t.decode_attention_core_ms == Approx(36 * (linear_ms + softmax_ms)).epsilon(1e-9));
  CHECK(t.decode_linear_core_ms == Approx(36 * linear_ms).epsilon(1e-9));
  const double projections = p.gemm({4, 2 * 1536 + 2 * 128 + 24, 1024}, DType::bf16).time_ms + p.gemm({4, 1024, 1536}, DType::bf16).time_ms +
                             p.gemm({4, 512 + 2 * 128, 1024}, DType::bf16).time_ms + p.gemm({4, 1024, 512}, DType::bf16).time_ms;
  CHECK(t.decode_projections_ms == Approx(36 * projections).epsilon(1e-9));
  const double mlp = p.gemm({4, 2 * 2048, 1024}, DType::bf16).time_ms + p.gemm({4, 1024, 2048}, DType::bf16).time_ms;
  CHECK(t.decode_ffn_ms == Approx(36 * mlp).epsilon(1e-9));
  // The same layers without the attention (a Mamba2-only model) save exactly its share.
  ModelSpec mamba_only = m;
  for (auto& l : mamba_only.layers) l.mixer = Mixer::linear;
  const ModelTimes u = predict_model(mamba_only, w, p);
  CHECK(t.decode_attention_core_ms - u.decode_attention_core_ms == Approx(36 * softmax_ms).epsilon(1e-9));
}

TEST_CASE("under tensor parallelism each mixer and each FFN ends in an all-reduce", "[fit][model]") {
  // Nemotron-3-Nano's 52 blocks hold one module each: 52 all-reduces per step, where Llama-3-8B's 32
  // layers of attention and FFN need 64. Each carries batch x d_model bf16 activations over NVLink 4.
  Profile prof = launch_profile({});
  prof.spec.interconnect = interconnect_from_kinds(LinkKind::nvlink4, 8, LinkKind::ib_ndr);
  Workload w;
  w.batch = 8;
  w.context = 4096;
  w.prompt_len = 512;
  w.tp = 2;
  const auto one = [&](std::int64_t d) { return all_reduce_ms(prof.spec.interconnect, w, 2, 2.0 * double(d) * 8); };
  const ModelSpec nano = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/nemotron-3-nano-30b-a3b.json");
  CHECK(predict_model(nano, w, Predictor(prof)).decode_comm_ms == Approx(52 * one(2688)).epsilon(1e-9));
  const ModelSpec llama = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/llama-3-8b.json");
  CHECK(predict_model(llama, w, Predictor(prof)).decode_comm_ms == Approx(64 * one(4096)).epsilon(1e-9));
  // fp8 weights: the activations the all-reduce carries stay bf16 (the same time); fp16 ones are fp16.
  CHECK(predict_model(llama, [&] { Workload f = w; f.weight_dtype = DType::fp8; return f; }(), Predictor(prof)).decode_comm_ms ==
        Approx(64 * one(4096)).epsilon(1e-9));
}

TEST_CASE("a sparse model's indexer: the roofline of its FLOPs at the fp8 peak and its bytes, and said so", "[fit][model]") {
  // DeepSeek-V3.2 decoding 2 sequences at 131072 tokens on a profile that calibrates GEMMs and MLA
  // decode but has no indexer class: each of its 61 layers' indexers costs max(FLOPs / fp8 peak, bytes /
  // bandwidth) over every cached key, and its MLA core reads the top 2048 latents only.
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/deepseek-v3.2.json");
  const Profile prof = launch_profile({"gemm", "attention/decode/mla", "attention/prefill"});
  const Predictor p(prof);
  Workload w;
  w.batch = 2;
  w.context = 131072;
  w.prompt_len = 1024;
  const ModelTimes t = predict_model(m, w, p);
  CHECK(t.basis.kind == BasisKind::measured);
  CHECK(roofline_for(t.basis, "indexer/"));
  CHECK_FALSE(roofline_for(t.basis, "linear_attention/"));
  CHECK(time_basis(t) == "measured; roofline for indexer/decode, indexer/prefill");
  const IndexerShape decode = layer_indexer_shape(m, 2, 1, 131072);
  const double roofline_ms = std::max(double(indexer_flops(decode)) / prof.peak_flop_per_s(DType::fp8),
                                      double(indexer_bytes(decode)) / prof.spec.mem_bw_bytes_per_s) * 1e3;
  CHECK(t.decode_indexer_ms == Approx(61 * roofline_ms).epsilon(1e-9));
  const AttentionShape core = layer_attention_shape(m, m.layers[0], 2, 1, 131072, true);
  CHECK(attention_kv_tokens_read(core) == 2048);
  const double mla_ms = p.attention(core, Phase::decode, DType::bf16).time_ms;
  CHECK(t.decode_attention_core_ms == Approx(61 * (roofline_ms + mla_ms)).epsilon(1e-9));
}

TEST_CASE("a sparse model's indexer on a profile that fits it is calibrated", "[fit][model]") {
  const ModelSpec m = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/deepseek-v3.2.json");
  Profile prof = launch_profile({"gemm", "attention/decode/mla", "attention/prefill", "indexer/decode", "indexer/prefill"});
  OpFit slow = prof.ops.at("indexer/decode");
  slow.model.t0_s = 1e-3;  // 1 ms per call: the fit, not the roofline, is what the layers pay
  prof.ops["indexer/decode"] = slow;
  Workload w;
  w.batch = 2;
  w.context = 32768;
  w.prompt_len = 1024;
  const ModelTimes t = predict_model(m, w, Predictor(prof));
  CHECK(t.basis.kind == BasisKind::measured);
  CHECK_FALSE(roofline_for(t.basis, "indexer/"));
  CHECK(time_basis(t) == "measured");
  CHECK(t.decode_indexer_ms > 61 * 1.0);
}

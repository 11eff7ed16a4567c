// Models through the CLI: modules outside the total, local layers (windows, chunks, every N-th global),
// hybrid and sparse models in text and JSON, and the flags and patterns that change a model's layers.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"
#include "mhacfg/configurator/inputs/profiles.hpp"
#include "mhacfg/costmodel/profile.hpp"

TEST_CASE("compare shows the modules outside the total when a model has them", "[cli]") {
  const std::string hf = std::string(MHACFG_FIXTURES_DIR) + "/hf/";
  const CliResult with = run({"compare", hf + "gemma-3-4b-pt.json", "deepseek-v3", "llama-3-8b"});
  REQUIRE(with.code == 0);
  // Gemma-3-4B's SigLIP encoder + projector (419,816,304) and DeepSeek-V3's MTP module, without a
  // delta between different modules; Llama has none.
  std::string extra;
  std::istringstream lines(with.out);
  for (std::string l; std::getline(lines, l);)
    if (l.rfind("  params extra", 0) == 0) extra = l;
  CHECK(extra.find("419.8 M vision") != std::string::npos);
  CHECK(extra.find(" mtp") != std::string::npos);
  CHECK(extra.find('%') == std::string::npos);
  // A Qwen3.5 checkpoint carries both: its vision tower (100,592,896) and MTP layer (20,452,864).
  CHECK(run({"compare", "qwen3.5-0.8b", "llama-3-8b"}).out.find("121.0 M vision + mtp") != std::string::npos);
  const CliResult without = run({"compare", "llama-3-8b", "mistral-7b-v0.1"});
  CHECK(without.out.find("params extra") == std::string::npos);
}

TEST_CASE("compare and analyze say which layers are local: windows, chunks, global", "[cli]") {
  const std::string hf = std::string(MHACFG_FIXTURES_DIR) + "/hf/";
  const CliResult r = run({"compare", hf + "llama-4-scout-17b-16e-instruct.json", hf + "gemma-2-2b.json", "llama-3-8b",
                           "--context", "131072"});
  REQUIRE(r.code == 0);
  std::string layers, kv;
  std::istringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("  layers", 0) == 0) layers = l;
    if (l.rfind("  KV at context", 0) == 0) kv = l;
  }
  CHECK(layers.find("48 layers (36 in 8192-token chunks, 12 global)") != std::string::npos);
  CHECK(layers.find("26 layers (13 with 4096-token windows, 13 global)") != std::string::npos);
  CHECK(layers.find("  32 layers") != std::string::npos);
  CHECK(layers.find('%') == std::string::npos);  // no delta between patterns
  // Scout's cache at 131072 tokens: 36 layers x 8192 + 12 x 131072 tokens of 4 KiB: 7.12 GiB.
  CHECK(kv.find("7.12 GiB") != std::string::npos);
  const CliResult a = run({"analyze", "--hf-config", hf + "llama-4-scout-17b-16e-instruct.json", "--format", "json"});
  REQUIRE(a.code == 0);
  const auto pattern = nlohmann::json::parse(a.out)["model"]["layer_pattern"];
  CHECK(pattern["chunked_attention_layers"] == 36);
  CHECK(pattern["chunks"] == nlohmann::json::array({8192}));
  CHECK(pattern["full_attention_layers"] == 12);
}

TEST_CASE("flags --attention-chunk and --global-every make a model's layers local in chunks or windows, every N-th global", "[cli]") {
  auto pattern = [](const std::vector<std::string>& args) {
    std::vector<std::string> all = {"analyze", "--model", "llama-3-8b", "--context", "65536", "--format", "json"};
    all.insert(all.end(), args.begin(), args.end());
    const CliResult r = run(all);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out)["model"]["layer_pattern"];
  };
  auto layer_tokens = [](const std::vector<std::string>& args) {
    std::vector<std::string> all = {"analyze", "--model", "llama-3-8b", "--context", "65536", "--format", "json"};
    all.insert(all.end(), args.begin(), args.end());
    return nlohmann::json::parse(run(all).out)["kv_cache"]["layer_tokens"].get<std::int64_t>();
  };
  // Llama 4's pattern on Llama-3-8B: layers 4, 8, ..., 32 global.
  auto p = pattern({"--attention-chunk", "8192", "--global-every", "4"});
  CHECK(p["chunked_attention_layers"] == 24);
  CHECK(p["full_attention_layers"] == 8);
  CHECK(layer_tokens({"--attention-chunk", "8192", "--global-every", "4"}) == 24 * 8192 + 8 * 65536);
  // Gemma 3's on it: five sliding layers to one global, 32 layers: 27 + 5.
  p = pattern({"--sliding-window", "1024", "--global-every", "6"});
  CHECK(p["sliding_window_layers"] == 27);
  CHECK(p["windows"] == nlohmann::json::array({1024}));
  CHECK(layer_tokens({"--sliding-window", "1024", "--global-every", "6"}) == 27 * 1024 + 5 * 65536);
  // Chunks replace a model's windows (and windows its chunks).
  const std::string hf = std::string(MHACFG_FIXTURES_DIR) + "/hf/";
  const CliResult g = run({"analyze", "--hf-config", hf + "gemma-2-2b.json", "--attention-chunk", "2048", "--format", "json"});
  REQUIRE(g.code == 0);
  CHECK(nlohmann::json::parse(g.out)["model"]["layer_pattern"]["chunked_attention_layers"] == 26);
  // The same flags as compare's key=value models.
  const CliResult c = run({"compare", "llama-3-8b", "model=llama-3-8b,attention-chunk=8192,global-every=4"});
  REQUIRE(c.code == 0);
  CHECK(c.out.find("32 layers (24 in 8192-token chunks, 8 global)") != std::string::npos);
  // On a model with its own pattern, --global-every replaces it: Scout with every sixth layer global.
  const CliResult s6 = run({"analyze", "--hf-config", hf + "llama-4-scout-17b-16e-instruct.json", "--global-every", "6",
                            "--format", "json"});
  REQUIRE(s6.code == 0);
  const auto p6 = nlohmann::json::parse(s6.out)["model"]["layer_pattern"];
  CHECK(p6["chunked_attention_layers"] == 40);
  CHECK(p6["full_attention_layers"] == 8);
  CHECK(p6["chunks"] == nlohmann::json::array({8192}));
  // Both flags at 0 mean no local layers at all.
  const CliResult none = run({"analyze", "--hf-config", hf + "gemma-2-2b.json", "--sliding-window", "0",
                              "--attention-chunk", "0", "--format", "json"});
  REQUIRE(none.code == 0);
  CHECK(nlohmann::json::parse(none.out)["model"]["layer_pattern"]["full_attention_layers"] == 26);
  CliResult bad = run({"analyze", "--model", "llama-3-8b", "--sliding-window", "64", "--global-every", "33"});
  CHECK(bad.err == "mhacfg: error: --global-every = 33: must not exceed the 32 layers\n");
  bad = run({"analyze", "--model", "llama-3-8b", "--global-every", "4"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "mhacfg: error: --global-every = 4: no layer is local to make global (add --sliding-window or --attention-chunk)\n");
  bad = run({"analyze", "--model", "llama-3-8b", "--attention-chunk", "8", "--sliding-window", "4"});
  CHECK(bad.err == "mhacfg: error: --attention-chunk = 8: cannot be combined with --sliding-window\n");
  bad = run({"analyze", "--model", "llama-3-8b", "--attention-chunk", "-8"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--attention-chunk = -8") != std::string::npos);
  bad = run({"analyze", "--model", "llama-3-8b", "--sliding-window", "64", "--global-every", "0"});
  CHECK(bad.err.find("--global-every = 0") != std::string::npos);
}

TEST_CASE("a hybrid model: analyze shows its linear-attention layers, their weights and state, in the state's dtype", "[cli]") {
  const std::string next = std::string(MHACFG_FIXTURES_DIR) + "/hf/qwen3-next-80b-a3b-instruct.json";
  const CliResult r = run({"analyze", "--hf-config", next, "--context", "65536", "--state-dtype", "fp32"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("48 layers (36 Gated DeltaNet, 12 global)") != std::string::npos);
  const auto line = [&](const std::string& name) {
    std::istringstream lines(r.out);
    for (std::string l; std::getline(lines, l);)
      if (l.rfind("  " + name + " ", 0) == 0) return l;
    return std::string();
  };
  CHECK(line("linear attention per layer").find("33,718,464") != std::string::npos);
  // fp32: (32 x 128 x 128 + 8192 x 3) x 4 bytes per layer, 36 layers.
  CHECK(line("state per layer").find("2,195,456") != std::string::npos);
  CHECK(line("state per layer").find("fp32") != std::string::npos);
  CHECK(line("state per sequence").find("79,036,416") != std::string::npos);
  CHECK(r.out.find("K and V, softmax-attention layers") != std::string::npos);
  // Windows asked for by flags go to the softmax layers only.
  const CliResult w = run({"analyze", "--hf-config", next, "--sliding-window", "4096", "--global-every", "4"});
  REQUIRE(w.code == 0);
  CHECK(w.out.find("48 layers (36 Gated DeltaNet, 9 with 4096-token windows, 3 global)") != std::string::npos);
  // Whether the core is calibrated follows the target: the CPU profile fits mhacfg's kernel of it, the
  // H200 profile does not (no CUDA run of it yet), and the times and the note say which.
  const CliResult cpu = run({"analyze", "--hf-config", next, "--target", "cpu-xeon-2vcpu", "--batch", "1", "--context", "4096",
                             "--prompt-len", "512", "--format", "json"});
  REQUIRE(cpu.code == 0);
  const auto cj = nlohmann::json::parse(cpu.out);
  CHECK(cj["predicted"]["basis_detail"]["kind"] == "measured");
  CHECK(cj["predicted"]["basis_detail"]["roofline_ops"].empty());
  CHECK(cj["predicted"]["decode_linear_core_ms"].get<double>() > 0);
  const CliResult gpu = run({"analyze", "--hf-config", next, "--target", "h200-sxm", "--format", "json"});
  REQUIRE(gpu.code == 0);
  // h200-sxm fits attention and GEMMs but no linear-attention core: those classes are the roofline.
  const auto gj = nlohmann::json::parse(gpu.out);
  CHECK(gj["predicted"]["basis_detail"]["kind"] == "measured");
  CHECK(gj["predicted"]["basis_detail"]["roofline_ops"] ==
        nlohmann::json::array({"linear_attention/decode", "linear_attention/prefill"}));
  CHECK_THAT(gj["predicted"]["basis"].get<std::string>(),
             Catch::EndsWith("; roofline for linear_attention/decode, linear_attention/prefill"));
  const CliResult cpu_text = run({"analyze", "--hf-config", next, "--target", "cpu-xeon-2vcpu"});
  CHECK(cpu_text.out.find("The Gated DeltaNet layers' core (its recurrence and convolution) is calibrated: cpu-xeon-2vcpu fits") !=
        std::string::npos);
  const CliResult gpu_text = run({"analyze", "--hf-config", next, "--target", "h200-sxm"});
  CHECK(gpu_text.out.find("is the roofline of h200-sxm's ceilings: the profile has no fit of it") != std::string::npos);
  expect_input_error({"analyze", "--hf-config", next, "--state-dtype", "fp9"},
                     "--state-dtype = fp9: unknown dtype (expected fp32, bf16, fp16, fp8, int8, int4, nvfp4, mxfp4 or fp8-block)");
  expect_input_error({"analyze", "--hf-config", next, "--tp", "32"}, "tp = 32: must divide num_q_heads = 16");
  // The shipped hybrid presets are these checkpoints.
  for (const auto& [preset, total] : {std::pair<std::string, std::int64_t>{"qwen3-next-80b-a3b", 79'674'391'296},
                                      {"granite-4.0-h-small", 32'207'337'984},
                                      {"nemotron-3-nano-30b-a3b", 31'577'937'344}}) {
    const CliResult p = run({"analyze", "--model", preset, "--format", "json"});
    REQUIRE(p.code == 0);
    CHECK(nlohmann::json::parse(p.out)["params"]["total"] == total);
  }
  // recommend keeps the linear-attention layers: --tp must split their heads, and a model without a
  // softmax-attention layer has no heads to design.
  expect_input_error({"recommend", "--hf-config", next, "--tp", "3"}, "--tp = 3: must divide linear_num_value_heads = 32");
  auto j = nlohmann::json::parse(std::ifstream(next));
  j["full_attention_interval"] = 100;
  const std::string all_linear = temp_file("all-linear.json", j.dump());
  const CliResult a = run({"analyze", "--hf-config", all_linear, "--format", "json"});
  REQUIRE(a.code == 0);
  CHECK(nlohmann::json::parse(a.out)["kv_cache"]["bytes_per_token"] == 0);
  expect_input_error({"recommend", "--hf-config", all_linear, "--tp", "2"},
                     "model = all-linear.json: has no softmax-attention layer whose heads to design");
}

TEST_CASE("a parallel hybrid (Falcon-H1): attention and Mamba2 in every layer, in text and JSON", "[cli]") {
  const std::string falcon = std::string(MHACFG_FIXTURES_DIR) + "/hf/falcon-h1-0.5b-base.json";
  const CliResult r = run({"analyze", "--hf-config", falcon, "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["model"]["layer_pattern"]["parallel_layers"] == 36);
  CHECK(j["model"]["layer_pattern"]["linear_attention_layers"] == 0);
  CHECK(j["model"]["layer_pattern"]["full_attention_layers"] == 0);
  CHECK(j["model"]["linear_attention"]["kind"] == "mamba2");
  CHECK(j["params"]["total"] == 521'411'104);
  CHECK(j["kv_cache"]["bytes_per_token"] == 36 * 2 * 2 * 64 * 2);
  const CliResult t = run({"analyze", "--hf-config", falcon});
  CHECK(t.out.find("36 layers (36 Mamba2 beside attention)") != std::string::npos);
  // Windows asked for by flags go to the attention beside the Mamba2 mixers.
  const CliResult w = run({"analyze", "--hf-config", falcon, "--sliding-window", "2048", "--global-every", "4"});
  REQUIRE(w.code == 0);
  CHECK(w.out.find("36 layers (36 Mamba2 beside attention (27 local over 2048 tokens))") != std::string::npos);
  expect_input_error({"analyze", "--hf-config", falcon, "--tp", "16"}, "tp = 16: must divide num_q_heads = 8");
}

TEST_CASE("a short-convolution hybrid (LFM2): its conv layers in text and JSON, their core the roofline, said so", "[cli]") {
  const std::string lfm2 = std::string(MHACFG_FIXTURES_DIR) + "/hf/lfm2-1.2b.json";
  const CliResult r = run({"analyze", "--hf-config", lfm2, "--target", "h200-sxm", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["model"]["linear_attention"] == nlohmann::json({{"kind", "short_conv"}, {"channels", 2048}, {"conv_kernel", 3}}));
  CHECK(j["model"]["layer_pattern"]["linear_attention_layers"] == 10);
  CHECK(j["params"]["total"] == 1'170'340'608);
  CHECK(j["predicted"]["basis_detail"]["kind"] == "measured");
  CHECK(j["predicted"]["basis_detail"]["roofline_ops"] ==
        nlohmann::json::array({"linear_attention/decode/short_conv", "linear_attention/prefill/short_conv"}));
  CHECK_THAT(j["predicted"]["basis"].get<std::string>(),
             Catch::EndsWith("; roofline for linear_attention/decode/short_conv, linear_attention/prefill/short_conv"));
  const CliResult t = run({"analyze", "--hf-config", lfm2, "--target", "h200-sxm"});
  CHECK(t.out.find("16 layers (10 short convolution, 6 global)") != std::string::npos);
  CHECK(t.out.find("The short convolution layers' core (a depthwise convolution of 3 taps; the gating products are elementwise) is the "
                   "roofline of h200-sxm's ceilings: no kernel of mhacfg's runs it and no profile fits it") != std::string::npos);
}

TEST_CASE("Nemotron-H patterns: mixers only, FFNs only, resized, malformed", "[cli]") {
  const std::string nano = std::string(MHACFG_FIXTURES_DIR) + "/hf/nemotron-3-nano-30b-a3b.json";
  const auto with_pattern = [&](const std::string& name, const std::string& pattern) {
    auto j = nlohmann::json::parse(std::ifstream(nano));
    j["hybrid_override_pattern"] = pattern;
    return temp_file(name, j.dump());
  };
  // Mixers only: no FFN width absorbs the attention's difference; the search still ranks designs.
  const CliResult mixers = run({"recommend", "--hf-config", with_pattern("mixers.json", "M*M*"), "--seq", "4096", "--top", "1"});
  CHECK(mixers.code == 0);
  CHECK(mixers.out.find("Ranked designs") != std::string::npos);
  // FFNs and one attention block: compare's max batch of a model with no cache is recommend's cap.
  const CliResult ffns = run({"compare", with_pattern("ffns.json", "--E-"), "llama-3-8b", "--format", "json"});
  REQUIRE(ffns.code == 0);
  CHECK(nlohmann::json::parse(ffns.out)["models"][0]["max_batch"] == 1024);
  // The first design is set against the model's own (Nemotron's own has 2 KV heads, as the first does).
  const CliResult own = run({"recommend", "--model", "nemotron-3-nano-30b-a3b", "--seq", "131072", "--target", "h200-sxm-cudnn",
                             "--tp", "2", "--top", "1"});
  REQUIRE(own.code == 0);
  CHECK(own.out.find("Against nemotron-3-nano-30b-a3b's own gqa 32q/2kv x 128: the same KV per token, batch 250 against 250") != std::string::npos);
  // --layers continues a hybrid model's pattern from its first layer.
  const CliResult more = run({"analyze", "--model", "qwen3-next-80b-a3b", "--layers", "52"});
  REQUIRE(more.code == 0);
  CHECK(more.out.find("52 layers (39 Gated DeltaNet, 13 global)") != std::string::npos);
  const CliResult fewer = run({"analyze", "--model", "qwen3-next-80b-a3b", "--layers", "8"});
  REQUIRE(fewer.code == 0);
  CHECK(fewer.out.find("8 layers (6 Gated DeltaNet, 2 global)") != std::string::npos);
  expect_input_error({"analyze", "--model", "qwen3-next-80b-a3b", "--ffn-dim", "1024"},
                     "--ffn-dim = 1024: the model has no dense FFN layer to widen (only experts or none)");
  const std::string long_pattern = with_pattern("long.json", std::string(100001, 'M'));
  expect_input_error({"analyze", "--hf-config", long_pattern},
                     long_pattern + ": hybrid_override_pattern = (100001 blocks): must name at most 100000 blocks");
  auto j = nlohmann::json::parse(std::ifstream(nano));
  j["n_groups"] = 3;
  const std::string groups = temp_file("groups.json", j.dump());
  expect_input_error({"analyze", "--hf-config", groups}, groups + ": n_groups = 3: must divide mamba_num_heads = 64");
}

TEST_CASE("a sparse model (DeepSeek-V3.2, GLM-5.1): presets, its indexer in JSON, layers that share the top-k", "[cli]") {
  // The shipped sparse-attention presets are these checkpoints, and their indexer reaches the JSON.
  for (const auto& [preset, total] : {std::pair<std::string, std::int64_t>{"deepseek-v3.2", 671'877'944'064},
                                      {"glm-5.1", 743'911'218'432}}) {
    const CliResult p = run({"analyze", "--model", preset, "--target", "h200-sxm", "--format", "json"});
    REQUIRE(p.code == 0);
    const auto j = nlohmann::json::parse(p.out);
    CHECK(j["params"]["total"] == total);
    CHECK(j["model"]["attention"]["indexer"]["topk"] == 2048);
    CHECK(j["predicted"]["basis_detail"]["kind"] == "measured");
    CHECK(j["predicted"]["basis_detail"]["roofline_ops"] == nlohmann::json::array({"indexer/decode", "indexer/prefill"}));
    CHECK_THAT(j["predicted"]["basis"].get<std::string>(), Catch::EndsWith("; roofline for indexer/decode, indexer/prefill"));
  }
  // On a profile that fits mhacfg's CPU indexer kernel the indexer is calibrated, and the times and the
  // note say so: at 8192 tokens each of the 61 layers' indexers scores 8192 keys, at least their FLOPs
  // at the fit's peak.
  const CliResult cpu = run({"analyze", "--model", "deepseek-v3.2", "--target", "cpu-epyc-2vcpu", "--batch", "1",
                             "--context", "8192", "--prompt-len", "1024", "--format", "json"});
  REQUIRE(cpu.code == 0);
  const auto cj = nlohmann::json::parse(cpu.out);
  CHECK(cj["predicted"]["basis_detail"]["kind"] == "measured");
  CHECK(cj["predicted"]["basis_detail"]["roofline_ops"].empty());
  const mhacfg::Profile epyc = mhacfg::load_profile("cpu-epyc-2vcpu", "--target");
  const double floor_ms = 61.0 * 8192 * 2 * 64 * 129 / epyc.ops.at("indexer/decode").model.peak_flop_per_s * 1e3;
  CHECK(cj["predicted"]["decode_indexer_ms"].get<double>() > floor_ms);
  CHECK(cj["predicted"]["decode_indexer_ms"].get<double>() < 3 * floor_ms);
  const CliResult cpu_text = run({"analyze", "--model", "deepseek-v3.2", "--target", "cpu-epyc-2vcpu"});
  CHECK(cpu_text.out.find("the indexer scores every cached key with 64 heads of 128, from cpu-epyc-2vcpu's fit of it.") !=
        std::string::npos);
  CHECK(cpu_text.out.find("decode indexer") != std::string::npos);
  // A config whose layers share another layer's top k (GLM-5.2's IndexShare: index_topk_freq 4, offset 3)
  // keeps 21 of 78 indexers: the heading, the JSON and the times say so.
  auto glm = nlohmann::json::parse(std::ifstream(std::string(MHACFG_FIXTURES_DIR) + "/hf/glm-5.1.json"));
  glm["index_topk_freq"] = 4;
  glm["index_skip_topk_offset"] = 3;
  const std::string shared = temp_file("shared-indexer.json", glm.dump());
  const CliResult sj = run({"analyze", "--hf-config", shared, "--target", "h200-sxm", "--format", "json"});
  REQUIRE(sj.code == 0);
  const auto s = nlohmann::json::parse(sj.out);
  CHECK(s["model"]["attention"]["indexer"]["layers"] == 21);
  const CliResult full = run({"analyze", "--model", "glm-5.1", "--target", "h200-sxm", "--format", "json"});
  const auto f = nlohmann::json::parse(full.out);
  CHECK(s["predicted"]["decode_indexer_ms"].get<double>() == Approx(f["predicted"]["decode_indexer_ms"].get<double>() * 21 / 78));
  const CliResult st = run({"analyze", "--hf-config", shared});
  CHECK(st.out.find("by an indexer of 32 x 128 on 21 layers, shared by the other 57") != std::string::npos);
  // Taking the indexer away leaves no layer sharing one.
  const CliResult dense = run({"analyze", "--hf-config", shared, "--index-topk", "0", "--format", "json"});
  REQUIRE(dense.code == 0);
  CHECK_FALSE(nlohmann::json::parse(dense.out)["model"]["attention"].contains("indexer"));
}

TEST_CASE("flag --index-topk gives any model sparse attention or takes it away, its flags checked", "[cli]") {
  const auto json_of = [](const std::vector<std::string>& args) {
    const CliResult r = run(args);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto llama = json_of({"analyze", "--model", "llama-3-8b", "--format", "json"});
  const auto sparse = json_of({"analyze", "--model", "llama-3-8b", "--index-topk", "2048", "--format", "json"});
  CHECK(sparse["model"]["attention"]["indexer"] == nlohmann::json({{"num_heads", 64}, {"head_dim", 128}, {"topk", 2048}, {"layers", 32}}));
  // Without query compression wq_b projects from d_model: per layer 4096 x 64 x 128, wk and weights_proj
  // 4096 x (128 + 64), k_norm 2 x 128.
  CHECK(sparse["params"]["total"].get<std::int64_t>() - llama["params"]["total"].get<std::int64_t>() ==
        32LL * (4096 * 64 * 128 + 4096 * (128 + 64) + 2 * 128));
  CHECK(sparse["kv_cache"]["bytes_per_token"].get<std::int64_t>() == 131'072 + 32 * 132);
  // A GQA model's K/V split over tp, its indexer keys do not: 8192 tokens x (131072 / 8 + 32 x 132) on each GPU.
  const auto tp8 = json_of({"analyze", "--model", "llama-3-8b", "--index-topk", "2048", "--tp", "8", "--target", "h200-sxm",
                             "--format", "json"});
  const double kv_per_gpu = 8192.0 * (131'072 / 8 + 32 * 132);
  CHECK(tp8["kv_cache"]["bytes_per_gpu"].get<double>() == kv_per_gpu);
  // and every GPU holds the indexer's weights whole (bf16: 2 bytes each), as it does the norms (65 of
  // 4096), the rest an eighth.
  const double indexer = tp8["params"]["indexer"].get<double>(), total = tp8["params"]["total"].get<double>();
  CHECK(indexer == 32.0 * (4096 * 64 * 128 + 4096 * (128 + 64) + 2 * 128));
  const double whole = tp8["params"]["replicated"].get<double>();
  CHECK(whole == indexer + 65 * 4096);
  CHECK(tp8["predicted"]["memory_bytes_per_gpu"].get<double>() == Approx(2 * ((total - whole) / 8 + whole) + kv_per_gpu));
  const auto narrow = json_of({"analyze", "--model", "llama-3-8b", "--index-topk", "512", "--index-heads", "16",
                               "--index-head-dim", "64", "--format", "json"});
  CHECK(narrow["model"]["attention"]["indexer"] == nlohmann::json({{"num_heads", 16}, {"head_dim", 64}, {"topk", 512}, {"layers", 32}}));
  CHECK(narrow["model"]["name"] == "llama-3-8b (modified)");
  // DeepSeek-V3.2 without its indexer is DeepSeek-V3.
  const auto dense = json_of({"analyze", "--model", "deepseek-v3.2", "--index-topk", "0", "--format", "json"});
  CHECK(dense["params"]["total"] == 671'026'419'200);
  CHECK_FALSE(dense["model"]["attention"].contains("indexer"));
  expect_input_error({"analyze", "--model", "llama-3-8b", "--index-heads", "32"},
                     "--index-heads = (given): the model has dense attention: add --index-topk K to give it an indexer");
  expect_input_error({"analyze", "--model", "deepseek-v3.2", "--index-topk", "0", "--index-head-dim", "64"},
                     "--index-head-dim = (given): not valid with --index-topk 0 (dense attention has no indexer)");
  expect_input_error({"analyze", "--model", "deepseek-v3.2", "--sliding-window", "4096"},
                     "layers[0].window = 4096: sparse attention (an indexer's top-k) beside windows or chunks is not modelled");
}

TEST_CASE("mixed weight dtypes: analyze and compare take a component's own, count and say it", "[cli][dtype]") {
  const std::string oss = std::string(MHACFG_FIXTURES_DIR) + "/hf/gpt-oss-20b.json";
  const CliResult bf16 = run({"analyze", "--hf-config", oss, "--format", "json"});
  const CliResult mixed = run({"analyze", "--hf-config", oss, "--attention-weight-dtype", "bf16", "--ffn-weight-dtype",
                               "mxfp4", "--target", "h200-sxm-cudnn", "--format", "json"});
  REQUIRE(mixed.code == 0);
  const auto a = nlohmann::json::parse(bf16.out), b = nlohmann::json::parse(mixed.out);
  CHECK(b["workload"]["ffn_weight_dtype"] == "mxfp4");
  CHECK(b["workload"]["attention_weight_dtype"] == "bf16");
  CHECK_FALSE(a["workload"].contains("ffn_weight_dtype"));
  // The experts' weights, read at 4.25 bits instead of 16, are 66 % of a batch-1 step's (4 of 32 experts
  // in 24 layers: 24 x 4 x 3 x 2880 x 2880 = 2.39 G of 3.61 G params read): the step reads about
  // 0.66 x (1 - 4.25 / 16) = 49 % less.
  const double ratio = b["bytes"]["weights"].get<double>() / a["bytes"]["weights"].get<double>();
  CHECK(ratio < 0.6);
  CHECK(ratio > 0.5);
  CHECK(b["predicted"]["basis_detail"]["kind"] == "measured");
  CHECK(b["predicted"]["basis_detail"]["dtype_transferred_ops"] == nlohmann::json::array({"gemm/mxfp4"}));
  CHECK_THAT(b["predicted"]["basis"].get<std::string>(), Catch::EndsWith("; gemm/mxfp4 from the 16-bit GEMM fit"));
  REQUIRE(b["predicted"]["dtype_notes"].size() == 1);
  CHECK(b["predicted"]["dtype_notes"][0].get<std::string>().rfind("mxfp4 GEMMs: transferred from h200-sxm-cudnn", 0) == 0);
  const CliResult cmp = run({"compare", oss, oss, "--ffn-weight-dtype", "nvfp4", "--target", "b200"});
  CHECK(cmp.code == 0);
  expect_input_error({"analyze", "--hf-config", oss, "--ffn-weight-dtype", "fp6"},
                     "--ffn-weight-dtype = fp6: unknown dtype (expected fp32, bf16, fp16, fp8, int8, int4, nvfp4, mxfp4 or fp8-block)");
}

TEST_CASE("Llama-Nemotron's KV heads per block: analyze shows them and recommend designs one count", "[cli]") {
  // The Super's blocks 0, 1 and 2 given 16, 4 and 1 KV heads (n_heads_in_group 4, 16, 64), as the 51B's
  // variable GQA does (its config.json was not found); the other 46 attention layers keep 8.
  auto j = nlohmann::json::parse(std::ifstream(std::string(MHACFG_FIXTURES_DIR) + "/hf/llama-3.3-nemotron-super-49b-v1.json"));
  j["block_configs"][0]["attention"]["n_heads_in_group"] = 4;
  j["block_configs"][1]["attention"]["n_heads_in_group"] = 16;
  j["block_configs"][2]["attention"]["n_heads_in_group"] = 64;
  const std::string vgqa = temp_file("nemotron-vgqa.json", j.dump());
  const CliResult t = run({"analyze", "--hf-config", vgqa, "--tp", "8", "--context", "4096"});
  REQUIRE(t.code == 0);
  CHECK(t.out.find("gqa 64q/8kv x 128 (KV heads per layer: 16 on 1, 8 on 46, 4 on 1, 1 on 1)") != std::string::npos);
  const CliResult js = run({"analyze", "--hf-config", vgqa, "--format", "json"});
  REQUIRE(js.code == 0);
  const auto per_layer = nlohmann::json::parse(js.out)["model"]["attention"]["layer_kv_heads"];
  REQUIRE(per_layer.size() == 4);
  CHECK(per_layer[1] == nlohmann::json({{"kv_heads", 8}, {"layers", 46}}));
  // Every candidate has one KV-head count in all its layers.
  const CliResult r = run({"recommend", "--hf-config", vgqa, "--seq", "8192", "--tp", "8", "--top", "1"});
  CHECK(r.code == 0);
  CHECK(r.out.find("Ranked designs") != std::string::npos);
  // --kv-heads gives every layer the same count.
  const CliResult same = run({"analyze", "--hf-config", vgqa, "--kv-heads", "8", "--format", "json"});
  REQUIRE(same.code == 0);
  CHECK(nlohmann::json::parse(same.out)["model"]["attention"].count("layer_kv_heads") == 0);
}

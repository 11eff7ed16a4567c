// The search around a model's own design: the rest of the model kept, MoE widths, chunks, windows,
// shared top-k and hybrid layers carried into every candidate.
#include <catch2/catch.hpp>

#include "mhacfg/configurator/search/quality.hpp"
#include "recommend_test_util.hpp"

using namespace mhacfg;

TEST_CASE("a model's attention is searched with the rest of the model kept, its own design ranked beside", "[recommend]") {
  const RecommendOptions o = of_model("llama-3-8b", 8192);
  const Recommendation r = rec(o);
  CHECK(r.shape.d_model == 4096);
  CHECK(r.shape.layers == 32);
  CHECK(r.shape.budget == 8'030'261'248);  // the model's own count
  REQUIRE(r.ranked.size() >= 3);
  for (const auto& c : r.ranked) {
    CHECK(c.spec.vocab_size == 128'256);  // Llama 3's vocabulary, untied, not the 32000 default
    CHECK_FALSE(c.spec.tie_embeddings);
    // The FFN width absorbs the attention's difference in steps of 64 (3 x 4096 x 32 x 64 parameters).
    CHECK(std::llabs(c.counts.params.total - r.shape.budget) <= 3LL * 4096 * 32 * 32);
  }
  // Its own GQA 32/8 x 128 is ranked as the design of its class, with its own FFN (14336).
  REQUIRE(r.base_design);
  CHECK(r.base_verdict.empty());
  CHECK(r.base_design->spec.ffn.ffn_dim == 14336);
  // Its class (GQA with heads of 128) is ranked by the class's best head counts.
  CHECK(r.base_class_design.rfind("gqa ", 0) == 0);
  CHECK(r.base_class_design.find(" x 128") != std::string::npos);
  const Candidate* same = nullptr;
  for (const auto* list : {&r.ranked, &r.others})
    for (const auto& c : *list)
      if (c.spec.attention.num_q_heads == 32 && c.spec.attention.num_kv_heads == 8 && c.spec.attention.head_dim == 128) same = &c;
  REQUIRE(same);
  CHECK(same->at_batch.tokens_per_s == r.base_design->at_batch.tokens_per_s);
  CHECK(r.base_rank >= 1);
  // Its predictions are the model's own: analyze's numbers at the same batch.
  const Workload w{r.base_design->batch, 8192, 8192, DType::bf16, DType::bf16, 1};
  CHECK(r.base_design->at_batch.tokens_per_s ==
        Approx(predict_model(*o.base, w, Predictor(load_profile("h200-sxm-cudnn", "--target"))).tokens_per_s));
  // Every other ranked design says what it changes against the model's own.
  for (const auto& c : r.ranked) {
    if (same == &c || c.rationale.empty()) continue;  // rationales: the top K
    bool against = false;
    for (const auto& line : c.rationale) against |= line.rfind("Against llama-3-8b.json's own gqa 32q/8kv x 128: ", 0) == 0;
    CHECK(against);
  }
}

TEST_CASE("a MoE model holds the budget with its experts' width, a rejected own design says why", "[recommend]") {
  RecommendOptions o = of_model("qwen3-30b-a3b", 32768);
  const Recommendation strict = rec(o);  // its own 32/4 x 128 is a released design: low, within conservative
  REQUIRE(strict.base_design);
  CHECK(strict.base_verdict.empty());
  CHECK(strict.base_rank >= 1);
  o.quality = QualityTolerance::balanced;
  const Recommendation r = rec(o);
  CHECK(r.base_verdict.empty());
  CHECK(r.base_rank >= 1);
  REQUIRE_FALSE(r.ranked.empty());
  for (const auto& c : r.ranked) {
    CHECK(c.spec.ffn.ffn_dim == 6144);             // the (unused) dense width is left alone
    CHECK(c.spec.moe.num_routed_experts == 128);   // the experts are the model's
    CHECK(c.spec.moe.expert_ffn_dim % 16 == 0);    // their width absorbs the attention's difference
    if (c.spec.attention.variant != AttentionVariant::mla)
      CHECK(c.spec.attention.qk_norm);             // Qwen3's q/k norms carry over (MLA has its own norms)
    CHECK(std::llabs(c.counts.params.total - r.shape.budget) <= 128LL * 3 * 2048 * 48 * 8);
  }
  // Gemma 3's windows (five sliding layers to one global) stay as the model has them.
  const Recommendation g = rec(of_model("gemma-3-1b-it", 32768));
  const ModelSpec base = load_hf_config(std::string(MHACFG_FIXTURES_DIR) + "/hf/gemma-3-1b-it.json");
  REQUIRE_FALSE(g.ranked.empty());
  for (const auto& c : g.ranked)
    for (std::size_t i = 0; i < base.layers.size(); ++i) CHECK(c.spec.layers[i].window() == base.layers[i].window());
}

TEST_CASE("Llama 4's chunks stay as the model has them and cap each design's cache per sequence", "[recommend]") {
  RecommendOptions o = of_model("llama-4-scout-17b-16e-instruct", 131072);
  o.workload.tp = 4;
  const Recommendation r = rec(o);
  REQUIRE_FALSE(r.ranked.empty());
  for (const auto& c : r.ranked) {
    std::int64_t chunked = 0;
    for (const auto& l : c.spec.layers) chunked += l.chunk() == 8192;
    CHECK(chunked == 36);
    // 36 layers hold 8192 tokens, 12 the whole context: per GPU under tp 4 (the KV heads split).
    const double per_layer_token = double(c.counts.kv_cache.bytes_per_token_per_layer);
    const bool replicated = c.spec.attention.variant == AttentionVariant::mla && !c.workload.dp_attention;  // MLA's latent, whole
    CHECK(c.kv_bytes_per_seq_per_gpu == Approx(per_layer_token * (36 * 8192 + 12 * 131072) / (replicated ? 1 : 4)));
    if (!c.rationale.empty())
      CHECK_THAT(c.rationale.front(), Catch::Contains(" in 48 layers (36 in 8192-token chunks, 12 global), "));
  }
  // Without local layers the sentence does not describe the layers.
  const Recommendation plain = rec(of_model("llama-3-8b", 8192));
  REQUIRE_FALSE(plain.ranked.empty());
  CHECK(plain.ranked.front().rationale.front().find(" layers") == std::string::npos);
}

TEST_CASE("windows asked for by flags: every candidate and a model's own design keep them, and they cap the cache", "[recommend]") {
  // Llama-3-8B's shape at 32768 tokens with Gemma 3's pattern: 1024-token windows, every 6th layer global.
  // Of 32 layers 5 hold the whole context and 27 hold 1024 tokens, so each sequence holds a fraction
  // (5 x 32768 + 27 x 1024) / (32 x 32768) of the full cache, and more sequences fit.
  RecommendOptions o;
  o.d_model = 4096;
  o.layers = 32;
  o.workload = o.workload.serving(32768);
  o.target = "h200-sxm-cudnn";
  o.top = 1000;
  const Recommendation full = rec(o);
  o.layer_pattern = {1024, std::nullopt, 6};
  const Recommendation local = rec(o);
  REQUIRE_FALSE(local.ranked.empty());
  for (const auto& c : local.ranked) {
    std::int64_t windowed = 0, global = 0;
    for (const auto& l : c.spec.layers) (l.window() == 1024 ? windowed : global) += 1;
    CHECK(windowed == 27);
    CHECK(global == 5);
    const double per_token = double(c.counts.kv_cache.bytes_per_token_per_layer);
    CHECK(c.kv_bytes_per_seq_per_gpu == Approx(per_token * (5 * 32768 + 27 * 1024)));
  }
  // The same design holds a larger batch with the windows than without them.
  const auto find = [](const Recommendation& r, const AttentionSpec& a) -> const Candidate* {
    for (const auto* list : {&r.ranked, &r.others})
      for (const auto& c : *list)
      if (c.spec.attention.variant == a.variant && c.spec.attention.num_q_heads == a.num_q_heads &&
          c.spec.attention.num_kv_heads == a.num_kv_heads && c.spec.attention.head_dim == a.head_dim)
        return &c;
    return nullptr;
  };
  const Candidate* dense = find(full, local.ranked.front().spec.attention);
  REQUIRE(dense != nullptr);
  CHECK(local.ranked.front().max_batch > dense->max_batch);
  // A model given keeps its attention's own design beside the candidates, with the windows too.
  RecommendOptions m = of_model("llama-3-8b", 32768);
  m.layer_pattern = {4096, std::nullopt, std::nullopt};
  const Recommendation mr = rec(m);
  REQUIRE(mr.base_design);
  CHECK(mr.base_design->spec.name == "llama-3-8b.json (modified)");
  for (const auto& l : mr.base_design->spec.layers) CHECK(l.window() == 4096);
  // A global layer needs a local one to come from: the flag is named.
  RecommendOptions bad = shape(2048, 16, 8192);
  bad.layer_pattern.global_every = 4;
  CHECK_THROWS_WITH(rec(bad), "--global-every = 4: no layer is local to make global (add --sliding-window or --attention-chunk)");
}

TEST_CASE("a sparse model whose layers share the top-k keeps the sharing in its sparse candidates only", "[recommend]") {
  // Llama-3-8B given an indexer on every fourth layer (the other 24 share its top k), searched dense and
  // sparse: each sparse candidate keeps the 24 sharing layers, each dense twin has none.
  RecommendOptions o = of_model("llama-3-8b", 32768);
  o.base->attention.indexer = IndexerSpec{64, 128, 2048};
  for (std::size_t i = 0; i < o.base->layers.size(); ++i) o.base->layers[i].shared_topk = i % 4 != 0;
  o.index_topk = 2048;
  o.top = 1000;
  const Recommendation r = rec(o);
  std::size_t sparse = 0, dense = 0;
  for (const auto& c : r.ranked) {
    std::int64_t sharing = 0;
    for (const auto& l : c.spec.layers) sharing += l.shared_topk;
    if (c.spec.attention.sparse()) {
      ++sparse;
      CHECK(sharing == 24);
      CHECK(c.spec.num_indexer_layers() == 8);
    } else {
      ++dense;
      CHECK(sharing == 0);
    }
  }
  CHECK(sparse > 0);
  CHECK(dense > 0);
}

TEST_CASE("a hybrid model's linear-attention layers and output gate stay, its state joins each sequence's share", "[recommend]") {
  RecommendOptions o = of_model("qwen3-next-80b-a3b-instruct", 65536);
  o.workload.tp = 2;
  o.quality = QualityTolerance::balanced;
  const Recommendation r = rec(o);
  REQUIRE_FALSE(r.ranked.empty());
  REQUIRE(r.base_design);
  for (const auto& c : r.ranked) {
    CHECK(c.spec.num_attention_layers() == 12);
    if (c.spec.attention.variant == AttentionVariant::mla) continue;  // MLA: its own projections, no output gate
    CHECK(c.spec.attention.output_gate);
    const KvCacheCounts& kv = c.counts.kv_cache;
    // 12 softmax layers hold the context, 36 linear layers a fixed bf16 state, split over 2 GPUs.
    CHECK(kv.state_bytes_per_sequence == 36 * (32 * 128 * 128 + 8192 * 3) * 2);
    const double kv_per_gpu = double(kv.bytes_per_token_per_layer) * 12 * 65536 /
                              double(std::min<std::int64_t>(c.spec.attention.num_kv_heads, 2));
    CHECK(c.kv_bytes_per_seq_per_gpu == Approx(kv_per_gpu + double(kv.state_bytes_per_sequence) / 2));
    if (c.rationale.empty()) continue;  // rationales: the top K
    CHECK_THAT(c.rationale.front(), Catch::Contains(" in 48 layers (36 Gated DeltaNet, 12 global), "));
    CHECK_THAT(c.rationale.front(), Catch::Contains(" of it linear-attention state, bf16)"));
    CHECK_THAT(c.rationale[1], Catch::Contains("(measured, "));
    CHECK_THAT(c.rationale[1], Catch::Contains("; roofline for linear_attention/decode, linear_attention/prefill"));
  }
  // Each candidate's parameters hold the model's budget: the experts' width absorbs the attention's difference.
  for (const auto& c : r.ranked) CHECK(std::abs(double(c.counts.params.total) / 79'674'391'296.0 - 1) < 0.01);
}

// Serving predictions: each mode's TTFT, TPOT and throughput from the kernel times and the engine's
// terms, the engine's cap per scheduler, engine files, and the parallelism they serve under.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "hf_fixture.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/memory_fit.hpp"
#include "mhacfg/costmodel/serving.hpp"

using namespace mhacfg;

namespace {
// An 80 GB GPU of 800 TFLOP/s and 4 TB/s whose GEMMs and attention are fitted as the roofline plus
// 5 us per launch; links of 400 GB/s in nodes of 8.
Profile gpu() {
  Profile p;
  p.name = "test-gpu";
  p.kind = "gpu";
  p.spec.memory_bytes = 80'000'000'000;
  p.spec.mem_bw_bytes_per_s = 4e12;
  p.spec.peak_flop_per_s["bf16"] = 800e12;
  p.spec.interconnect_bw_bytes_per_s = 400e9;
  p.spec.interconnect = interconnect_from_bandwidth(400e9);
  OpFit fit;
  fit.model = roofline_model(800e12, 4e12);
  fit.model.t0_s = 5e-6;
  for (const char* cls : {"gemm", "attention/prefill", "attention/decode", "attention/decode/mla"}) p.ops[cls] = fit;
  return p;
}

EngineModel engine(double gap_s, double step_s, double request_s) {
  EngineModel e;
  e.name = "test";
  e.other_ops = true;
  e.kernel_gap_s = gap_s;
  e.step_overhead_s = step_s;
  e.request_overhead_s = request_s;
  return e;
}

ServingQuery query(std::int64_t isl, std::int64_t osl, std::int64_t concurrency, ServingMode mode) {
  ServingQuery q;
  q.isl = isl;
  q.osl = osl;
  q.concurrency = concurrency;
  q.mode = mode;
  return q;
}

constexpr double kExact = 1e-9;  // the formulas are evaluated exactly: only rounding differs
}  // namespace

TEST_CASE("serving: the kernels-only engine serves predict_model's times", "[serving]") {
  const ModelSpec m = testing::fixture("llama-3-8b");
  const Profile prof = gpu();
  const Predictor p(prof);
  const ServingTimes t = predict_serving(m, query(1024, 128, 1, ServingMode::latency), p, EngineModel{});
  const ModelTimes pre = predict_model(m, Workload{}.with_batch(1).serving(1024), p);
  const ModelTimes dec = predict_model(m, Workload{}.with_batch(1).serving(1024 + 64), p);
  CHECK(t.ttft_ms == Approx(pre.prefill_ms).epsilon(kExact));
  CHECK(t.tpot_ms == Approx(dec.decode_step_ms).epsilon(kExact));
  CHECK(t.decode_other_ops_ms == 0);
  CHECK(t.decode_gaps_ms == 0);
  CHECK(t.request_latency_ms == Approx(t.ttft_ms + 127 * t.tpot_ms).epsilon(kExact));
  CHECK(t.output_tokens_per_s == Approx(128 / (t.request_latency_ms * 1e-3)).epsilon(kExact));
}

TEST_CASE("serving: an engine adds other ops, a gap per launch, a host cost per step and per request", "[serving]") {
  const ModelSpec m = testing::fixture("llama-3-8b");
  const Profile prof = gpu();
  const Predictor p(prof);
  const ServingTimes bare = predict_serving(m, query(1024, 128, 8, ServingMode::latency), p, EngineModel{});
  const ServingTimes t = predict_serving(m, query(1024, 128, 8, ServingMode::latency), p, engine(2e-6, 100e-6, 20e-3));
  const double launches = t.decode_times.decode_launches;
  // Every layer's GEMMs and attention, plus the LM head: at least 32 x 4 launches.
  CHECK(launches > 32 * 4);
  CHECK(t.decode_other_ops_ms > 0);
  CHECK(t.decode_gaps_ms > launches * 2e-3);  // the other ops' kernels pay the gap too
  CHECK(t.step_overhead_ms == Approx(0.1));
  CHECK(t.request_overhead_ms == Approx(20.0));
  CHECK(t.tpot_ms == Approx(bare.tpot_ms + t.decode_other_ops_ms + t.decode_gaps_ms + 0.1).epsilon(kExact));
  CHECK(t.ttft_ms > bare.ttft_ms + 20.0);
}

TEST_CASE("serving: a static batch prefills together, continuous batching mixes prefills into steps", "[serving]") {
  const ModelSpec m = testing::fixture("llama-3-8b");
  const Profile prof = gpu();
  const Predictor p(prof);
  const EngineModel e = engine(1e-6, 50e-6, 0);
  const ServingTimes st = predict_serving(m, query(512, 256, 32, ServingMode::static_batch), p, e);
  const double total_ms = st.ttft_ms + 255 * st.tpot_ms;
  CHECK(st.output_tokens_per_s == Approx(32 * 256 / (total_ms * 1e-3)).epsilon(kExact));
  const ServingTimes lat = predict_serving(m, query(512, 256, 32, ServingMode::latency), p, e);
  CHECK(st.ttft_ms > lat.ttft_ms);  // the whole batch's prompts before the first token
  const ServingTimes cont = predict_serving(m, query(512, 256, 32, ServingMode::continuous), p, e);
  // Each step carries 32 / 256 of a prefill.
  CHECK(cont.tpot_ms == Approx(lat.tpot_ms + 32.0 / 256.0 * lat.ttft_ms).epsilon(kExact));
  CHECK(cont.output_tokens_per_s == Approx(32 / (cont.tpot_ms * 1e-3)).epsilon(kExact));
}

TEST_CASE("serving: under continuous batching a request waits for the step in flight and the prefills ahead", "[serving]") {
  const ModelSpec m = testing::fixture("llama-3-8b");
  const Profile prof = gpu();
  const Predictor p(prof);
  const EngineModel e = engine(1e-6, 50e-6, 0);
  const auto served = [&](std::int64_t isl, std::int64_t osl, std::int64_t concurrency, ServingMode mode) {
    ServingQuery q = query(isl, osl, concurrency, mode);
    q.decode_context = 1024;  // the same decode step whatever osl is
    return predict_serving(m, q, p, e);
  };
  // One request alone never waits.
  const ServingTimes alone = served(512, 256, 1, ServingMode::latency);
  CHECK(alone.queue_wait_ms == 0);
  CHECK(alone.prefill_share == 0);

  // 32 in flight: the same prefill, after a wait.
  const ServingTimes lat = served(512, 256, 32, ServingMode::latency);
  const ServingTimes cont = served(512, 256, 32, ServingMode::continuous);
  const double decode_step = lat.tpot_ms, prefill = lat.ttft_ms;
  CHECK(cont.queue_wait_ms > 0);
  CHECK(cont.ttft_ms == Approx(prefill + cont.queue_wait_ms).epsilon(kExact));
  // The share of time in prefills is what the TPOT charges for them: 32 / 256 prefills per step.
  CHECK(cont.prefill_share == Approx(32.0 / 256.0 * prefill / cont.tpot_ms).epsilon(kExact));
  CHECK(cont.prefill_share == Approx(1.0 - decode_step / cont.tpot_ms).epsilon(1e-9));
  // At least half the step in flight, at most that step and the other 31 requests' prefills.
  CHECK(cont.queue_wait_ms >= decode_step / 2);
  CHECK(cont.queue_wait_ms <= std::max(decode_step, prefill) + 31 * prefill);

  // Light load (prefills rare): an arrival lands on average half way through a decode step.
  const ServingTimes light = served(512, 1'000'000, 2, ServingMode::continuous);
  CHECK(light.prefill_share < 1e-4);
  CHECK(light.queue_wait_ms == Approx(served(512, 1'000'000, 2, ServingMode::latency).tpot_ms / 2).epsilon(1e-3));

  // More requests starting per step: longer waits.
  CHECK(served(512, 64, 32, ServingMode::continuous).queue_wait_ms > cont.queue_wait_ms);

  // Long prompts, short outputs: nearly all time in prefills; the closed loop bounds the wait by the
  // step in flight and the one other request's prefill.
  const ServingTimes heavy = served(8192, 2, 2, ServingMode::continuous);
  const double long_prefill = served(8192, 2, 2, ServingMode::latency).ttft_ms;
  CHECK(heavy.prefill_share > 0.9);
  CHECK(heavy.queue_wait_ms <= 2 * long_prefill * (1 + 1e-9));
  CHECK(std::isfinite(heavy.ttft_ms));

  // A static batch's requests start together: no wait beyond the batch's own prefill.
  CHECK(served(512, 256, 32, ServingMode::static_batch).queue_wait_ms == 0);
}

TEST_CASE("serving: multi-step scheduling admits requests and streams tokens once per run of steps", "[serving]") {
  const ModelSpec m = testing::fixture("llama-3-8b");
  const Profile prof = gpu();
  const Predictor p(prof);
  const auto served = [&](std::int64_t steps, std::int64_t concurrency, std::int64_t osl) {
    EngineModel e = engine(1e-6, 400e-6, 0);
    e.scheduler_steps = steps;
    ServingQuery q = query(512, osl, concurrency, ServingMode::continuous);
    q.decode_context = 1024;
    return predict_serving(m, q, p, e);
  };
  const ServingTimes one = served(1, 8, 256), ten = served(10, 8, 256);
  // The host's cost is paid once per scheduler call, so a step is cheaper by 9/10 of it.
  const double step1 = one.tpot_ms - 8.0 / 256.0 * (one.ttft_ms - one.queue_wait_ms);
  const double step10 = ten.tpot_ms - 8.0 / 256.0 * (ten.ttft_ms - ten.queue_wait_ms);
  CHECK(step1 - step10 == Approx(0.4 * 0.9).epsilon(1e-6));
  // Chunks of ten tokens: the median gap between them is a run of ten steps (few runs carry a prefill).
  CHECK(one.itl_ms == Approx(step1).epsilon(1e-9));
  CHECK(ten.itl_ms == Approx(10 * step10).epsilon(1e-9));
  // An arrival waits for what is left of the run in flight, not of one step: W = R / (1 - rho).
  const double rho = ten.prefill_share, prefill = ten.ttft_ms - ten.queue_wait_ms;
  CHECK(ten.queue_wait_ms == Approx(((1 - rho) * 10 * step10 + rho * prefill) / 2 / (1 - rho)).epsilon(1e-9));
  CHECK(ten.queue_wait_ms > 4 * one.queue_wait_ms);
  // Prefills in most runs (8 of 16 tokens' worth per step): the median gap holds one, as the TPOT does.
  const ServingTimes busy = served(1, 8, 16);
  CHECK(busy.itl_ms == Approx(busy.tpot_ms).epsilon(1e-12));
  // One request alone waits for nothing, whatever the run.
  CHECK(served(10, 1, 256).queue_wait_ms == 0);
}

TEST_CASE("serving: max throughput takes the KV capacity, capped per scheduler", "[serving]") {
  const ModelSpec m = testing::fixture("llama-3-8b");
  const Profile prof = gpu();
  const Predictor p(prof);
  ServingQuery q = query(1000, 1000, 0, ServingMode::continuous);
  const MemoryFit fit = fit_memory(m, q.workload.with_batch(1).serving(2000), prof, q.memory_fraction);
  const ServingTimes t = predict_serving(m, q, p, engine(0, 0, 0));
  CHECK(t.batch == fit.max_batch);
  CHECK(t.memory_bound_batch);
  EngineModel capped = engine(0, 0, 0);
  capped.max_num_seqs = 16;
  CHECK(predict_serving(m, q, p, capped).batch == 16);
  q.workload.tp = 2;
  q.workload.dp_attention = true;  // each of the two ranks schedules its own 16
  CHECK(predict_serving(m, q, p, capped).batch == 32);
  CHECK_THROWS_AS(predict_serving(m, query(1000, 0, 1, ServingMode::latency), p, capped), InputError);
  CHECK_THROWS_AS(predict_serving(m, query(1000, 10, 0, ServingMode::static_batch), p, capped), InputError);
}

TEST_CASE("serving: engine files load, round-trip and reject bad times", "[serving]") {
  const EngineModel e = engine(3e-6, 1e-4, 0.02);
  const EngineModel back = engine_from_json(engine_to_json(e), "engine.json");
  CHECK(back.kernel_gap_s == e.kernel_gap_s);
  CHECK(back.step_overhead_s == e.step_overhead_s);
  CHECK(back.request_overhead_s == e.request_overhead_s);
  CHECK(back.other_ops);
  nlohmann::json j = engine_to_json(e);
  j["kernel_gap_s"] = -1;
  CHECK_THROWS_WITH(engine_from_json(j, "engine.json"), Catch::Contains("kernel_gap_s") && Catch::Contains("-1"));
  j = engine_to_json(e);
  j["request_overhead_s"] = 88;  // seconds, not milliseconds: a unit mistake
  CHECK_THROWS_AS(engine_from_json(j, "engine.json"), InputError);
  CHECK_THROWS_AS(engine_from_json(nlohmann::json::array(), "engine.json"), InputError);
  j = engine_to_json(e);
  CHECK(engine_from_json(j, "engine.json").scheduler_steps == 1);
  j["num_scheduler_steps"] = 8;
  CHECK(engine_from_json(j, "engine.json").scheduler_steps == 8);
  j["num_scheduler_steps"] = 0;
  CHECK_THROWS_WITH(engine_from_json(j, "engine.json"), Catch::Contains("num_scheduler_steps") && Catch::Contains("0"));
}

TEST_CASE("parallelism: expert, attention-data and pipeline parallel memory per GPU", "[serving][counts]") {
  const ModelSpec v3 = testing::fixture("deepseek-v3");
  const ParamCounts pc = count_params(v3);
  Workload w;
  w.tp = 8;
  const double tp8 = served_weight_bytes_per_gpu(pc, w);
  w.ep = 8;  // whole experts over 8 GPUs: the same share of the routed experts as tp 8's slices
  CHECK(served_weight_bytes_per_gpu(pc, w) == Approx(tp8).epsilon(kExact));
  w.ep = 4;  // over 4 GPUs: each holds a quarter of the routed experts instead of an eighth (bf16: 2 bytes)
  CHECK(served_weight_bytes_per_gpu(pc, w) == Approx(tp8 + 2.0 * double(pc.routed_experts) * (1.0 / 4 - 1.0 / 8)).epsilon(1e-9));
  w.ep = 8;
  w.pp = 2;
  CHECK(served_weight_bytes_per_gpu(pc, w) == Approx(tp8 / 2).epsilon(kExact));
  w.pp = 1;
  // MLA's latent: under tp every GPU holds every sequence's; data-parallel attention, a tp-th of them.
  w.batch = 64;
  w.context = 4096;
  const KvCacheCounts tp_kv = count_kv_cache(v3, w);
  w.dp_attention = true;
  const KvCacheCounts dp_kv = count_kv_cache(v3, w);
  CHECK(tp_kv.bytes_per_gpu == tp_kv.bytes_total);
  CHECK(dp_kv.bytes_per_gpu == dp_kv.bytes_total / 8);
  // A sequence lives on one rank: 61 sequences over 8 ranks leave 8 on the fullest.
  const KvCacheCounts dp61 = count_kv_cache(v3, w.with_batch(61));
  CHECK(dp61.bytes_per_gpu == dp61.bytes_total / 61 * 8);
  CHECK(served_weight_bytes_per_gpu(pc, w) > tp8);  // the attention held whole on every GPU
}

TEST_CASE("parallelism: dp-attention and ep change a step's work and collectives", "[serving][model]") {
  const ModelSpec v3 = testing::fixture("deepseek-v3");
  const Profile prof = gpu();
  const Predictor p(prof);
  Workload w;
  w.tp = 8;
  w.batch = 64;
  w.context = 2048;
  w.weight_dtype = DType::fp8;
  const ModelTimes tp = predict_model(v3, w, p);
  w.ep = 8;
  w.dp_attention = true;
  const ModelTimes dep = predict_model(v3, w, p);
  // Each rank's attention runs 8 sequences with every head instead of 64 with a sixteenth of them:
  // the latent is read once per sequence, not once per GPU per sequence.
  CHECK(dep.decode_attention_core_ms < tp.decode_attention_core_ms);
  CHECK(dep.decode_comm_ms > 0);
  CHECK(dep.decode_comm_ms != Approx(tp.decode_comm_ms));  // all-to-alls instead of all-reduces
  w.dp_attention = false;
  w.ep = 1;
  w.pp = 2;  // two micro-batches of 32 pass both stages in turn
  const ModelTimes pp = predict_model(v3, w, p);
  CHECK(pp.decode_step_ms < tp.decode_step_ms);
  CHECK(pp.tokens_per_s == Approx(64 / (pp.decode_step_ms * 1e-3)).epsilon(kExact));
}

// Whole-request serving predictions: what a model served by a current engine (CUDA graphs on,
// continuous batching) takes for a request's first token and for each output token, from the kernel
// times of predict_model plus what no kernel of it counts: the layers' other ops (norms, residual
// adds, RoPE, activation quantisation, MoE routing and permutation, sampling), the gap between
// consecutive kernels, a host cost per step and a fixed cost per request. docs/cost-model.md
// ("Serving") gives the formulas; an engine's constants live in its preset (profiles/engines/) or come
// from the user's own benchmarks (calibrate --from with serving results).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/counts.hpp"
#include "mhacfg/costmodel/model_spec.hpp"
#include "mhacfg/costmodel/predict.hpp"

namespace mhacfg {

// An engine's costs beyond its kernels. `none`: kernels only (all zero, other ops not counted).
struct EngineModel {
  std::string name = "none";
  bool other_ops = false;          // count the layers' elementwise ops and sampling
  double kernel_gap_s = 0;         // per kernel launched in a step: launch and idle gap inside a CUDA graph
  double step_overhead_s = 0;      // per forward step on the host not hidden by the GPU (scheduler, sampler)
  double request_overhead_s = 0;   // per request on its first token's path (HTTP, tokeniser, queueing)
  std::int64_t max_num_seqs = 0;   // the engine's default cap on sequences per step (0: none)
  std::int64_t max_prefill_tokens = 0;  // tokens of prefill per step (chunked prefill); 0: a whole prompt
  // Decode steps per scheduler call (vLLM 0.5.5-0.6 `--num-scheduler-steps`): new requests join, and
  // tokens stream out, only between runs of this many steps. 1: every step (current engines).
  std::int64_t scheduler_steps = 1;
  std::string source;              // where the constants come from (a preset's citation or a fit)
};

// Engines are data (profiles/engines/*.json, or a user's fit): throws InputError naming `where`.
EngineModel engine_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json engine_to_json(const EngineModel& e);

// How requests arrive. latency: one request alone (concurrency 1). static_batch: `concurrency`
// requests start together and all run to `osl` (TensorRT-LLM's static benchmarks). continuous: a
// fixed number of requests in flight, a new one starting as one ends (bench serve
// --max-concurrency); concurrency 0 there: as many as memory and the engine allow (max throughput).
enum class ServingMode { latency, static_batch, continuous };

struct ServingQuery {
  Workload workload;             // dtypes and parallelism; batch, prompt_len and context are set here
  std::int64_t isl = 1024;       // prompt tokens per request
  std::int64_t osl = 128;        // output tokens per request
  std::int64_t concurrency = 1;  // requests in flight; 0 with continuous: the memory/engine cap
  ServingMode mode = ServingMode::continuous;
  std::int64_t decode_context = 0;  // KV length the decode step is timed at; 0: isl + osl / 2 (the average)
  double memory_fraction = 0.9;  // of each GPU's memory for weights and KV cache
};

struct ServingTimes {
  double ttft_ms = 0;             // first token of a request: its wait (continuous), prefill, per-request cost
  double tpot_ms = 0;             // time per output token after the first
  double itl_ms = 0;              // the median gap between streamed chunks: a run of scheduler_steps decode steps
  double request_latency_ms = 0;  // ttft + (osl - 1) tpot
  double output_tokens_per_s = 0;          // all GPUs of the replica
  double output_tokens_per_s_per_gpu = 0;
  double output_tokens_per_s_per_user = 0; // 1000 / tpot
  std::int64_t batch = 0;         // sequences decoded per step
  std::int64_t gpus = 1;          // tp x pp
  bool memory_bound_batch = false;  // the batch was capped by KV capacity
  // Where a decode step's time goes (ms), and a prefill's.
  double decode_kernels_ms = 0;   // predict_model's decode step
  double decode_other_ops_ms = 0; // norms, adds, RoPE, quantisation, routing, sampling
  double decode_gaps_ms = 0;      // kernel gaps
  double step_overhead_ms = 0;
  double prefill_kernels_ms = 0;  // one request's prompt (or a static batch's)
  double prefill_other_ms = 0;    // its other ops, gaps and step cost
  double request_overhead_ms = 0;
  double queue_wait_ms = 0;       // continuous batching: waiting for the step in flight and the prefills ahead
  double prefill_share = 0;       // continuous batching: the share of the GPU's time spent in prefills
  ModelTimes decode_times;        // the kernel-only times at the decode batch
};

ServingTimes predict_serving(const ModelSpec& m, const ServingQuery& q, const Predictor& p, const EngineModel& e);

// An engine's view of one workload (analyze, compare): the first token of one request at prompt_len
// with the per-request cost, and the time per output token at batch and context (no prefills mixed in).
ServingTimes predict_workload_served(const ModelSpec& m, const Workload& w, const Predictor& p, const EngineModel& e);

}  // namespace mhacfg

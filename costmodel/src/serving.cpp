#include "mhacfg/costmodel/serving.hpp"

#include <algorithm>
#include <cmath>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/memory_fit.hpp"

namespace mhacfg {

namespace {

constexpr double kActivationBytes = 2.0;  // bf16 activations between ops, whatever the weights' dtype
constexpr double kLogitBytes = 4.0;       // fp32 logits, as the engines' samplers read them
// An engine without a cap on sequences per step is still bounded: no engine's CUDA graphs or schedulers
// are sized past a few thousand sequences per rank (TensorRT-LLM's throughput benchmark caps at 4096).
constexpr std::int64_t kNoEngineCap = 4096;

struct OtherOps {
  double bytes = 0;
  double kernels = 0;
  void add(double b, double k = 1) {
    bytes += b;
    kernels += k;
  }
};

bool quantised_activations(DType t) { return t == DType::fp8 || t == DType::int8; }

// The ops of one layer on one GPU that predict_model does not time, for `tokens` new tokens: each
// reads and writes activations once (memory-bound), one kernel each as engines fuse them.
void layer_other_ops(const ModelSpec& m, const LayerSpec& layer, const Workload& w, double tokens, OtherOps& o) {
  const double d = double(m.d_model);
  const double act = tokens * d * kActivationBytes;
  const double norms = std::max<double>(1, double(m.norm.per_layer));
  o.add(4.0 * act * norms / 2.0, norms);  // fused residual add + norm: read x and residual, write both
  const AttentionSpec& a = m.attention;
  const double tp = double(w.tp);
  if (layer.softmax()) {
    const double kv_heads = double(layer_kv_heads(m, layer));
    const double q_heads = double(a.num_q_heads) / tp;
    const double rope_width = a.variant == AttentionVariant::mla
                                  ? (q_heads + 1.0) * double(a.mla.rope_head_dim)
                                  : (q_heads + std::max(1.0, kv_heads / tp)) * double(a.head_dim);
    o.add(2.0 * tokens * rope_width * kActivationBytes);  // RoPE on Q and K: read and write
    const double kv_width = a.variant == AttentionVariant::mla
                                ? double(a.mla.kv_lora_rank + a.mla.rope_head_dim)
                                : std::max(1.0, kv_heads / tp) * double(a.head_dim + a.v_head_dim);
    o.add(tokens * kv_width * (kActivationBytes + double(dtype_bits(w.kv_dtype)) / 8.0));  // cache write
    if (a.variant == AttentionVariant::mla) o.add(2.0 * tokens * double(a.mla.kv_lora_rank) * kActivationBytes);  // kv_a norm
  }
  if (layer.ffn == LayerFfn::none || layer.ffn == LayerFfn::linear_map) return;  // no activation between matmuls
  const double up = m.ffn.kind == FfnKind::gated ? 3.0 : 2.0;  // gated: read gate and up, write one
  if (!layer.moe()) {
    o.add(tokens * double(dense_ffn_dim(m, layer)) / tp * up * kActivationBytes);
  } else {
    const MoeSpec& moe = m.moe;
    const double k = double(moe.top_k);
    o.add(tokens * double(moe.num_routed_experts + moe.zero_experts) * 3.0 * 4.0);  // router softmax / top-k (fp32)
    o.add(2.0 * tokens * k * d * kActivationBytes, 2);                      // permute (align, scatter)
    o.add(tokens * expected_routed_experts(moe) * double(moe.expert_ffn_dim) / tp * up * kActivationBytes);  // experts' activation
    o.add((tokens * k + tokens) * d * kActivationBytes);                    // unpermute and weighted sum
    if (moe.num_shared_experts > 0) o.add(tokens * double(shared_ffn_width(moe)) / tp * up * kActivationBytes);
  }
  if (quantised_activations(w.weight_dtype)) o.add(2.0 * act * 0.75, 2);  // fp8 quantisation of GEMM inputs
}

// Once per step: the embedding lookup, the final norm, and the sampler over the logits (softmax,
// top-k/top-p, the token): a few passes over batch x vocab fp32 logits.
void step_other_ops(const ModelSpec& m, const Workload& w, double tokens, double batch, OtherOps& o) {
  o.add(tokens * double(m.d_model) * kActivationBytes);
  o.add(2.0 * tokens * double(m.d_model) * kActivationBytes);
  o.add(3.0 * batch * double(m.vocab_size) / double(w.tp) * kLogitBytes, 3);
}

OtherOps other_ops(const ModelSpec& m, const Workload& w, double tokens, double batch) {
  OtherOps o;
  for (const LayerSpec& l : m.layers) layer_other_ops(m, l, w, tokens, o);
  step_other_ops(m, w, tokens, batch, o);
  return o;
}

// The bandwidth elementwise kernels stream at: the GEMM fit's where the profile measured one (its
// memory-bound limit), else the datasheet's.
double stream_bw(const Profile& p) {
  const auto it = p.ops.find("gemm");
  if (it != p.ops.end() && it->second.model.bw_bytes_per_s > 0) return it->second.model.bw_bytes_per_s;
  return p.spec.mem_bw_bytes_per_s;
}

struct StepCost {
  double kernels_ms = 0, other_ms = 0, gaps_ms = 0, host_ms = 0;
  ModelTimes times;
  double total() const { return kernels_ms + other_ms + gaps_ms + host_ms; }
};

StepCost step_cost(const ModelSpec& m, const Workload& w, const Predictor& p, const EngineModel& e, bool decode) {
  StepCost c;
  c.times = predict_model(m, w, p);
  const double tokens = decode ? double(w.batch) : double(w.batch * w.prompt_len);
  c.kernels_ms = decode ? c.times.decode_step_ms : c.times.prefill_ms;
  double launches = decode ? c.times.decode_launches : c.times.prefill_launches;
  if (e.other_ops) {
    const OtherOps o = other_ops(m, w, tokens, double(w.batch));
    const double bw = stream_bw(p.profile());
    c.other_ms = bw > 0 ? o.bytes / bw * 1e3 : 0.0;
    launches += o.kernels;
  }
  c.gaps_ms = launches * e.kernel_gap_s * 1e3;
  // One scheduler call per run of decode steps; a prefill is scheduled on its own.
  c.host_ms = e.step_overhead_s * 1e3 / (decode ? double(e.scheduler_steps) : 1.0);
  return c;
}

// The decode batch: the concurrency asked, or (0) as many sequences as the KV cache holds at the
// average context, capped by the engine's max_num_seqs.
std::int64_t decode_batch(const ModelSpec& m, const ServingQuery& q, const Profile& prof, const EngineModel& e,
                          bool& memory_bound) {
  memory_bound = false;
  if (q.concurrency > 0) return q.concurrency;
  const Workload full = q.workload.with_batch(1).serving(q.isl + q.osl);
  const MemoryFit fit = fit_memory(m, full, prof, q.memory_fraction);
  // The engine's cap is per scheduler: under attention data parallel each of the tp ranks schedules its own.
  const std::int64_t schedulers = q.workload.dp_attention ? q.workload.tp : 1;
  const std::int64_t cap = (e.max_num_seqs > 0 ? e.max_num_seqs : kNoEngineCap) * schedulers;
  if (!fit.unbounded && fit.max_batch < cap) {
    memory_bound = true;
    if (fit.max_batch <= 0)
      throw InputError("--target " + prof.name, std::to_string(q.workload.tp) + " GPU(s)",
                       "the weights and one sequence's KV cache do not fit in memory");
    return fit.max_batch;
  }
  return cap;
}

// How long a request that arrives under continuous batching waits before its prefill starts (ms), and the
// share of the GPU's time in prefills. Neither engine starts a prefill inside a step: vLLM's V1 scheduler
// (vllm-project/vllm vllm/v1/core/sched/scheduler.py, Scheduler.schedule(), commit 00024d31) fills each
// step's token budget with the running requests' tokens first and then with the waiting requests';
// SGLang (sgl-project/sglang python/sglang/srt/managers/scheduler.py, Scheduler.run_step(), commit
// d51c1c21, v0.3) runs a prefill batch of the waiting requests whenever one can be formed, before the
// next decode step, and mixes prefill and decode in one batch only with --enable-mixed-chunk. So an
// arrival waits for the step in flight, then for the prefills queued ahead of it, then runs its own:
//   W = R / (1 - rho),   R = ((1 - rho) * decode_step + rho * prefill) / 2.
// rho is the share of time in prefills, the share the TPOT already charges ((batch / osl) prefills per
// step of tpot, so rho = 1 - decode_step / tpot). R is what is left of the step in flight when a
// Poisson arrival lands (in a step with a chance proportional to its length, half way through on
// average). By Little's law lambda * W prefills are queued ahead, each one prefill long, and
// lambda * prefill = rho: W = R + rho * W. A closed loop of `batch` requests has at most batch - 1
// prefills ahead, which bounds W. Under multi-step scheduling (vLLM 0.6 --num-scheduler-steps N) the
// scheduler admits waiting requests only between runs of N decode steps (vllm-project/vllm PR 7000,
// "Multi Step Scheduling"; sgl-project/sglang benchmark/benchmark_vllm_060/README.md attributes vLLM's
// 3x TTFT to it), so what is left of the decode time in flight is half a run, N steps: `run_ms`.
// docs/cost-model.md, "TTFT under load".
struct QueueWait {
  double wait_ms = 0;
  double prefill_share = 0;
};

QueueWait queue_wait(double decode_step_ms, double run_ms, double prefill_ms, double tpot_ms, std::int64_t batch) {
  QueueWait q;
  if (batch <= 1 || !(tpot_ms > 0)) return q;
  q.prefill_share = std::clamp(1.0 - decode_step_ms / tpot_ms, 0.0, 1.0);  // tpot = step + prefills' share
  const double rho = q.prefill_share;
  const double remainder = ((1.0 - rho) * run_ms + rho * prefill_ms) / 2.0;
  const double bound = std::max(run_ms, prefill_ms) + double(batch - 1) * prefill_ms;
  q.wait_ms = rho < 1.0 ? std::min(remainder / (1.0 - rho), bound) : bound;
  return q;
}

}  // namespace

ServingTimes predict_serving(const ModelSpec& m, const ServingQuery& q, const Predictor& p, const EngineModel& e) {
  if (q.isl <= 0) throw InputError("isl", std::to_string(q.isl), "must be positive");
  if (q.osl <= 0) throw InputError("osl", std::to_string(q.osl), "must be positive");
  if (q.concurrency < 0) throw InputError("concurrency", std::to_string(q.concurrency), "must be 0 (as many as fit) or positive");
  if (q.mode != ServingMode::continuous && q.concurrency == 0)
    throw InputError("concurrency", "0", "only continuous batching sizes the batch itself");
  ServingTimes t;
  t.gpus = q.workload.tp * q.workload.pp;
  t.batch = decode_batch(m, q, p.profile(), e, t.memory_bound_batch);
  // Decode at the average context of a request's output.
  const std::int64_t context = q.decode_context > 0 ? q.decode_context : q.isl + std::max<std::int64_t>(1, q.osl / 2);
  const Workload dec_w = q.workload.with_batch(t.batch).serving(context);
  const StepCost dec = step_cost(m, dec_w, p, e, true);
  // A request's prefill alone (latency and continuous) or the whole static batch's.
  const std::int64_t prefill_batch = q.mode == ServingMode::static_batch ? t.batch : 1;
  const Workload pre_w = q.workload.with_batch(prefill_batch).serving(q.isl);
  const StepCost pre = step_cost(m, pre_w, p, e, false);

  t.decode_times = dec.times;
  t.decode_kernels_ms = dec.kernels_ms;
  t.decode_other_ops_ms = dec.other_ms;
  t.decode_gaps_ms = dec.gaps_ms;
  t.step_overhead_ms = dec.host_ms;
  t.prefill_kernels_ms = pre.kernels_ms;
  t.prefill_other_ms = pre.other_ms + pre.gaps_ms + pre.host_ms;
  t.request_overhead_ms = e.request_overhead_s * 1e3;

  const double step = dec.total();
  const double steps_per_run = double(e.scheduler_steps);
  // Tokens stream out once per run of scheduler_steps steps. The median gap between chunks is a run
  // without a prefill in it while fewer than half the runs carry one, else an average run.
  t.itl_ms = steps_per_run * step;
  if (q.mode == ServingMode::continuous && t.batch > 1) {
    // Each step also carries, on average, the prefills of the batch / osl requests that start per step;
    // a request's own prefill starts when the step (or run of steps) in flight and the prefills ahead
    // of it are done.
    const double prefills_per_step = double(t.batch) / double(q.osl);
    t.tpot_ms = step + prefills_per_step * pre.total();
    if (prefills_per_step * steps_per_run >= 0.5) t.itl_ms = steps_per_run * t.tpot_ms;
    const QueueWait w = queue_wait(step, steps_per_run * step, pre.total(), t.tpot_ms, t.batch);
    t.queue_wait_ms = w.wait_ms;
    t.prefill_share = w.prefill_share;
  } else {
    t.tpot_ms = step;
  }
  t.ttft_ms = t.queue_wait_ms + pre.total() + t.request_overhead_ms;
  t.request_latency_ms = t.ttft_ms + double(q.osl - 1) * t.tpot_ms;
  if (q.mode == ServingMode::static_batch) {
    const double total_ms = pre.total() + double(q.osl - 1) * step;
    t.output_tokens_per_s = double(t.batch * q.osl) / (total_ms * 1e-3);
  } else if (q.mode == ServingMode::latency || t.batch == 1) {
    t.output_tokens_per_s = double(q.osl) / (t.request_latency_ms * 1e-3);
  } else {
    t.output_tokens_per_s = double(t.batch) / (t.tpot_ms * 1e-3);
  }
  t.output_tokens_per_s_per_gpu = t.output_tokens_per_s / double(t.gpus);
  t.output_tokens_per_s_per_user = 1e3 / t.tpot_ms;
  return t;
}

ServingTimes predict_workload_served(const ModelSpec& m, const Workload& w, const Predictor& p, const EngineModel& e) {
  ServingQuery q;
  q.workload = w;
  q.isl = w.prompt_len;
  q.osl = 2;
  q.concurrency = w.batch;
  q.mode = ServingMode::latency;
  q.decode_context = w.context;
  return predict_serving(m, q, p, e);
}

}  // namespace mhacfg

#include "workloads.hpp"

#include <algorithm>
#include <cmath>

#include "check.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/attention_block.hpp"
#include "mhacfg/kernels/cuda/bench.hpp"
#include "mhacfg/kernels/cuda/decode_attention.hpp"
#include "mhacfg/kernels/cuda/gemm.hpp"
#include "mhacfg/kernels/cuda/indexer.hpp"
#include "mhacfg/kernels/cuda/linear_attention.hpp"
#include "mhacfg/kernels/cuda/mla_decode.hpp"

namespace mhacfg::kernels::cuda::detail {

namespace {

constexpr std::size_t kFlushBytes = 256u << 20;

// Allocations of one workload, checked against free memory first so a too-large record fails with a
// message instead of a half-built workload.
class Arena {
 public:
  explicit Arena(const std::vector<std::size_t>& sizes) {
    std::size_t total = kFlushBytes * 2;  // the timer's flush buffers
    for (std::size_t s : sizes) total += (s + 255) / 256 * 256;
    const std::int64_t free_bytes = free_device_memory_bytes();
    if (static_cast<std::int64_t>(total) > free_bytes)
      throw RuntimeFailure("workload needs " + std::to_string(total >> 20) + " MiB of device memory, " +
                           std::to_string(free_bytes >> 20) + " MiB free");
    for (std::size_t s : sizes) buffers_.emplace_back(std::max<std::size_t>(s, 256));
  }
  Bf16* bf16(std::size_t i) { return buffers_.at(i).as<Bf16>(); }
  void* raw(std::size_t i) { return buffers_.at(i).get(); }
  std::size_t bytes(std::size_t i) const { return buffers_.at(i).bytes(); }

 private:
  std::vector<DeviceBuffer> buffers_;
};

std::size_t bf16_bytes(std::int64_t elements) { return static_cast<std::size_t>(elements) * 2; }

void fill(Arena& arena, std::size_t i, std::uint64_t seed, Stream s) {
  fill_random_bf16(arena.bf16(i), arena.bytes(i) / 2, seed + 0x9e37 * (i + 1), -1.f, 1.f, s);
}

// Decode over a bf16 KV cache, or (fp8) an e4m3 one: codes of uniform values in [-8, 8), K and V
// scales 1/8 (values in [-1, 1), as the bf16 inputs).
class DecodeWorkload : public Workload {
 public:
  DecodeWorkload(const AttentionShape& sh, const Knobs& knobs, bool fp8, std::uint64_t seed, Stream s)
      : arena_({bf16_bytes(sh.batch * sh.num_q_heads * sh.head_dim),
                kv_bytes(sh.batch * sh.kv_len * sh.num_kv_heads * sh.head_dim, fp8),
                kv_bytes(sh.batch * sh.kv_len * sh.num_kv_heads * sh.head_dim, fp8),
                bf16_bytes(sh.batch * sh.num_q_heads * sh.head_dim), workspace_for(sh, knobs, fp8)}) {
    p_.batch = static_cast<int>(sh.batch);
    p_.num_q_heads = static_cast<int>(sh.num_q_heads);
    p_.num_kv_heads = static_cast<int>(sh.num_kv_heads);
    p_.head_dim = static_cast<int>(sh.head_dim);
    p_.kv_len = static_cast<int>(sh.kv_len);
    p_.softmax_scale = 1.f / std::sqrt(static_cast<float>(sh.head_dim));
    p_.q = arena_.bf16(0);
    p_.q_batch_stride = sh.num_q_heads * sh.head_dim;
    if (fp8) {
      p_.fp8_kv = true;
      p_.k8 = static_cast<const Fp8E4m3*>(arena_.raw(1));
      p_.v8 = static_cast<const Fp8E4m3*>(arena_.raw(2));
      p_.k_scale = p_.v_scale = 1.f / 8;
    } else {
      p_.k = arena_.bf16(1);
      p_.v = arena_.bf16(2);
    }
    p_.kv_token_stride = sh.num_kv_heads * sh.head_dim;
    p_.kv_batch_stride = p_.kv_token_stride * sh.kv_len;
    p_.o = arena_.bf16(3);
    p_.o_batch_stride = p_.q_batch_stride;
    p_.num_splits = knobs.num_splits;
    p_.fused_merge = knobs.fused_merge;
    p_.workspace = arena_.raw(4);
    p_.workspace_bytes = arena_.bytes(4);
    fill(arena_, 0, seed, s);
    for (std::size_t i = 1; i < 3; ++i) {
      if (fp8)
        fill_random_fp8_e4m3(static_cast<Fp8E4m3*>(arena_.raw(i)), arena_.bytes(i), seed + 0x9e37 * (i + 1), -8.f, 8.f, s);
      else
        fill(arena_, i, seed, s);
    }
    const decode::Plan pl = decode::plan(p_);
    num_splits_ = pl.num_splits;
    kernel_ = std::string(fp8 ? "fp8 KV " : "") + "decode d" + std::to_string(sh.head_dim) + " group " +
              std::to_string(sh.num_q_heads / sh.num_kv_heads) +
              ", " + std::to_string(pl.num_splits) + " splits of " + std::to_string(pl.tokens_per_split) +
              (pl.fused ? ", merged in the grid" : pl.num_splits > 1 ? ", combine kernel" : "");
  }
  void run(Stream s) override { decode::run(p_, s); }

 private:
  static std::size_t kv_bytes(std::int64_t elements, bool fp8) {
    return fp8 ? static_cast<std::size_t>(elements) : bf16_bytes(elements);
  }
  static std::size_t workspace_for(const AttentionShape& sh, const Knobs& knobs, bool fp8) {
    decode::Params p;
    p.fp8_kv = fp8;
    p.batch = static_cast<int>(sh.batch);
    p.num_q_heads = static_cast<int>(sh.num_q_heads);
    p.num_kv_heads = static_cast<int>(sh.num_kv_heads);
    p.head_dim = static_cast<int>(sh.head_dim);
    p.kv_len = static_cast<int>(sh.kv_len);
    p.num_splits = knobs.num_splits;
    return decode::plan(p).workspace_bytes;
  }
  Arena arena_;
  decode::Params p_;
};

class MlaWorkload : public Workload {
 public:
  MlaWorkload(const AttentionShape& sh, const Knobs& knobs, std::uint64_t seed, Stream s)
      : arena_({bf16_bytes(sh.batch * sh.num_q_heads * mla_decode::kLatentDim),
                bf16_bytes(sh.batch * sh.kv_len * mla_decode::kLatentDim),
                bf16_bytes(sh.batch * sh.num_q_heads * mla_decode::kKvLoraRank), workspace_for(sh, knobs)}) {
    p_.batch = static_cast<int>(sh.batch);
    p_.num_heads = static_cast<int>(sh.num_q_heads);
    p_.kv_len = static_cast<int>(sh.kv_len);
    p_.softmax_scale = 1.f / std::sqrt(static_cast<float>(mla_decode::kLatentDim));
    p_.q = arena_.bf16(0);
    p_.q_batch_stride = sh.num_q_heads * mla_decode::kLatentDim;
    p_.kv = arena_.bf16(1);
    p_.kv_token_stride = mla_decode::kLatentDim;
    p_.kv_batch_stride = sh.kv_len * mla_decode::kLatentDim;
    p_.o = arena_.bf16(2);
    p_.o_batch_stride = sh.num_q_heads * mla_decode::kKvLoraRank;
    p_.num_splits = knobs.num_splits;
    p_.variant = knobs.mla_variant;
    p_.workspace = arena_.raw(3);
    p_.workspace_bytes = arena_.bytes(3);
    for (std::size_t i = 0; i < 2; ++i) fill(arena_, i, seed, s);
    const mla_decode::Plan pl = mla_decode::plan(p_);
    num_splits_ = pl.num_splits;
    kernel_ = std::string("mla decode ") + (pl.variant == mla_decode::Variant::wgmma ? "wgmma, " : "") +
              std::to_string(sh.num_q_heads) + " heads, " + std::to_string(pl.num_splits) +
              " splits of " + std::to_string(pl.tokens_per_split);
  }
  void run(Stream s) override { mla_decode::run(p_, s); }

 private:
  static std::size_t workspace_for(const AttentionShape& sh, const Knobs& knobs) {
    mla_decode::Params p;
    p.batch = static_cast<int>(sh.batch);
    p.num_heads = static_cast<int>(sh.num_q_heads);
    p.kv_len = static_cast<int>(sh.kv_len);
    p.num_splits = knobs.num_splits;
    p.variant = knobs.mla_variant;
    return mla_decode::plan(p).workspace_bytes;
  }
  Arena arena_;
  mla_decode::Params p_;
};

class PrefillWorkload : public Workload {
 public:
  PrefillWorkload(const AttentionShape& sh, const Knobs& knobs, std::uint64_t seed, Stream s)
      : arena_({bf16_bytes(sh.batch * sh.q_len * sh.num_q_heads * sh.head_dim),
                bf16_bytes(sh.batch * sh.kv_len * sh.num_kv_heads * sh.head_dim),
                bf16_bytes(sh.batch * sh.kv_len * sh.num_kv_heads * sh.head_dim),
                bf16_bytes(sh.batch * sh.q_len * sh.num_q_heads * sh.head_dim)}) {
    p_.batch = static_cast<int>(sh.batch);
    p_.q_len = static_cast<int>(sh.q_len);
    p_.kv_len = static_cast<int>(sh.kv_len);
    p_.num_q_heads = static_cast<int>(sh.num_q_heads);
    p_.num_kv_heads = static_cast<int>(sh.num_kv_heads);
    p_.head_dim = static_cast<int>(sh.head_dim);
    p_.causal = sh.causal;
    p_.softmax_scale = 1.f / std::sqrt(static_cast<float>(sh.head_dim));
    p_.q = arena_.bf16(0);
    p_.q_token_stride = sh.num_q_heads * sh.head_dim;
    p_.q_batch_stride = p_.q_token_stride * sh.q_len;
    p_.k = arena_.bf16(1);
    p_.v = arena_.bf16(2);
    p_.kv_token_stride = sh.num_kv_heads * sh.head_dim;
    p_.kv_batch_stride = p_.kv_token_stride * sh.kv_len;
    p_.o = arena_.bf16(3);
    p_.o_token_stride = p_.q_token_stride;
    p_.o_batch_stride = p_.q_batch_stride;
    p_.variant = knobs.variant;
    for (std::size_t i = 0; i < 3; ++i) fill(arena_, i, seed, s);
    kernel_ = "prefill d" + std::to_string(sh.head_dim) + " " +
              prefill::to_string(prefill::resolve(knobs.variant, static_cast<int>(sh.head_dim))) +
              (sh.causal ? " causal" : " non-causal");
  }
  void run(Stream s) override { prefill::run(p_, s); }

 private:
  Arena arena_;
  prefill::Params p_;
};

// A linear-attention decode step: random bf16 inputs, taps, state and kept inputs; zero log-decays and
// betas (the state keeps its values; gates do not change the kernel's work).
class LinearWorkload : public Workload {
 public:
  LinearWorkload(const LinearAttentionShape& sh, std::uint64_t seed, Stream s)
      : arena_({bf16_bytes(sh.batch * sh.conv_dim()), static_cast<std::size_t>(sh.batch * sh.num_v_heads) * sizeof(float),
                static_cast<std::size_t>(sh.batch * sh.num_v_heads) * sizeof(float), bf16_bytes(sh.conv_kernel * sh.conv_dim()),
                bf16_bytes(sh.batch * sh.num_v_heads * sh.head_k_dim * sh.head_v_dim),
                bf16_bytes(sh.batch * (sh.conv_kernel - 1) * sh.conv_dim()), bf16_bytes(sh.batch * sh.num_v_heads * sh.head_v_dim),
                linear_attention::workspace_bytes(sh)}) {
    p_.shape = sh;
    p_.x = arena_.bf16(0);
    p_.decay = static_cast<const float*>(arena_.raw(1));
    p_.beta = static_cast<const float*>(arena_.raw(2));
    p_.conv_weight = arena_.bf16(3);
    p_.state = arena_.bf16(4);
    p_.conv_state = arena_.bf16(5);
    p_.o = arena_.bf16(6);
    p_.workspace = arena_.raw(7);
    p_.workspace_bytes = arena_.bytes(7);
    for (std::size_t i : {0, 3, 4, 5}) fill(arena_, i, seed, s);
    for (std::size_t i : {1, 2}) fill_bytes(arena_.raw(i), 0, arena_.bytes(i), s);
    kernel_ = std::string(to_string(sh.kind)) + " decode step, state " + std::to_string(sh.head_k_dim) + "x" +
              std::to_string(sh.head_v_dim);
  }
  void run(Stream s) override { linear_attention::run(p_, s); }

 private:
  Arena arena_;
  linear_attention::Params p_;
};

class GemmWorkload : public Workload {
 public:
  GemmWorkload(const GemmShape& g, std::uint64_t seed, Stream s)
      : arena_({bf16_bytes(g.m * g.k), bf16_bytes(g.k * g.n), bf16_bytes(g.m * g.n)}) {
    p_ = gemm::Params{g.m, g.n, g.k, arena_.bf16(0), arena_.bf16(1), arena_.bf16(2)};
    for (std::size_t i = 0; i < 2; ++i) fill(arena_, i, seed, s);
    kernel_ = "cublasLt bf16";
  }
  void run(Stream s) override { runner_.run(p_, s); }

 private:
  Arena arena_;
  gemm::Runner runner_;
  gemm::Params p_;
};

// An fp8 e4m3 GEMM: A and B^T uniform in [-8, 8) rounded to e4m3, per-tensor scales 1/16 (values in
// [-0.5, 0.5)), bf16 C.
class Fp8GemmWorkload : public Workload {
 public:
  Fp8GemmWorkload(const GemmShape& g, const Knobs& knobs, std::uint64_t seed, Stream s)
      : arena_({static_cast<std::size_t>(g.m * g.k), static_cast<std::size_t>(g.n * g.k), bf16_bytes(g.m * g.n),
                2 * sizeof(float)}) {
    auto* scales = static_cast<float*>(arena_.raw(3));
    const float host_scales[2] = {1.f / 16, 1.f / 16};
    copy_to_device(scales, host_scales, sizeof host_scales);
    p_.m = g.m;
    p_.n = g.n;
    p_.k = g.k;
    p_.a = static_cast<const Fp8E4m3*>(arena_.raw(0));
    p_.b_t = static_cast<const Fp8E4m3*>(arena_.raw(1));
    p_.a_scale = scales;
    p_.b_scale = scales + 1;
    p_.c = arena_.bf16(2);
    p_.fast_accum = knobs.fp8_fast_accum;
    for (std::size_t i = 0; i < 2; ++i)
      fill_random_fp8_e4m3(static_cast<Fp8E4m3*>(arena_.raw(i)), arena_.bytes(i), seed + 0x9e37 * (i + 1), -8.f, 8.f, s);
    kernel_ = knobs.fp8_fast_accum ? "cublasLt fp8 e4m3, fast accumulation" : "cublasLt fp8 e4m3";
  }
  void run(Stream s) override { runner_.run(p_, s); }

 private:
  Arena arena_;
  gemm::Runner runner_;
  gemm::Fp8Params p_;
};

class BlockWorkload : public Workload {
 public:
  BlockWorkload(const MeasurementRecord& r, const Knobs& knobs, std::uint64_t seed, Stream s)
      : arena_(sizes(r.attention(), r.d_model())) {
    const AttentionShape& sh = r.attention();
    const std::int64_t tokens = sh.batch * sh.q_len;
    p_.batch = static_cast<int>(sh.batch);
    p_.q_len = static_cast<int>(sh.q_len);
    p_.kv_len = static_cast<int>(sh.kv_len);
    p_.num_q_heads = static_cast<int>(sh.num_q_heads);
    p_.num_kv_heads = static_cast<int>(sh.num_kv_heads);
    p_.head_dim = static_cast<int>(sh.head_dim);
    p_.d_model = static_cast<int>(r.d_model());
    p_.causal = sh.causal;
    p_.softmax_scale = 1.f / std::sqrt(static_cast<float>(sh.head_dim));
    p_.x = arena_.bf16(0);
    p_.w_qkv = arena_.bf16(1);
    p_.w_o = arena_.bf16(2);
    p_.k_cache = arena_.bf16(3);
    p_.v_cache = arena_.bf16(4);
    p_.qkv = arena_.bf16(5);
    p_.attn = arena_.bf16(6);
    p_.y = arena_.bf16(7);
    (void)knobs;
    (void)tokens;
    p_.workspace_bytes = attention_block::workspace_bytes(p_);
    if (p_.workspace_bytes > 0) {
      workspace_ = DeviceBuffer(p_.workspace_bytes);
      p_.workspace = workspace_.get();
    }
    for (std::size_t i = 0; i < 5; ++i) fill(arena_, i, seed, s);
    kernel_ = std::string("cublasLt + ") + (sh.q_len == 1 ? "decode" : "prefill") + " + cublasLt";
  }
  void run(Stream s) override { attention_block::run(p_, runner_, s); }

 private:
  static std::vector<std::size_t> sizes(const AttentionShape& sh, std::int64_t d_model) {
    const std::int64_t tokens = sh.batch * sh.q_len;
    const std::int64_t qkv = (sh.num_q_heads + 2 * sh.num_kv_heads) * sh.head_dim;
    const bool cache = sh.kv_len > sh.q_len;
    const std::int64_t cache_elems = cache ? sh.batch * sh.kv_len * sh.num_kv_heads * sh.head_dim : 0;
    return {bf16_bytes(tokens * d_model), bf16_bytes(d_model * qkv), bf16_bytes(sh.num_q_heads * sh.head_dim * d_model),
            bf16_bytes(cache_elems), bf16_bytes(cache_elems), bf16_bytes(tokens * qkv),
            bf16_bytes(tokens * sh.num_q_heads * sh.head_dim), bf16_bytes(tokens * d_model)};
  }
  Arena arena_;
  DeviceBuffer workspace_;
  gemm::Runner runner_;
  attention_block::Params p_;
};

// The lightning indexer: random fp8 queries and keys (never NaN), scales in [2^-8, 2^-7) (any positive
// scale: the work does not depend on it), head weights of both signs, the scores' workspace of one pass.
class IndexerWorkload : public Workload {
 public:
  IndexerWorkload(const IndexerShape& sh, std::uint64_t seed, Stream s)
      : arena_({static_cast<std::size_t>(sh.batch * sh.q_len * sh.num_heads * sh.head_dim),
                static_cast<std::size_t>(sh.batch * sh.q_len * sh.num_heads) * sizeof(float),
                static_cast<std::size_t>(sh.batch * sh.q_len * sh.num_heads) * sizeof(float),
                static_cast<std::size_t>(sh.batch * sh.kv_len * sh.head_dim),
                static_cast<std::size_t>(sh.batch * sh.kv_len) * sizeof(float),
                static_cast<std::size_t>(sh.batch * sh.q_len * sh.topk) * sizeof(std::int32_t),
                static_cast<std::size_t>(sh.batch * sh.q_len * sh.topk) * sizeof(float), indexer::workspace_bytes(sh)}) {
    p_.shape = sh;
    p_.q = static_cast<const std::uint8_t*>(arena_.raw(0));
    p_.q_scale = static_cast<const float*>(arena_.raw(1));
    p_.weights = static_cast<const float*>(arena_.raw(2));
    p_.k = static_cast<const std::uint8_t*>(arena_.raw(3));
    p_.k_scale = static_cast<const float*>(arena_.raw(4));
    p_.indices = static_cast<std::int32_t*>(arena_.raw(5));
    p_.scores = static_cast<float*>(arena_.raw(6));
    p_.workspace = arena_.raw(7);
    p_.workspace_bytes = arena_.bytes(7);
    indexer::fill_random_fp8(static_cast<std::uint8_t*>(arena_.raw(0)), arena_.bytes(0), seed + 0x11, s);
    indexer::fill_random_fp8(static_cast<std::uint8_t*>(arena_.raw(3)), arena_.bytes(3), seed + 0x33, s);
    indexer::fill_random_f32(static_cast<float*>(arena_.raw(1)), arena_.bytes(1) / 4, seed + 0x22, 1.f / 256, 1.f / 128, s);
    indexer::fill_random_f32(static_cast<float*>(arena_.raw(2)), arena_.bytes(2) / 4, seed + 0x44, -1.f, 1.f, s);
    indexer::fill_random_f32(static_cast<float*>(arena_.raw(4)), arena_.bytes(4) / 4, seed + 0x55, 1.f / 256, 1.f / 128, s);
    kernel_ = "indexer fp8 mma " + std::to_string(sh.num_heads) + "x" + std::to_string(sh.head_dim) + " + radix top-" +
              std::to_string(sh.topk);
  }
  void run(Stream s) override { indexer::run(p_, s); }

 private:
  Arena arena_;
  indexer::Params p_;
};

// Destroys CUDA events on every path out of time_calls.
struct Events {
  std::vector<cudaEvent_t> start, stop;
  explicit Events(int n) : start(n, nullptr), stop(n, nullptr) {
    for (int i = 0; i < n; ++i) {
      MHACFG_CUDA_CHECK(cudaEventCreate(&start[i]));
      MHACFG_CUDA_CHECK(cudaEventCreate(&stop[i]));
    }
  }
  ~Events() {
    for (auto e : start)
      if (e) cudaEventDestroy(e);
    for (auto e : stop)
      if (e) cudaEventDestroy(e);
  }
};

__global__ void read_flush_kernel(const uint4* data, std::size_t n, unsigned* sink) {
  unsigned x = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    x ^= data[i].x;
  if (x == 0x9e3779b9u) *sink = x;  // practically never: keeps the loads alive
}

double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

std::unique_ptr<Workload> make_workload(const MeasurementRecord& r, const Knobs& knobs, std::uint64_t seed,
                                        Stream stream) {
  const std::string why = cuda_unsupported_reason(r);
  if (!why.empty()) throw InputError("record " + r.op_class(), record_to_json(r).dump(), why);
  std::unique_ptr<Workload> w;
  switch (r.op()) {
    case OpKind::gemm:
      if (r.dtype == DType::fp8)
        w = std::make_unique<Fp8GemmWorkload>(r.gemm(), knobs, seed, stream);
      else
        w = std::make_unique<GemmWorkload>(r.gemm(), seed, stream);
      break;
    case OpKind::attention_block: w = std::make_unique<BlockWorkload>(r, knobs, seed, stream); break;
    case OpKind::attention:
      if (r.attention().is_mla())
        w = std::make_unique<MlaWorkload>(r.attention(), knobs, seed, stream);
      else if (r.attention().q_len == 1)
        w = std::make_unique<DecodeWorkload>(r.attention(), knobs, r.dtype == DType::fp8, seed, stream);
      else
        w = std::make_unique<PrefillWorkload>(r.attention(), knobs, seed, stream);
      break;
    case OpKind::linear_attention: w = std::make_unique<LinearWorkload>(r.linear(), seed, stream); break;
    case OpKind::indexer: w = std::make_unique<IndexerWorkload>(r.indexer(), seed, stream); break;
  }
  MHACFG_CHECK(w != nullptr, "unknown OpKind");
  synchronize(stream);  // fills done (and any error reported) before timing
  return w;
}

Timing time_calls(const std::function<void(Stream)>& fn, int calls, int warmup, Flush flush, Stream stream) {
  MHACFG_CHECK(calls >= 1 && warmup >= 0, "time_calls: bad call counts");
  DeviceBuffer write_buf(kFlushBytes);
  DeviceBuffer read_buf(flush == Flush::write_and_read ? kFlushBytes : 0);
  DeviceBuffer sink(flush == Flush::write_and_read ? 256 : 0);
  if (flush == Flush::write_and_read) fill_bytes(read_buf.get(), 0x5a, kFlushBytes, stream);
  for (int i = 0; i < warmup; ++i) fn(stream);
  synchronize(stream);

  Events ev(calls);
  for (int i = 0; i < calls; ++i) {
    fill_bytes(write_buf.get(), static_cast<std::uint8_t>(i), kFlushBytes, stream);
    if (flush == Flush::write_and_read) {
      read_flush_kernel<<<1024, 256, 0, stream>>>(read_buf.as<const uint4>(), kFlushBytes / sizeof(uint4),
                                                  sink.as<unsigned>());
      MHACFG_CUDA_CHECK_LAUNCH("read_flush_kernel");
    }
    MHACFG_CUDA_CHECK(cudaEventRecord(ev.start[i], stream));
    fn(stream);
    MHACFG_CUDA_CHECK(cudaEventRecord(ev.stop[i], stream));
  }
  synchronize(stream);
  MHACFG_CUDA_CHECK(cudaGetLastError());

  std::vector<double> ms(calls);
  for (int i = 0; i < calls; ++i) {
    float t = 0;
    MHACFG_CUDA_CHECK(cudaEventElapsedTime(&t, ev.start[i], ev.stop[i]));
    ms[i] = t;
  }
  std::sort(ms.begin(), ms.end());
  Timing out;
  out.calls = calls;
  out.median_ms = percentile(ms, 0.5);
  out.p25_ms = percentile(ms, 0.25);
  out.p75_ms = percentile(ms, 0.75);
  return out;
}

}  // namespace mhacfg::kernels::cuda::detail

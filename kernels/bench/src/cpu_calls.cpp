// Record -> kernel call: which CPU kernel runs which record, and what "bf16" means on the CPU.
//
// dtype fp32: fp32 storage and compute everywhere.
// dtype bf16: bf16 K/V cache (MLA: bf16 latent) with fp32 compute, for decode attention and decode
//   attention blocks. Prefill and GEMM records in bf16 are unsupported: Eigen has no bf16 GEMM, and
//   timing fp32 under a bf16 label would misreport the shape.
#include "cpu_calls.hpp"

#include <algorithm>
#include <memory>
#include <type_traits>

#include "inputs.hpp"
#include "mhacfg/costmodel/checked.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cpu/decode_attention.hpp"
#include "mhacfg/kernels/cpu/gemm.hpp"
#include "mhacfg/kernels/cpu/indexer.hpp"
#include "mhacfg/kernels/cpu/linear_attention.hpp"
#include "mhacfg/kernels/cpu/mla_decode.hpp"
#include "mhacfg/kernels/cpu/prefill_attention.hpp"

namespace mhacfg::kernels::detail {

namespace {

using cpu::bf16_bits;

std::string attention_reason(const AttentionShape& s, Phase phase, DType dtype) {
  if (phase == Phase::prefill) {
    if (dtype != DType::fp32)
      return "dtype = " + std::string(to_string(dtype)) +
             ": CPU prefill computes and stores in fp32 only (Eigen has no bf16 GEMM; bf16 on the CPU is a "
             "decode K/V cache format); use dtype fp32";
    return cpu::prefill_attention::unsupported_reason(s);
  }
  return s.is_mla() ? cpu::mla_decode::unsupported_reason(s, dtype) : cpu::decode_attention::unsupported_reason(s, dtype);
}

// Values in Q, K, V (MLA: the latent, in k; v none) and O of one attention call.
struct AttentionSizes {
  std::int64_t q, k, v, o;
  explicit AttentionSizes(const AttentionShape& s) {
    const std::int64_t q_rows = mul(s.batch, s.q_len, s.num_q_heads, "attention inputs");
    const std::int64_t tokens = mul(s.batch, s.kv_len, "attention inputs");
    q = mul(q_rows, s.qk_dim(), "attention inputs");
    o = mul(q_rows, s.v_dim(), "attention inputs");
    k = s.is_mla() ? mul(tokens, s.qk_dim(), "attention inputs")
                   : mul(tokens, s.num_kv_heads, s.head_dim, "attention inputs");
    v = s.is_mla() ? 0 : mul(tokens, s.num_kv_heads, s.v_head_dim, "attention inputs");
  }
};

// Q, K/V (or latent) and O of one attention call, K/V in KvT. With an arena (a call that only reads
// them), K and V come from it first, then Q where it still fits; an attention block, which writes its
// new K/V rows into the cache, owns them.
template <class KvT>
struct AttentionBuffers {
  Buffer<float> q, o;
  Buffer<KvT> k, v;  // v unused for MLA (the latent is k)

  AttentionBuffers(const AttentionShape& s, int threads, const InputArena* arena = nullptr,
                   InputArena::Cursor* cursor = nullptr) {
    const AttentionSizes n(s);
    k = input_buffer<KvT>(arena, cursor, n.k, 2, threads);
    if (n.v > 0) v = input_buffer<KvT>(arena, cursor, n.v, 3, threads);
    q = input_buffer<float>(arena, cursor, n.q, 1, threads);
    o = Buffer<float>(n.o);
  }

  void run(const AttentionShape& s, Phase phase, int threads) {
    if (phase == Phase::prefill) {
      if constexpr (std::is_same_v<KvT, float>) {
        cpu::PrefillAttentionParams p;
        p.shape = s;
        p.q = q.data();
        p.k = k.data();
        p.v = v.data();
        p.o = o.data();
        p.threads = threads;
        cpu::prefill_attention::run(p);
      } else {
        MHACFG_CHECK(false, "prefill with a non-fp32 cache reached the harness");
      }
    } else if (s.is_mla()) {
      cpu::MlaDecodeParams<KvT> p;
      p.shape = s;
      p.q = q.data();
      p.latent = k.data();
      p.o = o.data();
      p.threads = threads;
      cpu::mla_decode::run(p);
    } else {
      cpu::DecodeAttentionParams<KvT> p;
      p.shape = s;
      p.q = q.data();
      p.k = k.data();
      p.v = v.data();
      p.o = o.data();
      p.threads = threads;
      cpu::decode_attention::run(p);
    }
  }
};

template <class KvT>
std::function<void()> prepare_attention(const AttentionShape& s, Phase phase, int threads, const InputArena* arena,
                                        InputArena::Cursor* cursor) {
  auto bufs = std::make_shared<AttentionBuffers<KvT>>(s, threads, arena, cursor);
  return [bufs, s, phase, threads] { bufs->run(s, phase, threads); };
}

// B (the weights) from the arena first, then A where it still fits.
std::function<void()> prepare_gemm(const GemmShape& g, int threads, const InputArena* arena,
                                   InputArena::Cursor* cursor) {
  struct State {
    Buffer<float> a, b, c;
  };
  auto st = std::make_shared<State>();
  st->b = input_buffer<float>(arena, cursor, mul(g.k, g.n, "GEMM inputs"), 5, threads);
  st->a = input_buffer<float>(arena, cursor, mul(g.m, g.k, "GEMM inputs"), 4, threads);
  st->c = Buffer<float>(mul(g.m, g.n, "GEMM inputs"));
  return [st, g, threads] { cpu::gemm::run({g, st->a.data(), st->b.data(), st->c.data(), threads}); };
}

// Linear attention's core: its inputs (fp32), weights, state and kept convolution inputs (StateT).
template <class StateT>
std::function<void()> prepare_linear(const LinearAttentionShape& s, int threads) {
  struct State {
    Buffer<float> x, decay, beta, conv_w, conv_b, skip, o;
    Buffer<StateT> state, conv_state;
  };
  const char* what = "linear attention inputs";
  auto st = std::make_shared<State>();
  const std::int64_t tokens = mul(s.batch, s.q_len, what), conv = s.conv_dim();
  st->x = random_buffer<float>(mul(tokens, conv, what), 10, threads);
  // Decays and betas as random in [-1, 1) folded to [-1, 0) and (0, 1]: values only set the speed of exp.
  // KDA: a decay per key channel of each value head.
  const std::int64_t decays = mul(tokens, s.num_v_heads, s.kind == LinearKind::kda ? s.head_k_dim : 1, what);
  st->decay = random_buffer<float>(decays, 11, threads);
  st->beta = random_buffer<float>(mul(tokens, s.num_v_heads, what), 12, threads);
  for (std::int64_t i = 0; i < decays; ++i) st->decay.data()[i] = -std::abs(st->decay.data()[i]);
  for (std::int64_t i = 0; i < tokens * s.num_v_heads; ++i) st->beta.data()[i] = 1.0f - std::abs(st->beta.data()[i]);
  st->conv_w = random_buffer<float>(mul(s.conv_kernel, conv, what), 13, threads);
  st->conv_b = random_buffer<float>(conv, 14, threads);
  st->skip = random_buffer<float>(s.num_v_heads, 15, threads);
  st->o = Buffer<float>(mul(tokens, s.num_v_heads, s.head_v_dim, what));
  st->state = random_buffer<StateT>(mul(mul(s.batch, s.num_v_heads, what), s.head_k_dim, s.head_v_dim, what), 16, threads);
  st->conv_state = random_buffer<StateT>(mul(mul(s.batch, s.conv_kernel - 1, what), conv, what), 17, threads);
  return [st, s, threads] {
    cpu::LinearAttentionParams<StateT> p;
    p.shape = s;
    p.x = st->x.data();
    p.decay = st->decay.data();
    p.beta = st->beta.data();
    p.conv_weight = st->conv_w.data();
    p.conv_bias = st->conv_b.data();
    p.skip = s.kind == LinearKind::mamba2 ? st->skip.data() : nullptr;
    p.state = st->state.data();
    p.conv_state = st->conv_state.data();
    p.o = st->o.data();
    p.threads = threads;
    cpu::linear_attention::run(p);
  };
}

// fp8 codes of n values uniform in [-1, 1) at one scale, 1/448 (act_quant of blocks whose largest
// value is ~1), and the scales of their blocks: `rows` rows of `dim`.
struct Fp8Tensor {
  Buffer<cpu::fp8_e4m3> codes;
  Buffer<float> scales;
};
Fp8Tensor random_fp8(std::int64_t rows, std::int64_t dim, std::uint64_t seed, int threads) {
  const char* what = "indexer inputs";
  const std::int64_t n = mul(rows, dim, what), blocks = (dim + cpu::kFp8ScaleBlock - 1) / cpu::kFp8ScaleBlock;
  Fp8Tensor t{Buffer<cpu::fp8_e4m3>(n), Buffer<float>(mul(rows, blocks, what))};
  const Buffer<float> values = random_buffer<float>(n, seed, threads);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) t.codes.data()[i] = cpu::fp32_to_fp8_e4m3(values.data()[i] * cpu::kFp8E4m3Max);
  std::fill_n(t.scales.data(), t.scales.size(), 1.0f / cpu::kFp8E4m3Max);
  return t;
}

// The lightning indexer: fp8 queries and keys with their scales, fp32 head weights, the top-k out.
std::function<void()> prepare_indexer(const IndexerShape& s, int threads) {
  struct State {
    Fp8Tensor q, k;
    Buffer<float> weights;
    Buffer<std::int32_t> indices;
  };
  const char* what = "indexer inputs";
  auto st = std::make_shared<State>();
  const std::int64_t queries = mul(s.batch, s.q_len, what);
  st->q = random_fp8(mul(queries, s.num_heads, what), s.head_dim, 20, threads);
  st->k = random_fp8(mul(s.batch, s.kv_len, what), s.head_dim, 21, threads);
  st->weights = random_buffer<float>(mul(queries, s.num_heads, what), 22, threads);
  st->indices = Buffer<std::int32_t>(mul(queries, s.topk, what));
  return [st, s, threads] {
    cpu::IndexerParams p;
    p.shape = s;
    p.q = st->q.codes.data();
    p.q_scale = st->q.scales.data();
    p.weights = st->weights.data();
    p.k = st->k.codes.data();
    p.k_scale = st->k.scales.data();
    p.indices = st->indices.data();
    p.threads = threads;
    cpu::indexer::run(p);
  };
}

// An attention block's fused QKV projection's width, and its output projection's input width.
std::int64_t block_qkv_width(const AttentionShape& s) {
  return add(mul(s.num_q_heads + s.num_kv_heads, s.head_dim, "attention block inputs"),
             mul(s.num_kv_heads, s.v_head_dim, "attention block inputs"), "attention block inputs");
}
std::int64_t block_o_width(const AttentionShape& s) {
  return mul(s.num_q_heads, s.v_head_dim, "attention block inputs");
}

// Attention block: x [tokens, d_model] -> fused QKV GEMM -> Q and the new K/V rows written into the
// cache (the last q_len positions) -> attention -> O GEMM [tokens, num_q_heads * v_head_dim] x
// [num_q_heads * v_head_dim, d_model].
template <class KvT>
struct BlockState {
  AttentionShape s;
  Phase phase;
  int threads;
  std::int64_t tokens, d_model, qkv_width;
  Buffer<float> x, w_qkv, qkv, w_o, y;
  AttentionBuffers<KvT> attn;

  // The weights (read only) from the arena first, then x where it still fits; the K/V cache, which the
  // block writes its new rows into, is its own.
  BlockState(const AttentionShape& shape, Phase ph, std::int64_t dm, int th, const InputArena* arena,
             InputArena::Cursor* cursor)
      : s(shape), phase(ph), threads(th), attn(shape, th) {
    tokens = mul(s.batch, s.q_len, "attention block inputs");
    d_model = dm;
    qkv_width = block_qkv_width(s);
    w_qkv = input_buffer<float>(arena, cursor, mul(d_model, qkv_width, "attention block inputs"), 7, threads);
    w_o = input_buffer<float>(arena, cursor, mul(block_o_width(s), d_model, "attention block inputs"), 8, threads);
    x = input_buffer<float>(arena, cursor, mul(tokens, d_model, "attention block inputs"), 6, threads);
    qkv = Buffer<float>(mul(tokens, qkv_width, "attention block inputs"));
    y = Buffer<float>(mul(tokens, d_model, "attention block inputs"));
  }

  void run() {
    cpu::gemm::run({{tokens, qkv_width, d_model}, x.data(), w_qkv.data(), qkv.data(), threads});
    const std::int64_t q_width = s.num_q_heads * s.head_dim, k_width = s.num_kv_heads * s.head_dim;
    const std::int64_t v_width = s.num_kv_heads * s.v_head_dim;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t t = 0; t < tokens; ++t) {
      const std::int64_t b = t / s.q_len, i = t % s.q_len, pos = s.kv_len - s.q_len + i;
      const float* row = qkv.data() + t * qkv_width;
      std::copy_n(row, q_width, attn.q.data() + t * q_width);
      store(row + q_width, attn.k.data() + (b * s.kv_len + pos) * k_width, k_width);
      store(row + q_width + k_width, attn.v.data() + (b * s.kv_len + pos) * v_width, v_width);
    }
    attn.run(s, phase, threads);
    cpu::gemm::run({{tokens, d_model, s.num_q_heads * s.v_head_dim}, attn.o.data(), w_o.data(), y.data(), threads});
  }

  static void store(const float* from, KvT* to, std::int64_t n) {
    if constexpr (std::is_same_v<KvT, float>)
      std::copy_n(from, n, to);
    else
      cpu::fp32_to_bf16(from, to, n);
  }
};

template <class KvT>
std::function<void()> prepare_block(const MeasurementRecord& r, int threads, const InputArena* arena,
                                    InputArena::Cursor* cursor) {
  auto st = std::make_shared<BlockState<KvT>>(r.attention(), r.phase(), r.d_model(), threads, arena, cursor);
  return [st] { st->run(); };
}

// The record's call (supported), its read-only inputs from the arena where given.
std::function<void()> prepare_call(const MeasurementRecord& r, int threads, const InputArena* arena,
                                   InputArena::Cursor* cursor) {
  switch (r.op()) {
    case OpKind::gemm:
      return prepare_gemm(r.gemm(), threads, arena, cursor);
    case OpKind::attention:
      return r.dtype == DType::bf16 ? prepare_attention<bf16_bits>(r.attention(), r.phase(), threads, arena, cursor)
                                    : prepare_attention<float>(r.attention(), r.phase(), threads, arena, cursor);
    case OpKind::attention_block:
      return r.dtype == DType::bf16 ? prepare_block<bf16_bits>(r, threads, arena, cursor)
                                    : prepare_block<float>(r, threads, arena, cursor);
    case OpKind::linear_attention:
      return r.dtype == DType::bf16 ? prepare_linear<bf16_bits>(r.linear(), threads) : prepare_linear<float>(r.linear(), threads);
    case OpKind::indexer:
      return prepare_indexer(r.indexer(), threads);
  }
  MHACFG_CHECK(false, "unknown OpKind");
}

}  // namespace

std::string cpu_call_unsupported_reason(const MeasurementRecord& r) {
  switch (r.op()) {
    case OpKind::gemm:
      if (r.dtype != DType::fp32)
        return "dtype = " + std::string(to_string(r.dtype)) +
               ": CPU GEMMs run in fp32 only (Eigen has no bf16 GEMM); use dtype fp32";
      return cpu::gemm::unsupported_reason(r.gemm());
    case OpKind::attention:
      return attention_reason(r.attention(), r.phase(), r.dtype);
    case OpKind::attention_block:
      if (r.d_model() < 1) return "d_model = " + std::to_string(r.d_model()) + ": must be at least 1";
      if (r.attention().is_mla())
        return "kv_lora_rank = " + std::to_string(r.attention().kv_lora_rank) +
               ": attention blocks are MHA/GQA/MQA (fused QKV projection)";
      return attention_reason(r.attention(), r.phase(), r.dtype);
    case OpKind::linear_attention:
      return cpu::linear_attention::unsupported_reason(r.linear(), r.dtype);
    case OpKind::indexer:
      return cpu::indexer::unsupported_reason(r.indexer());
  }
  return "op = " + std::string(to_string(r.op())) + ": unknown to the CPU harness";
}

std::int64_t cpu_call_bytes(const MeasurementRecord& r) {
  if (r.op() == OpKind::gemm) return gemm_bytes(r.gemm(), DType::fp32);
  if (r.op() == OpKind::linear_attention) {
    // The state and kept inputs in their dtype; in fp32 per token x, both gates (KDA: a decay per key
    // channel) and the output, the
    // kernel's workspace (a block of tokens' convolution outputs), the taps, bias and D.
    const LinearAttentionShape& s = r.linear();
    const char* what = "harness buffers";
    const std::int64_t conv = s.conv_dim();
    const std::int64_t decays = mul(s.num_v_heads, s.kind == LinearKind::kda ? s.head_k_dim : 1, what);
    const std::int64_t per_token =
        add(add(conv, add(s.num_v_heads, decays, what), what), mul(s.num_v_heads, s.head_v_dim, what), what);
    const std::int64_t block = std::min<std::int64_t>(s.q_len, cpu::kLinearAttentionTokenBlock);
    const std::int64_t fp32 = add(add(mul(mul(s.batch, s.q_len, what), per_token, what), mul(mul(s.batch, block, what), conv, what), what),
                                  add(mul(s.conv_kernel + 1, conv, what), s.num_v_heads, what), what);
    return add(dtype_bytes(r.dtype, linear_attention_state_elements(s), what), mul(4, fp32, what), what);
  }
  if (r.op() == OpKind::indexer) {
    // fp8 queries and keys with a scale per 128, fp32 weights, int32 indices, and the kernel's
    // workspace of scores and dequantised queries.
    const IndexerShape& s = r.indexer();
    const char* what = "harness buffers";
    const std::int64_t blocks = (s.head_dim + cpu::kFp8ScaleBlock - 1) / cpu::kFp8ScaleBlock;
    const std::int64_t rows = add(mul(mul(s.batch, s.q_len, what), s.num_heads, what), mul(s.batch, s.kv_len, what), what);
    const std::int64_t queries = mul(s.batch, s.q_len, what);
    return add(add(mul(rows, add(s.head_dim, mul(4, blocks, what), what), what),
                   mul(4, mul(queries, add(s.num_heads, s.topk, what), what), what), what),
               mul(8, cpu::kIndexerWorkspaceFloats, what), what);
  }
  const AttentionShape& s = r.attention();
  // Q and O in fp32, the whole K/V cache (or latent) in the storage dtype, not only the window or chunk.
  AttentionShape cache = s;
  cache.window = 0;
  cache.chunk = 0;
  const char* what = "harness buffers";
  const std::int64_t q_rows = mul(s.batch, s.q_len, s.num_q_heads, what);
  std::int64_t bytes = add(attention_kv_bytes(cache, r.dtype), mul(q_rows, 4 * (s.qk_dim() + s.v_dim()), what), what);
  if (r.op() == OpKind::attention_block) {
    const std::int64_t tokens = mul(s.batch, s.q_len, what);
    const std::int64_t qkv_width = add(mul(add(s.num_q_heads, s.num_kv_heads, what), s.head_dim, what),
                                       mul(s.num_kv_heads, s.v_head_dim, what), what);
    const std::int64_t o_width = mul(s.num_q_heads, s.v_head_dim, what);
    // x and y [tokens, d_model], the QKV output [tokens, qkv_width], the two weight matrices.
    const std::int64_t activations = add(mul(2 * tokens, r.d_model(), what), mul(tokens, qkv_width, what), what);
    const std::int64_t weights = mul(r.d_model(), add(qkv_width, o_width, what), what);
    bytes = add(bytes, mul(4, add(activations, weights, what), what), what);
  }
  return bytes;
}

InputArena::Cursor cpu_call_arena_need(const MeasurementRecord& r) {
  InputArena::Cursor need;
  if (r.op() == OpKind::gemm) {
    need.f32 = mul(r.gemm().k, r.gemm().n, "GEMM inputs");
  } else if (r.op() == OpKind::attention_block) {
    const AttentionShape& s = r.attention();
    const std::int64_t w_qkv = mul(r.d_model(), block_qkv_width(s), "attention block inputs");
    need.f32 = add((w_qkv + 15) / 16 * 16, mul(block_o_width(s), r.d_model(), "attention block inputs"),
                   "attention block inputs");
  } else if (r.op() == OpKind::attention) {
    const AttentionSizes n(r.attention());
    const std::int64_t line = r.dtype == DType::bf16 ? 32 : 16;  // V starts on a cache line after K
    (r.dtype == DType::bf16 ? need.bf16 : need.f32) = add((n.k + line - 1) / line * line, n.v, "attention inputs");
  }
  return need;
}

InputArena::Cursor cpu_calls_arena_need(const std::vector<MeasurementRecord>& rs) {
  InputArena::Cursor need;
  for (const MeasurementRecord& r : rs) {
    const InputArena::Cursor n = cpu_call_arena_need(r);
    need.f32 = std::max(need.f32, n.f32);
    need.bf16 = std::max(need.bf16, n.bf16);
  }
  return need;
}

std::function<void()> prepare_cpu_call(const MeasurementRecord& r, int threads, const InputArena* arena,
                                       std::int64_t* arena_bytes) {
  if (std::string why = cpu_call_unsupported_reason(r); !why.empty()) throw InputError(why);
  InputArena::Cursor cursor;
  std::function<void()> call = prepare_call(r, threads, arena, &cursor);
  if (arena_bytes) *arena_bytes = cursor.bytes();
  return call;
}

}  // namespace mhacfg::kernels::detail

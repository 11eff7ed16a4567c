// Decode attention, fp32 compute over an fp32 or bf16 K/V cache (see decode_attention.hpp for
// layouts), on the split-KV engine (split_kv.hpp).
//
// GQA packing: a KV head's query rows (q_len positions x group_size heads) form one tile of rows, so
// each K/V tile is read once per group.
//
// v1: both products on Eigen tiles (bf16 tiles widened into a buffer first). Eigen packs the K/V
//     tile on every call, which caps it at 4-6 G elements/s per core for 2-8 query rows: 32 heads /
//     8 KV heads, 128k keys read fp32 K/V at 5.9 GB/s and bf16 at 2.5 GB/s (2 threads; streaming
//     read 9.4 GB/s in that loaded run).
// v2: rows <= 16 use the register-blocked kernels of small_rows.hpp on the rows in place, widening
//     bf16 in registers, and every tile is swept in address order across heads (split_kv.hpp);
//     head by head the same kernels read fp32 K/V at 3.7 GB/s, swept at 11.0 (stream 11.7, same
//     run). Measured (mhacfg_kernels_bench --targets, 2 threads, 32/8 heads, head_dim 128, 128k
//     keys): fp32 K/V (1 GiB) at 0.93-0.99 of the streaming read bandwidth of the same round; bf16
//     (512 MiB) at 0.46-0.53: at 4 query rows per KV head it is compute-bound (8 FLOP per element,
//     twice the elements per byte of fp32), and the two vCPUs scale compute by ~1.3x, not 2x.
// v3: the sweep takes keys 16 apart (split_kv.hpp): token rows of 1-3 KB (1-6 KV heads) streamed at
//     9-12 GB/s in address order and now at 17-18 like 4 KB rows; bf16 decodes 17-63 % faster (one
//     thread, interleaved A/B of 35 shapes, none slower by more than 1.3 %). The read ceiling now
//     reads 8 streams per thread (stream_read.cpp); against it the 1 GiB fp32 check reads at
//     0.76-0.91 (one thread, 19 calibrations).
// v4: up to 32 rows per KV head (was 16) run register-blocked (kSmallRows below).
#include "mhacfg/kernels/cpu/decode_attention.hpp"

#include <type_traits>

#include "attention_tiles.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cpu/tile_facts.hpp"
#include "shape_checks.hpp"
#include "split_kv.hpp"

namespace mhacfg::kernels::cpu {

namespace {

// Keys per tile: the score tile of <= 16 rows stays in L1 and the tile's K/V (256 keys x all heads)
// in L2 while every head sweeps it.
constexpr std::int64_t kKeyTile = 256;

// Query rows per KV head (q_len x group_size) up to which the register-blocked kernels run. Against
// Eigen's GEMM on the same tiles (one thread, best of 2): fp32 at 24-32 rows 11-18 % faster, at 48-64
// rows within 3 %, at 128 rows 21 % slower; bf16 at 32 rows within 3.4 %, at 48-64 rows 20-24 % slower.
constexpr std::int64_t kSmallRows = kTileFacts.decode_small_rows;

template <class KvT>
void run_typed(const DecodeAttentionParams<KvT>& p) {
  const AttentionShape& s = p.shape;
  constexpr DType kv_dtype = std::is_same_v<KvT, float> ? DType::fp32 : DType::bf16;
  if (std::string why = decode_attention::unsupported_reason(s, kv_dtype); !why.empty())
    throw InputError("decode_attention: " + why);
  MHACFG_CHECK(p.q && p.k && p.v && p.o, "decode_attention: null tensor");
  MHACFG_CHECK(p.threads >= 1, "decode_attention: threads must be at least 1");

  detail::SplitKvProblem pr;
  pr.batch = s.batch;
  pr.q_len = s.q_len;
  pr.kv_len = s.kv_len;
  pr.kv_heads = s.num_kv_heads;
  pr.rows_per_position = s.num_q_heads / s.num_kv_heads;
  pr.qk_dim = s.head_dim;
  pr.v_dim = s.v_head_dim;
  pr.mask = detail::KeyMask(s);
  pr.scale = detail::softmax_scale_or_default(p.softmax_scale, s.head_dim);
  pr.tile_tokens = kKeyTile;
  pr.small_rows = kSmallRows;
  pr.threads = p.threads;

  // [batch, kv_len, num_kv_heads, dim]: a head's rows are num_kv_heads * dim apart.
  detail::KvSource<KvT> src;
  src.k = p.k;
  src.v = p.v;
  src.k_head = s.head_dim;
  src.k_token = s.num_kv_heads * s.head_dim;
  src.k_seq = s.kv_len * src.k_token;
  src.v_head = s.v_head_dim;
  src.v_token = s.num_kv_heads * s.v_head_dim;
  src.v_seq = s.kv_len * src.v_token;
  Eigen::setNbThreads(p.threads);  // tile products inside the parallel region stay single-threaded
  detail::run_split_kv(pr, p.q, p.o, src);
}

}  // namespace

std::string decode_attention::unsupported_reason(const AttentionShape& s, DType kv_dtype) {
  if (kv_dtype != DType::fp32 && kv_dtype != DType::bf16)
    return "dtype = " + std::string(to_string(kv_dtype)) + ": CPU decode stores K/V in fp32 or bf16 only";
  if (s.is_mla())
    return detail::field_reason("kv_lora_rank", s.kv_lora_rank, "MLA decode is a separate kernel (mla_decode)");
  if (s.q_len > kMaxDecodeQLen)
    return detail::field_reason("q_len", s.q_len,
                                "decode supports q_len up to " + std::to_string(kMaxDecodeQLen) +
                                    " (longer query blocks are prefill)");
  return detail::common_attention_reason(s);
}

void decode_attention::run(const DecodeAttentionParams<float>& p) { run_typed(p); }
void decode_attention::run(const DecodeAttentionParams<bf16_bits>& p) { run_typed(p); }

}  // namespace mhacfg::kernels::cpu

// MLA absorbed decode, fp32 compute over an fp32 or bf16 latent cache (see mla_decode.hpp for
// layouts), on the split-KV engine (split_kv.hpp) with one head group holding every query head.
//
// The latent tile is read (and for bf16 widened) once; S = Q_all_heads L^T and O += P L[:, :rank]
// are GEMMs with num_q_heads * q_len rows, so the kernel is compute-bound for 128 heads and
// bandwidth-bound for 16.
//
// v1: Eigen's GEMM for >= 16 rows, the small-rows kernels below that. Measured (kernels_bench, 2
//     threads, bf16 latent 512 + 64): 128 heads x 32k keys at 0.92-1.07 of the Eigen SGEMM FLOP/s
//     of the same run; 16 heads x 128k keys at 0.50-0.67 (it reads the latent once for 16 rows).
#include "mhacfg/kernels/cpu/mla_decode.hpp"

#include <type_traits>

#include "attention_tiles.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "shape_checks.hpp"
#include "split_kv.hpp"

namespace mhacfg::kernels::cpu {

namespace {

// Tokens per latent tile: 128 tokens of a 576-wide fp32 latent = 288 KiB, which stays in L2 with
// the score tile while both products run (64 and 256 measured the same, 71-75 GFLOP/s).
constexpr std::int64_t kLatentTileTokens = 128;

// Query rows (heads x q_len) up to which the register-blocked kernels run; 16 heads already run
// faster on Eigen's GEMM (42 vs 37 GFLOP/s, bf16 latent, 2 threads, same run).
constexpr std::int64_t kSmallRows = 8;

template <class LatentT>
void run_typed(const MlaDecodeParams<LatentT>& p) {
  const AttentionShape& s = p.shape;
  constexpr DType dtype = std::is_same_v<LatentT, float> ? DType::fp32 : DType::bf16;
  if (std::string why = mla_decode::unsupported_reason(s, dtype); !why.empty())
    throw InputError("mla_decode: " + why);
  MHACFG_CHECK(p.q && p.latent && p.o, "mla_decode: null tensor");
  MHACFG_CHECK(p.threads >= 1, "mla_decode: threads must be at least 1");

  detail::SplitKvProblem pr;
  pr.batch = s.batch;
  pr.q_len = s.q_len;
  pr.kv_len = s.kv_len;
  pr.kv_heads = 1;
  pr.rows_per_position = s.num_q_heads;
  pr.qk_dim = s.qk_dim();
  pr.v_dim = s.v_dim();
  pr.mask = detail::KeyMask(s);
  pr.scale = detail::softmax_scale_or_default(p.softmax_scale, s.qk_dim());
  pr.tile_tokens = kLatentTileTokens;
  pr.small_rows = kSmallRows;
  pr.threads = p.threads;

  // [batch, kv_len, kv_lora_rank + rope_head_dim]; V is the first kv_lora_rank columns of K.
  detail::KvSource<LatentT> src;
  src.k = src.v = p.latent;
  src.k_token = src.v_token = s.qk_dim();
  src.k_seq = src.v_seq = s.kv_len * s.qk_dim();
  src.v_in_k = true;
  Eigen::setNbThreads(p.threads);  // tile products inside the parallel region stay single-threaded
  detail::run_split_kv(pr, p.q, p.o, src);
}

}  // namespace

std::string mla_decode::unsupported_reason(const AttentionShape& s, DType latent_dtype) {
  if (latent_dtype != DType::fp32 && latent_dtype != DType::bf16)
    return "dtype = " + std::string(to_string(latent_dtype)) + ": CPU MLA decode stores the latent in fp32 or bf16 only";
  if (!s.is_mla())
    return detail::field_reason("kv_lora_rank", s.kv_lora_rank, "MLA decode needs kv_lora_rank > 0");
  if (s.q_len > kMaxMlaDecodeQLen)
    return detail::field_reason("q_len", s.q_len,
                                "MLA decode supports q_len up to " + std::to_string(kMaxMlaDecodeQLen));
  return detail::common_attention_reason(s);
}

void mla_decode::run(const MlaDecodeParams<float>& p) { run_typed(p); }
void mla_decode::run(const MlaDecodeParams<bf16_bits>& p) { run_typed(p); }

}  // namespace mhacfg::kernels::cpu

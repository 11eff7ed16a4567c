// The attention_block record's work: QKV GEMM, attention over strided views of its output (or the
// KV cache), O GEMM. Layout of qkv rows: [num_q_heads | num_kv_heads | num_kv_heads] x head_dim.
#include "mhacfg/kernels/cuda/attention_block.hpp"

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/decode_attention.hpp"
#include "mhacfg/kernels/cuda/prefill_attention.hpp"

namespace mhacfg::kernels::cuda::attention_block {

namespace {

bool uses_decode(const Params& p) { return p.q_len == 1; }
bool kv_from_qkv(const Params& p) { return p.q_len == p.kv_len; }
std::int64_t qkv_width(const Params& p) {
  return static_cast<std::int64_t>(p.num_q_heads + 2 * p.num_kv_heads) * p.head_dim;
}

decode::Params decode_params(const Params& p) {
  decode::Params d;
  const std::int64_t row = qkv_width(p);
  d.batch = p.batch;
  d.num_q_heads = p.num_q_heads;
  d.num_kv_heads = p.num_kv_heads;
  d.head_dim = p.head_dim;
  d.kv_len = p.kv_len;
  d.softmax_scale = p.softmax_scale;
  d.q = p.qkv;
  d.q_batch_stride = row;
  if (kv_from_qkv(p)) {  // kv_len == 1: the token's own K/V
    d.k = p.qkv + static_cast<std::int64_t>(p.num_q_heads) * p.head_dim;
    d.v = d.k + static_cast<std::int64_t>(p.num_kv_heads) * p.head_dim;
    d.kv_batch_stride = row;
    d.kv_token_stride = row;
  } else {
    d.k = p.k_cache;
    d.v = p.v_cache;
    d.kv_token_stride = static_cast<std::int64_t>(p.num_kv_heads) * p.head_dim;
    d.kv_batch_stride = d.kv_token_stride * p.kv_len;
  }
  d.o = p.attn;
  d.o_batch_stride = static_cast<std::int64_t>(p.num_q_heads) * p.head_dim;
  d.workspace = p.workspace;
  d.workspace_bytes = p.workspace_bytes;
  return d;
}

}  // namespace

std::string unsupported_reason(const AttentionShape& s, std::int64_t d_model) {
  if (s.is_mla()) return "attention_block covers MHA/GQA/MQA only";
  const std::string why = s.q_len == 1 ? decode::unsupported_reason(s) : prefill::unsupported_reason(s);
  if (!why.empty()) return why;
  if (d_model < 8 || d_model % 8 != 0) return "d_model must be a positive multiple of 8";
  const std::int64_t tokens = s.batch * s.q_len;
  const std::string g1 = gemm::unsupported_reason(GemmShape{tokens, (s.num_q_heads + 2 * s.num_kv_heads) * s.head_dim, d_model});
  if (!g1.empty()) return "QKV projection: " + g1;
  const std::string g2 = gemm::unsupported_reason(GemmShape{tokens, d_model, s.num_q_heads * s.head_dim});
  if (!g2.empty()) return "O projection: " + g2;
  return "";
}

std::size_t workspace_bytes(const Params& p) {
  return uses_decode(p) ? decode::plan(decode_params(p)).workspace_bytes : 0;
}

void run(const Params& p, gemm::Runner& gemm, Stream stream) {
  const std::int64_t tokens = static_cast<std::int64_t>(p.batch) * p.q_len;
  const std::int64_t row = qkv_width(p);
  gemm.run(gemm::Params{tokens, row, p.d_model, p.x, p.w_qkv, p.qkv}, stream);
  if (uses_decode(p)) {
    decode::run(decode_params(p), stream);
  } else {
    prefill::Params a;
    a.batch = p.batch;
    a.q_len = p.q_len;
    a.kv_len = p.kv_len;
    a.num_q_heads = p.num_q_heads;
    a.num_kv_heads = p.num_kv_heads;
    a.head_dim = p.head_dim;
    a.causal = p.causal;
    a.softmax_scale = p.softmax_scale;
    a.q = p.qkv;
    a.q_token_stride = row;
    a.q_batch_stride = row * p.q_len;
    if (kv_from_qkv(p)) {
      a.k = p.qkv + static_cast<std::int64_t>(p.num_q_heads) * p.head_dim;
      a.v = a.k + static_cast<std::int64_t>(p.num_kv_heads) * p.head_dim;
      a.kv_token_stride = row;
      a.kv_batch_stride = row * p.q_len;
    } else {
      a.k = p.k_cache;
      a.v = p.v_cache;
      a.kv_token_stride = static_cast<std::int64_t>(p.num_kv_heads) * p.head_dim;
      a.kv_batch_stride = a.kv_token_stride * p.kv_len;
    }
    a.o = p.attn;
    a.o_token_stride = static_cast<std::int64_t>(p.num_q_heads) * p.head_dim;
    a.o_batch_stride = a.o_token_stride * p.q_len;
    prefill::run(a, stream);
  }
  gemm.run(gemm::Params{tokens, p.d_model, static_cast<std::int64_t>(p.num_q_heads) * p.head_dim, p.attn, p.w_o, p.y},
           stream);
}

}  // namespace mhacfg::kernels::cuda::attention_block

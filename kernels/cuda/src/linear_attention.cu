// Linear attention's decode step (linear_attention.hpp): two launches.
//
// 1. The convolution: one thread per (sequence, channel) reads the channel's kept inputs, the new
//    input and the taps, writes SiLU(bias + taps . inputs) to the fp32 workspace and shifts the kept
//    inputs by one (each channel is one thread's: no races).
// 2. The recurrence: one block per (value head, sequence), one thread per state column j (head_v_dim
//    threads). Thread j holds column j of the head_k_dim x head_v_dim state in registers: S^T k, the
//    update k delta^T and S^T q (Mamba2: the update and h^T C) are then sums over its own column, with
//    no reduction across threads; only Gated DeltaNet's L2 norms of q and k are block reductions.
//    The state is read once and written once, a warp covering 64 contiguous bytes of each row.
//
// Expected speed: the state dominates the bytes (Qwen3-Next: 1 MiB per sequence per layer in bf16,
// against 16 KiB of inputs), so the step is a streaming read and write of it; every thread issues
// head_k_dim independent loads before it computes. Not yet measured on a device (kernels/cuda/NOTES.md).
#include "mhacfg/kernels/cuda/linear_attention.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "check.hpp"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels::cuda::linear_attention {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kConvThreads = 256;
constexpr int kMaxConvKernel = 8;
constexpr float kNormEps = 1e-6f;  // transformers' l2norm: x / sqrt(sum x^2 + eps)

struct ConvArgs {
  const bf16* x;
  const bf16* weight;
  const bf16* bias;
  bf16* kept;
  float* out;
  int conv_dim;
  int kernel;
};

__global__ void __launch_bounds__(kConvThreads) conv_kernel(ConvArgs a) {
  const int ch = blockIdx.x * kConvThreads + threadIdx.x;
  const int b = blockIdx.y;
  if (ch >= a.conv_dim) return;
  const std::int64_t stride = a.conv_dim;
  const bf16 x = a.x[b * stride + ch];
  bf16* kept = a.kept + static_cast<std::int64_t>(b) * (a.kernel - 1) * stride + ch;
  float acc = a.bias ? __bfloat162float(a.bias[ch]) : 0.f;
  for (int j = 0; j < a.kernel - 1; ++j) acc += __bfloat162float(a.weight[j * stride + ch]) * __bfloat162float(kept[j * stride]);
  acc += __bfloat162float(a.weight[(a.kernel - 1) * stride + ch]) * __bfloat162float(x);
  a.out[b * stride + ch] = acc / (1.f + expf(-acc));
  for (int j = 0; j + 2 < a.kernel; ++j) kept[j * stride] = kept[(j + 1) * stride];
  if (a.kernel > 1) kept[(a.kernel - 2) * stride] = x;
}

struct RecurArgs {
  const float* conv_out;  // [batch, conv_dim]
  const float* decay;
  const float* beta;
  const float* skip;
  bf16* state;
  bf16* o;
  int conv_dim;
  int key_dim;
  int num_k_heads;
  int num_v_heads;
};

template <int DK, int DV, bool kMamba>
__global__ void __launch_bounds__(DV) recurrence_kernel(RecurArgs a) {
  static_assert(DV % 32 == 0, "whole warps");
  const int h = blockIdx.x, b = blockIdx.y, j = threadIdx.x;
  const int kh = h / (a.num_v_heads / a.num_k_heads);
  // The state's column first: its DK loads are in flight while q and k are gathered and reduced.
  const std::int64_t unit = static_cast<std::int64_t>(b) * a.num_v_heads + h;
  bf16* column = a.state + unit * DK * DV + j;
  float s[DK];
#pragma unroll
  for (int r = 0; r < DK; ++r) s[r] = __bfloat162float(column[r * DV]);
  const float* c = a.conv_out + static_cast<std::int64_t>(b) * a.conv_dim;
  __shared__ float qs[DK], ks[DK];
  __shared__ float partial[2][DV / 32];
  float qq = 0.f, kk = 0.f;
  for (int i = j; i < DK; i += DV) {
    const float qv = c[kh * DK + i], kv = c[a.key_dim + kh * DK + i];
    qs[i] = qv;
    ks[i] = kv;
    qq += qv * qv;
    kk += kv * kv;
  }
  if (!kMamba) {
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
      qq += __shfl_xor_sync(0xffffffffu, qq, off);
      kk += __shfl_xor_sync(0xffffffffu, kk, off);
    }
    if (j % 32 == 0) {
      partial[0][j / 32] = qq;
      partial[1][j / 32] = kk;
    }
  }
  __syncthreads();
  if (!kMamba) {  // q and k L2-normalised in place, q also scaled by 1 / sqrt(DK)
    float qsum = 0.f, ksum = 0.f;
#pragma unroll
    for (int w = 0; w < DV / 32; ++w) {
      qsum += partial[0][w];
      ksum += partial[1][w];
    }
    const float q_scale = rsqrtf(qsum + kNormEps) * rsqrtf(static_cast<float>(DK)), k_scale = rsqrtf(ksum + kNormEps);
    for (int i = j; i < DK; i += DV) {  // each thread scales the elements it loaded
      qs[i] *= q_scale;
      ks[i] *= k_scale;
    }
    __syncthreads();
  }
  // Read through volatile: k is used by both passes, and keeping its DK values in registers between
  // them (the compiler's choice otherwise) spilled the state's column to local memory.
  const volatile float* kv = ks;
  const float v = c[2 * a.key_dim + h * DV + j];
  const float decay = expf(a.decay[unit]), beta = a.beta[unit];
  float y = 0.f;
  if (kMamba) {  // h = decay h + dt B x^T; y = h^T C + D x
#pragma unroll
    for (int r = 0; r < DK; ++r) {
      s[r] = decay * s[r] + beta * ks[r] * v;
      y += qs[r] * s[r];
    }
    if (a.skip) y += a.skip[h] * v;
  } else {  // S = decay S; delta = beta (v - S^T k); S += k delta^T; o = S^T q
    float acc = 0.f;
#pragma unroll
    for (int r = 0; r < DK; ++r) {
      s[r] *= decay;
      acc += kv[r] * s[r];
    }
    const float delta = beta * (v - acc);
#pragma unroll
    for (int r = 0; r < DK; ++r) {
      s[r] += kv[r] * delta;
      y += qs[r] * s[r];
    }
  }
#pragma unroll
  for (int r = 0; r < DK; ++r) column[r * DV] = __float2bfloat16_rn(s[r]);
  a.o[unit * DV + j] = __float2bfloat16_rn(y);
}

template <int DK, int DV>
void launch_recurrence(const LinearAttentionShape& s, const RecurArgs& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(s.num_v_heads), static_cast<unsigned>(s.batch));
  if (s.kind == LinearKind::mamba2)
    recurrence_kernel<DK, DV, true><<<grid, DV, 0, stream>>>(a);
  else
    recurrence_kernel<DK, DV, false><<<grid, DV, 0, stream>>>(a);
}

std::string field(const char* name, std::int64_t value, const std::string& why) {
  return std::string(name) + " = " + std::to_string(value) + ": " + why;
}

}  // namespace

std::string unsupported_reason(const LinearAttentionShape& s) {
  if (s.kind == LinearKind::kda)
    return "kind = kda: mhacfg's CUDA linear-attention kernel runs gated_deltanet and mamba2 (KDA timings can be imported "
           "with calibrate --from)";
  if (s.q_len != 1) return field("q_len", s.q_len, "the CUDA linear-attention kernel is a decode step (q_len 1)");
  if (s.batch < 1 || s.batch > 65535) return field("batch", s.batch, "must be in 1..65535 (the grid's y dimension)");
  if (s.num_k_heads < 1) return field("num_k_heads", s.num_k_heads, "must be at least 1");
  if (s.num_v_heads < 1 || s.num_v_heads > (1 << 20)) return field("num_v_heads", s.num_v_heads, "must be in 1..1048576");
  if (s.num_v_heads % s.num_k_heads != 0)
    return field("num_k_heads", s.num_k_heads, "must divide num_v_heads = " + std::to_string(s.num_v_heads));
  if (s.head_k_dim != 64 && s.head_k_dim != 128) return field("head_k_dim", s.head_k_dim, "must be 64 or 128");
  if (s.head_v_dim != 64 && s.head_v_dim != 128) return field("head_v_dim", s.head_v_dim, "must be 64 or 128");
  if (s.conv_kernel < 1 || s.conv_kernel > kMaxConvKernel)
    return field("conv_kernel", s.conv_kernel, "must be in 1.." + std::to_string(kMaxConvKernel));
  if (s.conv_dim() > (std::int64_t{1} << 30)) return field("conv_dim", s.conv_dim(), "must be at most 2^30");
  return {};
}

std::size_t workspace_bytes(const LinearAttentionShape& s) {
  return static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.conv_dim()) * sizeof(float);
}

void run(const Params& p, Stream stream) {
  const LinearAttentionShape& s = p.shape;
  if (std::string why = unsupported_reason(s); !why.empty()) throw InputError("linear_attention: " + why);
  if (p.workspace_bytes < workspace_bytes(s))
    throw InputError("linear_attention: workspace_bytes = " + std::to_string(p.workspace_bytes) + ": needs " +
                     std::to_string(workspace_bytes(s)));
  MHACFG_CHECK(p.x && p.decay && p.beta && p.conv_weight && p.state && p.o && p.workspace, "linear_attention: null tensor");
  MHACFG_CHECK(p.conv_state || s.conv_kernel == 1, "linear_attention: null conv state");
  auto* cs = static_cast<cudaStream_t>(stream);
  const int conv_dim = static_cast<int>(s.conv_dim());
  ConvArgs ca{reinterpret_cast<const bf16*>(p.x), reinterpret_cast<const bf16*>(p.conv_weight),
              reinterpret_cast<const bf16*>(p.conv_bias), reinterpret_cast<bf16*>(p.conv_state),
              static_cast<float*>(p.workspace), conv_dim, static_cast<int>(s.conv_kernel)};
  const dim3 conv_grid(static_cast<unsigned>((conv_dim + kConvThreads - 1) / kConvThreads), static_cast<unsigned>(s.batch));
  conv_kernel<<<conv_grid, kConvThreads, 0, cs>>>(ca);
  MHACFG_CUDA_CHECK_LAUNCH("linear attention convolution");
  RecurArgs ra{static_cast<const float*>(p.workspace), p.decay, p.beta, s.kind == LinearKind::mamba2 ? p.skip : nullptr,
               reinterpret_cast<bf16*>(p.state), reinterpret_cast<bf16*>(p.o), conv_dim,
               static_cast<int>(s.num_k_heads * s.head_k_dim), static_cast<int>(s.num_k_heads), static_cast<int>(s.num_v_heads)};
  if (s.head_k_dim == 128) {
    if (s.head_v_dim == 128) launch_recurrence<128, 128>(s, ra, cs);
    else launch_recurrence<128, 64>(s, ra, cs);
  } else {
    if (s.head_v_dim == 128) launch_recurrence<64, 128>(s, ra, cs);
    else launch_recurrence<64, 64>(s, ra, cs);
  }
  MHACFG_CUDA_CHECK_LAUNCH("linear attention recurrence");
}

}  // namespace mhacfg::kernels::cuda::linear_attention

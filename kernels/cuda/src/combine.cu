// The flash-decoding combine (log-sum-exp merge). One block of 256 threads per (head, sequence): the
// weights 2^(lse_s - max) go to shared memory, then each thread merges 4 consecutive output dims over
// a share of the splits (16-byte loads, coalesced, several in flight), and the shares are summed
// through shared memory. Memory-bound and small: it reads
// num_splits * v_dim * 4 bytes per head, a few percent of the KV bytes for the split counts the
// planner picks.
#include <cmath>

#include "check.hpp"
#include "combine.hpp"
#include "device_utils.cuh"
#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg::kernels::cuda::detail {

namespace {

constexpr int kMaxSplits = 1024;  // the planners' cap (SplitProblem::max_splits)
constexpr int kThreads = kCombineThreads;  // 4 dims per thread; threads a row's dims leave over take other splits
constexpr int kUnroll = kCombineUnroll;    // a thread's splits loaded together

__device__ float block_reduce(float x, bool is_max, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float y = __shfl_xor_sync(0xffffffffu, x, o);
    x = is_max ? fmaxf(x, y) : x + y;
  }
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < warps; ++w) r = is_max ? fmaxf(r, scratch[w]) : r + scratch[w];
  __syncthreads();  // scratch is reused by the next reduction
  return r;
}

__global__ void __launch_bounds__(kThreads) combine_kernel(const float* __restrict__ o_part,
                                                          const float* __restrict__ lse, bf16* __restrict__ o,
                                                          std::int64_t o_batch_stride, int num_heads, int num_splits,
                                                          int v_dim) {
  grid_dependency_wait();
  __shared__ float weight[kMaxSplits];
  __shared__ float scratch[32];
  __shared__ float4 partial[kThreads];
  const int h = blockIdx.x, b = blockIdx.y;
  const std::int64_t row = static_cast<std::int64_t>(b) * num_heads + h;
  const float* l = lse + row * num_splits;

  float mx = -INFINITY;
  for (int s = threadIdx.x; s < num_splits; s += blockDim.x) mx = fmaxf(mx, l[s]);
  mx = block_reduce(mx, true, scratch);
  float sum = 0.f;
  for (int s = threadIdx.x; s < num_splits; s += blockDim.x) {
    const float w = mx == -INFINITY ? 0.f : exp2f(l[s] - mx);
    weight[s] = w;
    sum += w;
  }
  sum = block_reduce(sum, false, scratch);  // its barrier also publishes weight[]
  const float inv = sum > 0.f ? 1.f / sum : 0.f;

  // Thread t owns 4 dims (t % lanes) of every `groups`-th split starting at t / lanes; kUnroll of its
  // splits are loaded before any is summed, so a row's loads are in flight together rather than one
  // L2 round trip per split. Measured on the H200 (MQA B1 L32768, 128 splits, Nsight Compute): one
  // split per round (the first version) and 128 threads x 4 splits per round both left the combine
  // as long as the split kernel, ~11 us; hence 256 threads x 8 (2 rounds there).
  const int lanes = min(kThreads, v_dim / 4);
  const int groups = combine_groups(v_dim);
  const int lane = threadIdx.x % lanes, g = threadIdx.x / lanes;
  const float* part = o_part + row * num_splits * v_dim;
  bf16* out = o + static_cast<std::int64_t>(b) * o_batch_stride + static_cast<std::int64_t>(h) * v_dim;
  for (int d0 = 0; d0 < v_dim; d0 += lanes * 4) {  // uniform over the block: the barriers below are safe
    const int d = d0 + lane * 4;
    const bool active = g < groups && d < v_dim;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    if (active) {
      for (int s0 = g; s0 < num_splits; s0 += groups * kUnroll) {
        float4 p[kUnroll];
        float w[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int s = s0 + u * groups;
          const int sc = s < num_splits ? s : num_splits - 1;  // in bounds; its weight is zeroed below
          w[u] = s < num_splits ? weight[sc] : 0.f;
          p[u] = *reinterpret_cast<const float4*>(part + static_cast<std::int64_t>(sc) * v_dim + d);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (w[u] == 0.f) continue;  // an empty split's partial was never written: never multiply it
          acc.x += w[u] * p[u].x;
          acc.y += w[u] * p[u].y;
          acc.z += w[u] * p[u].z;
          acc.w += w[u] * p[u].w;
        }
      }
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    if (active && g == 0) {
      for (int k = 1; k < groups; ++k) {
        const float4 q = partial[k * lanes + lane];
        acc.x += q.x;
        acc.y += q.y;
        acc.z += q.z;
        acc.w += q.w;
      }
      const std::uint32_t lo = pack_bf16x2(acc.x * inv, acc.y * inv);
      const std::uint32_t hi = pack_bf16x2(acc.z * inv, acc.w * inv);
      *reinterpret_cast<uint2*>(out + d) = make_uint2(lo, hi);
    }
    __syncthreads();  // partial[] is rewritten by the next d0
  }
}

std::size_t align_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

}  // namespace

std::size_t split_workspace_bytes(std::int64_t batch, std::int64_t num_heads, std::int64_t num_splits,
                                  std::int64_t v_dim) {
  const std::size_t rows = static_cast<std::size_t>(batch * num_heads * num_splits);
  return align_up(rows * static_cast<std::size_t>(v_dim) * sizeof(float), 256) + align_up(rows * sizeof(float), 256);
}

void require_workspace(const void* workspace, std::size_t bytes, std::size_t needed, const char* what) {
  if (needed > 0 && (!workspace || bytes < needed || reinterpret_cast<std::uintptr_t>(workspace) % 256 != 0))
    throw InputError(what, std::to_string(bytes) + " bytes", "needs " + std::to_string(needed) + " bytes, 256-byte aligned");
}

SplitWorkspace split_workspace(void* base, std::int64_t batch, std::int64_t num_heads, std::int64_t num_splits,
                               std::int64_t v_dim) {
  const std::size_t rows = static_cast<std::size_t>(batch * num_heads * num_splits);
  SplitWorkspace ws;
  ws.o_part = static_cast<float*>(base);
  ws.lse = reinterpret_cast<float*>(static_cast<char*>(base) +
                                    align_up(rows * static_cast<std::size_t>(v_dim) * sizeof(float), 256));
  return ws;
}

void launch_combine(const SplitWorkspace& ws, Bf16* o, std::int64_t o_batch_stride, int batch, int num_heads,
                    int num_splits, int v_dim, Stream stream) {
  MHACFG_CHECK(num_splits >= 1 && num_splits <= kMaxSplits, "combine: split count out of range");
  MHACFG_CHECK(v_dim >= 4 && v_dim % 4 == 0 && o_batch_stride % 4 == 0, "combine: v_dim and o stride must be multiples of 4");
  MHACFG_CHECK(reinterpret_cast<std::uintptr_t>(o) % 8 == 0, "combine: o must be 8-byte aligned");

  const dim3 grid(static_cast<unsigned>(num_heads), static_cast<unsigned>(batch), 1);
  const auto* o_part = static_cast<const float*>(ws.o_part);
  const auto* lse = static_cast<const float*>(ws.lse);
  auto* out = reinterpret_cast<bf16*>(o);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(kThreads, 1, 1);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  const cudaError_t e =
      cudaLaunchKernelEx(&cfg, combine_kernel, o_part, lse, out, o_batch_stride, num_heads, num_splits, v_dim);
  if (e != cudaSuccess) {
    // PDL refused (the attribute is not accepted everywhere): an ordinary launch is correct too, only
    // later. A real fault (sticky error) shows again in the check after this launch.
    (void)cudaGetLastError();
    combine_kernel<<<grid, kThreads, 0, stream>>>(o_part, lse, out, o_batch_stride, num_heads, num_splits, v_dim);
    MHACFG_CUDA_CHECK_LAUNCH("combine_kernel");
  }
}

}  // namespace mhacfg::kernels::cuda::detail

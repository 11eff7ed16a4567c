// The flash-decoding combine (log-sum-exp merge). One block per (head, sequence): the weights
// 2^(lse_s - max) go to shared memory, then each thread merges 4 consecutive output dims over the
// splits (16-byte loads, coalesced across the block). Memory-bound and small: it reads
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

__global__ void combine_kernel(const float* __restrict__ o_part, const float* __restrict__ lse, bf16* __restrict__ o,
                               std::int64_t o_batch_stride, int num_heads, int num_splits, int v_dim) {
  grid_dependency_wait();
  __shared__ float weight[kMaxSplits];
  __shared__ float scratch[32];
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

  const float* part = o_part + row * num_splits * v_dim;
  bf16* out = o + static_cast<std::int64_t>(b) * o_batch_stride + static_cast<std::int64_t>(h) * v_dim;
  for (int d = threadIdx.x * 4; d < v_dim; d += blockDim.x * 4) {
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int s = 0; s < num_splits; ++s) {
      const float w = weight[s];
      if (w == 0.f) continue;  // empty split: its partial was never written
      const float4 p = *reinterpret_cast<const float4*>(part + static_cast<std::int64_t>(s) * v_dim + d);
      acc.x += w * p.x;
      acc.y += w * p.y;
      acc.z += w * p.z;
      acc.w += w * p.w;
    }
    const std::uint32_t lo = pack_bf16x2(acc.x * inv, acc.y * inv);
    const std::uint32_t hi = pack_bf16x2(acc.z * inv, acc.w * inv);
    *reinterpret_cast<uint2*>(out + d) = make_uint2(lo, hi);
  }
}

std::size_t align_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

}  // namespace

std::size_t split_workspace_bytes(std::int64_t batch, std::int64_t num_heads, std::int64_t num_splits,
                                  std::int64_t v_dim) {
  const std::size_t rows = static_cast<std::size_t>(batch * num_heads * num_splits);
  return align_up(rows * static_cast<std::size_t>(v_dim) * sizeof(float), 256) + align_up(rows * sizeof(float), 256);
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
  MHACFG_CHECK(v_dim % 4 == 0 && o_batch_stride % 4 == 0, "combine: v_dim and o stride must be multiples of 4");
  MHACFG_CHECK(reinterpret_cast<std::uintptr_t>(o) % 8 == 0, "combine: o must be 8-byte aligned");
  int threads = v_dim / 4;
  threads = threads < 32 ? 32 : (threads > 128 ? 128 : (threads + 31) / 32 * 32);

  const dim3 grid(static_cast<unsigned>(num_heads), static_cast<unsigned>(batch), 1);
  const auto* o_part = static_cast<const float*>(ws.o_part);
  const auto* lse = static_cast<const float*>(ws.lse);
  auto* out = reinterpret_cast<bf16*>(o);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(threads), 1, 1);
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
    combine_kernel<<<grid, threads, 0, stream>>>(o_part, lse, out, o_batch_stride, num_heads, num_splits, v_dim);
    MHACFG_CUDA_CHECK_LAUNCH("combine_kernel");
  }
}

}  // namespace mhacfg::kernels::cuda::detail

// Device buffers, copies, fills, streams and device facts behind runtime.hpp; the CUDA/cuBLAS
// error-to-exception conversion used by every MHACFG_CUDA_CHECK.
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include <cuda_fp8.h>

#include "check.hpp"
#include "device_utils.cuh"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/kernels/cuda/runtime.hpp"

namespace mhacfg::kernels::cuda {

namespace detail {

void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
  throw RuntimeFailure(std::string("CUDA error ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + " in " +
                       expr + " at " + file + ":" + std::to_string(line));
}

void throw_cublas_error(cublasStatus_t s, const char* expr, const char* file, int line) {
  throw RuntimeFailure(std::string("cuBLAS error ") + cublasGetStatusName(s) + ": " + cublasGetStatusString(s) +
                       " in " + expr + " at " + file + ":" + std::to_string(line));
}

namespace {

// splitmix64: a counter-based hash, so element i's value does not depend on the launch shape.
__device__ __forceinline__ std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void fill_random_kernel(bf16* data, std::size_t count, std::uint64_t seed, float lo, float span) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::uint64_t h = mix(seed ^ mix(i));
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // 24 bits in [0, 1)
    data[i] = __float2bfloat16_rn(lo + span * u);
  }
}

__global__ void fill_random_fp8_kernel(__nv_fp8_storage_t* data, std::size_t count, std::uint64_t seed, float lo,
                                       float span) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::uint64_t h = mix(seed ^ mix(i));
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
    data[i] = __nv_cvt_float_to_fp8(lo + span * u, __NV_SATFINITE, __NV_E4M3);
  }
}

}  // namespace
}  // namespace detail

Bf16 to_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0) return Bf16{static_cast<std::uint16_t>((u >> 16) | 0x40u)};
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);  // to nearest, ties to even
  return Bf16{static_cast<std::uint16_t>((u + rounding) >> 16)};
}

float to_float(Bf16 x) {
  const std::uint32_t u = static_cast<std::uint32_t>(x.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) MHACFG_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);  // errors here cannot be reported; a sticky error shows at the next check
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = nullptr;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  MHACFG_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  MHACFG_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void fill_random_bf16(Bf16* data, std::size_t count, std::uint64_t seed, float lo, float hi, Stream stream) {
  if (count == 0) return;
  const int threads = 256;
  const std::size_t want = (count + threads - 1) / threads;
  const int blocks = static_cast<int>(want < 65536 ? want : 65536);
  detail::fill_random_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<detail::bf16*>(data), count, seed, lo,
                                                             hi - lo);
  MHACFG_CUDA_CHECK_LAUNCH("fill_random_kernel");
}

void fill_random_fp8_e4m3(Fp8E4m3* data, std::size_t count, std::uint64_t seed, float lo, float hi, Stream stream) {
  if (count == 0) return;
  const int threads = 256;
  const std::size_t want = (count + threads - 1) / threads;
  const int blocks = static_cast<int>(want < 65536 ? want : 65536);
  detail::fill_random_fp8_kernel<<<blocks, threads, 0, stream>>>(data, count, seed, lo, hi - lo);
  MHACFG_CUDA_CHECK_LAUNCH("fill_random_fp8_kernel");
}

void fill_bytes(void* data, std::uint8_t value, std::size_t bytes, Stream stream) {
  MHACFG_CUDA_CHECK(cudaMemsetAsync(data, value, bytes, stream));
}

Stream create_stream() {
  cudaStream_t s = nullptr;
  MHACFG_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

void destroy_stream(Stream stream) noexcept {
  if (stream) cudaStreamDestroy(stream);
}

void synchronize(Stream stream) { MHACFG_CUDA_CHECK(cudaStreamSynchronize(stream)); }

void set_device(int device) { MHACFG_CUDA_CHECK(cudaSetDevice(device)); }

int current_device() {
  int d = 0;
  MHACFG_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

const DeviceInfo& device_info(int device) {
  static std::mutex mu;
  static std::map<int, DeviceInfo> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(device);
  if (it != cache.end()) return it->second;
  cudaDeviceProp prop{};
  MHACFG_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.name = prop.name;
  info.compute_capability_major = prop.major;
  info.compute_capability_minor = prop.minor;
  int v = 0;
  MHACFG_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device));
  info.sm_count = v;
  MHACFG_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, device));
  info.l2_bytes = v;
  MHACFG_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  info.smem_per_block_optin_bytes = v;
  info.total_memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  MHACFG_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrCooperativeLaunch, device));
  info.cooperative_launch = v != 0;
  return cache.emplace(device, info).first->second;
}

std::int64_t free_device_memory_bytes() {
  std::size_t free_bytes = 0, total = 0;
  MHACFG_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return static_cast<std::int64_t>(free_bytes);
}

}  // namespace mhacfg::kernels::cuda

// The plain-C++ face of the CUDA runtime that the kernels, the harness and the tests share: the
// stream type, bf16 storage, owning device buffers, fills and device facts. Includes no CUDA header,
// so the CLI and the tests compile with the host compiler alone. Every call checks the CUDA status
// and throws mhacfg::RuntimeFailure naming the CUDA error and file:line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

struct CUstream_st;

namespace mhacfg::kernels::cuda {

// The same type as cudaStream_t; nullptr is the legacy default stream.
using Stream = CUstream_st*;

// bf16 storage: the upper 16 bits of an IEEE-754 float.
struct Bf16 {
  std::uint16_t bits = 0;
};
Bf16 to_bf16(float x);  // round to nearest even; NaN stays a (quiet) NaN
float to_float(Bf16 x);
// 0xFFFF: a NaN in bf16. fill_bytes(..., kPoisonByte, ...) poisons outputs before a run.
constexpr std::uint8_t kPoisonByte = 0xFF;
// fp8 E4M3 storage (torch.float8_e4m3fn, CUDA's __nv_fp8_e4m3): one code per byte, largest finite 448,
// no infinities, 0x7f/0xff NaN. The host converts with kernels/cpu/fp8.hpp (one conversion in the
// project); a tensor's values are its codes times its fp32 scale.
using Fp8E4m3 = std::uint8_t;

// Owning device allocation (cudaMalloc). Movable, not copyable.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Synchronous copies (cudaMemcpy).
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);

// Uniform random bf16 values in [lo, hi) from a counter-based hash of (seed, index): the same seed
// gives the same data on every device.
void fill_random_bf16(Bf16* data, std::size_t count, std::uint64_t seed, float lo, float hi, Stream stream);
// The same uniform values in [lo, hi) (same hash), rounded to e4m3 (to nearest, saturating at +-448):
// the benchmark's fp8 inputs.
void fill_random_fp8_e4m3(Fp8E4m3* data, std::size_t count, std::uint64_t seed, float lo, float hi, Stream stream);
void fill_bytes(void* data, std::uint8_t value, std::size_t bytes, Stream stream);

Stream create_stream();  // non-blocking stream
void destroy_stream(Stream stream) noexcept;
void synchronize(Stream stream);
void set_device(int device);
int current_device();

struct DeviceInfo {
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t smem_per_block_optin_bytes = 0;  // most dynamic shared memory one block may opt into
  std::int64_t total_memory_bytes = 0;
  bool cooperative_launch = false;  // grids with a grid-wide barrier (every block resident)
};
// Cached per device after the first call.
const DeviceInfo& device_info(int device);
std::int64_t free_device_memory_bytes();

}  // namespace mhacfg::kernels::cuda

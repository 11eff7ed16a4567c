// Shape checks shared by the CPU attention kernels' supports() functions. Every reason is one line
// that names the field and its value ("window = 64: ...").
#pragma once

#include <cstdint>
#include <string>

#include "mhacfg/costmodel/ops.hpp"

namespace mhacfg::kernels::cpu::detail {

// Largest head_dim (or MLA latent width) the tile buffers are sized for.
inline constexpr std::int64_t kMaxHeadDim = 1024;
inline constexpr std::int64_t kMaxMlaLatentDim = 2048;

std::string field_reason(const char* field, std::int64_t value, const std::string& why);

// Checks every kernel shares: positive sizes, q_len <= kv_len, window semantics, and (for non-MLA
// shapes) head counts and head dims.
std::string common_attention_reason(const AttentionShape& s);

// The scale applied to Q K^T: `requested`, or 1/sqrt(qk_dim) when it is 0.
float softmax_scale_or_default(float requested, std::int64_t qk_dim);

}  // namespace mhacfg::kernels::cpu::detail

// The defaults the commands share, stated once: the options structs, the flags' help and the reports
// read them from here (docs/commands.md states them for users).
#pragma once

#include <cstdint>

namespace mhacfg {

namespace defaults {
inline constexpr const char* target = "h100-sxm";   // --target: a datasheet profile, said so in every output
inline constexpr double memory_fraction = 0.9;      // of device memory for weights + KV; the rest is the engine's
inline constexpr std::int64_t context = 8192;       // recommend's --context
inline constexpr std::int64_t max_batch = 1024;     // the batch search (and an unbounded model's batch) stops here
inline constexpr std::int64_t output_len = 1024;    // recommend's --output-len: tokens a request generates
// Designs whose scores differ by less than the prediction's expected error share a rank; where the
// profile states none (a bare roofline), this fraction is taken and said so.
inline constexpr double unknown_error = 0.10;
}  // namespace defaults

// Defaults for a model given only by flags (stated in the README and in every output's "model").
struct CustomDefaults {
  static constexpr std::int64_t vocab_size = 32000;
  static constexpr std::int64_t mla_rope_head_dim = 64;
  static constexpr std::int64_t mla_head_dim = 192;  // qk_nope 128 + rope 64, as DeepSeek-V2/V3
  static constexpr std::int64_t mla_v_head_dim = 128;
  static constexpr std::int64_t indexer_heads = 64;     // a sparse-attention indexer's, as DeepSeek-V3.2's
  static constexpr std::int64_t indexer_head_dim = 128;
};

}  // namespace mhacfg

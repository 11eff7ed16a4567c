// The attention op's time-model features, and the work decomposition of mhacfg's CPU prefill kernel
// they count with (masked pairs computed, key tiles per query tile).
#include <algorithm>
#include <utility>

#include "mhacfg/costmodel/ops/attention.hpp"

namespace mhacfg {

namespace {

// Calls visit(rows, begin, end, count) for the query tiles of the CPU prefill kernel over one sequence
// and one KV head: `rows` = positions x group, all against keys [begin, end), for `count` consecutive
// tiles alike in rows and in end - begin (what the counts below read). Without a causal mask every full
// tile is alike, and so is every full tile of a sliding window once the window has left key 0; the
// others are visited one by one (a causal mask without a window is counted in closed form by the callers),
// so a 2-billion-token prompt costs a few calls, not one per tile.
template <class Visit>
void for_each_cpu_prefill_tile(const AttentionShape& s, const CpuKernelFacts& facts, Visit&& visit) {
  const std::int64_t group = s.num_q_heads / s.kv_heads();
  const std::int64_t block = std::min(s.q_len, std::max<std::int64_t>(1, facts.prefill_tile_rows / group));
  const std::int64_t off = s.kv_len - s.q_len;  // queries are the last q_len positions
  const std::int64_t full = s.q_len / block;
  std::int64_t alike_from = full;  // the first full tile from which all full tiles are alike
  if (!s.causal) alike_from = 0;
  else if (s.window > 0) alike_from = std::clamp<std::int64_t>((s.window - 1 - off + block - 1) / block, 0, full);
  auto tile = [&](std::int64_t first, std::int64_t n, std::int64_t count) {
    const std::int64_t first_pos = off + first, last_pos = first_pos + n - 1;
    const std::int64_t begin = s.causal ? first_visible_key(first_pos, s.window, s.chunk) : 0;
    visit(n * group, begin, s.causal ? last_pos + 1 : s.kv_len, count);
  };
  for (std::int64_t j = 0; j < alike_from; ++j) tile(j * block, block, 1);
  if (alike_from < full) tile(alike_from * block, block, full - alike_from);
  if (s.q_len % block != 0) tile(full * block, s.q_len % block, 1);
}

// Sum over i in [0, n) of floor((a i + b) / m), for n >= 0, m > 0, a, b >= 0, in a logarithmic number of
// steps (the floor-sum recursion: reduce a and b modulo m, then swap the roles of a and m). 128-bit.
WideCount floor_sum(WideCount n, WideCount m, WideCount a, WideCount b) {
  WideCount sum = 0;
  while (true) {
    if (a >= m) {
      sum += n * (n - 1) / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      sum += n * (b / m);
      b %= m;
    }
    const WideCount y_max = a * n + b;
    if (y_max < m) return sum;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
}

}  // namespace

double cpu_prefill_pairs_computed(const AttentionShape& s, const CpuKernelFacts& facts) {
  const double q = static_cast<double>(s.q_len), kv = static_cast<double>(s.kv_len);
  if (!s.causal) return q * kv;
  const std::int64_t group = s.num_q_heads / s.kv_heads();
  if (s.window <= 0 && s.chunk <= 0) {
    // Block j's positions see keys [0, off + (j + 1) P); a partial last block sees all kv_len.
    const std::int64_t block = std::min(s.q_len, std::max<std::int64_t>(1, facts.prefill_tile_rows / group));
    const double P = static_cast<double>(block), nb = static_cast<double>(s.q_len / block);
    const double off = static_cast<double>(s.kv_len - s.q_len);  // queries are the last q_len positions
    return P * (nb * off + P * nb * (nb + 1) / 2) + static_cast<double>(s.q_len % block) * kv;
  }
  double pairs = 0;  // a window or chunks: keys [first_visible_key(first), last + 1) per block
  for_each_cpu_prefill_tile(s, facts, [&](std::int64_t rows, std::int64_t begin, std::int64_t end, std::int64_t count) {
    pairs += static_cast<double>(rows / group) * static_cast<double>(end - begin) * static_cast<double>(count);
  });
  return pairs;
}

double cpu_prefill_tile_rows(const AttentionShape& s, const CpuKernelFacts& facts) {
  const std::int64_t K = facts.prefill_key_tile;
  if (s.causal && s.window <= 0 && s.chunk <= 0) {
    // Full tile j (P positions) sees keys [0, off + (j + 1) P): ceil((off + (j + 1) P) / K) key tiles; a
    // partial last tile sees all kv_len keys.
    const std::int64_t group = s.num_q_heads / s.kv_heads();
    const std::int64_t P = std::min(s.q_len, std::max<std::int64_t>(1, facts.prefill_tile_rows / group));
    const std::int64_t full = s.q_len / P, off = s.kv_len - s.q_len;
    const WideCount key_tiles = floor_sum(full, K, P, WideCount(off) + P + K - 1);
    return static_cast<double>(group) * (static_cast<double>(P) * static_cast<double>(key_tiles) +
                                         static_cast<double>(s.q_len % P) * static_cast<double>((s.kv_len + K - 1) / K));
  }
  double total = 0;
  for_each_cpu_prefill_tile(s, facts, [&](std::int64_t rows, std::int64_t begin, std::int64_t end, std::int64_t count) {
    total += static_cast<double>(rows * ((end - begin + K - 1) / K)) * static_cast<double>(count);
  });
  return total;
}

OpFeatures op_features(const AttentionShape& s, DType dtype, const CpuKernelFacts& facts) {
  OpFeatures f;
  f.flop = static_cast<double>(attention_flops(s));
  f.bytes = static_cast<double>(attention_bytes(s, dtype));
  f.head_dim = static_cast<double>(s.qk_dim());
  f.causal = s.causal && s.q_len > 1 ? 1.0 : 0.0;
  // The largest unit: one query tile (or all q_len rows of a decode) of one head against every key
  // it sees; counted through attention_flops so the convention stays the costmodel's.
  AttentionShape unit = s;
  unit.batch = 1;
  unit.num_q_heads = 1;
  unit.num_kv_heads = 1;
  unit.q_len = std::min<std::int64_t>(s.q_len, attention_tile_rows(s.qk_dim()));
  unit.causal = false;
  unit.kv_len = attention_kv_tokens_read(s);
  if (s.chunk > 0) {  // a row sees at most its chunk's keys, as the window caps a windowed unit's rows
    unit.kv_len = std::min(unit.kv_len, s.chunk);
    unit.chunk = 0;
  }
  f.unit_flop = static_cast<double>(attention_flops(unit));
  // Decode kernels parallelise over sequences and KV heads (each streams its K/V); prefill kernels
  // over query tiles of every head.
  const std::int64_t tiles = (s.q_len + attention_tile_rows(s.qk_dim()) - 1) / attention_tile_rows(s.qk_dim());
  const bool decode = s.q_len <= kDecodeMaxQueries;
  f.streams = static_cast<double>(decode ? s.batch * s.kv_heads() : s.batch * s.num_q_heads * tiles);
  // Rows multiplied against each K/V tile: the group's queries (decode), or a query tile of every
  // head in the group (kernels that share K/V tiles across a GQA group; a fit finds r_half near
  // zero for kernels that do not).
  const std::int64_t group = s.num_q_heads / s.kv_heads();
  f.rows = static_cast<double>(group * (decode ? s.q_len : std::min<std::int64_t>(s.q_len, attention_tile_rows(s.qk_dim()))));
  f.softmax = static_cast<double>(attention_pairs(s)) *
              static_cast<double>(s.batch) * static_cast<double>(s.num_q_heads);
  if (!decode) {
    const double exact = static_cast<double>(attention_pairs(s));
    if (exact > 0) f.masked_flop = f.flop * std::max(0.0, cpu_prefill_pairs_computed(s, facts) / exact - 1.0);
    f.tile_elements = cpu_prefill_tile_rows(s, facts) * static_cast<double>(s.batch * s.kv_heads() * (s.qk_dim() + s.v_dim()));
  }
  if (decode) {
    f.elements = static_cast<double>(attention_kv_elements(s));
    f.widened = dtype == DType::fp32 ? 0.0 : f.elements;
  }
  return with_kernel_facts(f, facts);
}

}  // namespace mhacfg

#include "mhacfg/costmodel/time_model.hpp"

#include <algorithm>
#include <cmath>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg {

std::int64_t attention_tile_rows(std::int64_t head_dim) { return head_dim > 128 ? 64 : 128; }

namespace {

// Calls visit(rows, begin, end) for each query tile of the CPU prefill kernel over one sequence and
// one KV head: `rows` = positions x group, all of them against keys [begin, end).
template <class Visit>
void for_each_cpu_prefill_tile(const AttentionShape& s, Visit&& visit) {
  const std::int64_t group = s.num_q_heads / s.kv_heads();
  const std::int64_t block = std::min(s.q_len, std::max<std::int64_t>(1, kCpuPrefillTileRows / group));
  for (std::int64_t first = 0; first < s.q_len; first += block) {
    const std::int64_t n = std::min(block, s.q_len - first);
    const std::int64_t first_pos = s.kv_len - s.q_len + first, last_pos = first_pos + n - 1;
    const std::int64_t begin = s.causal ? first_visible_key(first_pos, s.window, s.chunk) : 0;
    visit(n * group, begin, s.causal ? last_pos + 1 : s.kv_len);
  }
}

}  // namespace

double cpu_prefill_pairs_computed(const AttentionShape& s) {
  const double q = static_cast<double>(s.q_len), kv = static_cast<double>(s.kv_len);
  if (!s.causal) return q * kv;
  const std::int64_t group = s.num_q_heads / s.kv_heads();
  if (s.window <= 0 && s.chunk <= 0) {
    // Block j's positions see keys [0, off + (j + 1) P); a partial last block sees all kv_len.
    const std::int64_t block = std::min(s.q_len, std::max<std::int64_t>(1, kCpuPrefillTileRows / group));
    const double P = static_cast<double>(block), nb = static_cast<double>(s.q_len / block);
    const double off = static_cast<double>(s.kv_len - s.q_len);  // queries are the last q_len positions
    return P * (nb * off + P * nb * (nb + 1) / 2) + static_cast<double>(s.q_len % block) * kv;
  }
  double pairs = 0;  // a window or chunks: keys [first_visible_key(first), last + 1) per block
  for_each_cpu_prefill_tile(s, [&](std::int64_t rows, std::int64_t begin, std::int64_t end) {
    pairs += static_cast<double>(rows / group) * static_cast<double>(end - begin);
  });
  return pairs;
}

double cpu_prefill_tile_rows(const AttentionShape& s) {
  double total = 0;
  for_each_cpu_prefill_tile(s, [&](std::int64_t rows, std::int64_t begin, std::int64_t end) {
    total += static_cast<double>(rows * ((end - begin + kCpuPrefillKeyTile - 1) / kCpuPrefillKeyTile));
  });
  return total;
}

OpFeatures op_features(const AttentionShape& s, DType dtype) {
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
    if (exact > 0) f.masked_flop = f.flop * std::max(0.0, cpu_prefill_pairs_computed(s) / exact - 1.0);
    f.tile_elements = cpu_prefill_tile_rows(s) * static_cast<double>(s.batch * s.kv_heads() * (s.qk_dim() + s.v_dim()));
  }
  if (decode) {
    f.elements = static_cast<double>(attention_kv_elements(s));
    f.widened = dtype == DType::fp32 ? 0.0 : f.elements;
  }
  return f;
}

OpFeatures op_features(const GemmShape& g, DType dtype) {
  OpFeatures f;
  f.flop = static_cast<double>(gemm_flops(g));
  f.bytes = static_cast<double>(gemm_bytes(g, dtype));
  f.streams = static_cast<double>(((g.m + 127) / 128) * ((g.n + 127) / 128));  // 128x128 output tiles
  f.rows = static_cast<double>(g.m);
  // Weight (B) elements a blocked GEMM packs on every call, a cost per call that few rows cannot
  // amortise; the CPU kernels' skinny GEMM (m <= kCpuSkinnyGemmRows) reads B in place instead.
  f.elements = g.m > kCpuSkinnyGemmRows ? static_cast<double>(g.k) * static_cast<double>(g.n) : 0.0;
  // The skinny kernel (kernels/cpu/src/gemm.cpp) streams B through register blocks of 4, 2 and 1
  // rows: one load of B feeds a block's FMAs, so its time follows the loads, not the FLOPs.
  f.skinny_elements = g.m > kCpuSkinnyGemmRows ? 0.0 : static_cast<double>(g.k) * static_cast<double>(g.n);
  return f;
}

OpFeatures op_features(const LinearAttentionShape& s, DType dtype) {
  OpFeatures f;
  f.flop = static_cast<double>(linear_attention_flops(s));
  f.bytes = static_cast<double>(linear_attention_bytes(s, dtype));
  f.streams = static_cast<double>(s.batch) * static_cast<double>(s.num_v_heads);
  f.rows = static_cast<double>(s.q_len);
  f.unit_flop = f.flop / std::max(1.0, f.streams);
  const double cells = f.streams * static_cast<double>(s.head_k_dim) * static_cast<double>(s.head_v_dim);
  f.elements = cells * static_cast<double>(s.q_len) * static_cast<double>(cpu_linear_state_passes(s.kind));
  const double blocks = std::ceil(static_cast<double>(s.q_len) / static_cast<double>(kCpuLinearTokenBlock));
  f.widened = dtype == DType::fp32 ? 0.0 : 2.0 * cells * blocks;
  return f;
}

double cpu_indexer_keys_dequantised(const IndexerShape& s) {
  const std::int64_t tile = cpu_indexer_tile_queries(s.num_heads);
  double keys = 0;
  for (std::int64_t q1 = std::min(tile, s.q_len);; q1 = std::min(q1 + tile, s.q_len)) {
    keys += static_cast<double>(s.kv_len - s.q_len + q1);  // the tile's last query sees these
    if (q1 == s.q_len) break;
  }
  return keys * static_cast<double>(s.batch) * static_cast<double>(s.head_dim);
}

double cpu_indexer_scores_selected(const IndexerShape& s) {
  // Query t sees kv_len - q_len + t + 1 keys: the counts from lo = max(kv_len - q_len + 1, topk + 1) to kv_len.
  const double lo = static_cast<double>(std::max(s.kv_len - s.q_len + 1, s.topk + 1)), hi = static_cast<double>(s.kv_len);
  if (lo > hi) return 0.0;
  return static_cast<double>(s.batch) * (lo + hi) * (hi - lo + 1) / 2.0;
}

OpFeatures op_features(const IndexerShape& s) {
  OpFeatures f;
  f.flop = static_cast<double>(indexer_flops(s));
  f.bytes = static_cast<double>(indexer_bytes(s));
  f.head_dim = static_cast<double>(s.head_dim);
  const std::int64_t tile = std::min(s.q_len, cpu_indexer_tile_queries(s.num_heads));
  const double pairs = static_cast<double>(s.batch) * static_cast<double>(attention_pairs(s.q_len, s.kv_len, true, 0));
  const double query_tiles = static_cast<double>((s.q_len + tile - 1) / tile);
  const double key_tiles = static_cast<double>((s.kv_len + kCpuIndexerKeyTile - 1) / kCpuIndexerKeyTile);
  f.streams = static_cast<double>(s.batch) * query_tiles * key_tiles;
  f.rows = static_cast<double>(tile * s.num_heads);
  f.unit_flop = static_cast<double>(tile * std::min(s.kv_len, kCpuIndexerKeyTile)) * 2.0 *
                static_cast<double>(s.num_heads) * static_cast<double>(s.head_dim + 1);
  f.softmax = pairs * static_cast<double>(s.num_heads);
  f.elements = cpu_indexer_keys_dequantised(s);
  f.tile_elements = cpu_indexer_scores_selected(s);
  return f;
}

double row_passes(double rows, double row_block) {
  if (row_block < 1) return 1.0;
  // Greedy blocks of row_block, row_block / 2, ..., 1 rows (a power of two).
  auto r = static_cast<std::int64_t>(std::llround(std::max(rows, 1.0)));
  double passes = 0;
  for (auto b = static_cast<std::int64_t>(row_block); b >= 1; b /= 2) {
    passes += static_cast<double>(r / b);
    r %= b;
  }
  return passes;
}

double predict_seconds(const OpModel& m, const OpFeatures& f) {
  double eta = 1.0;
  if (m.head_dim_scale > 0 && f.head_dim > 0) eta = 1.0 - std::exp(-f.head_dim / m.head_dim_scale);
  if (m.rows_half > 0) eta *= 1.0 - std::exp(-f.rows / m.rows_half);
  eta /= 1.0 + m.causal_factor * f.causal;
  const double u = m.half_streams > 0 ? 1.0 / (1.0 + std::pow(m.half_streams / f.streams, m.stream_exponent)) : 1.0;
  const double work = f.flop + m.masked_weight * f.masked_flop;
  double compute = m.peak_flop_per_s > 0 ? work / (m.peak_flop_per_s * eta * u) : 0.0;
  if (m.skinny_rate > 0 && f.skinny_elements > 0)
    compute = f.skinny_elements * row_passes(f.rows, static_cast<double>(kCpuRowBlock)) / m.skinny_rate;
  if (m.softmax_rate > 0) compute += f.softmax / m.softmax_rate;
  if (m.tile_rate > 0) compute += f.tile_elements / m.tile_rate;
  // Register-blocked decode re-reads the K/V tile once per row block; beyond kCpuDecodeSmallRows
  // rows the kernel packs it once for Eigen's GEMM.
  const double passes = f.rows > static_cast<double>(kCpuDecodeSmallRows) ? 1.0 : row_passes(f.rows, m.row_block);
  if (m.load_rate > 0) compute += f.elements * passes / m.load_rate;
  if (m.widen_rate > 0) compute += f.widened * passes / m.widen_rate;
  double memory = 0.0;
  if (m.bw_bytes_per_s > 0) {
    // Hit fraction of a working set of B bytes re-read call after call: ~1 below the capacity,
    // falling steeply above it (a streaming sweep larger than an LRU-like cache evicts itself).
    const double resident = std::max(f.bytes, f.resident_bytes);
    const double hit = m.cache_bytes > 0 && m.cache_bw_bytes_per_s > 0 ? 1.0 / (1.0 + std::pow(resident / m.cache_bytes, 4.0)) : 0.0;
    memory = (hit > 0 ? f.bytes * hit / m.cache_bw_bytes_per_s : 0.0) + f.bytes * (1.0 - hit) / (m.bw_bytes_per_s * u);
    compute *= 1.0 + m.miss_slowdown * (1.0 - hit);
  }
  const double span = m.slots > 0 && m.peak_flop_per_s > 0 ? f.unit_flop * m.slots / (m.peak_flop_per_s * eta) : 0.0;
  double body = 0;
  if (m.overlap) {
    body = std::max(compute, memory);
  } else if (m.combine_excess > 0) {  // (C^k + M^k)^(1/k), scaled by the larger term against overflow
    const double k = 1.0 + m.combine_excess, big = std::max(compute, memory);
    body = big > 0 ? big * std::pow(std::pow(compute / big, k) + std::pow(memory / big, k), 1.0 / k) : 0.0;
  } else {
    body = compute + memory;
  }
  return m.t0_s + std::max(body, span);
}

OpModel roofline_model(double peak_flop_per_s, double bw_bytes_per_s) {
  OpModel m;
  m.peak_flop_per_s = peak_flop_per_s;
  m.bw_bytes_per_s = bw_bytes_per_s;
  m.overlap = true;
  return m;
}

namespace {
using Field = std::pair<const char*, double OpModel::*>;
const std::vector<Field>& model_rates() {
  static const std::vector<Field> v = {{"peak_flop_per_s", &OpModel::peak_flop_per_s}, {"bw_bytes_per_s", &OpModel::bw_bytes_per_s},
                                       {"cache_bw_bytes_per_s", &OpModel::cache_bw_bytes_per_s}, {"softmax_rate", &OpModel::softmax_rate},
                                       {"load_rate", &OpModel::load_rate}, {"tile_rate", &OpModel::tile_rate},
                                       {"skinny_rate", &OpModel::skinny_rate}, {"widen_rate", &OpModel::widen_rate}};
  return v;
}
const std::vector<Field>& model_exponents() {
  static const std::vector<Field> v = {{"stream_exponent", &OpModel::stream_exponent}, {"combine_excess", &OpModel::combine_excess}};
  return v;
}
const std::vector<Field>& model_counts() {
  static const std::vector<Field> v = {{"half_streams", &OpModel::half_streams}, {"rows_half", &OpModel::rows_half},
                                       {"head_dim_scale", &OpModel::head_dim_scale}, {"slots", &OpModel::slots},
                                       {"row_block", &OpModel::row_block}};
  return v;
}
}  // namespace

OpModel within_limits(OpModel m) {
  for (const auto& [key, field] : model_rates())
    if (m.*field != 0 && m.*field < kMinModelRate) m.*field = kMinModelRate;
  for (const auto& [key, field] : model_exponents()) m.*field = std::min(m.*field, kMaxModelExponent);
  for (const auto& [key, field] : model_counts()) m.*field = std::min(m.*field, kMaxModelCount);
  return m;
}

nlohmann::json op_model_to_json(const OpModel& m) {
  return {{"t0_s", m.t0_s},
          {"peak_flop_per_s", m.peak_flop_per_s},
          {"head_dim_scale", m.head_dim_scale},
          {"causal_factor", m.causal_factor},
          {"slots", m.slots},
          {"bw_bytes_per_s", m.bw_bytes_per_s},
          {"half_streams", m.half_streams},
          {"stream_exponent", m.stream_exponent},
          {"rows_half", m.rows_half},
          {"cache_bytes", m.cache_bytes},
          {"cache_bw_bytes_per_s", m.cache_bw_bytes_per_s},
          {"softmax_rate", m.softmax_rate},
          {"load_rate", m.load_rate},
          {"combine_excess", m.combine_excess},
          {"miss_slowdown", m.miss_slowdown},
          {"row_block", m.row_block},
          {"masked_weight", m.masked_weight},
          {"tile_rate", m.tile_rate},
          {"skinny_rate", m.skinny_rate},
          {"widen_rate", m.widen_rate},
          {"overlap", m.overlap}};
}

OpModel op_model_from_json(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  auto get = [&](const char* key) {
    const double v = f.optional_number(key).value_or(0.0);
    if (v < 0) throw InputError(f.name(key), json_value_text(j.at(key)), "must not be negative");
    return v;
  };
  OpModel m;
  m.t0_s = get("t0_s");
  m.peak_flop_per_s = get("peak_flop_per_s");
  m.head_dim_scale = get("head_dim_scale");
  m.causal_factor = get("causal_factor");
  m.slots = get("slots");
  m.bw_bytes_per_s = get("bw_bytes_per_s");
  m.half_streams = get("half_streams");
  m.stream_exponent = f.optional_number("stream_exponent").value_or(1.0);
  m.rows_half = get("rows_half");
  m.cache_bytes = get("cache_bytes");
  m.cache_bw_bytes_per_s = get("cache_bw_bytes_per_s");
  m.softmax_rate = get("softmax_rate");
  m.load_rate = get("load_rate");
  m.combine_excess = get("combine_excess");
  m.miss_slowdown = get("miss_slowdown");
  m.row_block = get("row_block");
  m.masked_weight = get("masked_weight");
  m.tile_rate = get("tile_rate");
  m.skinny_rate = get("skinny_rate");
  m.widen_rate = get("widen_rate");
  if (m.stream_exponent <= 0) throw InputError(f.name("stream_exponent"), json_value_text(j.at("stream_exponent")), "must be positive");
  // The limits of within_limits (time_model.hpp), checked rather than applied: a file outside them is
  // an input error.
  for (const auto& [key, field] : model_rates()) {
    const double v = m.*field;
    if (v != 0 && v < kMinModelRate)
      throw InputError(f.name(key), json_value_text(j.at(key)), "must be 0 (unused) or at least 1e3 per second");
  }
  for (const auto& [key, field] : model_exponents())
    if (m.*field > kMaxModelExponent) throw InputError(f.name(key), json_value_text(j.at(key)), "must be at most 64");
  for (const auto& [key, field] : model_counts())
    if (m.*field > kMaxModelCount) throw InputError(f.name(key), json_value_text(j.at(key)), "must be at most 1e9");
  m.overlap = f.optional_bool("overlap", false);
  if (m.peak_flop_per_s <= 0 && m.bw_bytes_per_s <= 0)
    throw InputError(f.name("peak_flop_per_s"), "0", "a model needs peak_flop_per_s or bw_bytes_per_s");
  return m;
}

}  // namespace mhacfg

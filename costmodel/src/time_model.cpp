#include "mhacfg/costmodel/time_model.hpp"

#include <algorithm>
#include <cmath>

#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"

namespace mhacfg {

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
    compute = f.skinny_elements * row_passes(f.rows, f.skinny_row_block) / m.skinny_rate;
  if (m.softmax_rate > 0) compute += f.softmax / m.softmax_rate;
  if (m.tile_rate > 0) compute += f.tile_elements / m.tile_rate;
  // Register-blocked decode re-reads the K/V tile once per row block; beyond small_rows_max rows the
  // kernel packs it once for Eigen's GEMM.
  const double passes = f.rows > f.small_rows_max ? 1.0 : row_passes(f.rows, m.row_block);
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

// The CPU side of bench.hpp: which records the CPU kernels run, timing them, and the machine
// ceilings they are quoted against (Eigen SGEMM FLOP/s, streaming read bytes/s) with the same threads.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "ceiling_calls.hpp"
#include "cpu_calls.hpp"
#include "inputs.hpp"
#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/io.hpp"
#include "mhacfg/kernels/bench.hpp"
#include "mhacfg/kernels/cpu/stream_read.hpp"
#include "timing.hpp"

namespace mhacfg::kernels {

namespace {

constexpr const char* kCpuBackend = "mhacfg-cpu";

// Rounds every record gets even when the time budget has run out.
constexpr int kMinRounds = 5;

// Inputs may use at most this fraction of physical memory.
constexpr double kMaxMemoryFraction = 0.75;

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

void check_threads(const BenchOptions& o) {
  if (o.threads < 1) throw InputError("threads", std::to_string(o.threads), "must be at least 1");
}

std::string gib(double bytes) {
  std::ostringstream s;
  s.precision(3);
  s << bytes / double(std::int64_t{1} << 30) << " GiB";
  return s.str();
}

}  // namespace

namespace detail {

std::function<void()> prepare_gemm_call(const GemmShape& g, int threads) {
  MeasurementRecord r;
  r.shape = GemmOp{g};
  r.dtype = DType::fp32;
  return prepare_cpu_call(r, threads);
}

std::function<void()> prepare_read_calls(std::int64_t total_bytes, std::int64_t slice_bytes, int threads) {
  MHACFG_CHECK(slice_bytes > 0 && total_bytes % slice_bytes == 0, "a read buffer of whole slices");
  const std::int64_t count = total_bytes / static_cast<std::int64_t>(sizeof(float));
  const std::int64_t slice = slice_bytes / static_cast<std::int64_t>(sizeof(float));
  auto buf = std::make_shared<Buffer<float>>(random_buffer<float>(count, 9, threads));
  auto sink = std::make_shared<double>(0.0);  // keeps the sum observable
  auto next = std::make_shared<std::int64_t>(0);
  return [buf, sink, next, slice, count, threads] {
    *sink += cpu::stream_read_sum({buf->data() + *next, slice, threads});
    *next = (*next + slice) % count;
  };
}

}  // namespace detail

std::string cpu_unsupported_reason(const MeasurementRecord& r) {
  if (std::string why = detail::cpu_call_unsupported_reason(r); !why.empty()) return why;
  double need = 0;
  try {
    need = static_cast<double>(detail::cpu_call_bytes(r));
  } catch (const InputError& e) {  // a count that overflows 64 bits: far too big to allocate
    return e.what();
  }
  const double have = physical_memory_bytes();
  if (have > 0 && need > kMaxMemoryFraction * have) {
    const std::string field = r.op() == OpKind::gemm               ? "m = " + std::to_string(r.gemm().m)
                              : r.op() == OpKind::indexer          ? "kv_len = " + std::to_string(r.indexer().kv_len)
                              : r.op() == OpKind::linear_attention ? "batch = " + std::to_string(r.linear().batch) + ", q_len = " +
                                                                       std::to_string(r.linear().q_len)
                                                                 : "kv_len = " + std::to_string(r.attention().kv_len);
    return field + ": the inputs need " + gib(need) + ", more than 3/4 of this machine's " + gib(have);
  }
  return {};
}

std::vector<Measurement> measure_cpu_rounds(const std::vector<MeasurementRecord>& rs, const BenchOptions& o,
                                            const std::function<void(std::size_t, std::size_t, std::size_t)>& progress) {
  check_threads(o);
  if (o.repetitions < 1) throw InputError("repetitions", std::to_string(o.repetitions), "must be at least 1");
  for (std::size_t i = 0; i < rs.size(); ++i)
    if (std::string why = cpu_unsupported_reason(rs[i]); !why.empty())
      throw InputError("record " + std::to_string(i + 1), json_text(record_to_json(rs[i])), why);
  // Inputs allocated once while they fit in half the memory; the rest afresh each round.
  std::vector<std::function<void()>> kept(rs.size());
  double kept_bytes = 0;
  const double budget = 0.5 * physical_memory_bytes();
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const double bytes = static_cast<double>(detail::cpu_call_bytes(rs[i]));
    if (kept_bytes + bytes > budget) continue;
    kept_bytes += bytes;
    kept[i] = detail::prepare_cpu_call(rs[i], o.threads);
  }
  // Per record: every timed call, and the fastest call of each round.
  std::vector<std::vector<double>> calls(rs.size()), round_best(rs.size());
  const auto time_one = [&](std::size_t i) {
    const std::function<void()> call = kept[i] ? kept[i] : detail::prepare_cpu_call(rs[i], o.threads);
    // Warm-up (caches and branch state back after the other records ran); its time sizes the round:
    // single calls, each timed alone, for at least min_time_s (1 to 64 calls).
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const double warm = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int n = static_cast<int>(std::clamp(std::ceil(o.min_time_s / std::max(warm, 1e-7)), 1.0, 64.0));
    const detail::Timing t = detail::time_single_calls(rs[i].op_class(), call, n);
    calls[i].insert(calls[i].end(), t.per_call_s.begin(), t.per_call_s.end());
    round_best[i].push_back(*std::min_element(t.per_call_s.begin(), t.per_call_s.end()));
  };
  // Whether the two fastest rounds agree within o.agree.
  const auto settled = [&](std::size_t i) {
    std::vector<double> v = round_best[i];
    if (v.size() < 2) return false;
    std::partial_sort(v.begin(), v.begin() + 2, v.end());
    return v[1] <= v[0] * (1 + o.agree);
  };
  const int max_rounds = std::max(o.repetitions, o.max_repetitions > 0 ? o.max_repetitions : 3 * o.repetitions);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::size_t done = 0, total = rs.size() * static_cast<std::size_t>(o.repetitions);
  for (int round = 0; round < max_rounds; ++round) {
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < rs.size(); ++i)
      if (round < o.repetitions || !settled(i)) todo.push_back(i);
    if (todo.empty()) break;
    const bool extra = round >= o.repetitions;
    if (extra) total = done + todo.size();
    for (std::size_t i : todo) {
      if (extra && o.budget_s > 0 && elapsed() > o.budget_s) break;
      if (progress) progress(done++, total, i);
      time_one(i);
    }
    // Past the budget: stop after any extra round, or after a whole base round once every record
    // has kMinRounds (a slow machine keeps to its time budget with fewer rounds).
    if (o.budget_s > 0 && elapsed() > o.budget_s && (extra || round + 1 >= std::min(kMinRounds, o.repetitions))) break;
  }
  std::vector<Measurement> out;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const std::vector<double>& v = calls[i];
    Measurement m;
    m.time_ms = *std::min_element(v.begin(), v.end()) * 1e3;
    m.median_ms = detail::quantile(v, 0.5) * 1e3;
    m.spread = (detail::quantile(v, 0.75) - detail::quantile(v, 0.25)) / (m.median_ms * 1e-3);
    m.repetitions = static_cast<int>(round_best[i].size());
    m.calls = static_cast<int>(v.size());
    m.statistic = "min";
    m.backend = kCpuBackend;
    m.device = cpu_device_name();
    out.push_back(std::move(m));
  }
  return out;
}

Measurement measure_cpu(const MeasurementRecord& r, const BenchOptions& o) {
  return measure_cpu_rounds({r}, o).front();
}

Ceilings measure_cpu_ceilings(const BenchOptions& o) {
  check_threads(o);
  Ceilings c;
  c.device = cpu_device_name();
  // Single calls of under ~25 ms after a warm-up pass, the fastest of kCeilingCalls (see
  // ceiling_calls.hpp): the same statistic as the kernels' records.
  auto fastest = [&](const char* name, const std::function<void()>& call, int warmup) {
    for (int i = 0; i < warmup; ++i) call();
    const detail::Timing t = detail::time_single_calls(name, call, detail::kCeilingCalls);
    return *std::min_element(t.per_call_s.begin(), t.per_call_s.end());
  };
  c.gemm_flop_per_s = static_cast<double>(gemm_flops(detail::kCeilingGemm)) /
                      fastest("ceiling gemm", detail::prepare_gemm_ceiling(o.threads), 1);
  c.read_bytes_per_s =
      static_cast<double>(detail::kCeilingReadSliceBytes) /
      fastest("ceiling read", detail::prepare_read_ceiling(o.threads),
              static_cast<int>(detail::kCeilingReadBytes / detail::kCeilingReadSliceBytes));  // one pass
  return c;
}

std::string cpu_device_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown CPU";
}

}  // namespace mhacfg::kernels

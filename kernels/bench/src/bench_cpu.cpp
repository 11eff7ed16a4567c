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

// A run's calls are prepared once while the buffers they own (beyond the InputArena's) fit in this
// together; the others are prepared afresh before each of their timings (a fill of ~0.1 s per 100 MiB
// on the development VM, before the untimed warm-up call). The quick CPU calibration's own buffers are
// ~300 MiB (most of it linear attention's states), so this keeps its peak near the arena's 1 GiB.
constexpr std::int64_t kKeptBytes = std::int64_t{64} << 20;

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

SliceReads::SliceReads(std::shared_ptr<const Buffer<float>> buffer, std::int64_t total_bytes, std::int64_t slice_bytes,
                       int threads)
    : buffer_(std::move(buffer)), count_(total_bytes / 4), slice_(slice_bytes / 4), threads_(threads) {
  MHACFG_CHECK(slice_bytes > 0 && total_bytes % slice_bytes == 0, "a read buffer of whole slices");
  MHACFG_CHECK(buffer_ && buffer_->size() >= count_, "a read buffer of total_bytes");
}

void SliceReads::read() {
  sink_ += cpu::stream_read_sum({buffer_->data() + next_, slice_, threads_});
  next_ = (next_ + slice_) % count_;
}

void SliceReads::evict_next() const {
  evict_from_caches(buffer_->data() + next_, static_cast<std::size_t>(slice_) * sizeof(float));
}

std::shared_ptr<SliceReads> make_slice_reads(std::int64_t total_bytes, std::int64_t slice_bytes, int threads,
                                             InputArena* arena) {
  const std::int64_t count = total_bytes / static_cast<std::int64_t>(sizeof(float));
  if (!arena) {
    auto own = std::make_shared<Buffer<float>>(random_buffer<float>(count, 9, threads));
    return std::make_shared<SliceReads>(std::move(own), total_bytes, slice_bytes, threads);
  }
  arena->reserve(count, 0, threads);
  return std::make_shared<SliceReads>(arena->f32(), total_bytes, slice_bytes, threads);
}

std::function<void()> prepare_read_calls(std::int64_t total_bytes, std::int64_t slice_bytes, int threads,
                                         InputArena* arena) {
  auto reads = make_slice_reads(total_bytes, slice_bytes, threads, arena);
  return [reads] { reads->read(); };
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

namespace {

// One record's timings so far.
struct RecordTimings {
  std::vector<double> calls;       // every timed call, in seconds
  std::vector<double> round_best;  // the fastest call of each round
  double last_s = 0;               // its last timing's wall time: preparation, warm-up and calls
  // Whether its two fastest rounds agree within `agree`.
  bool settled(double agree) const {
    std::vector<double> v = round_best;
    if (v.size() < 2) return false;
    std::partial_sort(v.begin(), v.begin() + 2, v.end());
    return v[1] <= v[0] * (1 + agree);
  }
};

Measurement summary(const RecordTimings& t) {
  Measurement m;
  m.backend = kCpuBackend;
  m.device = cpu_device_name();
  if (t.calls.empty()) return m;  // never timed (the cap came first): repetitions 0
  const std::vector<double>& v = t.calls;
  m.time_ms = *std::min_element(v.begin(), v.end()) * 1e3;
  m.median_ms = detail::quantile(v, 0.5) * 1e3;
  m.spread = (detail::quantile(v, 0.75) - detail::quantile(v, 0.25)) / (m.median_ms * 1e-3);
  m.repetitions = static_cast<int>(t.round_best.size());
  m.calls = static_cast<int>(v.size());
  m.statistic = "min";
  return m;
}

// The calls prepared once: in order, while the buffers they own beyond the arena's fit kKeptBytes.
std::vector<std::function<void()>> kept_calls(const std::vector<MeasurementRecord>& rs, const detail::InputArena& arena,
                                              int threads) {
  std::vector<std::function<void()>> kept(rs.size());
  std::int64_t kept_bytes = 0;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const std::int64_t own = detail::cpu_call_bytes(rs[i]) - detail::cpu_call_arena_need(rs[i]).bytes();
    if (kept_bytes + own > kKeptBytes) continue;
    kept_bytes += own;
    kept[i] = detail::prepare_cpu_call(rs[i], threads, &arena);
  }
  return kept;
}

}  // namespace

std::vector<Measurement> measure_cpu_rounds(const std::vector<MeasurementRecord>& rs, const BenchOptions& o,
                                            const RoundsProgress& progress, detail::InputArena* arena) {
  check_threads(o);
  if (o.repetitions < 1) throw InputError("repetitions", std::to_string(o.repetitions), "must be at least 1");
  for (std::size_t i = 0; i < rs.size(); ++i)
    if (std::string why = cpu_unsupported_reason(rs[i]); !why.empty())
      throw InputError("record " + std::to_string(i + 1), json_text(record_to_json(rs[i])), why);
  detail::InputArena local;
  detail::InputArena& shared = arena ? *arena : local;
  const detail::InputArena::Cursor need = detail::cpu_calls_arena_need(rs);
  shared.reserve(need.f32, need.bf16, o.threads);
  const std::vector<std::function<void()>> kept = kept_calls(rs, shared, o.threads);
  std::vector<RecordTimings> timings(rs.size());
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const auto time_one = [&](std::size_t i) {
    const double t0 = elapsed();
    const std::function<void()> call = kept[i] ? kept[i] : detail::prepare_cpu_call(rs[i], o.threads, &shared);
    // Warm-up (caches and branch state back after the other records ran); its time sizes the round:
    // single calls, each timed alone, for at least min_time_s (1 to 64 calls).
    const double w0 = elapsed();
    call();
    const double warm = elapsed() - w0;
    const int n = static_cast<int>(std::clamp(std::ceil(o.min_time_s / std::max(warm, 1e-7)), 1.0, 64.0));
    const detail::Timing t = detail::time_single_calls(rs[i].op_class(), call, n);
    RecordTimings& r = timings[i];
    r.calls.insert(r.calls.end(), t.per_call_s.begin(), t.per_call_s.end());
    r.round_best.push_back(*std::min_element(t.per_call_s.begin(), t.per_call_s.end()));
    r.last_s = elapsed() - t0;
  };
  // The cap (o.max_s): no timing starts past it, nor one whose record's last timing would end past it.
  const auto capped = [&](std::size_t i) { return o.max_s > 0 && elapsed() + timings[i].last_s > o.max_s; };
  const int max_rounds = std::max(o.repetitions, o.max_repetitions > 0 ? o.max_repetitions : 3 * o.repetitions);
  std::size_t done = 0, total = rs.size() * static_cast<std::size_t>(o.repetitions);
  for (int round = 0; round < max_rounds; ++round) {
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < rs.size(); ++i)
      if ((round < o.repetitions || !timings[i].settled(o.agree)) && !capped(i)) todo.push_back(i);
    if (todo.empty()) break;
    const bool extra = round >= o.repetitions;
    if (extra) total = done + todo.size();
    for (std::size_t i : todo) {
      if (extra && o.budget_s > 0 && elapsed() > o.budget_s) break;
      if (capped(i)) continue;
      if (progress) progress(done++, total, i);
      time_one(i);
    }
    // Past the budget: stop after any extra round, or after a whole base round once every record
    // has kMinRounds (a slow machine keeps to its time budget with fewer rounds).
    if (o.budget_s > 0 && elapsed() > o.budget_s && (extra || round + 1 >= std::min(kMinRounds, o.repetitions))) break;
  }
  std::vector<Measurement> out;
  for (const RecordTimings& t : timings) out.push_back(summary(t));
  return out;
}

Measurement measure_cpu(const MeasurementRecord& r, const BenchOptions& o) {
  return measure_cpu_rounds({r}, o).front();
}

Ceilings measure_cpu_ceilings(const BenchOptions& o, detail::InputArena* arena) {
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
      fastest("ceiling read", detail::prepare_read_ceiling(o.threads, arena),
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

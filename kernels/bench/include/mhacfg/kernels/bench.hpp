// The microbenchmark harness: turns measurement records (shapes) into timed records with the
// project's own kernels. One interface per device; the CLI's `bench` and `calibrate` call these.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "mhacfg/costmodel/machine_probe.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg::kernels {

namespace detail {
class InputArena;  // the harness's shared random inputs (src/inputs.hpp)
}

struct BenchOptions {
  int threads = 1;           // CPU: fixed thread count for every kernel (Eigen and our own loops)
  int repetitions = 15;       // CPU: interleaved rounds; CUDA: timed calls are the harness's own
  double min_time_s = 0.005;  // CPU: each round times single calls for at least this (1 to 64 calls)
  // CPU: after `repetitions` rounds, records whose two fastest rounds differ by more than `agree`
  // get further rounds, up to `max_repetitions` (0: 3 x repetitions) or until `budget_s` seconds of
  // timing have passed (0: no limit); past the budget, base rounds also stop after the fifth.
  double agree = 0.03;
  int max_repetitions = 0;
  double budget_s = 0;
  // CPU and CUDA: a cap on the measuring, in seconds (0: none). No timing starts once it has passed,
  // nor (CPU) one whose record's previous timing would end past it; a record never timed comes back with
  // repetitions 0. A timing already started runs to its end.
  double max_s = 0;
  int device = 0;            // CUDA device ordinal
};

// CUDA: fresh allocations of a record's inputs, each timed with at least 20 calls (see below).
inline constexpr int kCudaWorkloads = 3;

// How time_ms summarises the repetitions.
//   CPU: the fastest single call of all rounds. The CPU kernels run on shared machines whose other
//     tenants only ever add time, in bursts: on the 2-vCPU development VM a 4 ms GEMM alternated
//     between 4.0 and 7.2 ms every ~100 ms, and the same 16 ms GEMM took 15.4 ms in some rounds and
//     28-30 ms in others. Each round times single calls for at least min_time_s, so short calls
//     fit between bursts; the fastest is the machine's own speed, the median and spread of all
//     calls are reported beside it.
//   CUDA: the median of event-timed calls with L2 flushed (a dedicated device), on each of
//     kCudaWorkloads fresh allocations of the inputs; time_ms is the median of those medians. On the
//     H200 one allocation's timing of a kernel sat up to 9-13 % from another's (prefill causal
//     32q/8kv: 1519-1659 us; decode B8: 251-285 us) while the calls on one allocation agreed within
//     1 %, so the allocations, not the calls, are the repetitions that matter.
struct Measurement {
  double time_ms = 0;      // the statistic above, per call
  double median_ms = 0;    // median of the timed calls (CPU) or of the allocations' medians (CUDA)
  double spread = 0;       // CPU: (p75 - p25) / median of the calls; CUDA: (max - min) / median of the allocations
  int repetitions = 0;     // CPU: rounds; CUDA: allocations (fresh workloads); 0: not measured (BenchOptions::max_s)
  int calls = 0;           // timed calls in all
  std::string statistic;   // "min" or "median": what time_ms is
  std::string backend;     // e.g. "mhacfg-cpu", "mhacfg-cuda", "cublas"
  std::string device;      // e.g. the CPU model name or the GPU name
};

// Machine ceilings measured with the same threads as the kernels.
struct Ceilings {
  double gemm_flop_per_s = 0;   // large square GEMM at the kernels' compute dtype
  double read_bytes_per_s = 0;  // streaming read of a buffer far larger than the last-level cache
  std::string device;
};

// CPU (Eigen) kernels. `unsupported_reason` is empty when a kernel supports the record.
std::string cpu_unsupported_reason(const MeasurementRecord& r);
// Times every record in o.repetitions interleaved rounds: each round times each record once (a
// warm-up call, then single calls for at least o.min_time_s), so slow phases of a shared machine fall
// on all records alike; then further rounds of the records whose fastest two rounds still disagree (see
// BenchOptions::agree). The inputs the calls only read (K/V caches, GEMM weights) are views of one
// arena (`arena`, else one of the run's own) sized for the largest record; the buffers each call owns
// are kept between rounds while they fit in 64 MiB together (the rest are made afresh each round).
// `progress(done, total, record)` is called before each timing. Throws InputError naming the record
// index for an unsupported record, before timing anything.
using RoundsProgress = std::function<void(std::size_t, std::size_t, std::size_t)>;
std::vector<Measurement> measure_cpu_rounds(const std::vector<MeasurementRecord>& rs, const BenchOptions& o,
                                            const RoundsProgress& progress = {}, detail::InputArena* arena = nullptr);
Measurement measure_cpu(const MeasurementRecord& r, const BenchOptions& o);
// GEMM FLOP/s and read bandwidth from the fastest of o.repetitions rounds (as measure_cpu_rounds); the
// read streams the arena's first 1 GiB when given (grown to it), else a buffer of its own.
Ceilings measure_cpu_ceilings(const BenchOptions& o, detail::InputArena* arena = nullptr);
// The CPU machine probe on `threads`: its calls prepared once (a 512^3 fp32 GEMM; the ceiling's 1 GiB
// read buffer, the arena's when given), then `run(rounds)`, each round the fastest of 4 GEMM calls and
// of 4 reads of 64 MiB slices, each slice evicted from the caches before it is read (~20 ms a round),
// as often as asked: 40 rounds make the ~1 s reference, single rounds can be spread between a run's
// records.
class CpuProbe {
 public:
  explicit CpuProbe(int threads, detail::InputArena* arena = nullptr);
  MachineProbe run(int rounds);
  int threads() const { return threads_; }

 private:
  int threads_;
  std::function<void()> gemm_, read_, evict_;
};
inline constexpr int kCpuProbeRounds = 40;
MachineProbe measure_cpu_probe(const BenchOptions& o, int rounds = kCpuProbeRounds);
std::string cpu_device_name();

}  // namespace mhacfg::kernels

// The fitter: calibrates each op class's time model (time_model.hpp) on measurement records by
// Levenberg-Marquardt on log-time residuals, reports fit and leave-one-out errors, and assembles a
// measured profile. The same fitter serves `calibrate --device` and `calibrate --from`.
#pragma once

#include <string>
#include <vector>

#include "mhacfg/costmodel/profile.hpp"
#include "mhacfg/costmodel/records.hpp"

namespace mhacfg {

// Which parameters of OpModel a class fits; the rest stay at their initial value (or zero).
struct FitSpec {
  bool t0 = true, peak = true, head_dim_scale = false, causal_factor = false, slots = false, bw = true, half_streams = true,
       stream_exponent = false, rows_half = false, cache = false, softmax = false, load = false, combine = false, miss = false,
       masked = false, tiles = false, skinny = false, widen = false;
  bool bw_ceiling = false;  // bw not fitted but the device's measured read bandwidth (warm-cache fits)
  bool row_block = false;  // fixed, not fitted: the kernel's register blocking of query rows (CpuKernelFacts)
  double combine_max = 0;  // the largest k - 1 a fit may take (0: no limit)
};
// The fit spec of (device kind, op class), from the table of op kinds (op_registry.hpp): each op
// type's fit_spec says what its classes fit. `warm_cache`: the device kind is a CPU, whose harness
// repeats a call on the same inputs without flushing caches, so a cache term is fitted; GPU timings
// flush L2 between calls. Throws InputError for a text that is no op class.
FitSpec fit_spec_for(const OpClass& op_class, bool warm_cache);
FitSpec fit_spec_for(const std::string& op_class, bool warm_cache);
// What decode, MLA, GEMM and attention-block classes start from: bandwidth and compute, scaled by how
// well the units fill the device and by the rows each pass shares (matrix-vector work is slower per
// FLOP); `head_width`: wider heads make longer dot products per K/V row (no term for GEMMs).
FitSpec matrix_fit_spec(bool warm_cache, bool head_width);

// The op class's features of one record (attention_block records have no class of their own: they
// are validated as compositions); the same as r.features().
OpFeatures record_features(const MeasurementRecord& r, const CpuKernelFacts& facts = {});

struct ErrorStats {
  std::int64_t n = 0;
  double median_ape = 0;
  double p90_ape = 0;
  double max_ape = 0;
};
ErrorStats error_stats(std::vector<double> ape);

// Records of one shape (the same op, shape fields, dtype, backend and device: a copy, or the shape
// measured again) are one point of a fit: fit_op_class fits each shape once, at the median of its
// records' times, and leave-one-out leaves the shape out whole. The records (of the classes a fit
// takes: not attention_block) that repeat an earlier record's shape.
std::int64_t repeated_shapes(const std::vector<MeasurementRecord>& records);

// Fits one op class. `ceilings` seeds the initial guesses (peak FLOP/s, bandwidth, compute units);
// `facts` are the CPU kernels' (the profile's cpu_kernel_facts). Throws InputError when there are too
// few records (fewer than 3) or too few shapes (fewer than 3 once the copies are merged). `records` of
// the result counts the shapes.
OpFit fit_op_class(const std::string& op_class, const std::vector<const MeasurementRecord*>& records,
                   const SpecCeilings& ceilings, bool cross_validate = true, bool warm_cache = false,
                   const CpuKernelFacts& facts = {});

// Fits every op class present in `records` (records without time_ms are an error) into `profile`,
// keeping its name, device, spec, kernels and kernel facts; sets source "measured". CPU profiles (kind "cpu") are
// fitted with the warm-cache term.
void fit_profile(Profile& profile, const std::vector<MeasurementRecord>& records, bool cross_validate = true);

}  // namespace mhacfg

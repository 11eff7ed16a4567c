// What a prediction's GEMM rates rest on for each weight dtype: a fit of the dtype's own, the 16-bit
// fit transferred to it, or a datasheet peak (its own or a wider dtype's). docs/cost-model.md "Dtypes".
#include <cstdio>
#include <set>

#include "mhacfg/costmodel/predict.hpp"

namespace mhacfg {

namespace {

std::string fixed(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The sentence for GEMMs with weights in `t`, empty when their rate is the dtype's own.
std::string dtype_note(const Profile& profile, DType t) {
  const std::string name(to_string(t));
  const DType compute = compute_dtype(t);
  const std::string peak = profile.peak_dtype(compute);
  const bool own_peak = peak == to_string(compute);
  const std::string own_class = GemmOp{}.op_class(t).to_string(), plain = GemmOp{}.op_class().to_string();
  const auto fit = profile.ops.find(plain);
  if (own_class == plain || profile.ops.count(own_class)) return "";  // 16/32-bit or measured in its dtype
  if (fit == profile.ops.end()) {
    if (own_peak) return "";
    return name + " GEMMs: " + profile.name + " lists no " + std::string(to_string(compute)) + " peak: at " +
           (peak.empty() ? "no" : peak + "'s") + " rate (the nearest wider dtype's)";
  }
  std::string s = name + " GEMMs: transferred from " + profile.name + "'s 16-bit GEMM fit (no " + own_class +
                  " fit): its efficiencies at the " + (own_peak ? std::string(to_string(compute)) : peak) + " peak, x" +
                  fixed(profile.peak_flop_per_s(compute) / profile.peak_flop_per_s(DType::bf16), "%.2f") +
                  " the bf16 one, with " + name + " bytes";
  if (!own_peak) s += " (" + profile.name + " lists no " + std::string(to_string(compute)) + " peak)";
  s += "; error not measured: expect more than the 16-bit fit's " +
       fixed(fit->second.cv_median_ape * 100.0, "%.1f") + " % median (cross-validated)";
  return s;
}

}  // namespace

std::vector<std::string> gemm_dtype_notes(const Profile& profile, const Workload& w) {
  std::vector<std::string> notes;
  std::set<DType> seen;
  for (DType t : {w.attention_weights(), w.ffn_weights(), w.weight_dtype}) {
    if (!seen.insert(t).second) continue;
    const std::string note = dtype_note(profile, t);
    if (!note.empty()) notes.push_back(note);
  }
  return notes;
}

}  // namespace mhacfg

#include "mhacfg/costmodel/transfer.hpp"

#include "mhacfg/costmodel/errors.hpp"

namespace mhacfg {

namespace {

double peak(const SpecCeilings& s, const char* dtype) {
  const auto it = s.peak_flop_per_s.find(dtype);
  return it == s.peak_flop_per_s.end() ? 0 : it->second;
}

// to / from for a figure both datasheets give; `fallback` where one side does not list it.
double ratio(double from, double to, double fallback) { return from > 0 && to > 0 ? to / from : fallback; }

}  // namespace

OpModel transfer_op_model(const OpModel& m, const SpecCeilings& from, const SpecCeilings& to, const std::string& where) {
  const double flop = ratio(peak(from, "bf16"), peak(to, "bf16"), 0);
  const double bw = ratio(from.mem_bw_bytes_per_s, to.mem_bw_bytes_per_s, 0);
  const double units = ratio(double(from.compute_units), double(to.compute_units), 0);
  if (flop == 0) throw InputError(where, "spec.peak_flop_per_s.bf16", "a transfer needs the bf16 peak of both profiles");
  if (bw == 0) throw InputError(where, "spec.mem_bw_bytes_per_s", "a transfer needs the bandwidth of both profiles");
  if (units == 0) throw InputError(where, "spec.compute_units", "a transfer needs the SM or CU count of both profiles");
  // Exponentials, element loads and widening run on the CUDA cores: SMs x clock x lanes, which the
  // fp32 (non-tensor) peak states; the SM ratio where a datasheet omits it.
  const double elements = ratio(peak(from, "fp32"), peak(to, "fp32"), units);
  OpModel t = m;
  t.peak_flop_per_s = m.peak_flop_per_s * flop;
  t.bw_bytes_per_s = m.bw_bytes_per_s * bw;
  t.half_streams = m.half_streams * units;
  t.slots = m.slots * units;
  t.cache_bytes = m.cache_bytes * ratio(double(from.l2_bytes), double(to.l2_bytes), 1);
  t.cache_bw_bytes_per_s = m.cache_bw_bytes_per_s * units;
  t.softmax_rate = m.softmax_rate * elements;
  t.load_rate = m.load_rate * elements;
  t.widen_rate = m.widen_rate * elements;
  t.tile_rate = m.tile_rate * elements;
  t.skinny_rate = m.skinny_rate * elements;
  return within_limits(t);
}

Profile apply_transfer(Profile target, const Profile& source) {
  if (!target.transfer || target.transfer->from != source.name)
    throw InputError(target.name, "transfer.from", "does not name profile " + source.name);
  if (source.ops.empty() || source.transfer)
    throw InputError(target.name + ": transfer.from", source.name, "must name a measured profile (one with its own fits)");
  if (source.kind != target.kind)
    throw InputError(target.name + ": transfer.from", source.name, "must be a " + target.kind + " profile");
  target.ops.clear();
  for (const auto& [cls, fit] : source.ops) {
    OpFit t = fit;
    t.model = transfer_op_model(fit.model, source.spec, target.spec, target.name + ": transfer.from " + source.name);
    target.ops[cls] = t;
  }
  return target;
}

Profile as_roofline(Profile p) {
  p.ops.clear();
  p.validation.clear();
  p.transfer.reset();
  p.kernel_classes.clear();
  p.source = "datasheet";
  return p;
}

}  // namespace mhacfg

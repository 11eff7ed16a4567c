#include "mhacfg/costmodel/errors.hpp"
#include "mhacfg/costmodel/json_fields.hpp"
#include "mhacfg/costmodel/serving.hpp"

namespace mhacfg {

namespace {
// A time in seconds: finite, at least 0 and below a minute (a cost per kernel or request beyond that
// is a unit mistake, not an engine).
double seconds(const JsonFields& f, const char* key) {
  const double v = f.optional_number(key).value_or(0.0);
  if (!(v >= 0.0 && v < 60.0)) throw InputError(f.name(key), std::to_string(v), "must be seconds in [0, 60)");
  return v;
}
}  // namespace

EngineModel engine_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where, json_value_text(j), "an engine must be a JSON object");
  const JsonFields f(j, where);
  EngineModel e;
  e.name = f.require_string("name");
  e.other_ops = f.optional_bool("other_ops", false);
  e.kernel_gap_s = seconds(f, "kernel_gap_s");
  e.step_overhead_s = seconds(f, "step_overhead_s");
  e.request_overhead_s = seconds(f, "request_overhead_s");
  e.max_num_seqs = f.optional_int("max_num_seqs", false).value_or(0);
  if (e.max_num_seqs < 0) throw InputError(f.name("max_num_seqs"), std::to_string(e.max_num_seqs), "must be 0 or positive");
  e.max_prefill_tokens = f.optional_int("max_prefill_tokens", false).value_or(0);
  if (e.max_prefill_tokens < 0)
    throw InputError(f.name("max_prefill_tokens"), std::to_string(e.max_prefill_tokens), "must be 0 or positive");
  e.scheduler_steps = f.optional_int("num_scheduler_steps", false).value_or(1);
  if (e.scheduler_steps < 1 || e.scheduler_steps > 1024)
    throw InputError(f.name("num_scheduler_steps"), std::to_string(e.scheduler_steps), "must be 1 to 1024");
  e.source = f.optional_string("source").value_or("");
  return e;
}

nlohmann::json engine_to_json(const EngineModel& e) {
  return {{"name", e.name},
          {"other_ops", e.other_ops},
          {"kernel_gap_s", e.kernel_gap_s},
          {"step_overhead_s", e.step_overhead_s},
          {"request_overhead_s", e.request_overhead_s},
          {"max_num_seqs", e.max_num_seqs},
          {"max_prefill_tokens", e.max_prefill_tokens},
          {"num_scheduler_steps", e.scheduler_steps},
          {"source", e.source}};
}

}  // namespace mhacfg

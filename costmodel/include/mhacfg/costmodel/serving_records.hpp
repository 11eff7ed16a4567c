// Whole-request serving measurements: what a user's own benchmarks (or published ones) say a served
// model took, read from three formats into one record per metric:
//  - mhacfg's serving JSONL (docs/calibration.md, "Serving records"): one metric per line;
//  - vLLM's `vllm bench serve --save-result` JSON (one object, or one per line with --append-result);
//  - SGLang's `python -m sglang.bench_serving` output JSONL (one run per line).
// Free-text values are mapped by the rules documented there (the first dtype word, an engine's name);
// a value no rule maps is an InputError naming the line, the field and the value. Which model preset,
// device profile and engine a record means is decided by the configurator (inputs/serving_inputs.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mhacfg/costmodel/serving.hpp"

namespace mhacfg {

enum class ServingMetric {
  ttft_ms,                       // time to first token
  tpot_ms,                       // time per output token after the first
  itl_ms,                        // inter-token latency: the median gap between streamed chunks (vLLM's and
                                 // SGLang's benchmarks), or a request's mean gap (AIPerf, GenAI-Perf, LLMPerf)
  latency_ms,                    // a request end to end (ttft + (osl - 1) tpot)
  output_tokens_per_s,           // output tokens per second, all GPUs of the replica
  output_tokens_per_s_per_gpu,
  output_tokens_per_s_per_user,  // 1000 / tpot_ms
};
std::string_view to_string(ServingMetric m);
// Throws InputError naming `field` for an unknown name.
ServingMetric parse_serving_metric(std::string_view name, const std::string& field);
// The predicted value of `m`.
double serving_metric_value(const ServingTimes& t, ServingMetric m);

struct ServingRecord {
  std::string id;        // the line's id, or file:line[:metric]
  std::string where;     // file:line, for messages
  std::string source;    // where the number comes from (a citation, or the benchmark file)
  std::string format;    // "jsonl", "vllm" or "sglang"
  std::string model;     // a Hugging Face id (a parenthetical note removed) or a config.json path
  std::string gpu;       // as written ("H100-80GB (SXM assumed)")
  std::string engine;    // as written ("TensorRT-LLM (static batching)"); "" when not given
  std::int64_t tp = 1, pp = 1, ep = 1;
  bool dp_attention = false;
  std::int64_t scheduler_steps = 0;  // vLLM --num-scheduler-steps as the record states it; 0: the engine's
  std::int64_t num_gpus = 0;     // 0: not given (tp x pp)
  std::int64_t isl = 0, osl = 0; // prompt and output tokens per request; 0: not given
  std::int64_t concurrency = 0;  // requests in flight; 0: as many as fit (max throughput)
  std::int64_t batch = 0;        // a static batch's size; 0: not given
  ServingMode mode = ServingMode::continuous;
  std::string weight_dtype;      // the first dtype word of the value ("fp8"); "" when unstated
  std::string kv_dtype;
  ServingMetric metric = ServingMetric::tpot_ms;
  double value = 0;
  std::string category;          // latency_bs1, latency_c1, fixed_batch_static, fixed_concurrency, max_throughput
  bool spec_decode = false;
  std::string unusable;          // why the record cannot be predicted ("" when it can): a missing isl, ...
  bool itl_per_request = false;  // its ITL is each request's (latency - ttft) / (osl - 1), not chunk gaps
};

// The predicted value of the record's metric, as its benchmark defines it (an ITL averaged per request
// is a TPOT).
double serving_metric_value(const ServingTimes& t, const ServingRecord& r);

// The first dtype word of a free-text value, lower case ("fp8 (block-scaled)" -> "fp8", "BF16" ->
// "bf16", "float16" -> "fp16"); "" for a value that says it is not stated ("unstated ..."). Throws
// InputError naming `field` when no dtype word is in it.
std::string dtype_word(const std::string& text, const std::string& field);

// True when `j` (a file's first record) is a serving record of one of the three formats rather than a
// kernel measurement record.
bool is_serving_json(const nlohmann::json& j);

// True when a file's text holds serving records (its first object is one), false for kernel records.
bool is_serving_text(const std::string& text);

// Reads every record of a serving file (any of the three formats, detected per object). `defaults`
// fills fields a record lacks (a record's own value wins): model, gpu, tp, engine, ... as in the JSONL,
// e.g. {"gpu": "H200", "tp": 2} for an SGLang file, which names neither. Throws InputError.
std::vector<ServingRecord> read_serving_records(const std::string& path, const std::string& field,
                                                const nlohmann::json& defaults = nlohmann::json::object());
// The same for text already read; `name` is the file's name in messages.
std::vector<ServingRecord> parse_serving_records(const std::string& text, const std::string& name,
                                                 const nlohmann::json& defaults = nlohmann::json::object());

// A record as JSON (the JSONL schema's fields).
nlohmann::json serving_record_to_json(const ServingRecord& r);

// The words of a free-text value, lower case: runs of letters and digits ("H100-80GB (SXM)" -> h100, 80gb, sxm).
std::vector<std::string> lowercase_words(const std::string& text);

}  // namespace mhacfg
